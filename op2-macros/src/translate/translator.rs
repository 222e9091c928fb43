use std::collections::HashSet;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, ItemFn, Lit, Pat, Stmt, Type, UnOp};

use super::ctype::{Ty, RESERVED};
use super::writer::Writer;
use crate::signature::{Param, Shape};

/// The shape of a value in a kernel: a scalar or an array of some rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ETy {
    Scalar(Ty),
    Array(Ty, usize),
}

impl ETy {
    fn scalar(self) -> Ty {
        match self {
            ETy::Scalar(t) | ETy::Array(t, _) => t,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `&T` / `&mut T` parameter: a C pointer read as `(*p)`.
    ParamScalar,
    /// `&[T; D]` or `&[[T; D]; A]` parameter: a C pointer indexed directly.
    ParamArray,
    /// A local variable or array.
    Local,
    /// A `const` item.
    Const,
}

#[derive(Clone)]
struct Var {
    rust: String,
    c: String,
    ty: ETy,
    kind: Kind,
    /// C text of each array length, outermost first (empty for scalars):
    /// what checked mode compares indices against.
    dims: Vec<String>,
}

struct Translator {
    scopes: Vec<Vec<Var>>,
    used: HashSet<String>,
    out: Writer,
    errors: Vec<syn::Error>,
}

/// Translates a kernel whose signature was parsed into `params` and whose body
/// passed the subset check. Returns the C function, or the errors found
/// (an unknown name, a type that cannot be inferred, an array used as a value).
///
/// The function's first parameter is `long *op2_status`, the failure record
/// of checked mode: every index goes through `OP2_IX(index, length)` and
/// every integer `/` and `%` through `op2_div_<type>` / `op2_rem_<type>`,
/// which the generated prelude defines as plain C or, when the wrapper is
/// built checked, as checks that record the first failure there. Float to
/// integer casts call `op2_as_<type>`, which saturate like Rust's `as`.
pub fn translate(func: &ItemFn, params: &[Param]) -> Result<String, Vec<syn::Error>> {
    let mut t = Translator {
        scopes: vec![Vec::new()],
        used: HashSet::new(),
        out: Writer::default(),
        errors: Vec::new(),
    };
    collect_idents(&func.block, &mut t.used);
    let mut c_params = Vec::new();
    for p in params {
        let ty = Ty::from_rust(&p.scalar.to_string()).expect("signature.rs admits scalar types only");
        let c = t.declare_name(&p.name.to_string());
        let constness = if p.mutable { "" } else { "const " };
        // A literal length stays; a named one becomes a macro that the code
        // generator defines from the parameter's recorded dim (or arity).
        let length = |e: &Expr, macro_name: &str| match e {
            Expr::Lit(syn::ExprLit { lit: Lit::Int(i), .. }) => i.base10_digits().to_string(),
            _ => format!("{macro_name}_{}", p.name),
        };
        let (decl, ety, kind, dims) = match &p.shape {
            Shape::Scalar => (
                format!("{constness}{} *{c}", ty.c_name()),
                ETy::Scalar(ty),
                Kind::ParamScalar,
                vec![],
            ),
            Shape::Array(d) => (
                format!("{constness}{} *{c}", ty.c_name()),
                ETy::Array(ty, 1),
                Kind::ParamArray,
                vec![length(d, "OP2_DIM")],
            ),
            Shape::Table(d, a) => {
                let dim = length(d, "OP2_DIM");
                (
                    format!("{constness}{} (*{c})[{dim}]", ty.c_name()),
                    ETy::Array(ty, 2),
                    Kind::ParamArray,
                    vec![length(a, "OP2_ARITY"), dim],
                )
            }
        };
        c_params.push(decl);
        t.bind_array(&p.name.to_string(), c, ety, kind, dims);
    }
    let name = func.sig.ident.to_string();
    c_params.insert(0, "long *op2_status".to_string());
    t.out.open(&format!("void op2_kernel_{name}({})", c_params.join(", ")));
    t.out.line("(void)op2_status;");
    t.block_stmts(&func.block);
    t.out.close("");
    if t.errors.is_empty() {
        Ok(t.out.finish())
    } else {
        Err(t.errors)
    }
}

/// Every identifier in the body, so fresh C names never collide with them.
fn collect_idents(block: &Block, used: &mut HashSet<String>) {
    struct V<'a>(&'a mut HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
            self.0.insert(i.to_string());
        }
    }
    syn::visit::Visit::visit_block(&mut V(used), block);
}

