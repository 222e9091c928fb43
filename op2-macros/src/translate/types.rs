//! Types: the scalar types of translated kernels (over the kernel
//! language's table, `op2_kernel_abi`), the shapes of values,
//! declared types and array dimensions, and the type of every expression.

use op2_kernel_abi::NearKind;
use op2_kernel_abi::{KernelScalar, RandomDraw};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Lit, Stmt, Type, UnOp};

use super::math::named_constant;
use super::Translator;

/// A scalar type in a translated kernel, or a literal whose type the context
/// has not fixed yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A type the kernel language names.
    Known(KernelScalar),
    /// An unsuffixed float literal: `f64` unless the context says `f32`.
    FloatLit,
    /// An unsuffixed integer literal: `i32` unless the context says otherwise.
    IntLit,
}

impl Ty {
    // The known types by name; constants, so that patterns can name them.
    pub const F64: Ty = Ty::Known(KernelScalar::F64);
    pub const F32: Ty = Ty::Known(KernelScalar::F32);
    pub const I32: Ty = Ty::Known(KernelScalar::I32);
    pub const I64: Ty = Ty::Known(KernelScalar::I64);
    pub const U32: Ty = Ty::Known(KernelScalar::U32);
    pub const U64: Ty = Ty::Known(KernelScalar::U64);
    pub const USIZE: Ty = Ty::Known(KernelScalar::Usize);
    pub const ISIZE: Ty = Ty::Known(KernelScalar::Isize);
    pub const BOOL: Ty = Ty::Known(KernelScalar::Bool);

    /// The type named by a Rust type identifier.
    pub fn from_rust(name: &str) -> Option<Ty> {
        KernelScalar::from_rust_name(name).map(Ty::Known)
    }

    /// The kernel language's type; literals take their default type.
    pub fn kernel_scalar(self) -> KernelScalar {
        match self {
            Ty::Known(t) => t,
            Ty::FloatLit => KernelScalar::F64,
            Ty::IntLit => KernelScalar::I32,
        }
    }

    /// The C spelling.
    pub fn c_name(self) -> &'static str {
        self.kernel_scalar().c_name()
    }

    /// Literals take their default type.
    pub fn concrete(self) -> Ty {
        Ty::Known(self.kernel_scalar())
    }

    pub fn is_float(self) -> bool {
        match self {
            Ty::Known(t) => t.is_float(),
            Ty::FloatLit => true,
            Ty::IntLit => false,
        }
    }

    pub fn is_int(self) -> bool {
        match self {
            Ty::Known(t) => t.is_int(),
            Ty::FloatLit => false,
            Ty::IntLit => true,
        }
    }

    /// The type of a binary arithmetic expression of `self` and `other`: a
    /// concrete side fixes a literal one.
    pub fn unify(self, other: Ty) -> Ty {
        match (self, other) {
            (Ty::FloatLit | Ty::IntLit, t) if t != Ty::FloatLit && t != Ty::IntLit => t,
            (t, _) => t,
        }
    }

    /// Suffix of helper functions (`op2_min_i32`).
    pub fn helper_suffix(self) -> &'static str {
        self.kernel_scalar().helper_suffix()
    }
}

/// The shape of a value in a kernel: a scalar or an array of some rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ETy {
    Scalar(Ty),
    Array(Ty, usize),
    /// A random stream (`Philox`): a local, created and drawn from only.
    Stream,
    /// A spatial message list's bins (`Spatial2d`/`Spatial3d`/`Discrete2d`):
    /// a local made by the lowered prologue, iterated only.
    Spatial(NearKind),
    /// An agent's fate (`&mut Fate`): a local made by the lowered prologue,
    /// only told `.die()` or `.spawn()`.
    Fate,
}

impl ETy {
    /// The scalar type of a value or of an array's elements. A stream is not
    /// a number: its 32-bit words are its nearest stand-in, and translation
    /// refuses streams wherever a number is needed.
    pub(super) fn scalar(self) -> Ty {
        match self {
            ETy::Scalar(t) | ETy::Array(t, _) => t,
            ETy::Stream | ETy::Spatial(_) | ETy::Fate => Ty::U32,
        }
    }
}

/// An array length or dim as C text (a literal or a const's name).
pub(super) fn const_expr_text(e: &Expr) -> String {
    match e {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(i), .. }) => i.base10_digits().to_string(),
        Expr::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("_"),
        other => quote::quote!(#other).to_string(),
    }
}

impl Translator {
    pub(super) fn parse_type(&mut self, t: &Type) -> Option<ETy> {
        match t {
            Type::Path(p) => match p.path.get_ident().and_then(|i| Ty::from_rust(&i.to_string())) {
                Some(ty) => Some(ETy::Scalar(ty)),
                None => {
                    let names: Vec<&str> = KernelScalar::ALL.iter().map(|t| t.rust_name()).collect();
                    let msg = format!(
                        "unsupported type in a kernel: use {} or arrays of them",
                        names.join(", ")
                    );
                    self.err(t.span(), msg);
                    None
                }
            },
            Type::Array(a) => match self.parse_type(&a.elem)? {
                ETy::Scalar(ty) => Some(ETy::Array(ty, 1)),
                ETy::Array(ty, r) => Some(ETy::Array(ty, r + 1)),
                ETy::Stream | ETy::Spatial(_) | ETy::Fate => None, // never written as a type: inferred
            },
            other => {
                self.err(other.span(), "unsupported type in a kernel");
                None
            }
        }
    }

