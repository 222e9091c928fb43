//! The C source of a loop for the `jit` backend: the prelude, the
//! translated kernel with what its `KernelUses` record asks for
//! (`kernel_definition`, which the device generators share), and the
//! `op2_loop` entry point that walks the loop's blocks or elements with
//! OpenMP, gathering, calling the kernel and scattering per element (or per
//! group of lanes, `lanes_c.rs`).

use std::fmt::Write as _;

use op2_core::KernelInfo;
use op2_kernel_abi::c_interface;

use super::element::{element_body, ragged_inc_helpers};
use super::lanes_c::{lanes_apply, lanes_helpers, lanes_kernel, lanes_loop};

use super::{c_type, ArgKind, Checks, LoopShape, C_PRELUDE};

/// The C source the `jit` backend compiles for one loop shape: the prelude,
/// the translated kernel, and
///
/// ```c
/// void op2_loop(const long *runs, const long *unit_runs, long nunits,
///               void *const *data, const int *const *maps, uint64_t *partials, int nthreads,
///               long *report, const int *elems);
/// ```
///
/// where `maps` has two entries per argument: `maps[k]` is argument `k`'s
/// map table (or a ragged map's offsets), `maps[nargs + k]` a ragged map's
/// targets (null otherwise);
/// which runs the units of one phase of a [`Schedule`](op2_core::Schedule)
/// (chunks of a direct loop, blocks of one colour, partitions' interiors)
/// in parallel under OpenMP; unit `u` runs, in order, the runs `r` from
/// `unit_runs[u]` to `unit_runs[u + 1]`, each the positions
/// `runs[2 * r] .. runs[2 * r + 1]`, and owns partials
/// `partials[u * partial_words ..]`, which the caller initialises and combines.
/// With [`Checks::On`], the lowest element whose kernel failed a check is
/// recorded in `report` (code, element, index, length; code 0: none).
///
/// The last parameter, `elems`, is a subset's elements: in a loop over a
/// subset (`shape.subset`) units cover positions, and position `p` runs
/// element `elems[p]` (which gathers, scatters and reports use); other loops
/// ignore it (the caller passes null), so every loop has one signature. Positions in ascending order are elements in ascending order, so the
/// lowest failing position is the lowest failing element.
pub fn host_source(kernel: &KernelInfo, shape: &LoopShape, checks: Checks) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "/* op2 generated: loop `{}` */", kernel.name);
    s.push_str(checks.define());
    s.push_str("#include <math.h>\n#include <stdint.h>\n#define OP2_FN static inline\n");
    if shape.has_ragged() {
        s.push_str("#define OP2_GLOBAL\n");
    }
    s.push_str(C_PRELUDE);
    // Units of one phase never share a target: plain adds.
    s.push_str(&ragged_inc_helpers(shape, false));
    s.push_str(&kernel_definition(kernel, shape, "static inline "));
    let lanes = lanes_apply(shape, checks);
    if lanes {
        s.push_str(lanes_helpers(shape));
        s.push_str(&lanes_kernel(kernel.name, kernel.c_source));
    }
    if checks == Checks::On {
        s.push_str(HOST_REPORT);
    }
    s.push_str(
        "void op2_loop(const long *runs, const long *unit_runs, long nunits,\n\
         \x20             void *const *data, const int *const *maps, uint64_t *partials, int nthreads,\n",
    );
    s.push_str("              long *report, const int *elems)\n{\n");
    s.push_str("    (void)maps;\n    (void)partials;\n    (void)report;\n    (void)elems;\n");
    let _ = writeln!(
        s,
        "    #pragma omp parallel for schedule(static) num_threads(nthreads > 0 ? nthreads : omp_get_max_threads())"
    );
    s.push_str("    for (long u = 0; u < nunits; ++u) {\n");
    let _ = writeln!(
        s,
        "        uint64_t *part = partials + u * {};\n        (void)part;",
        shape.partial_words
    );
    for (k, a) in shape.args.iter().enumerate() {
        let t = c_type(a.scalar);
        // Reductions work on their partials only.
        if !matches!(a.kind, ArgKind::Global { slot: Some(_) }) {
            let _ = writeln!(s, "        {t} *arg{k} = ({t} *)data[{k}];");
        }
        if super::is_indirect(a) && a.long_map {
            let _ = writeln!(s, "        const int64_t *map{k} = (const int64_t *)maps[{k}];");
        } else if super::is_indirect(a) {
            let _ = writeln!(s, "        const int *map{k} = maps[{k}];");
        }
        if a.kind == ArgKind::Ragged {
            let _ = writeln!(s, "        const int *tgt{k} = maps[{}];", shape.args.len() + k);
        }
        if let ArgKind::Global { slot: Some(off) } = a.kind {
            let _ = writeln!(s, "        {t} *red{k} = ({t} *)(part + {off});");
        }
    }
    s.push_str("        for (long r = unit_runs[u]; r < unit_runs[u + 1]; ++r) {\n");
    s.push_str("            const long start = runs[2 * r], end = runs[2 * r + 1];\n");
    // The run's loop, written at the unit's depth and indented one more.
    let mut run = String::new();
    // Groups of LANES elements where the loop allows, the rest one by one.
    let from = if lanes {
        lanes_loop(&mut run, kernel.name, shape);
        "p0"
    } else {
        "start"
    };
    if shape.subset {
        let _ = writeln!(
            run,
            "        for (long p = {from}; p < end; ++p) {{\n            const long e = elems[p];"
        );
    } else {
        let _ = writeln!(run, "        for (long e = {from}; e < end; ++e) {{");
    }
    let on_failure = (checks == Checks::On).then_some("op2_report(report, e, op2_st);");
    element_body(&mut run, kernel.name, shape, on_failure);
    run.push_str("        }\n");
    for line in run.lines() {
        if !line.is_empty() {
            s.push_str("    ");
        }
        s.push_str(line);
        s.push('\n');
    }
    s.push_str("        }\n    }\n}\n");
    // omp_get_max_threads without including omp.h when OpenMP is off.
    format!("#ifdef _OPENMP\n#include <omp.h>\n#else\nstatic inline int omp_get_max_threads(void) {{ return 1; }}\n#endif\n{s}")
}

