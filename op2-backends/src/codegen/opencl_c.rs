use std::fmt::Write as _;

use op2_core::KernelInfo;

use super::element::element_body;
use super::{c_type, kernel_definition, ArgKind, LoopShape, C_PRELUDE};

/// OpenCL C spellings for what translated kernels and the prelude use:
/// OpenCL has no `long double` math, and its builtins are overloaded instead
/// of `f`-suffixed.
const OPENCL_PRELUDE: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define sqrtf sqrt
#define fabsf fabs
#define powf pow
#define expf exp
#define logf log
#define log10f log10
#define sinf sin
#define cosf cos
#define tanf tan
#define atan2f atan2
#define floorf floor
#define ceilf ceil
#define fminf fmin
#define fmaxf fmax
#define fmaf fma
#define hypotf hypot
#define tanhf tanh
";

/// The OpenCL program for one loop shape: the prelude, the translated kernel,
/// and
///
/// ```c
/// __kernel void op2_loop(__global const uint *units, long unit_offset, long nunits,
///                        long base, long block_size, long limit,
///                        __global ulong *partials, long partial_offset,
///                        __global T0 *arg0, [__global const int *map0,] ...);
/// ```
///
/// Work-item `u` runs unit `units[unit_offset + u]` (or `u` when `units` is
/// null: a loop that needs no plan), elements `base + unit * block_size ..` (up to `limit`), with its
/// reduction partials at `partials[(partial_offset + u) * partial_words ..]`.
/// One launch runs the blocks of one colour.
pub fn opencl_source(kernel: &KernelInfo, shape: &LoopShape) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "/* op2 generated (OpenCL): loop `{}` */", kernel.name);
    s.push_str(OPENCL_PRELUDE);
    s.push_str("#define OP2_FN inline\n");
    s.push_str(C_PRELUDE);
    s.push_str(&kernel_definition(kernel, "inline "));
    let mut params = vec![
        "__global const uint *units".to_string(),
        "long unit_offset".into(),
        "long nunits".into(),
        "long base".into(),
        "long block_size".into(),
        "long limit".into(),
        "__global ulong *partials".into(),
        "long partial_offset".into(),
    ];
    for (k, a) in shape.args.iter().enumerate() {
        params.push(format!("__global {} *arg{k}", c_type(a.scalar)));
        if matches!(a.kind, ArgKind::MapEntry { .. } | ArgKind::MapAll { .. }) {
            params.push(format!("__global const int *map{k}"));
        }
    }
    let _ = writeln!(
        s,
        "\n__kernel void op2_loop({})\n{{",
        params.join(",\n                      ")
    );
    s.push_str("    const long u = get_global_id(0);\n    if (u >= nunits) return;\n");
    s.push_str("    const long b = units ? (long)units[unit_offset + u] : u;\n");
    s.push_str("    const long start = base + b * block_size;\n");
    s.push_str("    const long end = start + block_size < limit ? start + block_size : limit;\n");
    let _ = writeln!(
        s,
        "    __global ulong *part = partials + (partial_offset + u) * {};\n    (void)part;",
        shape.partial_words
    );
    for (k, a) in shape.args.iter().enumerate() {
        if let ArgKind::Global { slot: Some(off) } = a.kind {
            let t = c_type(a.scalar);
            let _ = writeln!(s, "    __global {t} *red{k} = (__global {t} *)(part + {off});");
        }
    }
    s.push_str("    for (long e = start; e < end; ++e) {\n");
    // The element body is indented for the host wrapper's nesting; OpenCL
    // compilers do not mind.
    element_body(&mut s, kernel.name, shape);
    s.push_str("    }\n}\n");
    s
}
