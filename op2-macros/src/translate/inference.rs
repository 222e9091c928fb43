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
    /// other side's type when that one is not soft.
    pub(super) fn note_pair(&mut self, left: &Expr, right: &Expr) {
        match (self.soft_locals(left).is_some(), self.soft_locals(right).is_some()) {
            (true, false) => {
                let t = self.ty(right).scalar();
                self.note(left, t);
            }
            (false, true) => {
                let t = self.ty(left).scalar();
                self.note(right, t);
            }
            _ => {}
        }
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
