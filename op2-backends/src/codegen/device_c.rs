//! The one generator behind the OpenCL and CUDA wrappers: one thread per
//! element, one thread block (work-group) per plan block; indirect writes
//! made safe by element colours or atomics ([`IndirectWrites`]); Global
//! reductions by a tree in shared (local) memory per block, whose result
//! lands in that block's partials, folded into the Global's device copy in
//! a fixed order afterwards (`reduction_c.rs`). The
//! dialects differ only in spelling ([`Dialect`], `dialect.rs`; one table
//! each in `opencl_c.rs` and `cuda_c.rs`), so the OpenCL backend, tested on
//! PoCL, also exercises the logic the CUDA backend runs.

use std::fmt::Write as _;

use op2_core::{Access, KernelInfo, ScalarType};

use super::dialect::Dialect;
use super::element::{arg_code, is_indirect, kernel_call, push_indented, ragged_inc_helpers, ArgCode, STATUS_DECL};
use super::{c_type, helper_suffix, kernel_definition, ArgKind, Checks, LoopShape, C_PRELUDE};
use crate::increments::IndirectWrites;

/// The name of a combining access mode in atomic helpers (`op2_atomic_add_f64`).
pub(super) fn op_name(op: Access) -> &'static str {
    match op {
        Access::Inc => "add",
        Access::Min => "min",
        Access::Max => "max",
        other => unreachable!("no atomic for {other:?}"),
    }
}

/// `op(a, b)` in C for a combining access mode.
pub(super) fn combine_expr(op: Access, t: ScalarType, a: &str, b: &str) -> String {
    match op {
        Access::Inc => format!("{a} + {b}"),
        Access::Min => format!("op2_min_{}({a}, {b})", helper_suffix(t)),
        Access::Max => format!("op2_max_{}({a}, {b})", helper_suffix(t)),
        other => unreachable!("no combine for {other:?}"),
    }
}

