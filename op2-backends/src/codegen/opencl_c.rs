use op2_core::KernelInfo;

use super::device_c::{device_source, OPENCL};
use super::{Checks, LoopShape};
use crate::increments::IndirectWrites;

/// The OpenCL program for one loop shape (its entry point `op2_loop` and its
/// launch are described on `device_source`, in `codegen/device_c.rs`);
/// `checks` builds it checked or not.
pub fn opencl_source(kernel: &KernelInfo, shape: &LoopShape, writes: IndirectWrites, checks: Checks) -> String {
    device_source(kernel, shape, writes, checks, &OPENCL)
}
