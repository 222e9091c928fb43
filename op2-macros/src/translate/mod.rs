//! Translation of kernel bodies (the Rust subset `subset.rs` admits) to C,
//! the common base of the C JIT, OpenCL and CUDA backends.
//!
//! The output is one function `void op2_kernel_<name>(params) { ... }`
//! without storage qualifiers; each backend adds its own (`static inline`,
//! `__device__`). Single-precision math uses the C99 `f`-suffixed names and
//! integer `min`/`max`/`abs` call `op2_min_i32`-style helpers, which every
//! backend's prelude defines. Every sub-expression is parenthesised.

mod ctype;
mod translator;
mod writer;

pub use translator::translate;
