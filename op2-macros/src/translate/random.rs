//! Random streams: `Philox::new(seed, id, call)` creates a kernel-local
//! stream (the prelude's `op2_philox`), and its draws (`rng.uniform_f64()`,
//! ...) become calls of the prelude's functions on it; the names and types
//! come from `op2_kernel_abi` (`RANDOM_STREAM`, `RANDOM_DRAWS`).

use op2_kernel_abi::{RandomDraw, RANDOM_STREAM};
use syn::spanned::Spanned;
use syn::{Expr, ExprCall, ExprMethodCall};

use super::types::{ETy, Ty};
use super::Translator;

/// Whether a call is `Philox::new(...)`.
pub(super) fn is_stream_new(c: &ExprCall) -> bool {
    match &*c.func {
        Expr::Path(p) => {
            let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            crate::subset::is_random_stream_new(&segs)
        }
        _ => false,
    }
}

impl Translator {
    /// `Philox::new(seed, id, call)`: the C constructor, each argument
    /// converted to its parameter's type as Rust's signature demands.
    pub(super) fn random_stream_new(&mut self, c: &ExprCall) -> String {
        let args: Vec<&Expr> = c.args.iter().collect();
        if args.len() != RANDOM_STREAM.new_args.len() {
            self.err(
                c.span(),
                format!(
                    "`{}::new` takes a seed, a global id and a call number",
                    RANDOM_STREAM.rust_name
                ),
            );
            return String::new();
        }
        let texts: Vec<String> = args
            .iter()
            .zip(RANDOM_STREAM.new_args)
            .map(|(a, t)| self.expr(a, Some(Ty::Known(t))))
            .collect();
        self.uses.random_streams = true;
        format!("{}({})", RANDOM_STREAM.c_new, texts.join(", "))
    }

    /// `rng.draw(args)`: the prelude's function on the stream variable.
    pub(super) fn random_draw(&mut self, m: &ExprMethodCall) -> String {
        let method = m.method.to_string();
        let Some(draw) = RandomDraw::named(&method) else {
            self.err(
                m.method.span(),
                format!("`.{method}()` is not a draw of a `{}` stream", RANDOM_STREAM.rust_name),
            );
            return String::new();
        };
        let Expr::Path(_) = &m.receiver.as_ref() else {
            self.err(
                m.receiver.span(),
                "draw from a stream variable: `let mut rng = Philox::new(...);`",
            );
            return String::new();
        };
        let stream = self.expr(&m.receiver, None);
        let args: Vec<&Expr> = m.args.iter().collect();
        match (draw.argument, args.as_slice()) {
            (None, []) => format!("{}(&{stream})", draw.c_function()),
            (Some(t), [a]) => {
                let a = self.expr(a, Some(Ty::Known(t)));
                format!("{}(&{stream}, {a})", draw.c_function())
            }
            _ => {
                self.err(m.span(), format!("wrong number of arguments for `.{method}()`"));
                String::new()
            }
        }
    }

    /// `let mut rng = Philox::new(...);`: a local stream.
    pub(super) fn local_stream(&mut self, name: &str, init: Option<&Expr>, span: proc_macro2::Span) {
        let Some(Expr::Call(c)) = init else {
            self.err(
                span,
                format!("a stream is made by `{}::new(seed, id, call)`", RANDOM_STREAM.rust_name),
            );
            return;
        };
        let value = self.random_stream_new(c);
        let cname = self.declare_name(name);
        self.out.line(&format!("{} {cname} = {value};", RANDOM_STREAM.c_type));
        self.bind(name, cname, ETy::Stream, super::names::Kind::Local);
    }
}
