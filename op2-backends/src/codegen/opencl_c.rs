//! OpenCL C, one dialect of the device generator (`device_c.rs`): its
//! spellings, its prelude and its atomics.

use std::fmt::Write as _;

use op2_core::{Access, KernelInfo, ScalarType};
use op2_kernel_abi::{c_float_name, c_math_functions};

use super::device_c::{combine_expr, device_source, op_name};
use super::dialect::Dialect;
use super::{c_type, helper_suffix, Checks, LoopShape};
use crate::increments::IndirectWrites;

/// The OpenCL program for one loop shape (its entry point `op2_loop` and its
/// launch are described on `device_source`, in `codegen/device_c.rs`);
/// `checks` builds it checked or not.
pub fn opencl_source(kernel: &KernelInfo, shape: &LoopShape, writes: IndirectWrites, checks: Checks) -> String {
    device_source(kernel, shape, writes, checks, &OPENCL)
}

/// OpenCL C (1.2, with `cl_khr_fp64`).
pub(super) const OPENCL: Dialect = Dialect {
    name: "OpenCL",
    // No contraction into FMAs, as the host C is built (`-ffp-contract=off`):
    // OpenCL lets compilers contract `a * b + c` unless told not to.
    pragmas: "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL FP_CONTRACT OFF\n",
    function: "inline",
    prelude: opencl_prelude,
    kernel_qualifier: "inline ",
    entry: "__kernel void",
    global: "__global ",
    local: "__local ",
    shared: "__local",
    scratch_param: Some("__local ulong *op2_scratch"),
    scratch_decl: None,
    group_id: "get_group_id(0)",
    thread_id: "get_local_id(0)",
    global_id: "get_global_id(0)",
    atomic_inc: "atomic_inc(p)",
    types: "",
    barrier: "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
    uint: "uint",
    ulong: "ulong",
    restrict: "restrict",
    int64_atomics: "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n",
    atomic_helper: opencl_atomic,
    report_failure: "atomic_min(&report[0], (int)e); atomic_or(&report[1], 1 << (int)op2_st[0]);",
};

/// What translated kernels and the prelude call, in OpenCL C: its math
/// builtins are overloaded instead of `f`-suffixed, so each C99 `float` name
/// becomes the overloaded one (the prelude's `fminf` and `fmaxf` among them).
fn opencl_prelude(s: &mut String) {
    s.push_str(OPENCL.pragmas);
    for c in c_math_functions() {
        let _ = writeln!(s, "#define {} {c}", c_float_name(c));
    }
    let _ = writeln!(s, "#define OP2_FN {}", OPENCL.function);
}

/// OpenCL: every atomic as a compare-and-swap loop on the value's bits
/// (OpenCL 1.2 has no floating-point atomics; 64-bit ones need
/// `cl_khr_int64_base_atomics`).
fn opencl_atomic(op: Access, t: ScalarType) -> String {
    let ct = c_type(t);
    let (bits, cas) = if t.size() == 8 {
        ("ulong", "atom_cmpxchg")
    } else {
        ("uint", "atomic_cmpxchg")
    };
    let new = combine_expr(op, t, "o.t", "v");
    format!(
        "OP2_FN void op2_atomic_{op}_{sfx}(volatile __global {ct} *p, {ct} v) {{\n\
         \x20   union {{ {ct} t; {bits} u; }} o, n;\n\
         \x20   do {{ o.t = *p; n.t = {new}; }} while ({cas}((volatile __global {bits} *)p, o.u, n.u) != o.u);\n}}\n",
        op = op_name(op),
        sfx = helper_suffix(t),
    )
}
