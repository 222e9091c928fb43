//! Generated wrappers around translated kernels, shared by the code-generating
//! backends: the loop's shape ([`LoopShape`], which also keys the code
//! caches), the C prelude, and the host C wrapper the `jit` backend compiles.

mod cuda_c;
mod device_c;
mod element;
mod host_c;
mod opencl_c;
mod prelude;
mod shape;

pub use cuda_c::cuda_source;
pub use host_c::{host_source, kernel_definition};
pub use opencl_c::opencl_source;
pub use prelude::C_PRELUDE;
pub use shape::{ArgKind, ArgShape, LoopShape};

use op2_core::ScalarType;

/// The C spelling of a scalar type (LP64).
pub fn c_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::F64 => "double",
        ScalarType::F32 => "float",
        ScalarType::I32 => "int",
        ScalarType::I64 => "long",
        ScalarType::U32 => "unsigned int",
    }
}

/// The suffix of the prelude's helpers for a scalar type (`op2_min_f64`).
pub fn helper_suffix(t: ScalarType) -> &'static str {
    t.rust_name()
}