/// The device program for one loop shape: the prelude, the atomic helpers
/// the loop uses, the translated kernel, and
///
/// ```c
/// ENTRY op2_loop(const uint *units, long unit_offset, long base, long block_size, long limit,
///                const uint *colours, const uint *ncolours,
///                ulong *partials, long partial_offset, int *report,
///                [__local ulong *op2_scratch,] T0 *arg0, [long stride0,]
///                [const int *map0, [const int *tgt0,]] ...);
/// ```
///
/// launched with `block_size` threads per block (and `block_size * 8` bytes
/// of shared scratch). Block `g` runs plan block `units[unit_offset + g]` (or
/// `g` when `units` is null: loops without a plan), elements
/// `base + b * block_size + thread` below `limit`. Coloured loops read each
/// element's colour in `colours[e - base]` and the block's colour count in
/// `ncolours[b]`. Block `g`'s reduction results go to the partials of unit
/// `partial_offset + g`. `map{k}` is a map's table or a ragged map's
/// offsets, `tgt{k}` a ragged map's targets; `stride{k}` (an argument in
/// columns only) the elements per component. With [`Checks::On`], a thread whose kernel failed a
/// check lowers `report[0]` to its element and ors `1 << code` into
/// `report[1]` (the caller sets them to `INT_MAX` and 0; without checks
/// `report` may be null).
///
/// A loop over a subset (`shape.subset`) takes one more parameter after
/// `report`, `const int *elems`: blocks and threads then cover positions, and
/// the thread of position `p` runs element `elems[p]` (its data, maps and
/// checked-mode report), while plan arrays stay indexed by position
/// (`colours[p - base]`).
pub(super) fn device_source(
    kernel: &KernelInfo,
    shape: &LoopShape,
    writes: IndirectWrites,
    checks: Checks,
    d: &Dialect,
) -> String {
    let g = d.global;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/* op2 generated ({}): loop `{}`, indirect writes: {writes:?} */",
        d.name, kernel.name
    );
    s.push_str(checks.define());
    (d.prelude)(&mut s);
    if shape.has_ragged() {
        let _ = writeln!(s, "#define OP2_GLOBAL {g}");
    }
    s.push_str(C_PRELUDE);
    atomic_helpers(&mut s, shape, writes, d);
    s.push_str(&ragged_inc_helpers(shape, writes == IndirectWrites::Atomic));
    s.push_str(&kernel_definition(kernel, shape, d.kernel_qualifier));

    let mut params = vec![
        format!("{g}const {} *units", d.uint),
        "long unit_offset".into(),
        "long base".into(),
        "long block_size".into(),
        "long limit".into(),
        format!("{g}const {} *colours", d.uint),
        format!("{g}const {} *ncolours", d.uint),
        format!("{g}{} *partials", d.ulong),
        "long partial_offset".into(),
        format!("{g}int *report"),
    ];
    let r = d.restrict;
    if shape.subset {
        params.push(format!("{g}const int *{r} elems"));
    }
    params.extend(d.scratch_param.map(String::from));
    for (k, a) in shape.args.iter().enumerate() {
        // Every argument on a READ Dat is READ (loops are validated), so no
        // other pointer writes what a `const restrict` one reads.
        let qualifiers = if a.access == Access::Read {
            ("const ", format!("{r} "))
        } else {
            ("", String::new())
        };
        params.push(format!(
            "{g}{}{} *{}arg{k}",
            qualifiers.0,
            c_type(a.scalar),
            qualifiers.1
        ));
        if a.columns {
            params.push(format!("long stride{k}"));
        }
        if is_indirect(a) {
            let entry = if a.long_map { "long" } else { "int" };
            params.push(format!("{g}const {entry} *{r} map{k}"));
        }
        if a.kind == ArgKind::Ragged {
            params.push(format!("{g}const int *{r} tgt{k}"));
        }
    }
    let _ = writeln!(s, "\n{} op2_loop({})\n{{", d.entry, params.join(",\n        "));
    let reductions: Vec<(usize, usize)> = shape
        .args
        .iter()
        .enumerate()
        .filter_map(|(k, a)| match a.kind {
            ArgKind::Global { slot: Some(off) } => Some((k, off)),
            _ => None,
        })
        .collect();
    if let (Some(decl), false) = (d.scratch_decl, reductions.is_empty()) {
        let _ = writeln!(s, "    {decl}");
    }
    let _ = writeln!(
        s,
        "    const long g = {};\n    const long tid = {};",
        d.group_id, d.thread_id
    );
    s.push_str("    const long b = units ? (long)units[unit_offset + g] : g;\n");
    s.push_str("    const long start = base + b * block_size;\n");
    // `pos` is the thread's position in the range; `e` the element it runs.
    let pos = if shape.subset {
        s.push_str("    const long p = start + tid;\n");
        s.push_str("    const int active = p < limit;\n");
        s.push_str("    const long e = active ? (long)elems[p] : 0;\n");
        "p"
    } else {
        s.push_str("    const long e = start + tid;\n");
        s.push_str("    const int active = e < limit;\n");
        "e"
    };
    if !reductions.is_empty() {
        let _ = writeln!(
            s,
            "    {g}{} *part = partials + (partial_offset + g) * {};",
            d.ulong, shape.partial_words
        );
    }
    // Each thread reduces into its own copy; the block combines them below.
    // MIN and MAX start from the Global's value (on the device), INC from 0.
    for &(k, _) in &reductions {
        let a = &shape.args[k];
        let t = c_type(a.scalar);
        let init = if a.access == Access::Inc {
            "0".to_string()
        } else {
            format!("arg{k}[c]")
        };
        let _ = writeln!(s, "    {t} red{k}[{}];", a.dim);
        let _ = writeln!(s, "    for (int c = 0; c < {}; ++c) red{k}[c] = {init};", a.dim);
    }

    let atomic = writes == IndirectWrites::Atomic;
    let codes: Vec<ArgCode> = shape
        .args
        .iter()
        .enumerate()
        .map(|(k, a)| arg_code(k, a, atomic))
        .collect();
    push_indented(&mut s, "    ", STATUS_DECL);
    for c in &codes {
        push_indented(&mut s, "    ", &c.decl);
    }
    let on_failure = (checks == Checks::On).then_some(d.report_failure);
    let call = kernel_call(kernel.name, &shape.args, on_failure);
    let body = |s: &mut String, ind: &str, scatter_indirect: bool| {
        for c in &codes {
            push_indented(s, ind, &c.fill);
        }
        push_indented(s, ind, &call);
        for (c, a) in codes.iter().zip(&shape.args) {
            if let (Some(sc), true) = (&c.scatter, scatter_indirect || !is_indirect(a)) {
                push_indented(s, ind, sc);
            }
        }
    };
    match writes {
        IndirectWrites::None | IndirectWrites::Atomic => {
            s.push_str("    if (active) {\n");
            body(&mut s, "        ", true);
            s.push_str("    }\n");
        }
        IndirectWrites::Coloured { whole_body } => {
            if !whole_body {
                s.push_str("    if (active) {\n");
                body(&mut s, "        ", false);
                s.push_str("    }\n");
            }
            let _ = writeln!(
                s,
                "    const {} my_colour = active ? colours[{pos} - base] : 0xffffffffu;",
                d.uint
            );
            let _ = writeln!(
                s,
                "    const {u} nc = ncolours[b];\n    for ({u} col = 0; col < nc; ++col) {{",
                u = d.uint
            );
            s.push_str("        if (my_colour == col) {\n");
            if whole_body {
                body(&mut s, "            ", true);
            } else {
                for (c, a) in codes.iter().zip(&shape.args) {
                    if let (Some(sc), true) = (&c.scatter, is_indirect(a)) {
                        push_indented(&mut s, "            ", sc);
                    }
                }
            }
            let _ = writeln!(s, "        }}\n        {}\n    }}", d.barrier);
        }
    }
    if !reductions.is_empty() {
        block_reduction(&mut s, shape, &reductions, d);
    }
    s.push_str("}\n");
    s
}

