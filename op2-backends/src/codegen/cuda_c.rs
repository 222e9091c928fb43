use std::fmt::Write as _;

use op2_core::KernelInfo;

use super::element::element_body;
use super::{c_type, kernel_definition, ArgKind, LoopShape, C_PRELUDE};

/// What NVRTC lacks without the C headers, and the helpers' qualifier.
const CUDA_PRELUDE: &str = "#define OP2_FN static __device__ inline
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
";

/// The CUDA source for one loop shape: the prelude, the translated kernel as
/// a `__device__` function, and
///
/// ```c
/// extern "C" __global__ void op2_loop(const unsigned int *units, long unit_offset, long nunits,
///                                     long base, long block_size, long limit,
///                                     unsigned long long *partials, long partial_offset,
///                                     T0 *arg0, [const int *map0,] ...);
/// ```
///
/// with the same meaning as the OpenCL stub: thread `u` runs unit
/// `units[unit_offset + u]` (or `u` when `units` is null), one launch per
/// block colour, reduction partials per unit.
pub fn cuda_source(kernel: &KernelInfo, shape: &LoopShape) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "/* op2 generated (CUDA): loop `{}` */", kernel.name);
    s.push_str(CUDA_PRELUDE);
    s.push_str(C_PRELUDE);
    s.push_str(&kernel_definition(kernel, "static __device__ inline "));
    let mut params = vec![
        "const unsigned int *units".to_string(),
        "long unit_offset".into(),
        "long nunits".into(),
        "long base".into(),
        "long block_size".into(),
        "long limit".into(),
        "unsigned long long *partials".into(),
        "long partial_offset".into(),
    ];
    for (k, a) in shape.args.iter().enumerate() {
        params.push(format!("{} *arg{k}", c_type(a.scalar)));
        if matches!(a.kind, ArgKind::MapEntry { .. } | ArgKind::MapAll { .. }) {
            params.push(format!("const int *map{k}"));
        }
    }
    let _ = writeln!(
        s,
        "\nextern \"C\" __global__ void op2_loop({})\n{{",
        params.join(",\n                                    ")
    );
    s.push_str("    const long u = (long)blockIdx.x * blockDim.x + threadIdx.x;\n    if (u >= nunits) return;\n");
    s.push_str("    const long b = units ? (long)units[unit_offset + u] : u;\n");
    s.push_str("    const long start = base + b * block_size;\n");
    s.push_str("    const long end = start + block_size < limit ? start + block_size : limit;\n");
    let _ = writeln!(
        s,
        "    unsigned long long *part = partials + (partial_offset + u) * {};\n    (void)part;",
        shape.partial_words
    );
    for (k, a) in shape.args.iter().enumerate() {
        if let ArgKind::Global { slot: Some(off) } = a.kind {
            let t = c_type(a.scalar);
            let _ = writeln!(s, "    {t} *red{k} = ({t} *)(part + {off});");
        }
    }
    s.push_str("    for (long e = start; e < end; ++e) {\n");
    element_body(&mut s, kernel.name, shape);
    s.push_str("    }\n}\n");
    s
}
