//! The Rust subset a kernel body may use: what the C, OpenCL and CUDA
//! translators will accept. Anything else is reported at its span with a hint
//! of what to write instead.

use op2_kernel_abi::NearKind;
use op2_kernel_abi::{math_function_names, KernelScalar, MathFunction, RandomDraw, RANDOM_STREAM};
use syn::spanned::Spanned;
use syn::{Block, Expr, Item, Lit, Pat, Stmt, Type, UnOp};

/// The kernel scalar type `ty` names, if it names one.
fn scalar_of(ty: &syn::TypePath) -> Option<KernelScalar> {
    KernelScalar::from_rust_name(&ty.path.get_ident()?.to_string())
}

/// Checks a kernel body; returns every problem found.
pub fn check_body(block: &Block) -> Vec<syn::Error> {
    let mut c = Checker { errors: Vec::new() };
    c.block(block);
    c.errors
}

struct Checker {
    errors: Vec<syn::Error>,
}

impl Checker {
    fn err(&mut self, at: impl Spanned, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(at.span(), msg));
    }

    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Local(l) => {
                self.let_pattern(&l.pat);
                if let Some(init) = &l.init {
                    self.expr(&init.expr);
                    if let Some((_, diverge)) = &init.diverge {
                        self.err(diverge, "`let ... else` is not supported in kernels; use `if`");
                    }
                }
            }
            Stmt::Item(Item::Const(c)) => self.expr(&c.expr),
            Stmt::Item(other) => self.err(
                other,
                "only `const` items are supported inside kernels; move other items out of the kernel",
            ),
            Stmt::Expr(e, _) => self.expr(e),
            Stmt::Macro(m) => self.err(
                &m.mac,
                "macros are not supported in kernels (they cannot be translated to C); write the code out",
            ),
        }
    }

    fn let_pattern(&mut self, p: &Pat) {
        match p {
            Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {}
            Pat::Type(t) => {
                self.let_pattern(&t.pat);
                self.local_type(&t.ty);
            }
            other => self.err(
                other,
                "kernels bind one name per `let` (`let x = ...;`); destructuring is not supported",
            ),
        }
    }

    fn local_type(&mut self, t: &Type) {
        match t {
            Type::Path(p) if scalar_of(p).is_some() => {}
            Type::Array(a) => self.local_type(&a.elem),
            other => self.err(
                other,
                "local variables in kernels must have a numeric, bool or array type",
            ),
        }
    }

    fn no_label(&mut self, label: Option<&syn::Label>) {
        if let Some(l) = label {
            self.err(l, "loop labels are not supported in kernels; use a flag variable");
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(_) | Lit::Float(_) | Lit::Bool(_) => {}
                other => self.err(other, "kernels support numeric and bool literals only"),
            },
            Expr::Path(p) => {
                if p.qself.is_some() {
                    self.err(p, "qualified paths (`<T as Trait>::X`) are not supported in kernels");
                }
            }
            Expr::Binary(b) => {
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::Unary(u) => {
                if !matches!(u.op, UnOp::Neg(_) | UnOp::Not(_) | UnOp::Deref(_)) {
                    self.err(u, "unsupported unary operator in a kernel");
                }
                self.expr(&u.expr);
            }
            Expr::Assign(a) => {
                self.expr(&a.left);
                self.expr(&a.right);
            }
            Expr::Index(i) => {
                self.expr(&i.expr);
                self.expr(&i.index);
            }
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Cast(c) => {
                self.expr(&c.expr);
                match &*c.ty {
                    // `as` casts to numeric types only.
                    Type::Path(p) if scalar_of(p).is_some_and(|t| t != KernelScalar::Bool) => {}
                    other => self.err(other, "kernels can cast (`as`) to numeric types only"),
                }
            }
            Expr::If(i) => {
                self.expr(&i.cond);
                self.block(&i.then_branch);
                if let Some((_, els)) = &i.else_branch {
                    self.expr(els);
                }
            }
            Expr::ForLoop(f) => {
                self.no_label(f.label.as_ref());
                self.for_iterated(&f.expr, &f.pat);
                self.block(&f.body);
            }
            Expr::While(w) => {
                self.no_label(w.label.as_ref());
                if let Expr::Let(l) = &*w.cond {
                    self.err(
                        l,
                        "`while let` is not supported in kernels; use `while` with a condition",
                    );
                } else {
                    self.expr(&w.cond);
                }
                self.block(&w.body);
            }
            Expr::Loop(l) => {
                self.no_label(l.label.as_ref());
                self.block(&l.body);
            }
            Expr::Break(b) => {
                if b.label.is_some() {
                    self.err(b, "labelled `break` is not supported in kernels; use a flag variable");
                }
                if b.expr.is_some() {
                    self.err(
                        b,
                        "`break` with a value is not supported in kernels; assign to a variable declared before the loop",
                    );
                }
            }
            Expr::Continue(c) => {
                if c.label.is_some() {
                    self.err(c, "labelled `continue` is not supported in kernels");
                }
            }
            Expr::Return(r) => {
                if r.expr.is_some() {
                    self.err(
                        r,
                        "kernels return nothing: write results through `&mut` parameters, then `return;`",
                    );
                }
            }
            Expr::Block(b) => {
                self.no_label(b.label.as_ref());
                self.block(&b.block);
            }
            Expr::Array(a) => a.elems.iter().for_each(|x| self.expr(x)),
            Expr::Repeat(r) => {
                self.expr(&r.expr);
                self.expr(&r.len);
            }
            Expr::Call(c) => {
                let ok = match &*c.func {
                    Expr::Path(p) => {
                        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                        let math = segs.len() == 2
                            && (segs[0] == "f64" || segs[0] == "f32")
                            && MathFunction::named(&segs[1]).is_some();
                        math || is_random_stream_new(&segs) || spatial_new(&segs) || is_fate_new(&segs)
                    }
                    _ => false,
                };
                if !ok {
                    self.err(
                        &c.func,
                        format!(
                            "kernels can only call math functions (`f64::sqrt(x)`, ...: {}) and `{}::new(seed, id, call)`; inline other functions by hand",
                            math_function_names(),
                            RANDOM_STREAM.rust_name
                        ),
                    );
                }
                c.args.iter().for_each(|x| self.expr(x));
            }
            Expr::MethodCall(m) if m.method == "len" && m.turbofish.is_none() => {
                if !m.args.is_empty() {
                    self.err(&m.method, "`.len()` takes no arguments");
                }
                self.expr(&m.receiver);
            }
            Expr::MethodCall(m) if m.method == "iter" => self.err(
                &m.method,
                "`.iter()` is supported only as what a `for` loop iterates (`for v in x.iter()`); index `x[j]` elsewhere",
            ),
            Expr::MethodCall(m) if iterator_adapter(&m.method.to_string()) => self.err(
                &m.method,
                format!(
                    "iterator adapters (`.{}()`) are not supported in kernels; write a loop `for j in 0..x.len()` and index `x[j]`",
                    m.method
                ),
            ),
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                let known = MathFunction::named(&method).is_some()
                    || RandomDraw::named(&method).is_some()
                    || FATE_METHODS.contains(&method.as_str());
                if !known || m.turbofish.is_some() {
                    self.err(
                        &m.method,
                        format!(
                            "method `.{}()` is not supported in kernels; supported: {}, on a `{}` stream: {}, and on a `Fate`: {}",
                            m.method,
                            math_function_names(),
                            RANDOM_STREAM.rust_name,
                            random_draw_names(),
                            FATE_METHODS.join(", ")
                        ),
                    );
                }
                self.expr(&m.receiver);
                m.args.iter().for_each(|x| self.expr(x));
            }
            Expr::Closure(c) => self.err(
                c,
                "closures are not supported in kernels; write the computation inline or in a `for` loop",
            ),
            Expr::Match(m) => self.err(
                m.match_token,
                "`match` is not supported in kernels; use `if` / `else if` / `else`",
            ),
            Expr::Macro(m) => self.err(
                &m.mac,
                "macros are not supported in kernels (they cannot be translated to C); write the code out",
            ),
            Expr::Reference(r) => self.err(
                r,
                "references are not supported in kernels; index parameters and local arrays directly",
            ),
            Expr::Let(l) => self.err(l, "`if let` is not supported in kernels; use `if` with a condition"),
            Expr::Unsafe(u) => self.err(u.unsafe_token, "`unsafe` blocks are not allowed in kernels"),
            Expr::Tuple(t) => self.err(
                t,
                "tuples are not supported in kernels; use separate variables or an array",
            ),
            Expr::Field(f) => self.err(
                f,
                "field access is not supported in kernels; pass the data as parameters",
            ),
            Expr::Range(r) => self.err(r, "ranges are only supported as the iterator of a `for` loop"),
            Expr::Struct(s) => self.err(s, "struct literals are not supported in kernels"),
            Expr::Try(t) => self.err(t, "`?` is not supported in kernels"),
            other => self.err(other, "this expression is not supported in op2 kernels"),
        }
    }
}