/// An array length or dim as C text (a literal or a const's name).
fn const_expr_text(e: &Expr) -> String {
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

fn int_literal(digits: &str, ty: Ty) -> String {
    let suffix = match ty.concrete() {
        Ty::I64 | Ty::Isize => "L",
        Ty::U32 => "u",
        Ty::U64 | Ty::Usize => "ul",
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

/// Constants of `f64::consts` / `f32::consts` and a few associated constants.
fn named_constant(segs: &[String]) -> Option<(Ty, String)> {
    let (ty, name) = match segs {
        [std, t, consts, name] if std == "std" || std == "core" => {
            if consts != "consts" {
                return None;
            }
            (t, name)
        }
        [t, consts, name] if consts == "consts" => (t, name),
        [t, name] => (t, name),
        _ => return None,
    };
    let ty = match ty.as_str() {
        "f64" => Ty::F64,
        "f32" => Ty::F32,
        _ => return None,
    };
    let v = match name.as_str() {
        "PI" => std::f64::consts::PI,
        "E" => std::f64::consts::E,
        "TAU" => std::f64::consts::TAU,
        "FRAC_PI_2" => std::f64::consts::FRAC_PI_2,
        "FRAC_PI_4" => std::f64::consts::FRAC_PI_4,
        "SQRT_2" => std::f64::consts::SQRT_2,
        "LN_2" => std::f64::consts::LN_2,
        "LN_10" => std::f64::consts::LN_10,
        "INFINITY" => return Some((ty, format!("(({})INFINITY)", ty.c_name()))),
        "NEG_INFINITY" => return Some((ty, format!("(-(({})INFINITY))", ty.c_name()))),
        "MAX" if ty == Ty::F64 => return Some((ty, "0x1.fffffffffffffp+1023".into())),
        "MAX" => return Some((ty, "0x1.fffffep+127f".into())),
        "MIN" if ty == Ty::F64 => return Some((ty, "(-0x1.fffffffffffffp+1023)".into())),
        "MIN" => return Some((ty, "(-0x1.fffffep+127f)".into())),
        "EPSILON" if ty == Ty::F64 => return Some((ty, "0x1p-52".into())),
        "EPSILON" => return Some((ty, "0x1p-23f".into())),
        _ => return None,
    };
    let text = if ty == Ty::F32 {
        format!("{:e}f", v as f32)
    } else {
        format!("{v:e}")
    };
    Some((ty, text))
}

impl Translator {
    fn err(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    /// A C name for a Rust name: the name itself, or `op2_name` for C, OpenCL
    /// and CUDA reserved words; a fresh variant when it shadows a live binding
    /// (C forbids redeclaring in one scope).
    fn declare_name(&mut self, rust: &str) -> String {
        let base = if RESERVED.contains(&rust) || rust.starts_with("op2_") {
            format!("op2_{rust}")
        } else {
            rust.to_string()
        };
        let shadowing = self.scopes.iter().flatten().any(|v| v.rust == rust);
        if !shadowing && (base == rust || !self.used.contains(&base)) {
            self.used.insert(base.clone());
            base
        } else {
            self.fresh(&base)
        }
    }

    fn bind(&mut self, rust: &str, c: String, ty: ETy, kind: Kind) {
        self.bind_array(rust, c, ty, kind, Vec::new());
    }

    fn bind_array(&mut self, rust: &str, c: String, ty: ETy, kind: Kind, dims: Vec<String>) {
        self.scopes.last_mut().expect("a scope").push(Var {
            rust: rust.to_string(),
            c,
            ty,
            kind,
            dims,
        });
    }

    /// The C length of the array `e[..]` indexes: `e` is a named array, or an
    /// element of one (`v[k]` in `v[k][c]`).
    fn index_length(&self, e: &Expr, depth: usize) -> Option<String> {
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

    fn lookup(&self, rust: &str) -> Option<&Var> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|v| v.rust == rust)
    }

    fn block_stmts(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn scoped_block(&mut self, head: &str, b: &Block, tail: &str) {
        self.out.open(head);
        self.scopes.push(Vec::new());
        self.block_stmts(b);
        self.scopes.pop();
        self.out.close(tail);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Local(l) => self.local(l),
            Stmt::Item(syn::Item::Const(c)) => self.const_item(c),
            Stmt::Expr(e, _) => self.stmt_expr(e),
            _ => {} // rejected by the subset check
        }
    }

    fn const_item(&mut self, c: &syn::ItemConst) {
        let name = c.ident.to_string();
        let Some(ty) = self.parse_type(&c.ty) else { return };
        let cname = self.declare_name(&name);
        match ty {
            ETy::Scalar(t) if t.is_int() => {
                // An enum constant is a constant expression in C, OpenCL and CUDA
                // (usable as an array length).
                let v = self.expr(&c.expr, Some(t));
                self.out.line(&format!("enum {{ {cname} = {v} }};"));
            }
            ETy::Scalar(t) => {
                let v = self.expr(&c.expr, Some(t));
                self.out.line(&format!("const {} {cname} = {v};", t.c_name()));
            }
            ETy::Array(..) => {
                self.err(c.ty.span(), "kernel `const` items must be scalars; use a `let` array");
                return;
            }
        }
        self.bind(&name, cname, ty, Kind::Const);
    }

    fn parse_type(&mut self, t: &Type) -> Option<ETy> {
        match t {
            Type::Path(p) => match p.path.get_ident().and_then(|i| Ty::from_rust(&i.to_string())) {
                Some(ty) => Some(ETy::Scalar(ty)),
                None => {
                    self.err(t.span(), "unsupported type in a kernel: use f64, f32, i32, i64, u32, u64, usize, isize, bool or arrays of them");
                    None
                }
            },
            Type::Array(a) => match self.parse_type(&a.elem)? {
                ETy::Scalar(ty) => Some(ETy::Array(ty, 1)),
                ETy::Array(ty, r) => Some(ETy::Array(ty, r + 1)),
            },
            other => {
                self.err(other.span(), "unsupported type in a kernel");
                None
            }
        }
    }

    /// Dimensions of an array type (`[[f64; 2]; 3]` -> ["3", "2"]).
    fn array_dims_of_type(t: &Type, dims: &mut Vec<String>) {
        if let Type::Array(a) = t {
            dims.push(const_expr_text(&a.len));
            Self::array_dims_of_type(&a.elem, dims);
        }
    }

    /// Dimensions of an array initialiser (`[0.0; 4]`, `[a, b]`).
    fn array_dims_of_expr(e: &Expr, dims: &mut Vec<String>) {
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

    fn local(&mut self, l: &syn::Local) {
        let (ident, declared) = match &l.pat {
            Pat::Ident(i) => (&i.ident, None),
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(i) => (&i.ident, Some(&*t.ty)),
                _ => return,
            },
            _ => return,
        };
        let name = ident.to_string();
        let init = l.init.as_ref().map(|i| &*i.expr);
        let ty = match (declared, init) {
            (Some(t), _) => match self.parse_type(t) {
                Some(ty) => ty,
                None => return,
            },
            (None, Some(e)) => self.ty(e),
            (None, None) => {
                self.err(
                    ident.span(),
                    "a kernel `let` without a value needs a type: `let x: f64;`",
                );
                return;
            }
        };
        match ty {
            ETy::Scalar(t) => {
                let t = t.concrete();
                let cname = self.declare_name(&name);
                match init {
                    None => self.out.line(&format!("{} {cname};", t.c_name())),
                    Some(e) if is_block_like(e) => {
                        self.out.line(&format!("{} {cname};", t.c_name()));
                        self.assign_into(&cname, t, e);
                    }
                    Some(e) => {
                        let v = self.expr(e, Some(t));
                        self.out.line(&format!("{} {cname} = {v};", t.c_name()));
                    }
                }
                self.bind(&name, cname, ETy::Scalar(t), Kind::Local);
            }
            ETy::Array(t, rank) => {
                let t = t.concrete();
                let mut dims = Vec::new();
                match (declared, init) {
                    (Some(ty), _) => Self::array_dims_of_type(ty, &mut dims),
                    (None, Some(e)) => Self::array_dims_of_expr(e, &mut dims),
                    _ => {}
                }
                if dims.len() != rank {
                    self.err(
                        ident.span(),
                        "cannot tell this array's size; write its type: `let a: [f64; 4] = ...;`",
                    );
                    return;
                }
                if let Some(bad) = dims.iter().find(|d| {
                    !d.chars().all(|c| c.is_ascii_digit()) && !self.lookup(d).is_some_and(|v| v.kind == Kind::Const)
                }) {
                    let msg = format!("array length `{bad}` must be a literal or a `const` declared inside the kernel");
                    self.err(ident.span(), msg);
                    return;
                }
                let cname = self.declare_name(&name);
                let dims_text: String = dims.iter().map(|d| format!("[{d}]")).collect();
                let local_dims = dims.clone();
                match init {
                    None => self.out.line(&format!("{} {cname}{dims_text};", t.c_name())),
                    Some(e @ Expr::Array(_)) => {
                        let v = self.array_literal(e, t);
                        self.out.line(&format!("{} {cname}{dims_text} = {v};", t.c_name()));
                    }
                    Some(Expr::Repeat(_)) => {
                        self.out.line(&format!("{} {cname}{dims_text};", t.c_name()));
                        let init = init.expect("matched Some");
                        self.fill_repeat(&cname, init, t, 0);
                    }
                    Some(other) => {
                        self.err(
                            other.span(),
                            "arrays in kernels are initialised with `[v; N]` or `[a, b, ...]`",
                        );
                        return;
                    }
                }
                self.bind_array(&name, cname, ETy::Array(t, rank), Kind::Local, local_dims);
            }
        }
    }

    fn array_literal(&mut self, e: &Expr, t: Ty) -> String {
        match e {
            Expr::Array(a) => {
                let parts: Vec<String> = a.elems.iter().map(|x| self.array_literal(x, t)).collect();
                format!("{{{}}}", parts.join(", "))
            }
            Expr::Repeat(r) => {
                self.err(r.span(), "mix `[v; N]` and `[a, b]` by writing all elements out");
                String::new()
            }
            scalar => self.expr(scalar, Some(t)),
        }
    }

    fn fill_repeat(&mut self, target: &str, e: &Expr, t: Ty, depth: usize) {
        match e {
            Expr::Repeat(r) => {
                let i = self.fresh(&format!("op2_i{depth}"));
                let len = const_expr_text(&r.len);
                self.out.open(&format!("for (long {i} = 0; {i} < {len}; ++{i})"));
                self.fill_repeat(&format!("{target}[{i}]"), &r.expr, t, depth + 1);
                self.out.close("");
            }
            Expr::Paren(p) => self.fill_repeat(target, &p.expr, t, depth),
            value => {
                let v = self.expr(value, Some(t));
                self.out.line(&format!("{target} = {v};"));
            }
        }
    }

    fn fresh(&mut self, base: &str) -> String {
        let mut c = base.to_string();
        let mut k = 1;
        while self.used.contains(&c) {
            c = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(c.clone());
        c
    }

    /// Evaluates a block-like expression (if/else, block) into `target`.
    fn assign_into(&mut self, target: &str, t: Ty, e: &Expr) {
        match e {
            Expr::If(i) => {
                let cond = self.expr(&i.cond, Some(Ty::Bool));
                self.value_block(&format!("if ({cond})"), &i.then_branch, target, t);
                match i.else_branch.as_ref().map(|(_, e)| &**e) {
                    Some(Expr::Block(b)) => self.value_block("else", &b.block, target, t),
                    Some(other @ Expr::If(_)) => {
                        self.out.open("else");
                        self.assign_into(target, t, other);
                        self.out.close("");
                    }
                    Some(other) => self.err(other.span(), "unsupported `else` branch"),
                    None => self.err(i.span(), "an `if` that gives a value needs an `else`"),
                }
            }
            Expr::Block(b) => self.value_block("", &b.block, target, t),
            Expr::Paren(p) => self.assign_into(target, t, &p.expr),
            other => {
                let v = self.expr(other, Some(t));
                self.out.line(&format!("{target} = {v};"));
            }
        }
    }

    /// A block whose tail expression is assigned to `target`.
    fn value_block(&mut self, head: &str, b: &Block, target: &str, t: Ty) {
        self.out.open(head);
        self.scopes.push(Vec::new());
        let n = b.stmts.len();
        for (k, s) in b.stmts.iter().enumerate() {
            match s {
                Stmt::Expr(e, None) if k + 1 == n => self.assign_into(target, t, e),
                other => self.stmt(other),
            }
        }
        if !matches!(b.stmts.last(), Some(Stmt::Expr(_, None))) {
            self.err(b.span(), "this block must end in a value (an expression without `;`)");
        }
        self.scopes.pop();
        self.out.close("");
    }

    fn stmt_expr(&mut self, e: &Expr) {
        match e {
            Expr::If(i) => self.if_stmt(i, ""),
            Expr::ForLoop(f) => self.for_loop(f),
            Expr::While(w) => {
                let cond = self.expr(&w.cond, Some(Ty::Bool));
                self.scoped_block(&format!("while ({cond})"), &w.body, "");
            }
            Expr::Loop(l) => self.scoped_block("for (;;)", &l.body, ""),
            Expr::Block(b) => self.scoped_block("", &b.block, ""),
            Expr::Break(_) => self.out.line("break;"),
            Expr::Continue(_) => self.out.line("continue;"),
            Expr::Return(_) => self.out.line("return;"),
            Expr::Paren(p) => self.stmt_expr(&p.expr),
            other => {
                let v = self.expr(other, None);
                self.out.line(&format!("{};", strip_parens(&v)));
            }
        }
    }

    fn if_stmt(&mut self, i: &syn::ExprIf, prefix: &str) {
        let cond = self.expr(&i.cond, Some(Ty::Bool));
        self.out.open(&format!("{prefix}if ({cond})"));
        self.scopes.push(Vec::new());
        self.block_stmts(&i.then_branch);
        self.scopes.pop();
        match i.else_branch.as_ref().map(|(_, e)| &**e) {
            None => self.out.close(""),
            Some(Expr::If(inner)) => {
                self.out.close("");
                self.if_stmt(inner, "else ");
            }
            Some(Expr::Block(b)) => {
                self.out.close("");
                self.scoped_block("else", &b.block, "");
            }
            Some(other) => {
                self.out.close("");
                self.err(other.span(), "unsupported `else` branch");
            }
        }
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) {
        let Pat::Ident(var) = &*f.pat else { return };
        let Expr::Range(r) = &*f.expr else { return };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return;
        };
        let t = self.ty(start).scalar().unify(self.ty(end).scalar()).concrete();
        let (a, b) = (self.expr(start, Some(t)), self.expr(end, Some(t)));
        let cmp = if matches!(r.limits, syn::RangeLimits::Closed(_)) {
            "<="
        } else {
            "<"
        };
        self.scopes.push(Vec::new());
        let name = var.ident.to_string();
        let c = self.declare_name(&name);
        let end_var = self.fresh(&format!("{c}_end"));
        let head = format!(
            "for ({ty} {c} = {a}, {end_var} = {b}; {c} {cmp} {end_var}; ++{c})",
            ty = t.c_name()
        );
        self.bind(&name, c, ETy::Scalar(t), Kind::Local);
        self.scoped_block(&head, &f.body, "");
        self.scopes.pop();
    }

    /// The type of an expression, without emitting it.
    fn ty(&self, e: &Expr) -> ETy {
        match e {
            Expr::Lit(l) => ETy::Scalar(match &l.lit {
                Lit::Float(f) => Ty::from_rust(f.suffix()).unwrap_or(Ty::FloatLit),
                Lit::Int(i) => Ty::from_rust(i.suffix()).unwrap_or(Ty::IntLit),
                _ => Ty::Bool,
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
                    ETy::Scalar(Ty::Bool)
                }
                BinOp::And(_) | BinOp::Or(_) => ETy::Scalar(Ty::Bool),
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
            Expr::MethodCall(m) => self.ty(&m.receiver),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => match p.path.segments.first().map(|s| s.ident.to_string()).as_deref() {
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
                None => ETy::Array(Ty::F64, 1),
            },
            Expr::Repeat(r) => match self.ty(&r.expr) {
                ETy::Scalar(t) => ETy::Array(t, 1),
                ETy::Array(t, rank) => ETy::Array(t, rank + 1),
            },
            _ => ETy::Scalar(Ty::F64),
        }
    }

    /// Emits an expression as a C value; `want` fixes the type of literals.
    fn expr(&mut self, e: &Expr, want: Option<Ty>) -> String {
        match e {
            Expr::Lit(l) => match &l.lit {
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
                UnOp::Neg(_) => format!("(-{})", self.expr(&u.expr, want)),
                UnOp::Not(_) => {
                    if self.ty(&u.expr).scalar() == Ty::Bool {
                        format!("(!{})", self.expr(&u.expr, Some(Ty::Bool)))
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
            Expr::Assign(a) => {
                let t = self.ty(&a.left).scalar();
                let l = self.expr(&a.left, None);
                let r = self.expr(&a.right, Some(t));
                format!("({l} = {r})")
            }
            Expr::Index(i) => {
                let base = self.expr(&i.expr, None);
                let idx = self.expr(&i.index, None);
                match self.index_length(&i.expr, 0) {
                    Some(len) => format!("{base}[OP2_IX({}, {len})]", strip_parens(&idx)),
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
                let inner = self.expr(&c.expr, None);
                if from.is_float() && to.is_int() {
                    // Rust's `as` saturates and maps NaN to 0; a C cast of an
                    // out-of-range value is undefined.
                    format!("op2_as_{}((double)({inner}))", to.helper_suffix())
                } else {
                    format!("(({}){inner})", to.c_name())
                }
            }
            Expr::MethodCall(m) => {
                let args: Vec<&Expr> = m.args.iter().collect();
                self.math(&m.method.to_string(), &m.receiver, &args, m.method.span(), None)
            }
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
                        let c = self.expr(&i.cond, Some(Ty::Bool));
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
                return match v.kind {
                    Kind::ParamScalar => format!("(*{})", v.c),
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
            BinOp::And(_) | BinOp::Or(_) => (Some(Ty::Bool), Some(Ty::Bool)),
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
        if let Some(helper) = int_division(lw) {
            return match b.op {
                BinOp::DivAssign(_) | BinOp::RemAssign(_) => format!("({l} = {helper}({l}, {r}, op2_status))"),
                _ => format!("{helper}({l}, {r}, op2_status)"),
            };
        }
        format!("({l} {op} {r})")
    }

    /// `recv.name(args)` or `T::name(recv, args)`.
    fn math(&mut self, name: &str, recv: &Expr, args: &[&Expr], span: Span, fty: Option<Ty>) -> String {
        let t = fty.unwrap_or_else(|| self.ty(recv).scalar()).concrete();
        let x = self.expr(recv, Some(t));
        // `powi`'s exponent is an integer; every other argument has the receiver's type.
        let arg_ty = if name == "powi" { Ty::I32 } else { t };
        let a: Vec<String> = args.iter().map(|e| self.expr(e, Some(arg_ty))).collect();
        let arity_ok = match name {
            "powi" | "powf" | "atan2" | "min" | "max" | "hypot" => a.len() == 1,
            "mul_add" => a.len() == 2,
            _ => a.is_empty(),
        };
        if !arity_ok {
            self.err(span, format!("wrong number of arguments for `{name}`"));
            return String::new();
        }
        if t.is_int() || t == Ty::Bool {
            let helper = match name {
                "abs" | "min" | "max" => name,
                _ => {
                    self.err(span, format!("`{name}` needs a float; cast with `as f64` first"));
                    return String::new();
                }
            };
            let all: Vec<String> = std::iter::once(x).chain(a).collect();
            return format!("op2_{helper}_{}({})", t.helper_suffix(), all.join(", "));
        }
        let f = if t == Ty::F32 { "f" } else { "" };
        let cname = match name {
            "sqrt" | "exp" | "log10" | "sin" | "cos" | "tan" | "floor" | "ceil" | "tanh" | "atan2" | "hypot" => {
                name.to_string()
            }
            "abs" => "fabs".into(),
            "ln" => "log".into(),
            "min" => "fmin".into(),
            "max" => "fmax".into(),
            "mul_add" => "fma".into(),
            "powf" => "pow".into(),
            "powi" => return format!("pow{f}({x}, (({}){}))", t.c_name(), a[0]),
            other => {
                self.err(span, format!("`{other}` is not a supported math function"));
                return String::new();
            }
        };
        let all: Vec<String> = std::iter::once(x).chain(a).collect();
        format!("{cname}{f}({})", all.join(", "))
    }
}

fn is_block_like(e: &Expr) -> bool {
    match e {
        Expr::If(_) | Expr::Block(_) => true,
        Expr::Paren(p) => is_block_like(&p.expr),
        _ => false,
    }
}

/// Drops one pair of outer parentheses (for statements and indices).
fn strip_parens(s: &str) -> &str {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::parse_param;

    fn c_of(src: &str) -> String {
        let f: ItemFn = syn::parse_str(src).unwrap();
        let params: Vec<Param> = f.sig.inputs.iter().map(|a| parse_param(a).unwrap()).collect();
        translate(&f, &params).unwrap_or_else(|e| panic!("{}", e[0]))
    }

    fn errors_of(src: &str) -> Vec<String> {
        let f: ItemFn = syn::parse_str(src).unwrap();
        let params: Vec<Param> = f.sig.inputs.iter().map(|a| parse_param(a).unwrap()).collect();
        translate(&f, &params)
            .err()
            .unwrap_or_default()
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn parameters_become_pointers() {
        let c = c_of("fn k(a: &f64, b: &mut [f32; 3], t: &[[i32; 2]; 4], u: &mut u32) {}");
        assert!(
            c.starts_with(
                "void op2_kernel_k(long *op2_status, const double *a, float *b, const int (*t)[2], unsigned int *u) {"
            ),
            "{c}"
        );
    }

    #[test]
    fn scalars_are_dereferenced_and_everything_parenthesised() {
        let c = c_of("fn k(a: &f64, b: &mut f64) { *b = *a * 2.0 + a; }");
        assert!(c.contains("(*b) = (((*a) * 2.0) + (*a));"), "{c}");
    }

    #[test]
    fn literals_take_the_type_of_their_partner() {
        let c = c_of("fn k(x: &mut [f32; 2]) { x[0] = x[1] * 0.5 + 1.0; let y = 2.0f64; let n = 3; }");
        assert!(
            c.contains("x[OP2_IX(0, 2)] = ((x[OP2_IX(1, 2)] * 0.5f) + 1.0f);"),
            "{c}"
        );
        assert!(c.contains("double y = 2.0;"), "{c}");
        assert!(c.contains("int n = 3;"), "{c}");
    }

    #[test]
    fn let_types_are_inferred_from_parameters() {
        let c = c_of("fn k(q: &[f64; 4], r: &mut f64) { let ri = 1.0 / q[0]; let mut s = ri; s += q[1]; *r = s; }");
        assert!(c.contains("double ri = (1.0 / q[OP2_IX(0, 4)]);"), "{c}");
        assert!(c.contains("double s = ri;"), "{c}");
        assert!(c.contains("s += q[OP2_IX(1, 4)];"), "{c}");
    }

    #[test]
    fn math_methods_and_functions() {
        let c = c_of(
            "fn k(x: &mut f64, y: &mut f32, i: &mut i32) {
                *x = x.sqrt().abs().powi(3) + f64::max(*x, 1.0) + x.mul_add(2.0, 3.0) + x.ln() + x.atan2(1.0);
                *y = y.sqrt() + f32::min(*y, 0.5) + y.powf(2.0);
                *i = i.abs().max(2) + (*i).min(7);
            }",
        );
        assert!(c.contains("pow(fabs(sqrt((*x))), ((double)3))"), "{c}");
        assert!(
            c.contains("fmax((*x), 1.0)") && c.contains("fma((*x), 2.0, 3.0)") && c.contains("log((*x))"),
            "{c}"
        );
        assert!(c.contains("atan2((*x), 1.0)"), "{c}");
        assert!(
            c.contains("sqrtf((*y))") && c.contains("fminf((*y), 0.5f)") && c.contains("powf((*y), 2.0f)"),
            "{c}"
        );
        assert!(
            c.contains("op2_max_i32(op2_abs_i32((*i)), 2)") && c.contains("op2_min_i32((*i), 7)"),
            "{c}"
        );
    }

    #[test]
    fn constants_and_casts() {
        let c = c_of("fn k(x: &mut f64, n: &i32) { const N: usize = 4; const H: f64 = 0.5; *x = (*n as f64) * H + std::f64::consts::PI + N as f64; }");
        assert!(c.contains("enum { N = 4ul };"), "{c}");
        assert!(c.contains("const double H = 0.5;"), "{c}");
        assert!(c.contains("((double)(*n))") && c.contains("3.141592653589793e0"), "{c}");
    }

    #[test]
    fn control_flow() {
        let c = c_of(
            "fn k(b: &i32, x: &mut f64) {
                if *b == 1 { *x = 1.0; } else if *b == 2 { *x = 2.0; } else { return; }
                for i in 0..4 { if i == 2 { continue; } *x += 1.0; }
                for j in 1..=3 { *x -= 0.5; }
                let mut n = 0;
                while n < 10 { n += 1; if n > 5 { break; } }
                loop { break; }
            }",
        );
        assert!(c.contains("if (((*b) == 1)) {"), "{c}");
        assert!(
            c.contains("} else if (((*b) == 2)) {") || c.contains("else if (((*b) == 2)) {"),
            "{c}"
        );
        assert!(c.contains("return;"), "{c}");
        assert!(c.contains("for (int i = 0, i_end = 4; i < i_end; ++i) {"), "{c}");
        assert!(c.contains("for (int j = 1, j_end = 3; j <= j_end; ++j) {"), "{c}");
        assert!(c.contains("while ((n < 10)) {") && c.contains("for (;;) {"), "{c}");
    }

    #[test]
    fn if_as_a_value() {
        let c = c_of(
            "fn k(a: &f64, r: &mut f64) {
                let s = if *a > 0.0 { 1.0 } else { -1.0 };
                let t = if *a > 1.0 { let u = *a * 2.0; u } else { 0.0 };
                *r = s * t + if *a < 0.0 { 1.0 } else { 2.0 };
            }",
        );
        assert!(
            c.contains("double s;") && c.contains("s = 1.0;") && c.contains("s = (-1.0);"),
            "{c}"
        );
        assert!(c.contains("double u = ((*a) * 2.0);") && c.contains("t = u;"), "{c}");
        assert!(c.contains("((*a) < 0.0) ? 1.0 : 2.0"), "{c}");
    }

    #[test]
    fn local_arrays() {
        let c = c_of(
            "fn k(r: &mut [f64; 2]) {
                let mut a = [0.0; 4];
                let b = [1.0, 2.0];
                let mut m = [[0.0f64; 2]; 3];
                a[1] = b[0]; m[2][1] = a[1]; r[0] = m[2][1];
            }",
        );
        assert!(c.contains("double a[4];") && c.contains("a[op2_i0] = 0.0;"), "{c}");
        assert!(c.contains("double b[2] = {1.0, 2.0};"), "{c}");
        assert!(
            c.contains("double m[3][2];") && c.contains("m[op2_i0_1][op2_i1] = 0.0;"),
            "{c}"
        );
        assert!(c.contains("m[OP2_IX(2, 3)][OP2_IX(1, 2)] = a[OP2_IX(1, 4)];"), "{c}");
    }

    #[test]
    fn indices_are_checked_against_their_array_length() {
        let c = c_of(
            "fn k(v: &[[f64; NDIM]; 3], w: &mut [f64; NW], i: &i32) {
                const N: usize = 2;
                let a = [0.0; N];
                w[*i as usize] = v[2][1] + a[1];
            }",
        );
        assert!(c.contains("w[OP2_IX((unsigned long)(*i), OP2_DIM_w)]"), "{c}");
        assert!(c.contains("v[OP2_IX(2, 3)][OP2_IX(1, OP2_DIM_v)]"), "{c}");
        assert!(c.contains("a[OP2_IX(1, N)]"), "{c}");
        let c = c_of("fn k(v: &[[f64; 2]; NV], r: &mut f64) { *r = v[1][0]; }");
        assert!(c.contains("v[OP2_IX(1, OP2_ARITY_v)][OP2_IX(0, 2)]"), "{c}");
    }

    #[test]
    fn float_to_int_casts_saturate_like_rust() {
        let c = c_of("fn k(x: &f64, y: &f32, a: &mut i32, b: &mut u32, c: &mut f64) { *a = *x as i32; *b = *y as u32; let n = 1e20 as u64; *c = *a as f64; }");
        assert!(c.contains("(*a) = op2_as_i32((double)((*x)));"), "{c}");
        assert!(c.contains("(*b) = op2_as_u32((double)((*y)));"), "{c}");
        assert!(c.contains("unsigned long n = op2_as_u64((double)(1e20));"), "{c}");
        assert!(c.contains("(*c) = ((double)(*a));"), "{c}");
    }

    #[test]
    fn integer_division_goes_through_helpers() {
        let c =
            c_of("fn k(a: &i32, b: &mut i32, x: &mut f64) { *b = *a / *b; *b %= 3; let n = 7u64 / 2; *x = *x / 2.0; }");
        assert!(c.contains("(*b) = op2_div_i32((*a), (*b), op2_status);"), "{c}");
        assert!(c.contains("(*b) = op2_rem_i32((*b), 3, op2_status);"), "{c}");
        assert!(c.contains("op2_div_u64(7ul, 2ul, op2_status)"), "{c}");
        assert!(c.contains("(*x) = ((*x) / 2.0);"), "{c}");
    }

    #[test]
    fn reserved_names_and_shadowing_are_renamed() {
        let c = c_of("fn k(int: &f64, r: &mut f64) { let float = *int; let x = 1.0; let x = x + float; *r = x; }");
        assert!(c.contains("const double *op2_int"), "{c}");
        assert!(c.contains("double op2_float = (*op2_int);"), "{c}");
        assert!(
            c.contains("double x = 1.0;") && c.contains("double x_1 = (x + op2_float);"),
            "{c}"
        );
        assert!(c.contains("(*r) = x_1;"), "{c}");
        // C++ keywords too: NVRTC compiles CUDA C++.
        let c = c_of("fn k(new: &f64, r: &mut f64) { let this = *new; let class = this * 2.0; *r = class; }");
        assert!(
            c.contains("const double *op2_new") && c.contains("double op2_this = (*op2_new);"),
            "{c}"
        );
        assert!(c.contains("double op2_class = "), "{c}");
    }

    #[test]
    fn boolean_and_bitwise_not() {
        let c = c_of("fn k(a: &i32, r: &mut i32) { let f = *a > 0; if !f { *r = !*a; } }");
        assert!(
            c.contains("int f = ((*a) > 0);") && c.contains("if ((!f))") && c.contains("(*r) = (~(*a));"),
            "{c}"
        );
    }

    #[test]
    fn named_dims() {
        let c = c_of(
            "fn k(v: &[[f64; NDIM]; 3], r: &mut f64) { const N: usize = 2; let a = [0.0; N]; *r = v[0][1] + a[1]; }",
        );
        assert!(c.contains("const double (*v)[OP2_DIM_v]"), "{c}");
        assert!(c.contains("double a[N];"), "{c}");
        let e = errors_of("fn k(r: &mut f64) { let a = [0.0; OUTSIDE]; *r = a[0]; }");
        assert!(
            e[0].contains("`OUTSIDE` must be a literal or a `const` declared inside the kernel"),
            "{e:?}"
        );
    }

    #[test]
    fn unknown_names_and_int_for_float_are_errors() {
        let e = errors_of("fn k(r: &mut f64) { *r = GAMMA * 2.0; }");
        assert!(e[0].contains("`GAMMA` is not known"), "{e:?}");
        let e = errors_of("fn k(r: &mut f64) { *r = 2; }");
        assert!(e[0].contains("write `2.0`"), "{e:?}");
        let e = errors_of("fn k(r: &mut i32) { *r = r.sqrt(); }");
        assert!(e[0].contains("needs a float"), "{e:?}");
    }
}
