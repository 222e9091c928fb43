//! Translation of kernel bodies (the Rust subset `subset.rs` admits) to C,
//! the common base of the C JIT, OpenCL and CUDA backends.
//!
//! The output is one function `void op2_kernel_<name>(params) { ... }`
//! without storage qualifiers; each backend adds its own (`static inline`,
//! `__device__`). Single-precision math uses the C99 `f`-suffixed names and
//! integer `min`/`max`/`abs` call `op2_min_i32`-style helpers, which every
//! backend's prelude defines. Every sub-expression is parenthesised.
//!
//! This module holds the translator's state and the function signature;
//! `types` owns the scalar types and type inference, `expr` expressions,
//! `stmt` statements, `math` math calls and named constants, `names` the C
//! name of every Rust name and the scopes, `writer` the indented output.

mod expr;
mod fate;
mod inference;
mod math;
mod names;
mod random;
mod spatial;
mod stmt;
mod types;
mod writer;

use std::collections::{HashMap, HashSet};

use op2_kernel_abi::c_interface::{self, GLOBAL, STATUS};
use proc_macro2::Span;
use syn::{Expr, ItemFn, Lit};

use crate::signature::{Param, Shape};
use names::{collect_idents, Kind, Var};
use types::{ETy, Ty};
use writer::Writer;

/// The state of one kernel's translation: the C written so far, the names
/// in scope (innermost scope last), every name used, and the errors found.
struct Translator {
    scopes: Vec<Vec<Var>>,
    used: HashSet<String>,
    out: Writer,
    errors: Vec<syn::Error>,
    uses: Uses,
    /// Translating a `const` item's value: a C constant expression, so
    /// plain operators (Rust refuses a `const` that overflows anyway).
    in_const: bool,
    /// Soft locals so far (see [`names::Var::soft`]), numbered in the order
    /// they are declared, which every pass repeats.
    soft_count: usize,
    /// The types earlier passes found for soft locals.
    overrides: HashMap<usize, Ty>,
    /// The types this pass found for soft locals from their uses.
    inferred: HashMap<usize, Ty>,
}

/// Passes of translation at most: each fixes the types of the soft locals
/// the one before found; chains of locals that take their type from one
/// another need one pass a link.
const INFERENCE_PASSES: usize = 8;

/// What a translation uses from the code around it: the macro's side of
/// `op2::KernelUses`, which it records for the code generators.
#[derive(Default)]
pub struct Uses {
    /// It makes random streams.
    pub random_streams: bool,
    /// It walks a spatial message list.
    pub spatial_queries: bool,
    /// Parameters whose dim the kernel names by a constant.
    pub named_dims: Vec<String>,
    /// Parameters whose arity the kernel names by a constant.
    pub named_arities: Vec<String>,
    /// Slice parameters.
    pub slices: Vec<String>,
    /// Its math calls are op2's own functions (`#[op2::kernel(portable_math)]`).
    pub portable_math: bool,
}

/// Translates a kernel whose signature was parsed into `params` and whose body
/// passed the subset check. Returns the C function and what it uses, or the
/// errors found
/// (an unknown name, a type that cannot be inferred, an array used as a value).
///
/// The function's first parameter is `long *op2_status`, the failure record
/// of checked mode: every index goes through `OP2_IX(index, length)` and
/// every integer `/` and `%` through `op2_div_<type>` / `op2_rem_<type>`,
/// which the generated prelude defines as plain C or, when the wrapper is
/// built checked, as checks that record the first failure there. Float to
/// integer casts call `op2_as_<type>`, which saturate like Rust's `as`.
///
/// A ragged parameter `x: &[T]` / `&[[T; D]]` (the targets of a ragged map)
/// becomes three C parameters: `OP2_GLOBAL const T *x` (the whole Dat, D
/// values per element; no `const` for `&mut`), `OP2_GLOBAL const int
/// *x_targets` (this element's targets) and `int x_len` (their number).
/// `x.len()` is `x_len`; `x[j]` is `x[OP2_TGT_x(x_targets, j)]`, or for rows
/// the pointer `(x + (long)OP2_TGT_x(x_targets, j) * D)`, where the wrapper
/// defines `OP2_TGT_x(t, j)` as `(t)[j]` for a ragged map and `(j)` for a
/// Dat read whole (a message list's variable: the targets are unused); `for v in x` loops over the targets. A
/// `&mut` one is an INC argument, only added to: `x[j] += v` becomes
/// `op2_ragged_inc_<type>(&x[x_targets[j]], v)`. The wrappers define
/// `OP2_GLOBAL` and `op2_ragged_inc_<type>`.
pub fn translate(func: &ItemFn, params: &[Param], portable_math: bool) -> Translation {
    // A local typed by literals alone takes Rust's default (f64, i32) until
    // a use says otherwise (`acc += x[j]` with `x: &[f32; 4]`); then the
    // kernel is translated again with the type its uses give, as rustc's
    // inference does.
    let mut overrides = HashMap::new();
    let mut pass = 0;
    loop {
        let (result, inferred) = translate_pass(func, params, portable_math, &overrides);
        pass += 1;
        let fresh: Vec<(usize, Ty)> = inferred
            .into_iter()
            .filter(|(k, t)| overrides.get(k) != Some(t))
            .collect();
        if fresh.is_empty() || pass == INFERENCE_PASSES {
            return result;
        }
        overrides.extend(fresh);
    }
}

