//! Spatial message lists: the lowered prologue `let msgs =
//! Spatial3d::new(op2_bins_msgs, op2_grid_msgs);` (or `Spatial2d`,
//! `Discrete2d`) becomes the prelude's `op2_spatial`
//! (`codegen/spatial_c.rs` in op2-backends); `for j in msgs.near(x, y, z) {
//! .. }` a loop over the messages in the bins around the point, strip by
//! strip, and `for j in msgs.within(x, y, r) { .. }` one over the messages
//! in the cells within `r`, run by run, with `j` the message index (a
//! `usize`).

use syn::spanned::Spanned;
use syn::{Expr, ExprCall, Pat};

use op2_kernel_abi::c_interface::SPATIAL_NEW;
use op2_kernel_abi::NearKind;

use super::names::Kind;
use super::types::{ETy, Ty};
use super::Translator;

/// The kind of a `Spatial2d::new(..)` / `Spatial3d::new(..)` /
/// `Discrete2d::new(..)` call.
pub(super) fn spatial_new_dims(c: &ExprCall) -> Option<NearKind> {
    let Expr::Path(p) = &*c.func else { return None };
    let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segs.split_last() {
        Some((new, ty)) if new == "new" => crate::subset::spatial_type_kind(ty),
        _ => None,
    }
}

impl Translator {
    /// The C names of a lowered prologue call's arguments (the hidden
    /// parameters `#[op2::kernel]` passes it), skipping anything else.
    pub(super) fn hidden_args(&self, c: &ExprCall) -> Vec<String> {
        c.args
            .iter()
            .filter_map(|a| match a {
                Expr::Path(p) => p
                    .path
                    .get_ident()
                    .and_then(|i| self.lookup(&i.to_string()))
                    .map(|v| v.c.clone()),
                _ => None,
            })
            .collect()
    }

    /// `let msgs = Spatial3d::new(bins, grid);` (only as `#[op2::kernel]`
    /// lowers a `&Spatial3d` parameter).
    pub(super) fn local_spatial(&mut self, name: &str, init: Option<&Expr>, kind: NearKind, span: proc_macro2::Span) {
        let Some(Expr::Call(c)) = init else {
            self.err(span, "a spatial message parameter is made by op2 only");
            return;
        };
        let args = self.hidden_args(c);
        let [bins, grid] = args.as_slice() else {
            self.err(c.span(), "a spatial message parameter is made by op2 only");
            return;
        };
        let cname = self.declare_name(name);
        self.uses.spatial_queries = true;
        self.out
            .line(&format!("op2_spatial {cname} = {SPATIAL_NEW}({bins}, {grid});"));
        self.bind(name, cname, ETy::Spatial(kind), Kind::Local);
    }

    /// `for j in msgs.near(x, y[, z]) { body }` (or `msgs.within(x, y, r)`
    /// of a `Discrete2d`): returns false if the loop is not over a spatial
    /// parameter's neighbourhood.
    pub(super) fn spatial_loop(&mut self, f: &syn::ExprForLoop) -> bool {
        let mut iterated = &*f.expr;
        while let Expr::Paren(p) = iterated {
            iterated = &p.expr;
        }
        let Expr::MethodCall(m) = iterated else { return false };
        let ETy::Spatial(kind) = self.ty(&m.receiver) else {
            return false;
        };
        let (method, args, what) = match kind {
            NearKind::Spatial2d => ("near", 2, "`.near(x, y)`"),
            NearKind::Spatial3d => ("near", 3, "`.near(x, y, z)`"),
            NearKind::Discrete2d => ("within", 3, "`.within(x, y, r)`"),
        };
        let ty = kind.type_name();
        if m.method != method {
            self.err(
                m.method.span(),
                format!("a `{ty}` message parameter offers {what} only"),
            );
            return true;
        }
        if m.args.len() != args {
            self.err(m.span(), format!("{what} of a `{ty}` takes {args} arguments"));
            return true;
        }
        let Pat::Ident(var) = &*f.pat else {
            self.err(
                f.pat.span(),
                format!("bind the message index to a name: `for j in msgs.{method}(..)`"),
            );
            return true;
        };
        let receiver = self.expr(&m.receiver, None);
        let discrete = kind == NearKind::Discrete2d;
        let mut coords: Vec<String> = m
            .args
            .iter()
            .map(|a| {
                let t = self.ty(a).scalar().concrete();
                if discrete && !t.is_int() {
                    self.err(a.span(), "`.within(x, y, r)` takes integer cells and radius");
                }
                let v = self.expr(a, Some(t));
                if discrete {
                    format!("(long)({v})")
                } else {
                    format!("(double)({v})")
                }
            })
            .collect();
        if kind == NearKind::Spatial2d {
            coords.push("0.0".to_string());
        }
        let (iter_ty, start, next) = match kind {
            NearKind::Discrete2d => ("op2_within", "op2_spatial_within", "op2_within_next"),
            _ => ("op2_near", "op2_spatial_near", "op2_near_next"),
        };
        let it = self.fresh("op2_near");
        let at = self.fresh("op2_at");
        self.out.open("");
        self.out.line(&format!(
            "{iter_ty} {it} = {start}(&{receiver}, {});",
            coords.join(", ")
        ));
        self.out.line(&format!("long {at};"));
        self.out.open(&format!("while ({next}(&{it}, &{at}))"));
        self.scopes.push(Vec::new());
        let name = var.ident.to_string();
        let c = self.declare_name(&name);
        let t = Ty::USIZE;
        self.out
            .line(&format!("const {} {c} = ({}){at};", t.c_name(), t.c_name()));
        self.bind(&name, c, ETy::Scalar(t), Kind::Local);
        self.block_stmts(&f.body);
        self.scopes.pop();
        self.out.close("");
        self.out.close("");
        true
    }
}
