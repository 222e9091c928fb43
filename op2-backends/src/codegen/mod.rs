//! Generated wrappers around translated kernels, shared by the code-generating
//! backends: the loop's shape ([`LoopShape`], which also keys the code
//! caches), the C prelude, and the host C wrapper the `jit` backend compiles.
//!
//! One writer per target: `host_c.rs` (C and OpenMP), `opencl_c.rs` and
//! `cuda_c.rs` (the device dialects' spellings, prelude and atomics), the
//! latter two through the generator they share, `device_c.rs`. The
//! per-element gather, call and scatter (`element.rs`), the prelude
//! (`prelude.rs`) and the shape (`shape.rs`) are common to all three.
//! The device work around loops has its utility programs, in both
//! dialects: `utility_c.rs` (their common start), `binning_c.rs` (a spatial
//! message build's counting sort), `reorder_c.rs` (selections, gathers:
//! compactions and permutations) and `reduction_c.rs` (a reduction's
//! partials folded into its Global on the device). Type and math-function names come from
//! `op2_kernel_abi`.

mod binning_c;
mod cuda_c;
mod device_c;
mod dialect;
mod element;
mod host_c;
mod lanes_c;
mod opencl_c;
mod philox_c;
#[cfg(test)]
mod portable_math_c;
mod prelude;
mod reduction_c;
mod reorder_c;
mod shape;
mod spatial_c;
#[cfg(test)]
mod twin_check;
mod utility_c;

pub use binning_c::{binning_source, BINNING_ENTRIES};
pub use cuda_c::cuda_source;
pub(crate) use element::is_indirect;
pub use host_c::{host_source, kernel_definition};
pub use opencl_c::opencl_source;
pub use philox_c::PHILOX_C;
pub use prelude::C_PRELUDE;
pub use reduction_c::{fold_entry, reduction_source, FOLD_ENTRIES, FOLD_THREADS};
pub use reorder_c::{reorder_source, REORDER_ENTRIES};
pub use shape::{ArgKind, ArgShape, LoopShape};
pub use spatial_c::SPATIAL_C;
pub use utility_c::{utility_prelude, DeviceLanguage, SCAN_THREADS};

use op2_core::ScalarType;
use op2_kernel_abi::KernelScalar;

/// Whether generated code checks what Rust checks (indices, integer
/// division): [`Checks::On`] records the first failure of each element
/// instead of reading out of bounds or trapping, and the loop returns
/// [`op2_core::Error::KernelCheck`]; [`Checks::Off`] is plain C, as fast as
/// unchecked code can be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Checks {
    /// No checks.
    Off,
    /// Index and integer-division checks.
    On,
}

impl Checks {
    /// The line that switches the prelude's checks on (empty when off).
    pub fn define(self) -> &'static str {
        match self {
            Checks::Off => "",
            Checks::On => "#define OP2_CHECKED 1\n",
        }
    }
}

/// A failed check, decoded from the code generated code records
/// (1 index, 2 division by zero, 3 division overflow).
pub fn check_failure(code: i64, index: Option<(i64, i64)>) -> String {
    match code {
        // Kernel indices are `usize` in Rust: a negative C value is a huge one.
        1 => match index {
            Some((i, n)) => format!("index out of bounds: the len is {n} but the index is {}", i as u64),
            None => "index out of bounds".to_string(),
        },
        2 => "integer division or remainder by zero".to_string(),
        3 => "integer division or remainder overflow (MIN / -1)".to_string(),
        other => format!("unknown check {other}"),
    }
}

/// The C spelling of a scalar type (LP64): [`ScalarType::c_name`], from
/// the kernel language's table.
pub fn c_type(t: ScalarType) -> &'static str {
    t.c_name()
}

/// The suffix of the prelude's helpers for a scalar type (`op2_min_f64`),
/// from the kernel language's table.
pub fn helper_suffix(t: ScalarType) -> &'static str {
    KernelScalar::of(t).helper_suffix()
}
