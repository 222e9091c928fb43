//! Expressions: literals, names, operators, indices, casts, calls and
//! value-producing `if`s and blocks, each emitted as one parenthesised C
//! expression.

use op2_kernel_abi::c_interface::{self, INDEX, LOCAL_INDEX, STATUS};
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, Lit, Stmt, Type, UnOp};

use super::math::named_constant;
use super::names::{Kind, Var};
use super::types::{ETy, Ty};
use super::Translator;

impl Translator {
    /// Emits an expression as a C value; `want` fixes the type of literals.
    pub(super) fn expr(&mut self, e: &Expr, want: Option<Ty>) -> String {
        match e {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(_) | Lit::Float(_) if unsupported_suffix(&l.lit) => {
                    self.err(
                        l.span(),
                        "kernels have the types i32, i64, u32, u64, usize, isize, f32, f64 and bool; this literal's suffix names another",
                    );
                    String::new()
                }
                Lit::Float(f) => {
                    let t = Ty::from_rust(f.suffix()).unwrap_or(match want {
                        Some(Ty::F32) => Ty::F32,
                        _ => Ty::F64,
                    });
                    float_literal(f.base10_digits(), t)
                }
                Lit::Int(i) => {
                    let t = Ty::from_rust(i.suffix()).unwrap_or_else(|| want.filter(|w| w.is_int()).unwrap_or(Ty::I32));
                    if want.is_some_and(|w| w.is_float()) && i.suffix().is_empty() {
                        self.err(
                            i.span(),
                            "an integer literal where a float is needed: write `2.0`, not `2`",
                        );
                    }
                    int_literal(i.base10_digits(), t)
                }
                Lit::Bool(b) => (if b.value { "1" } else { "0" }).to_string(),
                other => {
                    self.err(other.span(), "unsupported literal");
                    String::new()
                }
            },
            Expr::Path(p) => self.path(p),
            Expr::Binary(b) => self.binary(b, want),
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    let x = self.expr(&u.expr, want);
                    let t = self.ty(&u.expr).scalar().unify(want.unwrap_or(Ty::IntLit)).concrete();
                    match &*u.expr {
                        // i64::MIN's digits are no `long`: C would widen them.
                        Expr::Lit(syn::ExprLit { lit: Lit::Int(i), .. })
                            if i.base10_digits() == "9223372036854775808" && is_signed_int(t) =>
                        {
                            "(-9223372036854775807L - 1)".to_string()
                        }
                        // `-1` is a constant; C negates it without overflow.
                        Expr::Lit(_) => format!("(-{x})"),
                        _ if is_signed_int(t) && !self.in_const => {
                            format!("op2_wrapping_neg_{}({x})", t.helper_suffix())
                        }
                        _ => format!("(-{x})"),
                    }
                }
                UnOp::Not(_) => {
                    if self.ty(&u.expr).scalar() == Ty::BOOL {
                        format!("(!{})", self.expr(&u.expr, Some(Ty::BOOL)))
                    } else {
                        format!("(~{})", self.expr(&u.expr, want))
                    }
                }
                UnOp::Deref(_) => match &*u.expr {
                    // `*p` on a parameter: the path already reads through it.
                    Expr::Path(p) => self.path(p),
                    other => self.expr(other, want),
                },
                _ => {
                    self.err(u.span(), "unsupported unary operator");
                    String::new()
                }
            },
            Expr::Assign(a) if matches!(self.ty(&a.left), ETy::Array(..)) => {
                self.err(a.span(), "an array assignment is a statement of its own: `a = b;`");
                String::new()
            }
            Expr::Assign(a) => {
                self.note_pair(&a.left, &a.right);
                let t = self.ty(&a.left).scalar();
                let l = self.expr(&a.left, None);
                let r = self.expr(&a.right, Some(t));
                format!("({l} = {r})")
            }
            Expr::Index(i) => {
                self.note(&i.index, Ty::USIZE);
                if let Some(v) = self.ragged_root(&i.expr) {
                    if v.ragged.as_ref().is_some_and(|r| r.mutable) {
                        self.err(i.span(), INC_ONLY);
                        return String::new();
                    }
                    if self.ragged_param(&i.expr).is_some() {
                        return self.ragged_index(&v, &i.index);
                    }
                    // `x[j][k]`: `x[j]` is a row pointer, indexed below
                    // against the row's length D (`dims[1]`).
                }
                let base = self.expr(&i.expr, None);
                let idx = self.expr(&i.index, None);
                match self.index_length(&i.expr, 0) {
                    Some(len) => {
                        // Parameters and kernel-local arrays index through
                        // different macros: host vector groups lay a
                        // parameter's values out lane-strided and redefine
                        // `OP2_IX` alone (`lanes_c`).
                        let mac = if self.indexes_parameter(&i.expr) {
                            INDEX
                        } else {
                            LOCAL_INDEX
                        };
                        format!("{base}[{mac}({}, {len})]", strip_parens(&idx))
                    }
                    None => {
                        self.err(
                            i.span(),
                            "kernels index named arrays only (parameters and `let` arrays)",
                        );
                        String::new()
                    }
                }
            }
            Expr::Paren(p) => self.expr(&p.expr, want),
            Expr::Group(g) => self.expr(&g.expr, want),
            Expr::Cast(c) => {
                let to = match &*c.ty {
                    Type::Path(p) => p.path.get_ident().and_then(|i| Ty::from_rust(&i.to_string())),
                    _ => None,
                };
                let Some(to) = to else {
                    self.err(c.ty.span(), "kernels can cast (`as`) to numeric types only");
                    return String::new();
                };
                let from = self.ty(&c.expr).scalar();
                // Rust types an unsuffixed literal by the cast (`0.1 as f32` is
                // the f32 nearest 0.1, not the f64 nearest rounded again).
                let literal_of = |want: Ty| match (is_literal(&c.expr), from) {
                    (true, Ty::FloatLit) if want.is_float() => Some(want),
                    (true, Ty::IntLit) if want.is_int() => Some(want),
                    _ => None,
                };
                let inner = self.expr(&c.expr, literal_of(to));
                if from.is_float() && to.is_int() {
                    // Rust's `as` saturates and maps NaN to 0; a C cast of an
                    // out-of-range value is undefined.
                    format!("op2_as_{}((double)({inner}))", to.helper_suffix())
                } else {
                    format!("(({}){inner})", to.c_name())
                }
            }
            Expr::MethodCall(m) if self.ty(&m.receiver) == ETy::Stream => self.random_draw(m),
            Expr::MethodCall(m) if self.ty(&m.receiver) == ETy::Fate => self.fate_call(m),
            Expr::MethodCall(m) if matches!(self.ty(&m.receiver), ETy::Spatial(_)) => {
                self.err(
                    m.span(),
                    "a spatial message parameter is only iterated: `for j in msgs.near(x, y, z) { .. }` (`msgs.within(x, y, r)` for a `Discrete2d`)",
                );
                String::new()
            }
            Expr::MethodCall(m) if m.method == "len" => self.len_call(m),
            Expr::MethodCall(m) => {
                let args: Vec<&Expr> = m.args.iter().collect();
                self.math(&m.method.to_string(), &m.receiver, &args, m.method.span(), None)
            }
            Expr::Call(c) if super::random::is_stream_new(c) => self.random_stream_new(c),
            Expr::Call(c) => {
                let (fty, name) = match &*c.func {
                    Expr::Path(p) => {
                        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                        (Ty::from_rust(&segs[0]), segs.last().cloned().unwrap_or_default())
                    }
                    _ => (None, String::new()),
                };
                let args: Vec<&Expr> = c.args.iter().collect();
                match args.split_first() {
                    Some((first, rest)) => self.math(&name, first, rest, c.func.span(), fty),
                    None => {
                        self.err(c.span(), "math functions take at least one argument");
                        String::new()
                    }
                }
            }
            Expr::If(i) => {
                // A value-producing `if` inside an expression: a conditional
                // expression when both branches are single values.
                let single = |b: &Block| match b.stmts.as_slice() {
                    [Stmt::Expr(e, None)] => Some(e.clone()),
                    _ => None,
                };
                let then = single(&i.then_branch);
                let els = match i.else_branch.as_ref().map(|(_, e)| &**e) {
                    Some(Expr::Block(b)) => single(&b.block),
                    Some(e @ Expr::If(_)) => Some(e.clone()),
                    _ => None,
                };
                match (then, els) {
                    (Some(a), Some(b)) => {
                        let t = want.unwrap_or_else(|| self.ty(&a).scalar().unify(self.ty(&b).scalar()));
                        let c = self.expr(&i.cond, Some(Ty::BOOL));
                        let (a, b) = (self.expr(&a, Some(t)), self.expr(&b, Some(t)));
                        format!("({c} ? {a} : {b})")
                    }
                    _ => {
                        self.err(i.span(), "inside an expression, `if` branches must be single values; assign to a variable with an `if` statement instead");
                        String::new()
                    }
                }
            }
            Expr::Block(b) => match b.block.stmts.as_slice() {
                [Stmt::Expr(inner, None)] => self.expr(inner, want),
                _ => {
                    self.err(b.span(), "a block used as a value must hold a single expression");
                    String::new()
                }
            },
            other => {
                self.err(
                    other.span(),
                    "this expression cannot be used as a value here (arrays only as `let` initialisers)",
                );
                String::new()
            }
        }
    }

    fn path(&mut self, p: &syn::ExprPath) -> String {
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [one] = segs.as_slice() {
            if let Some(v) = self.lookup(one) {
                let mutable_ragged = v.ragged.as_ref().map(|r| r.mutable);
                return match (v.kind, mutable_ragged) {
                    (Kind::ParamScalar, _) => format!("(*{})", v.c),
                    // An enum constant is a C `int`: outside the constant
                    // expressions of other `const`s, give it its Rust type.
                    (Kind::Const, _) if !self.in_const => match v.ty {
                        ETy::Scalar(t) if t.is_int() && t.concrete() != Ty::I32 => format!("(({}){})", t.c_name(), v.c),
                        _ => v.c.clone(),
                    },
                    (_, Some(mutable)) => {
                        let msg = if mutable { INC_ONLY } else { RAGGED_NOT_A_VALUE };
                        self.err(p.span(), msg);
                        String::new()
                    }
                    _ => v.c.clone(),
                };
            }
        }
        match named_constant(&segs) {
            Some((_, text)) => text,
            None => {
                self.err(
                    p.span(),
                    format!(
                        "`{}` is not known inside the kernel: pass outside data as a READ Global parameter, or declare a `const` inside the kernel",
                        segs.join("::")
                    ),
                );
                String::new()
            }
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary, want: Option<Ty>) -> String {
        if matches!(b.op, BinOp::AddAssign(_) | BinOp::SubAssign(_))
            && self
                .ragged_root(&b.left)
                .is_some_and(|v| v.ragged.is_some_and(|r| r.mutable))
        {
            return self.ragged_inc(b);
        }
        if !matches!(
            b.op,
            BinOp::Shl(_) | BinOp::Shr(_) | BinOp::ShlAssign(_) | BinOp::ShrAssign(_) | BinOp::And(_) | BinOp::Or(_)
        ) {
            self.note_pair(&b.left, &b.right);
        }
        let (lt, rt) = (self.ty(&b.left).scalar(), self.ty(&b.right).scalar());
        let op = match b.op {
            BinOp::Add(_) => "+",
            BinOp::Sub(_) => "-",
            BinOp::Mul(_) => "*",
            BinOp::Div(_) => "/",
            BinOp::Rem(_) => "%",
            BinOp::And(_) => "&&",
            BinOp::Or(_) => "||",
            BinOp::BitXor(_) => "^",
            BinOp::BitAnd(_) => "&",
            BinOp::BitOr(_) => "|",
            BinOp::Shl(_) => "<<",
            BinOp::Shr(_) => ">>",
            BinOp::Eq(_) => "==",
            BinOp::Lt(_) => "<",
            BinOp::Le(_) => "<=",
            BinOp::Ne(_) => "!=",
            BinOp::Ge(_) => ">=",
            BinOp::Gt(_) => ">",
            BinOp::AddAssign(_) => "+=",
            BinOp::SubAssign(_) => "-=",
            BinOp::MulAssign(_) => "*=",
            BinOp::DivAssign(_) => "/=",
            BinOp::RemAssign(_) => "%=",
            BinOp::BitXorAssign(_) => "^=",
            BinOp::BitAndAssign(_) => "&=",
            BinOp::BitOrAssign(_) => "|=",
            BinOp::ShlAssign(_) => "<<=",
            BinOp::ShrAssign(_) => ">>=",
            _ => {
                self.err(b.span(), "unsupported operator");
                return String::new();
            }
        };
        let (lw, rw) = match b.op {
            BinOp::And(_) | BinOp::Or(_) => (Some(Ty::BOOL), Some(Ty::BOOL)),
            BinOp::Shl(_) | BinOp::Shr(_) | BinOp::ShlAssign(_) | BinOp::ShrAssign(_) => (want.or(Some(lt)), None),
            BinOp::Eq(_) | BinOp::Lt(_) | BinOp::Le(_) | BinOp::Ne(_) | BinOp::Ge(_) | BinOp::Gt(_) => {
                let t = lt.unify(rt);
                (Some(t), Some(t))
            }
            _ => {
                let mut t = lt.unify(rt);
                if matches!(t, Ty::FloatLit | Ty::IntLit) {
                    t = want.unwrap_or(t);
                }
                (Some(t), Some(t))
            }
        };
        if is_compound_assignment(b.op)
            && has_calls(&b.left)
            && lw.is_some_and(|t| t.concrete().is_int() || is_rem(b.op))
        {
            // The helpers below take the target's value and store back into
            // it: C would evaluate it twice, drawing twice.
            self.err(
                b.left.span(),
                "the target of this compound assignment calls something (a random draw?): compute the index into a `let` first",
            );
            return String::new();
        }
        let l = self.expr(&b.left, lw);
        let r = self.expr(&b.right, rw);
        // Integer division and remainder go through helpers: checked mode
        // turns a zero divisor or MIN / -1 into an error instead of SIGFPE.
        let int_division = |t: Option<Ty>| {
            let t = t.map(Ty::concrete).filter(|t| t.is_int())?;
            let name = match b.op {
                BinOp::Div(_) | BinOp::DivAssign(_) => "div",
                BinOp::Rem(_) | BinOp::RemAssign(_) => "rem",
                _ => return None,
            };
            Some(format!("op2_{name}_{}", t.helper_suffix()))
        };
        if let Some(helper) = int_division(lw).filter(|_| !self.in_const) {
            return match b.op {
                BinOp::DivAssign(_) | BinOp::RemAssign(_) => format!("({l} = {helper}({l}, {r}, {STATUS}))"),
                _ => format!("{helper}({l}, {r}, {STATUS})"),
            };
        }
        // C has no `%` on floats: Rust's is `fmod` (exact, so an f32 one
        // through double rounds to the same float, in every dialect).
        if let (BinOp::Rem(_) | BinOp::RemAssign(_), Some(t)) = (b.op, lw.map(Ty::concrete).filter(|t| t.is_float())) {
            let rem = match t == Ty::F32 {
                true => format!("((float)fmod((double)({l}), (double)({r})))"),
                false => format!("fmod({l}, {r})"),
            };
            return match b.op {
                BinOp::RemAssign(_) => format!("({l} = {rem})"),
                _ => rem,
            };
        }
        if let Some(wrapping) = lw.and_then(|t| wrapping_helper(b.op, t)).filter(|_| !self.in_const) {
            // A shift's amount has any integer type; the helper masks a `long`.
            let r = match b.op {
                BinOp::Shl(_) | BinOp::Shr(_) | BinOp::ShlAssign(_) | BinOp::ShrAssign(_) => format!("(long)({r})"),
                _ => r,
            };
            return match b.op {
                BinOp::AddAssign(_)
                | BinOp::SubAssign(_)
                | BinOp::MulAssign(_)
                | BinOp::ShlAssign(_)
                | BinOp::ShrAssign(_) => format!("({l} = {wrapping}({l}, {r}))"),
                _ => format!("{wrapping}({l}, {r})"),
            };
        }
        format!("({l} {op} {r})")
    }

    /// The ragged parameter `e` names (through parentheses and `*`).
    pub(super) fn ragged_param(&self, e: &Expr) -> Option<Var> {
        match e {
            Expr::Paren(p) => self.ragged_param(&p.expr),
            Expr::Group(g) => self.ragged_param(&g.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => self.ragged_param(&u.expr),
            Expr::Path(p) => {
                let v = self.lookup(&p.path.get_ident()?.to_string())?;
                v.ragged.is_some().then(|| v.clone())
            }
            _ => None,
        }
    }

    /// The ragged parameter at the root of an index chain (`x` of `x[j][k]`).
    fn ragged_root(&self, e: &Expr) -> Option<Var> {
        match e {
            Expr::Index(i) => self.ragged_root(&i.expr),
            Expr::Paren(p) => self.ragged_root(&p.expr),
            Expr::Group(g) => self.ragged_root(&g.expr),
            other => self.ragged_param(other),
        }
    }

    /// `x[j]` on a ragged parameter: the `j`th target's value (`&[T]`), or a
    /// pointer to its row of D values (`&[[T; D]]`).
    fn ragged_index(&mut self, v: &Var, j: &Expr) -> String {
        let r = v.ragged.as_ref().expect("a ragged parameter");
        let idx = self.expr(j, None);
        let target = format!(
            "{}({}, {INDEX}({}, {}))",
            self.targets_macro(&r.param),
            r.targets,
            strip_parens(&idx),
            r.len
        );
        if r.rows {
            format!("({} + (long){target} * {})", v.c, v.dims[1])
        } else {
            format!("{}[{target}]", v.c)
        }
    }

    /// `x[j] += e` / `x[j][k] -= e` on a `&mut` ragged parameter (an INC
    /// argument): a call of the wrapper's `op2_ragged_inc_<type>`, a plain
    /// `+=` or an atomic add, on the target's address.
    fn ragged_inc(&mut self, b: &syn::ExprBinary) -> String {
        fn peel(e: &Expr) -> &Expr {
            match e {
                Expr::Paren(p) => peel(&p.expr),
                Expr::Group(g) => peel(&g.expr),
                other => other,
            }
        }
        // `x[j]` (j, no k) or `x[j][k]`.
        let (v, j, k) = match peel(&b.left) {
            Expr::Index(outer) => match (self.ragged_param(&outer.expr), peel(&outer.expr)) {
                (Some(v), _) => (v, &*outer.index, None),
                (None, Expr::Index(inner)) if self.ragged_param(&inner.expr).is_some() => {
                    let v = self.ragged_param(&inner.expr).expect("checked");
                    (v, &*inner.index, Some(&*outer.index))
                }
                _ => {
                    self.err(b.left.span(), INC_ONLY);
                    return String::new();
                }
            },
            _ => {
                self.err(b.left.span(), INC_ONLY);
                return String::new();
            }
        };
        let rows = v.ragged.as_ref().is_some_and(|r| r.rows);
        let target = match (rows, k) {
            (false, None) => self.ragged_index(&v, j),
            (true, Some(k)) => {
                let row = self.ragged_index(&v, j);
                let idx = self.expr(k, None);
                format!("{row}[{INDEX}({}, {})]", strip_parens(&idx), v.dims[1])
            }
            (true, None) => {
                self.err(
                    b.left.span(),
                    "`x[j]` of a `&mut [[T; D]]` parameter is a row: add to one of its values, `x[j][k] += v`",
                );
                return String::new();
            }
            (false, Some(_)) => {
                self.err(
                    b.left.span(),
                    "a `&mut [T]` parameter's targets are single values: add to `x[j]`",
                );
                return String::new();
            }
        };
        let t = v.ty.scalar();
        let e = self.expr(&b.right, Some(t));
        let e = match b.op {
            // Negated as Rust's release build would: -(i32::MIN) wraps.
            BinOp::SubAssign(_) if is_signed_int(t) => {
                format!("op2_wrapping_neg_{}({})", t.helper_suffix(), strip_parens(&e))
            }
            BinOp::SubAssign(_) => format!("(-({}))", strip_parens(&e)),
            _ => e,
        };
        format!("{}(&{target}, {e})", c_interface::ragged_inc(t.helper_suffix()))
    }

    /// `a.len()`: the length of an array, an array's row, or a ragged
    /// parameter (its number of targets), as a `usize`.
    fn len_call(&mut self, m: &syn::ExprMethodCall) -> String {
        if !m.args.is_empty() || m.turbofish.is_some() {
            self.err(m.span(), "`.len()` takes no arguments");
            return String::new();
        }
        match self.index_length(&m.receiver, 0) {
            Some(len) => format!("(({}){len})", Ty::USIZE.c_name()),
            None => {
                self.err(
                    m.span(),
                    "`.len()` is defined on arrays (parameters and `let` arrays) and ragged parameters only",
                );
                String::new()
            }
        }
    }

    /// The C length of the array `e[..]` indexes: `e` is a named array, or an
    /// element of one (`v[k]` in `v[k][c]`).
    /// Whether `e` (an array, possibly indexed or dereferenced) is rooted
    /// at a kernel parameter rather than a local array or a `const`.
    pub(super) fn indexes_parameter(&self, e: &Expr) -> bool {
        match e {
            Expr::Index(i) => self.indexes_parameter(&i.expr),
            Expr::Paren(p) => self.indexes_parameter(&p.expr),
            Expr::Group(g) => self.indexes_parameter(&g.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => self.indexes_parameter(&u.expr),
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| self.lookup(&i.to_string()))
                .is_some_and(|v| !matches!(v.kind, Kind::Local | Kind::Const)),
            _ => false,
        }
    }

    pub(super) fn index_length(&self, e: &Expr, depth: usize) -> Option<String> {
        match e {
            Expr::Index(i) => self.index_length(&i.expr, depth + 1),
            Expr::Paren(p) => self.index_length(&p.expr, depth),
            Expr::Group(g) => self.index_length(&g.expr, depth),
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => self.index_length(&u.expr, depth),
            Expr::Path(p) => {
                let name = p.path.get_ident()?.to_string();
                self.lookup(&name)?.dims.get(depth).cloned()
            }
            _ => None,
        }
    }
}

/// Any use of a `&mut` ragged parameter but `x[j] += v`.
pub(super) const INC_ONLY: &str = "a `&mut` ragged parameter is an INC argument: it can only be added to (`x[j] += v` / `x[j][k] += v`), not read or assigned";

/// A ragged parameter named on its own.
const RAGGED_NOT_A_VALUE: &str =
    "a ragged parameter is not a value: index it (`x[j]`), loop over it (`for v in x`) or take its `.len()`";

fn int_literal(digits: &str, ty: Ty) -> String {
    let suffix = match ty.concrete() {
        Ty::I64 | Ty::ISIZE => "L",
        Ty::U32 => "u",
        Ty::U64 | Ty::USIZE => "ul",
        _ => "",
    };
    format!("{digits}{suffix}")
}

fn float_literal(text: &str, ty: Ty) -> String {
    let mut t = text.replace('_', "");
    if !t.contains(['.', 'e', 'E']) {
        t.push_str(".0");
    } else if t.ends_with('.') {
        t.push('0');
    }
    if ty == Ty::F32 {
        t.push('f');
    }
    t
}

/// Drops one pair of outer parentheses (for statements and indices).
pub(super) fn strip_parens(s: &str) -> &str {
    if s.starts_with('(') && s.ends_with(')') {
        // Only when the outer pair matches itself.
        let mut depth = 0;
        for (i, ch) in s.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 && i != s.len() - 1 {
                        return s;
                    }
                }
                _ => {}
            }
        }
        return &s[1..s.len() - 1];
    }
    s
}

