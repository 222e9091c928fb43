//! Procedural macros of op2: `#[op2::kernel]` and `par_loop!`.
//!
//! Use them through the `op2` crate, which re-exports both; generated code
//! refers to `::op2::...` paths.
#![deny(missing_docs)]

use proc_macro::TokenStream;

mod kernel_attr;
mod lane_twin;
mod lowering;
mod par_loop;
mod portable;
mod signature;
mod subset;
mod translate;

/// Marks a function as an op2 kernel.
///
/// The function stays ordinary Rust (the native backends call it). Every
/// parameter must be `&T`, `&[T; D]` or `&[[T; D]; A]` (`&mut` for arguments the
/// loop writes) with `T` one of `f64`, `f32`, `i32`, `i64`, `u32`, and the body
/// must stay in the Rust subset that op2 can translate for the device backends.
/// The macro records the signature so that `par_loop!` can check its arguments.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel_attr::expand(attr.into(), item.into()).into()
}

/// Runs a kernel over every element of a set, or of a subset of one:
/// `par_loop!(rt, kernel, set, arg, ...)`, where `set` is a `Set` or a
/// `Subset` (or a reference to one), each argument is `d(ACCESS)`,
/// `d(ACCESS, map[i])`, `d(ACCESS, map)` or, for a ragged map, `d(ACCESS, r[..])`,
/// and `ACCESS` is one of `READ`, `WRITE`, `RW`, `INC`, `MIN`, `MAX`. Over a
/// subset, direct Dats live on its parent set and maps start from it; the
/// kernel sees the subset's elements only. Evaluates to `op2::Result<()>`.
#[proc_macro]
pub fn par_loop(input: TokenStream) -> TokenStream {
    par_loop::expand(input.into()).into()
}