/// The atomic helpers an atomic loop's scatters call.
fn atomic_helpers(s: &mut String, shape: &LoopShape, writes: IndirectWrites, d: &Dialect) {
    if writes != IndirectWrites::Atomic {
        return;
    }
    let mut needed: Vec<(Access, ScalarType)> = Vec::new();
    for a in shape.args.iter().filter(|a| is_indirect(a) && a.access != Access::Read) {
        if !needed.contains(&(a.access, a.scalar)) {
            needed.push((a.access, a.scalar));
        }
    }
    if needed.iter().any(|(_, t)| t.size() == 8) {
        s.push_str(d.int64_atomics);
    }
    for (op, t) in needed {
        s.push_str(&(d.atomic_helper)(op, t));
    }
}

/// Tree reduction of each thread's `red{k}` over the block's active
/// threads, in a fixed order; thread 0 writes the result to the block's
/// partials (each launched block writes its own, so they need no start).
fn block_reduction(s: &mut String, shape: &LoopShape, reductions: &[(usize, usize)], d: &Dialect) {
    let (g, l) = (d.global, d.local);
    s.push_str("    const long n = limit - start < block_size ? limit - start : block_size;\n");
    s.push_str("    long top = 1;\n    while (top < n) top <<= 1;\n    top >>= 1;\n");
    for &(k, off) in reductions {
        let a = &shape.args[k];
        let t = c_type(a.scalar);
        let op = |x: &str, y: &str| combine_expr(a.access, a.scalar, x, y);
        let _ = writeln!(s, "    {{\n        {l}{t} *x = ({l}{t} *)op2_scratch;");
        let _ = writeln!(s, "        {g}{t} *out = ({g}{t} *)(part + {off});");
        let _ = writeln!(s, "        for (int c = 0; c < {}; ++c) {{", a.dim);
        let bar = d.barrier;
        let _ = writeln!(
            s,
            "            {bar}\n            x[tid] = red{k}[c];\n            {bar}"
        );
        let _ = writeln!(s, "            for (long h = top; h > 0; h >>= 1) {{");
        let _ = writeln!(
            s,
            "                if (tid < h && tid + h < n) x[tid] = {};",
            op("x[tid]", "x[tid + h]")
        );
        let _ = writeln!(s, "                {bar}\n            }}");
        let _ = writeln!(s, "            if (tid == 0) out[c] = x[0];");
        s.push_str("        }\n    }\n");
    }
}