/// Keeps the lowest failing element's record: threads of one loop may fail
/// at once, and the lowest element is the same whatever the schedule.
const HOST_REPORT: &str = "static void op2_report(long *report, long e, const long *st)
{
    #pragma omp critical(op2_report)
    if (!report[0] || e < report[1]) {
        report[0] = st[0];
        report[1] = e;
        report[2] = st[1];
        report[3] = st[2];
    }
}
";

/// The translated kernel with `qualifier` in front, preceded by what its
/// [`KernelUses`](op2_kernel_abi::KernelUses) record says it needs: the
/// random generator, the bins' search and op2's own math functions; the `OP2_DIM_<param>` and
/// `OP2_ARITY_<param>` macros of dims and arities written as named
/// constants; and for each slice parameter `OP2_TGT_<param>(targets, j)`,
/// its `j`th element's index: `targets[j]` through a ragged map, `j` for a
/// Dat read whole (`shape` says which).
pub fn kernel_definition(kernel: &KernelInfo, shape: &LoopShape, qualifier: &str) -> String {
    let mut s = String::from("\n");
    let uses = &kernel.uses;
    // The random streams' normals take their logarithm from op2's math.
    if uses.portable_math || uses.random_streams {
        s.push_str(op2_kernel_abi::PORTABLE_MATH_C);
    }
    if uses.random_streams {
        s.push_str(super::PHILOX_C);
    }
    if uses.spatial_queries {
        s.push_str(super::SPATIAL_C);
    }
    // The first parameter of each name: a hidden pair shares its name, and
    // only the first of the pair can be a slice or have a named length.
    let param = |name: &str| kernel.params.iter().zip(&shape.args).find(|(p, _)| p.name == name);
    for (p, a) in uses.slices.iter().filter_map(|n| param(n)) {
        let index = if a.kind == ArgKind::Whole { "(j)" } else { "(t)[j]" };
        let _ = writeln!(s, "#define {}(t, j) {index}", c_interface::targets_macro(p.name));
    }
    for (p, _) in uses.named_dims.iter().filter_map(|n| param(n)) {
        let _ = writeln!(s, "#define {} {}", c_interface::dim_macro(p.name), p.dim);
    }
    for (p, _) in uses.named_arities.iter().filter_map(|n| param(n)) {
        if let op2_core::ParamForm::Table { arity } = p.form {
            let _ = writeln!(s, "#define {} {arity}", c_interface::arity_macro(p.name));
        }
    }
    s.push_str(qualifier);
    s.push_str(kernel.c_source);
    s.push('\n');
    s
}
