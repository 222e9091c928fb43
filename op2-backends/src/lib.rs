//! op2 execution backends and the [`Runtime`] that drives them.
//!
//! `seq` is always compiled in and is the reference every other backend is
//! tested against. The others are chosen by Cargo feature and then at run time
//! (docs/ARCHITECTURE.md, Backends). Every environment variable op2 reads is
//! in [`config`]'s table.
//!
//! ## Cargo features
//!
#![doc = document_features::document_features!()]
#![deny(missing_docs)]

mod backend;
#[cfg(any(feature = "jit", feature = "cuda", feature = "opencl"))]
mod code_cache;
pub mod codegen;
pub mod config;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(any(feature = "opencl", feature = "cuda"))]
pub mod device;
mod halo_loop;
mod increments;
#[cfg(feature = "jit")]
pub mod jit;
#[cfg(feature = "opencl")]
pub mod opencl;
#[cfg(feature = "rayon")]
mod rayon;
mod runtime;
mod seq;
mod shared_globals;
#[cfg(feature = "rayon")]
mod team;
mod transfer_log;

pub use backend::Backend;
pub use increments::{Increments, IndirectWrites};
#[cfg(feature = "jit")]
pub use jit::JitExecutor;
#[cfg(feature = "opencl")]
pub use opencl::OpenClExecutor;
#[cfg(feature = "rayon")]
pub use rayon::RayonExecutor;
pub use runtime::{Runtime, RuntimeOptions};
pub use seq::SeqExecutor;
