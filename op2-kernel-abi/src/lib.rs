//! The interface between op2 kernels and the code around them, shared by
//! the `#[op2::kernel]` macro (which checks and translates kernels) and the
//! code generators of op2-backends (which wrap the translation for each
//! backend):
//!
//! - the kernel language's tables: scalar types ([`ScalarType`],
//!   [`KernelScalar`]), math functions ([`MATH_FUNCTIONS`]), random draws
//!   ([`RANDOM_DRAWS`]), spatial queries ([`NearKind`]) and fates
//!   ([`FATE_DIES`]);
//! - kernel metadata: what the macro records about a kernel
//!   ([`KernelInfo`], [`ParamInfo`], [`KernelUses`]) and the access modes
//!   ([`Access`]) `par_loop!` checks against it;
//! - every name of the C interface between a translated kernel and its
//!   wrapper ([`c_interface`]);
//! - the C twins of Rust pieces that kernels use, beside pointers to their
//!   Rust originals: the random streams ([`PHILOX_C`], of
//!   `op2_core::Philox`), op2's own elementary functions
//!   ([`PORTABLE_MATH_C`], of `op2_core::portable_math`) and spatial queries
//!   ([`SPATIAL_C`], of op2-agents' grid and queries); the fate flags are plain bits ([`FATE_DIES`]).
//!
//! It depends on nothing of the runtime, so that the proc macro, which
//! depends on this crate alone, is not rebuilt when the runtime changes.
//! `op2-core` re-exports all of it.
#![deny(missing_docs)]

mod access;
pub mod c_interface;
mod fate;
mod kernel_info;
mod math;
mod near;
mod philox_c;
mod portable_math_c;
mod random;
mod scalar;
mod spatial_c;

pub use access::Access;
pub use fate::{FATE_DIES, FATE_SPAWNS};
pub use kernel_info::{ArgForm, Kernel, KernelInfo, KernelUses, ParamForm, ParamInfo};
pub use math::{c_float_name, c_math_functions, math_function_names, MathFunction, Portability, MATH_FUNCTIONS};
pub use near::{NearKind, GRID_PARAMS};
pub use philox_c::PHILOX_C;
pub use portable_math_c::PORTABLE_MATH_C;
pub use random::{RandomDraw, RandomStream, RANDOM_DRAWS, RANDOM_STREAM};
pub use scalar::{KernelScalar, ScalarType};
pub use spatial_c::SPATIAL_C;
