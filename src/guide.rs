//! # Coming from PyOP2 or OP2
//!
//! A documentation-only module: how the concepts map.
//!
//! | PyOP2 / OP2 | op2-rs |
//! |---|---|
//! | `op2.Set(n, "cells")` / `op_decl_set` | [`Set::new("cells", n)`](crate::Set::new) |
//! | `op2.Map(from, to, arity, values, "m")` / `op_decl_map` | [`Map::new("m", &from, &to, arity, values)?`](crate::Map::new) |
//! | `op2.Dat(set ** dim, data, dtype, "x")` / `op_decl_dat` | [`Dat::from_vec("x", &set, dim, data)?`](crate::Dat::from_vec) |
//! | `op2.Global(dim, data, dtype, "g")` / `op_decl_gbl` | [`Global::new("g", data)?`](crate::Global::new) |
//! | `op2.Constant` / `op_decl_const` | a READ [`Global`](crate::Global) passed to the kernel |
//! | `op2.Kernel(c_source, "name")` | a Rust function under [`#[op2::kernel]`](crate::kernel) |
//! | `op2.par_loop(k, set, x(op2.READ, m[0]))` / `op_par_loop` | [`par_loop!(rt, k, set, x(READ, m[0]))?`](crate::par_loop) |
//! | `x(op2.INC, m)` (whole map, vector map) | `x(INC, m)` with a `&mut [[T; D]; A]` parameter |
//! | `dat.data_ro` / `dat.data` | [`data_ro()`](crate::Dat::data_ro) / [`data_mut()`](crate::Dat::data_mut) |
//! | `op_timing_output()` | [`Runtime::timing_summary`](crate::Runtime::timing_summary) |
//! | backend chosen at `op2.init(backend=...)` | [`Runtime::new(Backend::Seq)`](crate::Runtime::new) or `OP2_BACKEND` with [`Runtime::from_env`](crate::Runtime::from_env) |
//!
//! Differences worth knowing:
//!
//! - **Kernels are Rust and type-checked.** Each parameter is `&T`, `&[T; D]` or
//!   `&[[T; D]; A]` (`&mut` for anything but READ). Passing a `Dat<f32>` to an
//!   `f64` parameter, READ to a `&mut` parameter, or the wrong number of
//!   arguments is a compile error at the `par_loop!` argument.
//! - **Staging.** Kernels never see the Dat's memory: each argument is copied
//!   into a local value, the kernel runs, and the result is written back (WRITE,
//!   RW), added (INC, whose local starts at zero) or combined (MIN, MAX). An
//!   INC parameter therefore reads as zero inside the kernel, as in PyOP2's
//!   generated code for vector maps, and two map entries naming the same target
//!   both land.
//! - **WRITE is never read.** A WRITE argument's local starts at zero; the kernel
//!   must assign every component.
//! - **Errors are values.** Anything only known at run time (a Dat's dim, which
//!   sets a map joins, one Dat in two access modes, WRITE on a Global, data
//!   borrowed on the host) is an [`Error`](crate::Error) naming the loop and the
//!   argument, returned before anything runs.
//! - **Host access is borrow-checked at run time.** A loop refuses to run while
//!   a `data_mut()` guard of one of its Dats is alive (or a `data_ro()` guard of
//!   one it writes), instead of racing with it.
