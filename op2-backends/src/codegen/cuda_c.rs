use op2_core::KernelInfo;

use super::device_c::{device_source, CUDA};
use super::{Checks, LoopShape};
use crate::increments::IndirectWrites;

/// The CUDA source for one loop shape: the translated kernel as a
/// `__device__` function and an `extern "C" __global__` entry point
/// `op2_loop` (its parameters and launch are described on `device_source`, in
/// `codegen/device_c.rs`); `checks` builds it checked or not.
pub fn cuda_source(kernel: &KernelInfo, shape: &LoopShape, writes: IndirectWrites, checks: Checks) -> String {
    device_source(kernel, shape, writes, checks, &CUDA)
}
