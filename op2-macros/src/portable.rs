//! `#[op2::kernel(portable_math)]` on the native side: each call of a math
//! function that op2 has its own version of (`x.sin()`, `f32::exp(x)`)
//! becomes a call of `op2::portable_math::PortableMath`, so that `seq` and
//! `rayon` compute what the generated C computes (`op2_pm_*`), bit for bit.

use op2_kernel_abi::{MathFunction, Portability};
use proc_macro2::Span;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Block, Expr, Ident};

/// Rewrites the calls in `block`.
pub fn use_portable_math(block: &mut Block) {
    Rewrite.visit_block_mut(block);
}

/// The trait method of a math function op2 has a twin of.
fn twin_method(name: &Ident) -> Option<Ident> {
    let f = MathFunction::named(&name.to_string())?;
    (f.portability() == Portability::Twin).then(|| Ident::new(&format!("portable_{}", f.name), Span::call_site()))
}

struct Rewrite;

impl VisitMut for Rewrite {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        match e {
            // A method call keeps its auto-deref (`x.sin()` on a `&f64`).
            Expr::MethodCall(call) => {
                if let Some(method) = twin_method(&call.method) {
                    let (recv, args) = (&call.receiver, &call.args);
                    *e = parse_quote!({
                        use ::op2::portable_math::PortableMath as _;
                        (#recv).#method(#args)
                    });
                }
            }
            // `f64::sin(x)`, `f32::powf(x, y)`.
            Expr::Call(call) => {
                let Expr::Path(p) = &*call.func else { return };
                let segs = &p.path.segments;
                if p.qself.is_some() || segs.len() != 2 {
                    return;
                }
                let ty = &segs[0].ident;
                if ty != "f64" && ty != "f32" {
                    return;
                }
                if let Some(method) = twin_method(&segs[1].ident) {
                    let args = &call.args;
                    *e = parse_quote!(<#ty as ::op2::portable_math::PortableMath>::#method(#args));
                }
            }
            _ => {}
        }
    }
}