impl Checker {
    /// What a `for` loop iterates and binds: a range `a..b` / `a..=b` bound
    /// to a name, or a ragged parameter `x` / `x.iter()` bound to `v` or `&v`.
    fn for_iterated(&mut self, iterated: &Expr, pat: &Pat) {
        let mut e = iterated;
        while let Expr::Paren(p) = e {
            e = &p.expr;
        }
        let plain_name = |e: &Expr| matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some());
        let over_values = match e {
            Expr::Range(r) => {
                match (&r.start, &r.end) {
                    (Some(a), Some(b)) => {
                        self.expr(a);
                        self.expr(b);
                    }
                    _ => self.err(r, "a kernel `for` range needs both ends: `a..b` or `a..=b`"),
                }
                false
            }
            _ if plain_name(e) => true,
            Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() && m.turbofish.is_none() => {
                if !plain_name(&m.receiver) {
                    self.err(
                        &m.receiver,
                        "kernel `for` loops iterate over a ragged parameter by name: `for v in x.iter()`",
                    );
                }
                true
            }
            Expr::MethodCall(m) if (m.method == "near" || m.method == "within") && m.turbofish.is_none() => {
                // A spatial message parameter's neighbourhood: the translator
                // checks the receiver's type and the number of coordinates.
                if !plain_name(&m.receiver) {
                    self.err(
                        &m.receiver,
                        "iterate a spatial message parameter by name: `for j in msgs.near(x, y, z)` or `for j in msgs.within(x, y, r)`",
                    );
                }
                m.args.iter().for_each(|x| self.expr(x));
                false
            }
            Expr::MethodCall(m) if m.method == "iter_mut" => {
                self.err(
                    &m.method,
                    "a `&mut` ragged parameter is an INC argument: add to it in an index loop, `for j in 0..x.len() { x[j] += v; }`",
                );
                true
            }
            Expr::MethodCall(m) if m.method == "enumerate" => {
                self.err(
                    &m.method,
                    "`.enumerate()` is not supported in kernels; write `for j in 0..x.len()` and index `x[j]`",
                );
                true
            }
            Expr::MethodCall(m) if iterator_adapter(&m.method.to_string()) || m.method == "into_iter" => {
                self.err(
                    &m.method,
                    format!(
                        "iterator adapters (`.{}()`) are not supported in kernels; write `for j in 0..x.len()` and index `x[j]`",
                        m.method
                    ),
                );
                true
            }
            other => {
                self.err(
                    other,
                    "kernel `for` loops iterate over a range `a..b` or `a..=b`, or a ragged parameter (`for v in x`, `for &v in x.iter()`); index arrays inside a range loop",
                );
                true
            }
        };
        match pat {
            Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {}
            Pat::Reference(r)
                if over_values
                    && r.mutability.is_none()
                    && matches!(&*r.pat, Pat::Ident(i) if i.by_ref.is_none() && i.mutability.is_none() && i.subpat.is_none()) =>
                {}
            other if over_values => self.err(
                other,
                "a kernel `for` loop over a ragged parameter binds one name: `for v in x` or `for &v in x`",
            ),
            other => self.err(other, "a kernel `for` loop binds one name: `for i in 0..n`"),
        }
    }
}