/// Whether `t` is a signed integer type, whose overflow C leaves undefined.
fn is_signed_int(t: Ty) -> bool {
    t.kernel_scalar().is_signed_int()
}

/// The prelude helper that gives integer operator `op` on `t` Rust's
/// release-build meaning, where C's differs: signed `+ - *` wrap (C leaves
/// signed overflow undefined, and optimisers rely on that) and shifts mask
/// their amount to the type's width (C leaves wider shifts undefined).
fn wrapping_helper(op: BinOp, t: Ty) -> Option<String> {
    let t = t.concrete();
    let name = match op {
        BinOp::Add(_) | BinOp::AddAssign(_) if is_signed_int(t) => "add",
        BinOp::Sub(_) | BinOp::SubAssign(_) if is_signed_int(t) => "sub",
        BinOp::Mul(_) | BinOp::MulAssign(_) if is_signed_int(t) => "mul",
        BinOp::Shl(_) | BinOp::ShlAssign(_) if t.is_int() => "shl",
        BinOp::Shr(_) | BinOp::ShrAssign(_) if t.is_int() => "shr",
        _ => return None,
    };
    Some(format!("op2_wrapping_{name}_{}", t.helper_suffix()))
}

/// Whether a number literal's suffix names a type kernels do not have
/// (`u8`, `i128`, ...): C would read it as another type.
fn unsupported_suffix(lit: &Lit) -> bool {
    let suffix = match lit {
        Lit::Int(i) => i.suffix(),
        Lit::Float(f) => f.suffix(),
        _ => return false,
    };
    !suffix.is_empty() && Ty::from_rust(suffix).is_none_or(|t| t == Ty::BOOL)
}

/// A literal, through parentheses and minus signs (`-0.1`, `(2)`).
fn is_literal(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) => true,
        Expr::Paren(p) => is_literal(&p.expr),
        Expr::Group(g) => is_literal(&g.expr),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => is_literal(&u.expr),
        _ => false,
    }
}

/// `+=`, `<<=`, ... : an operator that stores into its left side.
fn is_compound_assignment(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

fn is_rem(op: BinOp) -> bool {
    matches!(op, BinOp::Rem(_) | BinOp::RemAssign(_))
}

/// Whether `e` calls a function or method anywhere (a random draw does).
fn has_calls(e: &Expr) -> bool {
    struct Calls(bool);
    impl<'ast> syn::visit::Visit<'ast> for Calls {
        fn visit_expr_call(&mut self, _: &'ast syn::ExprCall) {
            self.0 = true;
        }
        fn visit_expr_method_call(&mut self, _: &'ast syn::ExprMethodCall) {
            self.0 = true;
        }
    }
    let mut calls = Calls(false);
    syn::visit::Visit::visit_expr(&mut calls, e);
    calls.0
}
