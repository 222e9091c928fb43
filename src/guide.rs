//! # Coming from PyOP2 or OP2
//!
//! A documentation-only module for readers who know PyOP2 (Python) or OP2
//! (C/C++): the same ideas (sets, maps between them, data on sets, kernels
//! applied in parallel loops with access descriptors), written in Rust. The
//! page gives a [concept map](#concept-map), a
//! [worked example](#worked-example) that runs as a test, [what
//! differs](#what-differs-and-why) and why, the [backends](#backends), what
//! op2 adds for [agents](#agents), and [where to go next](#where-to-go-next).
//!
//! ## Concept map
//!
//! | concept | PyOP2 | OP2 (C/C++) | op2-rs |
//! |---|---|---|---|
//! | set of elements | `op2.Set(n)` | `op_decl_set(n, "cells")` | [`Set::new("cells", n)?`](crate::Set::new) |
//! | map between sets | `op2.Map(from, to, arity, values)` | `op_decl_map(from, to, arity, table, "m")` | [`Map::new("m", &from, &to, arity, values)?`](crate::Map::new) (`values: Vec<i32>`) |
//! | data on a set | `op2.Dat(set ** dim, data)` | `op_decl_dat(set, dim, "double", data, "x")` | [`Dat::from_vec("x", &set, dim, data)?`](crate::Dat::from_vec), [`Dat::zeros`](crate::Dat::zeros), [`Dat::filled`](crate::Dat::filled) |
//! | global value | `op2.Global(dim, data)` | `op_decl_gbl`, or a host variable passed by `op_arg_gbl` | [`Global::new("g", values)?`](crate::Global::new), [`Global::scalar("g", v)`](crate::Global::scalar) |
//! | constant | `op2.Constant` (older versions) | `op_decl_const` | a [`Global`](crate::Global) passed as a READ argument |
//! | kernel | `op2.Kernel(code, "name")` (C source in a string) | a C function the translator reads | a Rust function under [`#[op2::kernel]`](crate::kernel) |
//! | parallel loop | `op2.par_loop(k, set, args...)` | `op_par_loop(k, "k", set, args...)` | [`par_loop!(rt, k, set, args...)?`](crate::par_loop) |
//! | some elements of a set | `op2.Subset(set, indices)`, passed as the loop's set | — | [`Subset::new("s", &set, indices)?`](crate::Subset::new) (or [`filter`](crate::Subset::filter), [`where_dat`](crate::Subset::where_dat)), passed as the loop's set |
//! | direct argument | `x(op2.READ)` | `op_arg_dat(x, -1, OP_ID, dim, "double", OP_READ)` | `x(READ)` |
//! | one map entry | `x(op2.INC, m[i])` | `op_arg_dat(x, i, m, dim, "double", OP_INC)` | `x(INC, m[i])` (`i` any `usize` expression) |
//! | all entries of a map | `x(op2.INC, m)` | a vector argument (index `-arity`) | `x(INC, m)`, kernel parameter `&mut [[T; D]; A]`, `A` the arity |
//! | map of varying arity | — | — | `RaggedMap::new("nbrs", &from, &to, offsets, targets)?`; `x(READ, nbrs[..])`, kernel parameter `&[T]` or `&[[T; D]]` (`&mut` for INC) |
//! | global argument | `g(op2.INC)` | `op_arg_gbl(&g, dim, "double", OP_INC)` | `g(INC)` |
//! | access descriptors | `op2.READ`, `WRITE`, `RW`, `INC`, `MIN`, `MAX` | `OP_READ`, `OP_WRITE`, `OP_RW`, `OP_INC`, `OP_MIN`, `OP_MAX` | `READ`, `WRITE`, `RW`, `INC`, `MIN`, `MAX` inside `par_loop!` ([`Access`](crate::Access)) |
//! | read results | `x.data_ro`, `x.data` (NumPy arrays) | `op_fetch_data` | [`data_ro()`](crate::Dat::data_ro), [`data_mut()`](crate::Dat::data_mut), [`to_vec()`](crate::Dat::to_vec), [`Global::value`](crate::Global::value) |
//! | start up, shut down | `op2.init(...)` | `op_init(argc, argv, diags)`, `op_exit()` | [`Runtime::from_env()?`](crate::Runtime::from_env) / [`Runtime::new`](crate::Runtime::new) / [`Runtime::with_options`](crate::Runtime::with_options); dropping it |
//! | backend choice | `op2.init(backend=...)` in older versions | which generated code is built and linked | Cargo feature at build time, then [`Backend`](crate::Backend) or `OP2_BACKEND` at run time |
//! | configuration | `PYOP2_*` environment variables | `op_init` arguments | [`RuntimeOptions`](crate::RuntimeOptions), else `OP2_*` variables ([below](#configuration)) |
//! | timings | — | `op_timing_output()` | `println!("{}", rt.timing_summary())` ([`Runtime::timing_summary`](crate::Runtime::timing_summary), [`Runtime::timings`](crate::Runtime::timings)) |
//! | mesh from a file | `op2.Set.fromhdf5(f, "nodes")` and the like (older versions) | `op_decl_set_hdf5`, `op_decl_map_hdf5`, `op_decl_dat_hdf5` | `op2::hdf5::MeshFile::open(path)?`, then `.set("nodes")?`, `.map("pcell", &cells, &nodes)?`, `.dat::<f64>("p_x", &nodes)?` (feature `hdf5`); Gmsh files: `op2::gmsh::read_msh(path)?` |
//! | partitioning | distributed sets and halos built by the caller | `op_partition(...)` | `Mpi::init()?.distribute(&sets, &maps, &primary)?` (feature `mpi`, METIS); a mesh read in blocks: `mpi.distribute_blocks(mesh, "cells", &partitioner)?` (PT-Scotch with feature `ptscotch`) |
//!
//! Data are flat, element-major slices: the `dim` values of element `e` are
//! `x.data_ro()[e * dim..(e + 1) * dim]` (a PyOP2 Dat's array has shape
//! `(n, dim)`). Map tables are flat too, `arity` entries per source element.
//!
//! ## Worked example
//!
//! Four nodes with a temperature each, four edges with a conductance each:
//!
//! ```text
//!   0 ------ 1          edge  nodes  w
//!    \      /            0    0 1   1.0
//!     \    /             1    1 2   2.0
//!      \  /              2    2 0   1.0
//!       2 ------ 3       3    2 3   0.5
//! ```
//!
//! Three loops: count each node's edges (INC through single map entries),
//! add the flux `w * (t[b] - t[a])` of each edge `a -> b` to node `a` and
//! subtract it from node `b` (INC through all entries of the map), then a
//! direct loop over the
//! nodes that takes an explicit step and reduces two Globals (INC and MAX).
//! The values are exact binary fractions, so every backend gives exactly the
//! numbers asserted here (see [Determinism](#determinism)).
//!
//! ```
//! use op2::prelude::*;
//!
//! /// One map entry per argument: both ends of an edge gain a neighbour.
//! #[op2::kernel]
//! fn degree(a: &mut i32, b: &mut i32) {
//!     *a += 1;
//!     *b += 1;
//! }
//!
//! /// All entries of the map: `t[k]` and `r[k]` belong to the edge's `k`-th node.
//! #[op2::kernel]
//! fn flux(w: &f64, t: &[[f64; 1]; 2], r: &mut [[f64; 1]; 2]) {
//!     let f = *w * (t[1][0] - t[0][0]);
//!     r[0][0] += f;
//!     r[1][0] -= f;
//! }
//!
//! /// Direct: one node, a constant, and two reductions.
//! #[op2::kernel]
//! fn step(t: &mut f64, r: &f64, dt: &f64, change: &mut f64, hottest: &mut f64) {
//!     let dtr = *dt * *r;
//!     *t += dtr;
//!     *change += dtr * dtr;
//!     *hottest = hottest.max(*t);
//! }
//!
//! fn main() -> op2::Result<()> {
//!     // As users choose: OP2_BACKEND=seq|rayon|jit|opencl|cuda, else rayon
//!     // (seq in builds without the `rayon` feature).
//!     let rt = Runtime::from_env()?;
//!
//!     let nodes = Set::new("nodes", 4)?;
//!     let edges = Set::new("edges", 4)?;
//!     let edge2node = Map::new("edge2node", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 0, 2, 3])?;
//!     let w = Dat::from_vec("w", &edges, 1, vec![1.0, 2.0, 1.0, 0.5])?;
//!     let t = Dat::from_vec("t", &nodes, 1, vec![0.0, 10.0, 20.0, 40.0])?;
//!     let r = Dat::<f64>::zeros("r", &nodes, 1)?;
//!     let deg = Dat::<i32>::zeros("deg", &nodes, 1)?;
//!
//!     // PyOP2: par_loop(degree, edges, deg(INC, edge2node[0]), deg(INC, edge2node[1]))
//!     par_loop!(rt, degree, edges, deg(INC, edge2node[0]), deg(INC, edge2node[1]))?;
//!     assert_eq!(deg.to_vec(), vec![2, 2, 3, 1]);
//!
//!     par_loop!(rt, flux, edges, w(READ), t(READ, edge2node), r(INC, edge2node))?;
//!     assert_eq!(r.to_vec(), vec![30.0, 10.0, -30.0, -10.0]);
//!
//!     let dt = Global::scalar("dt", 0.25); // op_decl_const / op2.Constant
//!     let change = Global::scalar("change", 0.0);
//!     let hottest = Global::scalar("hottest", f64::NEG_INFINITY);
//!     par_loop!(rt, step, nodes, t(RW), r(READ), dt(READ), change(INC), hottest(MAX))?;
//!
//!     // op_fetch_data / .data_ro: a guard derefs to the host slice.
//!     assert_eq!(*t.data_ro(), [7.5, 12.5, 12.5, 37.5]);
//!     assert_eq!(change.value(), 125.0);
//!     assert_eq!(hottest.value(), 37.5);
//!
//!     // Mistakes only visible at run time are errors naming loop and argument,
//!     // returned before anything runs: here `t` lives on nodes, not edges.
//!     let e = par_loop!(rt, step, edges, t(RW), r(READ), dt(READ), change(INC), hottest(MAX)).unwrap_err();
//!     assert!(matches!(e, op2::Error::DirectSetMismatch { .. }));
//!     assert!(e.to_string().starts_with("loop `step`, argument 0 (`t`)"), "{e}");
//!     assert_eq!(change.value(), 125.0);
//!
//!     // op_timing_output: one row per kernel, in first-call order.
//!     let names: Vec<String> = rt.timings().into_iter().map(|l| l.name).collect();
//!     assert_eq!(names, ["degree", "flux", "step"]);
//!     println!("{}", rt.timing_summary());
//!     Ok(())
//! }
//! ```
//!
//! By hand: the degrees are 2, 2, 3, 1. The fluxes are `1 * (10 - 0) = 10`,
//! `2 * (20 - 10) = 20`, `1 * (0 - 20) = -20` and `0.5 * (40 - 20) = 10`;
//! node 0 gains 10 (edge 0) and loses -20 (edge 2), 30 in all; node 1 gets
//! `-10 + 20 = 10`, node 2 `-20 - 20 + 10 = -30`, node 3 `-10` (they sum
//! to zero: what one node gains another loses). With `dt = 0.25` the steps are
//! 7.5, 2.5, -7.5, -2.5, so `t` becomes 7.5, 12.5, 12.5, 37.5, `change` is
//! `56.25 + 6.25 + 56.25 + 6.25 = 125` and `hottest` 37.5.
//!
//! The flux loop in the other two notations, for comparison (`flux` there is
//! a C kernel taking pointers):
//!
//! ```text
//! PyOP2:  op2.par_loop(flux, edges, w(op2.READ), t(op2.READ, edge2node), r(op2.INC, edge2node))
//! OP2:    op_par_loop(flux, "flux", edges,
//!                     op_arg_dat(w, -1, OP_ID, 1, "double", OP_READ),
//!                     op_arg_dat(t, -2, edge2node, 1, "double", OP_READ),
//!                     op_arg_dat(r, -2, edge2node, 1, "double", OP_INC));
//! op2-rs: par_loop!(rt, flux, edges, w(READ), t(READ, edge2node), r(INC, edge2node))?;
//! ```
//!
//! A Global given as INC adds the loop's contributions to its current value,
//! and MIN/MAX combine with it: to restart a sum, [`fill`](crate::Global::fill)
//! it with zero before the loop (as Airfoil does with its `rms`).
//!
//! ## What differs, and why
//!
//! ### Kernels are Rust functions
//!
//! A kernel is an ordinary Rust function under
//! [`#[op2::kernel]`](crate::kernel), not a string of C. Each parameter is `&T`,
//! `&[T; D]` or `&[[T; D]; A]` with `T` one of `f64`, `f32`, `i32`, `i64`,
//! `u32`, or a slice `&[T]` / `&[[T; D]]` for all targets of a ragged map or a
//! message list's variable; `&mut` for every argument the loop may change.
//! Three parameters are op2's own: `&mut Philox` (the element's random
//! stream), `&Spatial2d` / `&Spatial3d` / `&Discrete2d` (a spatial message
//! list) and `&mut Fate` (births and deaths; see [Agents](#agents)). Kernels
//! return nothing and are not generic. The same source runs two ways: `seq` and
//! `rayon` call the Rust function itself, while `jit`, `opencl` and `cuda` run
//! a C translation the attribute made at compile time
//! (`<k as op2::Kernel>::INFO.c_source`; `examples/print_kernel_c.rs` prints
//! Airfoil's). So the body must stay in the subset that translates: `let`
//! (local arrays too), arithmetic, `if`, `for` over ranges (`for i in 0..n`)
//! and over slice parameters (`for v in x`, `for &v in x.iter()`), `while`,
//! `loop`, unlabelled `break`/`continue`/`return`, indexing, `.len()` of a
//! slice, `as` casts to numeric types, `const` items, and math functions such
//! as `sqrt`, `abs`, `powi`, `exp`, `min`, `max`. Anything else (macros,
//! closures, `match`, iterator adapters, calls to other functions, names from
//! outside the kernel) is a compile error at its span with a hint; data from
//! outside, like OP2's `op_decl_const`, comes in as a READ
//! [`Global`](crate::Global).
//!
//! Math libraries round `sin`, `exp` or `pow` each their own way, so
//! backends drift apart in the last bits (an agent model's trajectories then
//! part). `#[op2::kernel(portable_math)]` gives a kernel op2's own versions
//! of `sin`, `cos`, `tan`, `exp`, `ln`, `log10`, `powf` and `powi`
//! ([`portable_math`](crate::portable_math)) on every backend, native ones
//! included, and no fused multiply-adds: the same bits everywhere, GPUs
//! included, at the price of a few ulp against the platform's functions.
//!
//! Why: the compiler checks kernel and loop together, the native backends
//! inline the kernel into the loop, and the device code comes from the same
//! source, so there is one kernel to write, test and debug.
//!
//! ### Loops are checked against the kernel
//!
//! `par_loop!` compares each argument with the kernel's signature at compile
//! time: element type, shape (`&T`, `&[T; D]` or a whole-map table), `&`
//! against READ and `&mut` against the other modes, and the argument count.
//! What only the running program knows is checked when the loop is called,
//! before anything runs, and reported as an [`Error`](crate::Error) that names
//! the loop and the argument: a Dat's dim, a map's arity, the sets a map
//! joins, a Dat on the wrong set, a map index past the arity, one Dat in two
//! access modes, WRITE or RW on a Global, a Global through a map. An
//! unavailable backend, a failing C compiler or device, and bad input to a
//! constructor ([`Set::new`](crate::Set::new), [`Dat::zeros`](crate::Dat::zeros)
//! and the others return [`Result`](crate::Result)) are errors too, not
//! panics: a library should let its caller decide what a failure means.
//!
//! ### Staging and access modes
//!
//! Kernels never see a Dat's memory. Each argument is gathered into a local
//! value, the kernel runs, and the result is scattered back. Why: no two
//! `&mut` parameters alias even when two map entries name the same target (as
//! Rust requires), and the scatter is where backends apply colouring or
//! atomics.
//!
//! Because kernels see copies, a Dat's memory on a device need not look like
//! the host's: OP2's `--force_soa` (struct of arrays) is here the default for
//! a mesh's Dats of several values per element on GPUs (`cuda`, and `opencl`
//! on a GPU; rows stay faster on a CPU), and
//! [`Dat::set_device_layout`](crate::Dat::set_device_layout) chooses per Dat
//! ([`DeviceLayout`](crate::DeviceLayout)). The host always sees rows.
//!
//! | mode | Dat (direct or through a map) | Global | the kernel's local starts as | afterwards |
//! |---|---|---|---|---|
//! | READ | yes | yes (a constant) | the value | nothing |
//! | WRITE | yes | no | zero (never read) | stored; assign every component |
//! | RW | yes | no | the value | stored |
//! | INC | yes | yes (a sum) | zero | added |
//! | MIN, MAX | yes | yes | the current value | combined |
//!
//! An INC parameter therefore reads as zero inside the kernel: write
//! `*r += f`, and never read the old value of an INC argument.
//!
//! ### Rules for one loop
//!
//! - A Dat given twice in one loop must be given in one access mode
//!   (`deg(INC, m[0]), deg(INC, m[1])` is fine).
//! - A loop may not write one Dat both directly and through a map
//!   (`x(INC), x(INC, m[0])`): colouring protects map targets only. Pass the
//!   direct one through [`Map::identity`](crate::Map::identity)
//!   (`x(INC, id[0]), x(INC, m[0])`) and the planner colours both.
//!
//! ### Host access is borrow-checked
//!
//! [`data_ro()`](crate::Dat::data_ro) and [`data_mut()`](crate::Dat::data_mut)
//! return guards, like `RefCell`'s. A loop refuses to run, with an error, while
//! a `data_mut()` guard of one of its Dats or Globals is alive, or a
//! `data_ro()` guard of one it writes, rather than race with the host's
//! reference; drop the guard first. On device backends the guards also move
//! data: `data_ro()` downloads only newer device data, and loops upload only
//! what they read.
//!
//! ```
//! use op2::prelude::*;
//!
//! #[op2::kernel]
//! fn double(x: &mut f64) {
//!     *x *= 2.0;
//! }
//!
//! fn main() -> op2::Result<()> {
//!     let rt = Runtime::from_env()?;
//!     let s = Set::new("s", 3)?;
//!     let x = Dat::from_vec("x", &s, 1, vec![1.0, 2.0, 3.0])?;
//!     let view = x.data_ro();
//!     let e = par_loop!(rt, double, s, x(RW)).unwrap_err();
//!     assert!(matches!(e, op2::Error::Borrowed { .. }), "{e}");
//!     drop(view);
//!     par_loop!(rt, double, s, x(RW))?;
//!     x.data_mut()[0] = 10.0;
//!     assert_eq!(x.to_vec(), vec![10.0, 4.0, 6.0]);
//!     Ok(())
//! }
//! ```
//!
//! ### Checked mode
//!
//! In native kernels an index out of bounds or an integer division by zero
//! panics, as Rust does. In translated kernels, checked mode makes the same
//! mistakes return [`Error::KernelCheck`](crate::Error::KernelCheck) (naming
//! the kernel and the element) instead of touching memory outside the
//! kernel's arrays. It is on in debug builds and off in release builds;
//! [`RuntimeOptions::checked`](crate::RuntimeOptions::checked) or
//! `OP2_CHECKED=1`/`0` choose. Unchecked translated code is plain C. The README
//! tabulates every case where native and translated kernels differ.
//!
//! ### Determinism
//!
//! `seq` runs elements in order. The colouring backends (`rayon`, `jit`, and
//! `opencl`/`cuda` by default) give the same bits on every run with the same
//! backend, thread count and block size, Global reductions included (per-block
//! partials combined in a fixed order). Device atomics
//! ([`Increments::Atomics`](crate::Increments::Atomics)) add in varying order;
//! [`Runtime::is_deterministic`](crate::Runtime::is_deterministic) says which
//! you have. Different backends may sum floating-point values in different
//! orders, which is why the worked example uses exactly representable numbers.
//!
//! ### Distributed runs
//!
//! With feature `mpi`, every rank builds the whole mesh, then
//! `Mpi::init()?.distribute(&sets, &maps, &primary)?` partitions the primary
//! set with METIS (OP2's `op_partition`), gives the other sets' elements
//! owners through the maps, and hands out local Sets, Maps and Dats
//! (`Distributed::set`, `map`, `dat`; `gather` collects a Dat on rank 0).
//! `distribute_graph` takes ragged maps too. Loops on them exchange halos and
//! reduce Globals across ranks by themselves; the loop code does not change.
//! Loops over subsets of distributed sets are refused.
//!
//! A mesh too large for one process is read in blocks instead, as OP2 reads
//! its HDF5 files in parallel (features `hdf5` and `mpi`): each rank reads
//! its block of rows of every set, map and Dat (`MeshFile::open_parallel`,
//! then `block_set`, `block_map`, `block_dat` into an
//! `op2::mpi::BlockMesh`), and `Mpi::distribute_blocks` cuts the primary set
//! with PT-Scotch (feature `ptscotch`), moves every row to its owner and
//! builds the same halos, without any rank holding a whole set
//! (`BlockDistributed::set`, `map`, `dat`).
//!
//! ### Not here
//!
//! op2-rs has no matrices or sparsities, and no extruded or mixed sets.
//! Meshes come from OP2's HDF5 files (`op2::hdf5`, feature `hdf5`), Gmsh
//! `.msh` 4.1 files (`op2::gmsh`) or the program itself: Airfoil reads OP2's
//! text grid (`--grid new_grid.dat`), OP2's HDF5 grid (`--grid new_grid.h5`)
//! and Gmsh meshes (`--grid mesh.msh`), or generates its mesh.
//!
//! ## Backends
//!
//! A backend is compiled in by a Cargo feature of `op2`, then chosen at run
//! time: [`Runtime::new(Backend::Jit)`](crate::Runtime::new), or
//! `OP2_BACKEND` with [`Runtime::from_env`](crate::Runtime::from_env) (unset:
//! [`Backend::default_choice`](crate::Backend::default_choice), `rayon` if
//! built, else `seq`). Asking for one not built is an error naming those that
//! are ([`Backend::available`](crate::Backend::available)); one whose driver or
//! compiler is missing, an error naming what is missing.
//!
//! | backend | feature | kernel runs as | writes through maps | settings |
//! |---|---|---|---|---|
//! | `seq` | always | the Rust function, one thread, in order | in order | none |
//! | `rayon` | `rayon` (default) | the Rust function on a team of host threads | coloured blocks | `RAYON_NUM_THREADS`, `threads`, `block_size` |
//! | `jit` | `jit` | C compiled by the system compiler, OpenMP threads | coloured blocks | `OP2_CC`, `OP2_CFLAGS`, `OP2_CACHE_DIR`, `OMP_NUM_THREADS` |
//! | `opencl` | `opencl` | OpenCL C, one work-item per element | coloured blocks and elements, or atomics | `OP2_OPENCL_DEVICE`, `OP2_INCREMENTS` |
//! | `cuda` | `cuda` | CUDA compiled by NVRTC | coloured blocks and elements, or atomics | `OP2_CUDA_DEVICE`, `OP2_INCREMENTS`, `OP2_CACHE_DIR` |
//!
//! `jit`, `opencl` and `cuda` build each loop's code at its first call and
//! cache it (in memory, and for `jit` and `cuda` on disk).
//!
//! ### Configuration
//!
//! Each [`RuntimeOptions`](crate::RuntimeOptions) field overrides its
//! environment variable, which overrides the default:
//!
//! | option | variable | default |
//! |---|---|---|
//! | the backend ([`Runtime::from_env`](crate::Runtime::from_env)) | `OP2_BACKEND` | `rayon`, else `seq` |
//! | [`threads`](crate::RuntimeOptions::threads) | `RAYON_NUM_THREADS` (`rayon`: the size of the process's shared team), `OMP_NUM_THREADS` (`jit`) | all cores (under MPI: the rank's share of its node's) |
//! | [`block_size`](crate::RuntimeOptions::block_size) | none | the backend's |
//! | [`cc`](crate::RuntimeOptions::cc), [`cflags`](crate::RuntimeOptions::cflags) | `OP2_CC`, `OP2_CFLAGS` | `cc`, `-O3 -march=native -fopenmp -ffp-contract=off -fno-math-errno` |
//! | [`cache_dir`](crate::RuntimeOptions::cache_dir) | `OP2_CACHE_DIR` | the user's cache directory (`~/.cache/op2`) |
//! | [`device`](crate::RuntimeOptions::device) | `OP2_OPENCL_DEVICE` (index or name), `OP2_CUDA_DEVICE` (ordinal) | the first GPU (OpenCL: else the first device) |
//! | [`increments`](crate::RuntimeOptions::increments) | `OP2_INCREMENTS` (`colouring`, `atomics`, `auto`: measured per loop) | colouring |
//! | [`checked`](crate::RuntimeOptions::checked) | `OP2_CHECKED` (`1`, `0`) | on in debug builds |
//! | [`device_layout`](crate::RuntimeOptions::device_layout) | `OP2_DEVICE_LAYOUT` (`auto`, `aos`, `soa`) | `auto`: on GPUs, struct of arrays for mesh Dats of dim > 1 |
//!
//! ```
//! use op2::{Backend, Runtime, RuntimeOptions};
//!
//! let options = RuntimeOptions::default().threads(2).block_size(256).checked(true);
//! let rt = Runtime::with_options(Backend::from_env()?, options)?;
//! assert_eq!(rt.backend(), Backend::from_env()?);
//! # Ok::<(), op2::Error>(())
//! ```
//!
//! ## Agents
//!
//! op2 adds an agent layer that PyOP2 and OP2 do not have (the README's
//! Agents section): ragged maps (`RaggedMap`, a varying number of
//! neighbours per element, read as a slice), message lists between agents
//! (`MessageList`, FLAME GPU's messages, read through `m(READ, list[..])` and
//! `list(NEAR)`), births and deaths on dynamic sets (`Lifecycle`,
//! `life(FATE)`), and, with `mpi`, agents that move across ranks
//! (`op2::mpi::AgentDomain`). Two of its pieces fit a mesh code too.
//!
//! A lattice neighbourhood is a [`Stencil`](crate::Stencil): a map whose
//! entries native loops compute (no table to stream through memory), usable
//! wherever a Map goes. Per-element randomness is a `&mut Philox` kernel
//! parameter given [`RandomStreams`](crate::RandomStreams) as `s(DRAW)`:
//! element `e` of the streams' `n`-th loop draws from
//! `Philox::new(seed, global id of e, n)`, the same bits on every backend,
//! thread count and rank count.
//!
//! ```
//! use op2::prelude::*;
//!
//! /// A cell becomes alive by a coin toss when exactly two neighbours live.
//! #[op2::kernel]
//! fn toss(next: &mut i32, around: &[[i32; 1]; 4], rng: &mut Philox) {
//!     let mut alive = 0;
//!     for k in 0..4 {
//!         alive += around[k][0];
//!     }
//!     *next = if alive == 2 && rng.bernoulli(0.5) { 1 } else { 0 };
//! }
//!
//! let rt = Runtime::new(Backend::Seq)?;
//! let cells = Set::new("cells", 8 * 6)?;
//! let plus = Stencil::torus("plus", &cells, (8, 6), &Stencil::VON_NEUMANN)?;
//! let state = Dat::from_vec("state", &cells, 1, (0..48).map(|i| i32::from(i % 3 == 0)).collect())?;
//! let next = Dat::<i32>::zeros("next", &cells, 1)?;
//! let streams = RandomStreams::new("tosses", 7);
//! par_loop!(rt, toss, cells, next(WRITE), state(READ, plus), streams(DRAW))?;
//! // Cell 9 in loop 0, on the host: its neighbours 1, 8, 10, 17.
//! let s = state.to_vec();
//! let alive = s[1] + s[8] + s[10] + s[17];
//! let mut rng = streams.stream_of(&cells, 9, 0).unwrap();
//! assert_eq!(next.to_vec()[9], i32::from(alive == 2 && rng.bernoulli(0.5)));
//! assert_eq!(streams.loops(), 1);
//! # Ok::<(), op2::Error>(())
//! ```
//!
//! ## Where to go next
//!
//! - `README.md`: building, the test suite, the Airfoil commands, and the
//!   table of native versus translated behaviour.
//! - `docs/ARCHITECTURE.md`: the crates, then the paths through them (a
//!   loop, a message-list build, a birth, a migration across ranks, a halo
//!   exchange, a distribution from blocks), then the shared semantics, the
//!   planner, the backends, code generation, mesh files, distributed runs
//!   and agents.
//! - `examples/airfoil/src/kernels.rs` and `examples/airfoil/src/dsl.rs`:
//!   OP2's Airfoil benchmark, five kernels and one iteration's loops, next to a
//!   hand-written version (`handwritten.rs`); `cargo run --release --example
//!   airfoil`.
//! - `tests/conformance/suite.rs`: every access mode and argument form, run on
//!   every backend compiled in.
//! - The API: [`Runtime`](crate::Runtime), [`RuntimeOptions`](crate::RuntimeOptions),
//!   [`Error`](crate::Error), [`par_loop!`](crate::par_loop).