    /// Dimensions of an array type (`[[f64; 2]; 3]` -> ["3", "2"]).
    pub(super) fn array_dims_of_type(t: &Type, dims: &mut Vec<String>) {
        if let Type::Array(a) = t {
            dims.push(const_expr_text(&a.len));
            Self::array_dims_of_type(&a.elem, dims);
        }
    }

    /// Dimensions of an array initialiser (`[0.0; 4]`, `[a, b]`).
    pub(super) fn array_dims_of_expr(e: &Expr, dims: &mut Vec<String>) {
        match e {
            Expr::Repeat(r) => {
                dims.push(const_expr_text(&r.len));
                Self::array_dims_of_expr(&r.expr, dims);
            }
            Expr::Array(a) => {
                dims.push(a.elems.len().to_string());
                if let Some(first) = a.elems.first() {
                    Self::array_dims_of_expr(first, dims);
                }
            }
            Expr::Paren(p) => Self::array_dims_of_expr(&p.expr, dims),
            _ => {}
        }
    }

    /// The type of an expression, without emitting it.
    pub(super) fn ty(&self, e: &Expr) -> ETy {
        match e {
            Expr::Lit(l) => ETy::Scalar(match &l.lit {
                Lit::Float(f) => Ty::from_rust(f.suffix()).unwrap_or(Ty::FloatLit),
                Lit::Int(i) => Ty::from_rust(i.suffix()).unwrap_or(Ty::IntLit),
                _ => Ty::BOOL,
            }),
            Expr::Path(p) => {
                let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                if let [one] = segs.as_slice() {
                    if let Some(v) = self.lookup(one) {
                        return v.ty;
                    }
                }
                named_constant(&segs).map_or(ETy::Scalar(Ty::F64), |(t, _)| ETy::Scalar(t))
            }
            Expr::Binary(b) => match b.op {
                BinOp::Eq(_) | BinOp::Ne(_) | BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) => {
                    ETy::Scalar(Ty::BOOL)
                }
                BinOp::And(_) | BinOp::Or(_) => ETy::Scalar(Ty::BOOL),
                BinOp::Shl(_) | BinOp::Shr(_) => self.ty(&b.left),
                _ => ETy::Scalar(self.ty(&b.left).scalar().unify(self.ty(&b.right).scalar())),
            },
            Expr::Unary(u) => match (u.op, self.ty(&u.expr)) {
                (UnOp::Deref(_), t) => t,
                (_, t) => t,
            },
            Expr::Index(i) => match self.ty(&i.expr) {
                ETy::Array(t, 1) | ETy::Scalar(t) => ETy::Scalar(t),
                ETy::Array(t, r) => ETy::Array(t, r - 1),
                // Translation refuses indexing anything but arrays.
                ETy::Stream | ETy::Spatial(_) | ETy::Fate => ETy::Scalar(Ty::U32),
            },
            Expr::Paren(p) => self.ty(&p.expr),
            Expr::Group(g) => self.ty(&g.expr),
            Expr::Cast(c) => match &*c.ty {
                Type::Path(p) => ETy::Scalar(
                    p.path
                        .get_ident()
                        .and_then(|i| Ty::from_rust(&i.to_string()))
                        .unwrap_or(Ty::F64),
                ),
                _ => ETy::Scalar(Ty::F64),
            },
            Expr::MethodCall(m) if m.method == "len" => ETy::Scalar(Ty::USIZE),
            Expr::MethodCall(m) => match self.ty(&m.receiver) {
                ETy::Stream => RandomDraw::named(&m.method.to_string())
                    .map_or(ETy::Scalar(Ty::U32), |d| ETy::Scalar(Ty::Known(d.returns))),
                t => t,
            },
            Expr::Call(c) => match (&*c.func, super::spatial::spatial_new_dims(c)) {
                _ if super::random::is_stream_new(c) => ETy::Stream,
                _ if super::fate::is_fate_new(c) => ETy::Fate,
                (_, Some(kind)) => ETy::Spatial(kind),
                (Expr::Path(p), None) => match p.path.segments.first().map(|s| s.ident.to_string()).as_deref() {
                    Some("f32") => ETy::Scalar(Ty::F32),
                    _ => ETy::Scalar(Ty::F64),
                },
                _ => ETy::Scalar(Ty::F64),
            },
            Expr::If(i) => match i.then_branch.stmts.last() {
                Some(Stmt::Expr(e, None)) => self.ty(e),
                _ => ETy::Scalar(Ty::F64),
            },
            Expr::Block(b) => match b.block.stmts.last() {
                Some(Stmt::Expr(e, None)) => self.ty(e),
                _ => ETy::Scalar(Ty::F64),
            },
            Expr::Array(a) => match a.elems.first().map(|x| self.ty(x)) {
                Some(ETy::Scalar(t)) => ETy::Array(t, 1),
                Some(ETy::Array(t, r)) => ETy::Array(t, r + 1),
                // No arrays of streams: `let` refuses the stream's initialiser.
                Some(ETy::Stream) => ETy::Stream,
                Some(ETy::Spatial(d)) => ETy::Spatial(d),
                Some(ETy::Fate) => ETy::Fate,
                None => ETy::Array(Ty::F64, 1),
            },
            Expr::Repeat(r) => match self.ty(&r.expr) {
                ETy::Scalar(t) => ETy::Array(t, 1),
                ETy::Array(t, rank) => ETy::Array(t, rank + 1),
                ETy::Stream => ETy::Stream,
                ETy::Spatial(d) => ETy::Spatial(d),
                ETy::Fate => ETy::Fate,
            },
            _ => ETy::Scalar(Ty::F64),
        }
    }
}