/// What [`translate`] gives: the C function and what it uses, or the errors.
type Translation = Result<(String, Uses), Vec<syn::Error>>;

/// One pass of [`translate`], with soft locals typed by `overrides`; also
/// returns what this pass found of their types.
fn translate_pass(
    func: &ItemFn,
    params: &[Param],
    portable_math: bool,
    overrides: &HashMap<usize, Ty>,
) -> (Translation, HashMap<usize, Ty>) {
    let mut t = Translator {
        scopes: vec![Vec::new()],
        used: HashSet::new(),
        out: Writer::default(),
        errors: Vec::new(),
        uses: Uses {
            portable_math,
            ..Uses::default()
        },
        in_const: false,
        soft_count: 0,
        overrides: overrides.clone(),
        inferred: HashMap::new(),
    };
    collect_idents(&func.block, &mut t.used);
    let mut c_params = Vec::new();
    for p in params {
        let ty = Ty::from_rust(&p.scalar.to_string()).expect("signature.rs admits scalar types only");
        let c = t.declare_name(&p.name.to_string());
        let constness = if p.mutable { "" } else { "const " };
        // A literal length stays; a named one becomes a macro that the code
        // generator defines from the parameter's recorded dim (or arity).
        let name = p.name.to_string();
        let mut length = |e: &Expr, arity: bool| match e {
            Expr::Lit(syn::ExprLit { lit: Lit::Int(i), .. }) => i.base10_digits().to_string(),
            _ if arity => {
                t.uses.named_arities.push(name.clone());
                c_interface::arity_macro(&name)
            }
            _ => {
                t.uses.named_dims.push(name.clone());
                c_interface::dim_macro(&name)
            }
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
                vec![length(d, false)],
            ),
            Shape::Table(d, a) => {
                let dim = length(d, false);
                (
                    format!("{constness}{} (*{c})[{dim}]", ty.c_name()),
                    ETy::Array(ty, 2),
                    Kind::ParamArray,
                    vec![length(a, true), dim],
                )
            }
            Shape::Ragged(d) => {
                // Three C parameters: the whole Dat's data (D values per
                // element), this element's targets (already offset to its
                // row) and their number.
                let dim = d.as_ref().map(|d| length(d, false));
                let targets = t.fresh(&format!("{c}_targets"));
                let len = t.fresh(&format!("{c}_len"));
                c_params.push(format!("{GLOBAL} {constness}{} *{c}", ty.c_name()));
                c_params.push(format!("{GLOBAL} const int *{targets}"));
                c_params.push(format!("int {len}"));
                let mut dims = vec![len.clone()];
                dims.extend(dim);
                let ragged = names::Ragged {
                    param: name.clone(),
                    targets,
                    len,
                    rows: d.is_some(),
                    mutable: p.mutable,
                };
                let rank = dims.len();
                t.bind_ragged(&p.name.to_string(), c, ETy::Array(ty, rank), dims, ragged);
                continue;
            }
        };
        c_params.push(decl);
        t.bind_array(&p.name.to_string(), c, ety, kind, dims);
    }
    let name = func.sig.ident.to_string();
    c_params.insert(0, format!("long *{STATUS}"));
    t.out.open(&format!(
        "void {}({})",
        c_interface::kernel_function(&name),
        c_params.join(", ")
    ));
    t.out.line(&format!("(void){STATUS};"));
    t.block_stmts(&func.block);
    t.out.close("");
    let inferred = std::mem::take(&mut t.inferred);
    let result = if t.errors.is_empty() {
        Ok((t.out.finish(), t.uses))
    } else {
        Err(t.errors)
    };
    (result, inferred)
}

impl Translator {
    fn err(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }
}

#[cfg(test)]
mod tests;
