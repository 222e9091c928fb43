//! CUDA C++ for NVRTC, one dialect of the device generator (`device_c.rs`):
//! its spellings, its prelude and its atomics.

use op2_core::{Access, KernelInfo, ScalarType};

use super::device_c::{combine_expr, device_source, op_name};
use super::dialect::Dialect;
use super::{c_type, helper_suffix, Checks, LoopShape};
use crate::increments::IndirectWrites;

/// The CUDA source for one loop shape: the translated kernel as a
/// `__device__` function and an `extern "C" __global__` entry point
/// `op2_loop` (its parameters and launch are described on `device_source`, in
/// `codegen/device_c.rs`); `checks` builds it checked or not.
pub fn cuda_source(kernel: &KernelInfo, shape: &LoopShape, writes: IndirectWrites, checks: Checks) -> String {
    device_source(kernel, shape, writes, checks, &CUDA)
}

/// The helpers' qualifier, and what NVRTC lacks without the C headers.
fn cuda_prelude(s: &mut String) {
    s.push_str(CUDA.pragmas);
    s.push_str("#define OP2_FN ");
    s.push_str(CUDA.function);
    s.push_str("\n#ifndef INFINITY\n#define INFINITY __int_as_float(0x7f800000)\n#endif\n");
}

/// CUDA C++ for NVRTC.
pub(super) const CUDA: Dialect = Dialect {
    name: "CUDA",
    pragmas: "",
    function: "static __device__ inline",
    prelude: cuda_prelude,
    kernel_qualifier: "static __device__ inline ",
    entry: "extern \"C\" __global__ void",
    global: "",
    local: "",
    shared: "__shared__",
    scratch_param: None,
    scratch_decl: Some("extern __shared__ unsigned long long op2_scratch[];"),
    group_id: "(long)blockIdx.x",
    thread_id: "(long)threadIdx.x",
    global_id: "blockIdx.x * blockDim.x + threadIdx.x",
    atomic_inc: "atomicAdd(p, 1u)",
    types: "typedef unsigned int uint;\n",
    barrier: "__syncthreads();",
    uint: ScalarType::U32.c_name(),
    ulong: "unsigned long long",
    restrict: "__restrict__",
    int64_atomics: "",
    atomic_helper: cuda_atomic,
    report_failure: "atomicMin(&report[0], (int)e); atomicOr(&report[1], 1 << (int)op2_st[0]);",
};

/// CUDA: native atomics where the hardware has them (sm_60 and later add
/// doubles), compare-and-swap loops for floating-point MIN and MAX.
fn cuda_atomic(op: Access, t: ScalarType) -> String {
    let ct = c_type(t);
    let body = match (op, t) {
        (Access::Inc, ScalarType::I64) => "atomicAdd((unsigned long long *)p, (unsigned long long)v);".to_string(),
        (Access::Inc, _) => "atomicAdd(p, v);".to_string(),
        (_, ScalarType::I64) => format!("atomic{}((long long *)p, (long long)v);", cap(op)),
        (_, ScalarType::I32 | ScalarType::U32) => format!("atomic{}(p, v);", cap(op)),
        (_, ScalarType::F64) => format!(
            "unsigned long long *q = (unsigned long long *)p;\n\
             \x20   unsigned long long old = *q, assumed;\n\
             \x20   do {{\n\
             \x20       assumed = old;\n\
             \x20       old = atomicCAS(q, assumed, (unsigned long long)__double_as_longlong({}));\n\
             \x20   }} while (assumed != old);",
            combine_expr(op, t, "__longlong_as_double((long long)assumed)", "v")
        ),
        (_, ScalarType::F32) => format!(
            "unsigned int *q = (unsigned int *)p;\n\
             \x20   unsigned int old = *q, assumed;\n\
             \x20   do {{\n\
             \x20       assumed = old;\n\
             \x20       old = atomicCAS(q, assumed, __float_as_uint({}));\n\
             \x20   }} while (assumed != old);",
            combine_expr(op, t, "__uint_as_float(assumed)", "v")
        ),
    };
    format!(
        "OP2_FN void op2_atomic_{}_{}({ct} *p, {ct} v) {{\n    {body}\n}}\n",
        op_name(op),
        helper_suffix(t)
    )
}

fn cap(op: Access) -> &'static str {
    match op {
        Access::Min => "Min",
        _ => "Max",
    }
}
