//! Statements: `let` and `const` declarations (scalars and arrays), `if`,
//! the loops, `break`/`continue`/`return`, blocks, and block-like values
//! assigned to a variable.

use op2_kernel_abi::c_interface::{GLOBAL, INDEX};
use syn::spanned::Spanned;
use syn::{Block, Expr, Pat, Stmt};

use super::expr::{strip_parens, INC_ONLY};
use super::names::Kind;
use super::types::{const_expr_text, ETy, Ty};
use super::Translator;

impl Translator {
    pub(super) fn block_stmts(&mut self, b: &Block) {
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
                // (usable as an array length), so its value takes no helpers.
                self.in_const = true;
                let v = self.expr(&c.expr, Some(t));
                self.in_const = false;
                self.out.line(&format!("enum {{ {cname} = {v} }};"));
            }
            ETy::Scalar(t) => {
                let v = self.expr(&c.expr, Some(t));
                self.out.line(&format!("const {} {cname} = {v};", t.c_name()));
            }
            ETy::Array(..) | ETy::Stream | ETy::Spatial(_) | ETy::Fate => {
                self.err(c.ty.span(), "kernel `const` items must be scalars; use a `let` array");
                return;
            }
        }
        self.bind(&name, cname, ty, Kind::Const);
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
            ETy::Stream => self.local_stream(&name, init, ident.span()),
            ETy::Spatial(kind) => self.local_spatial(&name, init, kind, ident.span()),
            ETy::Fate => self.local_fate(&name, init, ident.span()),
            ETy::Scalar(t) => {
                let mut t = t.concrete();
                // Typed by literals alone: Rust's inference may give it
                // another type from later uses (`inference.rs`).
                let soft = match (declared, init) {
                    (None, Some(e)) if self.soft_locals(e).is_some() => {
                        let (k, found) = self.next_soft();
                        if let (Some(found), Some(e)) = (found, init) {
                            t = found;
                            self.note(e, t);
                        }
                        Some(k)
                    }
                    (Some(_), Some(e)) => {
                        self.note(e, t);
                        None
                    }
                    _ => None,
                };
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
                match soft {
                    Some(k) => self.bind_soft(&name, cname, t, k),
                    None => self.bind(&name, cname, ETy::Scalar(t), Kind::Local),
                }
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

    /// Evaluates a block-like expression (if/else, block) into `target`.
    fn assign_into(&mut self, target: &str, t: Ty, e: &Expr) {
        match e {
            Expr::If(i) => {
                let cond = self.expr(&i.cond, Some(Ty::BOOL));
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
                let cond = self.expr(&w.cond, Some(Ty::BOOL));
                // One pair of parentheses: `while ((a == b))` draws clang's -Wparentheses-equality.
                self.scoped_block(&format!("while ({})", strip_parens(&cond)), &w.body, "");
            }
            Expr::Loop(l) => self.scoped_block("for (;;)", &l.body, ""),
            Expr::Block(b) => self.scoped_block("", &b.block, ""),
            Expr::Break(_) => self.out.line("break;"),
            Expr::Continue(_) => self.out.line("continue;"),
            Expr::Return(_) => self.out.line("return;"),
            Expr::Paren(p) => self.stmt_expr(&p.expr),
            Expr::Assign(a) if matches!(self.ty(&a.left), ETy::Array(..)) => self.array_assign(a),
            other => {
                let v = self.expr(other, None);
                self.out.line(&format!("{};", strip_parens(&v)));
            }
        }
    }

    /// `a = b` of arrays (`*out = local;`, `row = p[j];`): Rust copies the
    /// array, so C copies it element by element, over the left side's
    /// dims. The right side must be an array value of the same shape.
    fn array_assign(&mut self, a: &syn::ExprAssign) {
        let ETy::Array(t, rank) = self.ty(&a.left) else { return };
        if self.ty(&a.right) != ETy::Array(t, rank) && !matches!(&*a.right, Expr::Array(_)) {
            self.err(
                a.right.span(),
                "assign an array of the same shape (or an array literal) to an array",
            );
            return;
        }
        let dims: Option<Vec<String>> = (0..rank).map(|d| self.index_length(&a.left, d)).collect();
        let Some(dims) = dims else {
            self.err(a.left.span(), "cannot tell this array's size");
            return;
        };
        let right_dims: Option<Vec<String>> = (0..rank).map(|d| self.index_length(&a.right, d)).collect();
        if right_dims.is_some_and(|r| r != dims) {
            self.err(
                a.right.span(),
                "assign an array of the same shape (or an array literal) to an array",
            );
            return;
        }
        if let Expr::Array(_) = &*a.right {
            // A literal: one assignment per element.
            let left = self.expr(&a.left, None);
            let lit = self.array_literal(&a.right, t.concrete());
            let tmp = self.fresh("op2_lit");
            let dims_text: String = dims.iter().map(|d| format!("[{d}]")).collect();
            self.out.open("");
            self.out
                .line(&format!("const {} {tmp}{dims_text} = {lit};", t.concrete().c_name()));
            let param = self.indexes_parameter(&a.left);
            self.copy_loops(&left, &tmp, &dims, (param, false));
            self.out.close("");
            return;
        }
        let (left, right) = (self.expr(&a.left, None), self.expr(&a.right, None));
        let params = (self.indexes_parameter(&a.left), self.indexes_parameter(&a.right));
        self.copy_loops(&left, &right, &dims, params);
    }

    /// Copies `right` into `left` element by element. A side rooted at a
    /// parameter (`params`: left, right) indexes through `OP2_IX`, which
    /// host vector groups redefine to their lane stride (`lanes_c`); a
    /// local array uses its plain index.
    fn copy_loops(&mut self, left: &str, right: &str, dims: &[String], params: (bool, bool)) {
        let idx: Vec<String> = (0..dims.len()).map(|d| self.fresh(&format!("op2_c{d}"))).collect();
        for (i, d) in idx.iter().zip(dims) {
            self.out.open(&format!("for (long {i} = 0; {i} < {d}; ++{i})"));
        }
        let at = |param: bool| -> String {
            idx.iter()
                .zip(dims)
                .map(|(i, d)| {
                    if param {
                        format!("[{INDEX}({i}, {d})]")
                    } else {
                        format!("[{i}]")
                    }
                })
                .collect()
        };
        let (l_at, r_at) = (at(params.0), at(params.1));
        self.out.line(&format!("({left}){l_at} = ({right}){r_at};"));
        for _ in &idx {
            self.out.close("");
        }
    }

    fn if_stmt(&mut self, i: &syn::ExprIf, prefix: &str) {
        let cond = self.expr(&i.cond, Some(Ty::BOOL));
        // One pair of parentheses: `if ((a == b))` draws clang's -Wparentheses-equality.
        self.out.open(&format!("{prefix}if ({})", strip_parens(&cond)));
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
        let Expr::Range(r) = &*f.expr else {
            if self.spatial_loop(f) {
                return;
            }
            return self.ragged_loop(f);
        };
        let Pat::Ident(var) = &*f.pat else { return };
        if var.mutability.is_some() {
            self.err(
                var.span(),
                "a kernel's `for` variable cannot be `mut` (C's loop would step the changed value): copy it, `let mut j = i;`",
            );
            return;
        }
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return;
        };
        let mut t = self.ty(start).scalar().unify(self.ty(end).scalar()).concrete();
        // `for i in 0..3`: `i` is soft, as a `let` of literals is.
        let soft = match (self.soft_locals(start).is_some(), self.soft_locals(end).is_some()) {
            (true, true) => {
                let (k, found) = self.next_soft();
                if let Some(found) = found {
                    t = found;
                    self.note(start, t);
                    self.note(end, t);
                }
                Some(k)
            }
            _ => {
                self.note_pair(start, end);
                None
            }
        };
        let (a, b) = (self.expr(start, Some(t)), self.expr(end, Some(t)));
        self.scopes.push(Vec::new());
        let name = var.ident.to_string();
        let c = self.declare_name(&name);
        let end_var = self.fresh(&format!("{c}_end"));
        let ty = t.c_name();
        let head = if matches!(r.limits, syn::RangeLimits::Closed(_)) {
            // `a..=MAX` must stop at MAX, not step past it: the loop goes
            // on while the last value done was not the end (`continue`
            // reaches that test too, in the step).
            let go = self.fresh(&format!("{c}_go"));
            format!("for ({ty} {c} = {a}, {end_var} = {b}, {go} = {c} <= {end_var}; {go}; {go} = {c} != {end_var}, {c} += {go})")
        } else {
            format!("for ({ty} {c} = {a}, {end_var} = {b}; {c} < {end_var}; ++{c})")
        };
        match soft {
            Some(k) => self.bind_soft(&name, c, t, k),
            None => self.bind(&name, c, ETy::Scalar(t), Kind::Local),
        }
        self.scoped_block(&head, &f.body, "");
        self.scopes.pop();
    }

    /// `for v in x`, `for &v in x` or the same over `x.iter()`, `x` a READ
    /// ragged parameter: a loop over the element's targets, with `v` the
    /// target's value (`&[T]`) or a pointer to its row (`&[[T; D]]`, then
    /// indexed like a `&[T; D]` parameter).
    fn ragged_loop(&mut self, f: &syn::ExprForLoop) {
        let mut iterated = &*f.expr;
        while let Expr::Paren(p) = iterated {
            iterated = &p.expr;
        }
        if let Expr::MethodCall(m) = iterated {
            if m.method == "iter" && m.args.is_empty() {
                iterated = &m.receiver;
            }
        }
        let Some(v) = self.ragged_param(iterated) else {
            self.err(
                f.expr.span(),
                "kernel `for` loops iterate over a range `a..b` or a ragged parameter (`for v in x`); for an array, write `for i in 0..a.len()` and index `a[i]`",
            );
            return;
        };
        let r = v.ragged.clone().expect("a ragged parameter");
        if r.mutable {
            self.err(f.expr.span(), INC_ONLY);
            return;
        }
        let var = match &*f.pat {
            Pat::Ident(i) => i,
            Pat::Reference(p) => match &*p.pat {
                Pat::Ident(i) => i,
                _ => return, // rejected by the subset check
            },
            _ => return,
        };
        let j = self.fresh("op2_j");
        self.out
            .open(&format!("for (int {j} = 0; {j} < {len}; ++{j})", len = r.len));
        self.scopes.push(Vec::new());
        let name = var.ident.to_string();
        let c = self.declare_name(&name);
        let t = v.ty.scalar();
        let target = format!("{}({}, {j})", self.targets_macro(&r.param), r.targets);
        if r.rows {
            let d = v.dims[1].clone();
            self.out.line(&format!(
                "{GLOBAL} const {} *{c} = {} + (long){target} * {d};",
                t.c_name(),
                v.c
            ));
            self.bind_array(&name, c, ETy::Array(t, 1), Kind::ParamArray, vec![d]);
        } else {
            let constness = if var.mutability.is_some() { "" } else { "const " };
            self.out
                .line(&format!("{constness}{} {c} = {}[{target}];", t.c_name(), v.c));
            self.bind(&name, c, ETy::Scalar(t), Kind::Local);
        }
        self.block_stmts(&f.body);
        self.scopes.pop();
        self.out.close("");
    }
}

fn is_block_like(e: &Expr) -> bool {
    match e {
        Expr::If(_) | Expr::Block(_) => true,
        Expr::Paren(p) => is_block_like(&p.expr),
        _ => false,
    }
}