/// Iterator methods kernels do not support, for a hint to write an index loop.
fn iterator_adapter(method: &str) -> bool {
    matches!(
        method,
        "iter_mut"
            | "into_iter"
            | "enumerate"
            | "zip"
            | "map"
            | "filter"
            | "rev"
            | "skip"
            | "take"
            | "step_by"
            | "chain"
            | "copied"
            | "cloned"
            | "sum"
            | "product"
            | "fold"
            | "for_each"
            | "chunks"
            | "windows"
    )
}

/// Whether a call's path is the random stream's constructor
/// (`Philox::new`, `op2::Philox::new`).
pub(crate) fn is_random_stream_new(segs: &[String]) -> bool {
    let named = |ty: &String, new: &String| ty == RANDOM_STREAM.rust_name && new == "new";
    match segs {
        [ty, new] => named(ty, new),
        [krate, ty, new] => krate == "op2" && named(ty, new),
        _ => false,
    }
}

/// What a kernel may tell its agent's `Fate`.
const FATE_METHODS: [&str; 2] = ["die", "spawn"];

/// Whether a path names the fate type (`Fate`, `op2::Fate`).
pub(crate) fn is_fate_type(segs: &[String]) -> bool {
    match segs {
        [ty] => ty == "Fate",
        [krate, ty] => krate == "op2" && ty == "Fate",
        _ => false,
    }
}

/// Whether a call is `Fate::new` (only in the prologue `#[op2::kernel]`
/// writes for a `&mut Fate` parameter).
pub(crate) fn is_fate_new(segs: &[String]) -> bool {
    segs.last().is_some_and(|n| n == "new") && is_fate_type(&segs[..segs.len() - 1])
}

