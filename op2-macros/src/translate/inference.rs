//! Types of locals that literals alone type (`let mut acc = 0.0;`, `for i
//! in 0..3`): Rust infers them from their later uses (`acc += x[j]` makes
//! `acc` an `f32` where `x` is `&[f32; 4]`; `a[j]` makes `j` a `usize`), where
//! the translator, reading in order, first gives them the literals' default
//! types. Such a local is *soft*; each pass notes the type its uses give,
//! and `translate` runs again with those types until nothing new is found.
//! A soft local whose value comes from other soft locals (`let b = acc *
//! 2.0;`) passes the type it is given back to them.

use syn::{BinOp, Expr, UnOp};

use super::types::Ty;
use super::Translator;

impl Translator {
    /// The soft locals `e` is made of, if it is made of soft locals and
    /// literals alone (through operators and parentheses; a shift's amount
    /// does not share its type); `None` for anything else.
    pub(super) fn soft_locals(&self, e: &Expr) -> Option<Vec<usize>> {
        match e {
            Expr::Lit(_) => Some(Vec::new()),
            Expr::Path(p) => {
                let v = self.lookup(&p.path.get_ident()?.to_string())?;
                v.soft.map(|k| vec![k])
            }
            Expr::Paren(p) => self.soft_locals(&p.expr),
            Expr::Group(g) => self.soft_locals(&g.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_) | UnOp::Not(_)) => self.soft_locals(&u.expr),
            Expr::Binary(b) => match b.op {
                BinOp::Shl(_) | BinOp::Shr(_) => self.soft_locals(&b.left),
                op if comparison_or_logic(op) => None,
                _ => {
                    let mut ks = self.soft_locals(&b.left)?;
                    ks.extend(self.soft_locals(&b.right)?);
                    Some(ks)
                }
            },
            _ => None,
        }
    }

    /// Notes that `e` has type `t` where `e` is made of soft locals: each of
    /// them has `t` (Rust gives both sides of `+`, `=`, `<` one type).
    pub(super) fn note(&mut self, e: &Expr, t: Ty) {
        if !matches!(t, Ty::Known(_)) || t == Ty::BOOL {
            return;
        }
        for k in self.soft_locals(e).unwrap_or_default() {
            self.inferred.insert(k, t);
        }
    }

    /// Notes the types two operands give each other: a soft side takes the
    /// other side's type where that type owes nothing to soft locals (`m =
    /// m.abs()` says nothing of `m`), or the type found for the other side's
    /// soft locals where both are soft (`s += t` once `t` is known).
    pub(super) fn note_pair(&mut self, left: &Expr, right: &Expr) {
        match (self.soft_locals(left).is_some(), self.soft_locals(right).is_some()) {
            (true, false) if !self.typed_by_soft(right) => {
                let t = self.ty(right).scalar();
                self.note(left, t);
            }
            (false, true) if !self.typed_by_soft(left) => {
                let t = self.ty(left).scalar();
                self.note(right, t);
            }
            (true, true) => {
                if let Some(t) = self.found(right) {
                    self.note(left, t);
                }
                if let Some(t) = self.found(left) {
                    self.note(right, t);
                }
            }
            _ => {}
        }
    }

    /// The type found so far (this pass or an earlier one) for one of the
    /// soft locals `e` is made of.
    fn found(&self, e: &Expr) -> Option<Ty> {
        self.soft_locals(e)?
            .into_iter()
            .find_map(|k| self.inferred.get(&k).or(self.overrides.get(&k)).copied())
    }

    /// Whether the type of `e` comes from a soft local: `m.abs()` and `m *
    /// x` do where `m` is soft, `x[j]` does not (an index has no say in the
    /// element's type), nor does `m as f32`.
    fn typed_by_soft(&self, e: &Expr) -> bool {
        match e {
            Expr::Path(_) => self.soft_locals(e).is_some_and(|ks| !ks.is_empty()),
            Expr::Paren(p) => self.typed_by_soft(&p.expr),
            Expr::Group(g) => self.typed_by_soft(&g.expr),
            Expr::Unary(u) => self.typed_by_soft(&u.expr),
            Expr::Binary(b) => match b.op {
                BinOp::Shl(_) | BinOp::Shr(_) => self.typed_by_soft(&b.left),
                op if comparison_or_logic(op) => false,
                _ => self.typed_by_soft(&b.left) || self.typed_by_soft(&b.right),
            },
            Expr::Index(i) => self.typed_by_soft(&i.expr),
            Expr::MethodCall(m) => self.typed_by_soft(&m.receiver),
            Expr::Call(c) => c.args.first().is_some_and(|a| self.typed_by_soft(a)),
            Expr::Cast(_) | Expr::Lit(_) => false,
            other => self.mentions_soft(other),
        }
    }

    /// Whether `e` names a soft local anywhere.
    fn mentions_soft(&self, e: &Expr) -> bool {
        struct Names<'t>(&'t Translator, bool);
        impl<'ast> syn::visit::Visit<'ast> for Names<'_> {
            fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
                let soft = p
                    .path
                    .get_ident()
                    .and_then(|i| self.0.lookup(&i.to_string()))
                    .is_some_and(|v| v.soft.is_some());
                self.1 |= soft;
            }
        }
        let mut names = Names(self, false);
        syn::visit::Visit::visit_expr(&mut names, e);
        names.1
    }

    /// The next soft local's number, and the type an earlier pass found
    /// for it.
    pub(super) fn next_soft(&mut self) -> (usize, Option<Ty>) {
        let k = self.soft_count;
        self.soft_count += 1;
        (k, self.overrides.get(&k).copied())
    }
}

/// `==`, `<`, `&&`, ...: a bool from two operands (comparisons still give
/// their operands one type, which [`Translator::note_pair`] notes).
fn comparison_or_logic(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq(_)
            | BinOp::Ne(_)
            | BinOp::Lt(_)
            | BinOp::Le(_)
            | BinOp::Gt(_)
            | BinOp::Ge(_)
            | BinOp::And(_)
            | BinOp::Or(_)
    )
}