/// The kind of a spatial message parameter type (`Spatial2d`,
/// `op2::Spatial3d`, `Discrete2d`), from its path.
pub(crate) fn spatial_type_kind(segs: &[String]) -> Option<NearKind> {
    let kind = |ty: &String| {
        [NearKind::Spatial2d, NearKind::Spatial3d, NearKind::Discrete2d]
            .into_iter()
            .find(|k| k.type_name() == ty)
    };
    match segs {
        [ty] => kind(ty),
        [krate, ty] if krate == "op2" => kind(ty),
        _ => None,
    }
}

/// Whether a call is `Spatial2d::new` / `Spatial3d::new` /
/// `Discrete2d::new` (only in the prologue `#[op2::kernel]` writes for a
/// spatial message parameter).
fn spatial_new(segs: &[String]) -> bool {
    segs.last().is_some_and(|n| n == "new") && spatial_type_kind(&segs[..segs.len() - 1]).is_some()
}

/// The draws' names, for messages.
fn random_draw_names() -> String {
    op2_kernel_abi::RANDOM_DRAWS
        .iter()
        .map(|d| d.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(src: &str) -> Vec<String> {
        let block: Block = syn::parse_str(src).unwrap();
        check_body(&block).iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn airfoil_style_body_is_accepted() {
        let e = errors(
            "{ let mut dx: f64 = x1[0] - x2[0]; let ri = 1.0 / q[0]; const N: usize = 4;
               for n in 0..N { res[n] += ri * dx.sqrt().abs(); }
               if *bound == 1 { res[1] += f64::max(dx, 0.0); } else if dx > 0.0 { return; } else { dx -= 1.0; }
               let mut a = [0.0f64; 4]; a[0] = (dx as f32) as f64; while dx > 0.0 { dx -= 1.0; if dx < 0.5 { break; } }
               loop { continue; } }",
        );
        assert!(e.is_empty(), "{e:?}");
    }

    #[test]
    fn closure_is_rejected_with_hint() {
        let e = errors("{ let f = |a: f64| a * 2.0; }");
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("closures") && e[0].contains("inline"), "{e:?}");
    }

    #[test]
    fn match_is_rejected_with_hint() {
        let e = errors("{ match *b { 1 => {}, _ => {} } }");
        assert!(e[0].contains("`if` / `else if` / `else`"), "{e:?}");
    }

    #[test]
    fn unknown_method_and_function_are_rejected() {
        let e = errors("{ let a = x.frobnicate(); let b = helper(a); }");
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].contains("frobnicate") && e[0].contains("sqrt"));
        assert!(e[1].contains("math functions"));
    }

    #[test]
    fn macros_references_and_for_over_arrays_are_rejected() {
        assert!(errors("{ println!(\"x\"); }")[0].contains("macros"));
        assert!(errors("{ let r = &x; }")[0].contains("references"));
        assert!(errors("{ for v in 0.. { } }")[0].contains("both ends"));
        assert!(errors("{ for v in f(x) { } }").iter().any(|e| e.contains("range")));
        assert!(errors("{ 'outer: loop { break 'outer; } }").len() == 2);
    }

    #[test]
    fn ragged_loops_and_len_are_accepted() {
        let e = errors(
            "{ let n = x.len(); for v in x { s += *v; } for &v in x { s += v; } for v in x.iter() { s += v[0]; }
               for &v in (x.iter()) { s += v; } for j in 0..x.len() { y[j] += x[j]; } let m = a[0].len(); }",
        );
        assert!(e.is_empty(), "{e:?}");
    }

    #[test]
    fn iterator_adapters_get_an_index_loop_hint() {
        let e = errors("{ for (j, v) in x.iter().enumerate() { } }");
        assert!(
            e.iter()
                .any(|m| m.contains("`.enumerate()`") && m.contains("0..x.len()")),
            "{e:?}"
        );
        let e = errors("{ for v in x.iter_mut() { *v += 1.0; } }");
        assert!(e[0].contains("INC argument"), "{e:?}");
        let e = errors("{ let s: f64 = x.iter().sum(); }");
        assert!(
            e.iter().any(|m| m.contains("`.sum()`") && m.contains("0..x.len()")),
            "{e:?}"
        );
        let e = errors("{ let i = x.iter(); }");
        assert!(e[0].contains("only as what a `for` loop iterates"), "{e:?}");
        let e = errors("{ for &i in 0..4 { } }");
        assert!(e[0].contains("binds one name"), "{e:?}");
        let e = errors("{ for v in f(x).iter() { } }");
        assert!(e[0].contains("by name"), "{e:?}");
    }

    #[test]
    fn every_error_is_collected() {
        let e = errors("{ let f = || 1; match 1 { _ => {} } let (a, b) = (1, 2); }");
        assert_eq!(e.len(), 4, "{e:?}");
    }
}
