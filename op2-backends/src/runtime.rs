//! The `Runtime` and its `RuntimeOptions`: the runtime owns one backend's `Executor`, and
//! `par_loop!` calls its `par_loop`, which validates a loop, borrows its data, runs it and
//! records its timing. The options (threads, block size, compiler, cache directory,
//! device, checks) are resolved once from the environment through `config`, so
//! executors never read it. The runtime also lends its threads or device as `Workers`.
use std::time::Instant;

use op2_core::{
    estimate_bytes, validate_loop, ArgRoute, ArgSpec, Error, Executor, KernelInfo, LoopBody, LoopBorrows, LoopTiming,
    ParLoop, PlanCache, Result, Set, Subset, TimingSummary, Timings,
};

use crate::{Backend, SeqExecutor};

/// Settings of a runtime beyond the backend choice.
///
/// A field left `None` is resolved once, when a [`Runtime`] is built
/// ([`RuntimeOptions::resolve`]): from its environment variable where the
/// table of [`config`](crate::config) lists one, else the default. Executors
/// take the options they are given and never read the environment; one built
/// without a [`Runtime`] takes a `None` as the default
/// (pass [`RuntimeOptions::from_env`] or [`RuntimeOptions::resolve`]'s result
/// to honour the environment).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeOptions {
    /// Worker threads for threaded backends (`rayon`, `jit`). `rayon` runs
    /// loops on a team: the thread that calls them and more, which after each
    /// phase of a loop wait awake for a moment (spinning and yielding,
    /// 300 µs) before they sleep, as OpenMP's threads do, where a pool's
    /// threads sleep at once and pay a wake-up each phase. `Some(n)` is a team
    /// of the runtime's own, `n` threads with the caller; `None` the
    /// process's shared team, which every runtime without a count uses in
    /// turn (one whose loop finds it busy runs that loop on its own thread),
    /// of `RAYON_NUM_THREADS` threads, else this rank's share of its node's
    /// CPUs under `op2-mpi`, else the CPUs this process may run on
    /// ([`Env::shared_threads`](crate::config::Env::shared_threads)). `jit`
    /// takes `None` as this rank's share of its node's CPUs where `op2-mpi`
    /// started before the runtime was built and `OMP_NUM_THREADS` is unset,
    /// else as OpenMP's default (`OMP_NUM_THREADS`, else every CPU;
    /// [`Env::jit_threads`](crate::config::Env::jit_threads)).
    ///
    /// One rule for every backend, checked by [`Runtime::with_options`] before
    /// any executor is built: `Some(n)` needs `1 <= n <= `[`RuntimeOptions::max_threads`]`()`,
    /// else [`Error::InvalidOption`]. Backends without worker threads (`seq`,
    /// `opencl`, `cuda`) ignore the count but still refuse an invalid one, so
    /// that options valid on one backend are valid on all.
    pub threads: Option<usize>,
    /// Elements per block for planned loops; `None` uses the backend's default.
    pub block_size: Option<usize>,
    /// C compiler for the `jit` backend; `None` uses `OP2_CC`, else
    /// [`DEFAULT_CC`](crate::config::DEFAULT_CC).
    pub cc: Option<String>,
    /// C compiler flags for `jit`; `None` uses `OP2_CFLAGS`, else
    /// [`DEFAULT_CFLAGS`](crate::config::DEFAULT_CFLAGS).
    pub cflags: Option<String>,
    /// Directory of compiled loops; `None` uses `OP2_CACHE_DIR`, else the
    /// user's cache directory (`~/.cache/op2`; see
    /// [`Env::default_cache_dir`](crate::config::Env::default_cache_dir)).
    pub cache_dir: Option<std::path::PathBuf>,
    /// Device for device backends: for `opencl` an index or a name
    /// substring, for `cuda` an ordinal; `None` uses `OP2_OPENCL_DEVICE` or
    /// `OP2_CUDA_DEVICE`, else the first GPU (`opencl`: else the first device).
    pub device: Option<String>,
    /// For distributed sets: compute the core elements while halo exchanges
    /// are in flight (the default; `Some(false)` waits first, to measure what
    /// overlapping saves).
    pub overlap: Option<bool>,
    /// Whether device backends exchange the halos of Dats whose values are
    /// on the device in device memory (packed and unpacked there, only the
    /// records crossing the bus); `None` uses `OP2_DEVICE_HALOS`, else on.
    /// Off, such Dats go through the host whole, as before: to measure
    /// what packing on the device saves.
    pub device_halos: Option<bool>,
    /// Whether those halos' records go to MPI in device memory (a
    /// CUDA-aware MPI reads it: no host copy at all) or through page-locked
    /// host memory; `None` uses `OP2_MPI_DEVICE_BUFFERS`, else
    /// [`MpiDeviceBuffers::Auto`](op2_core::device_halo::MpiDeviceBuffers::Auto):
    /// device memory where MPI says it takes it and the backend's buffers
    /// have addresses (CUDA).
    pub mpi_device_buffers: Option<op2_core::device_halo::MpiDeviceBuffers>,
    /// How device backends keep indirect increments race-free; `None` uses
    /// `OP2_INCREMENTS`, else [`Increments::Colouring`](crate::Increments::Colouring).
    pub increments: Option<crate::Increments>,
    /// Remember the shape of every distinct loop run (see
    /// [`Runtime::recorded_loops`]): to generate or check code ahead of time.
    pub record_loops: bool,
    /// Whether native loop bodies (`seq`, `rayon`) run their AVX2 copies on
    /// CPUs with AVX2 and FMA (the same results, bit for bit); `None` uses
    /// `OP2_HOST_VECTORS` (`auto` or `baseline`), else on. Off, they run
    /// the baseline x86-64 code: to measure what the copies save.
    pub wide_vectors: Option<bool>,
    /// How `rayon` and `jit` run loops that write through maps; `None` uses
    /// `OP2_HOST_SCHEDULE` (`partitions` or `colours`), else
    /// [`HostSchedule::Partitions`](op2_core::HostSchedule::Partitions).
    /// Either gives the same results with any thread count; the two differ
    /// from each other in the order of increments (the last bits of sums).
    pub host_schedule: Option<op2_core::HostSchedule>,
    /// Whether translated kernels (`jit`, `opencl`, `cuda`) check array
    /// indices and integer division, returning
    /// [`Error::KernelCheck`](op2_core::Error::KernelCheck) where native Rust
    /// would panic; `None` uses `OP2_CHECKED` (`1`/`0`, `true`/`false`,
    /// `yes`/`no`, `on`/`off`), else on in debug builds (`debug_assertions`)
    /// and off in release builds.
    pub checked: Option<bool>,
    /// Whether every device loop waits for the device before it returns;
    /// `None` uses `OP2_SYNC_LOOPS`, else off. Off, device loops return once
    /// launched and the host waits only where it reads data (a loop's time
    /// in the timing summary is then its launch, and a kernel's failure is
    /// reported at the next wait, under that operation's name); on, each
    /// loop's time is its whole run and its failures are its own. Checked
    /// kernels always wait, to read their report.
    pub sync_loops: Option<bool>,
    /// How device backends lay out the values of a Dat whose own choice is
    /// [`DeviceLayout::Auto`](op2_core::DeviceLayout::Auto) (see
    /// [`Dat::set_device_layout`](op2_core::Dat::set_device_layout)); `None`
    /// uses `OP2_DEVICE_LAYOUT`, else `Auto`: on GPUs struct of arrays for
    /// Dats of more than one value per element on sets of fixed size, array
    /// of structs for the rest (agents, whose device work moves elements
    /// whole) and on CPU devices (PoCL), where rows are faster.
    pub device_layout: Option<op2_core::DeviceLayout>,
    /// This process's rank among the processes of its node, which picks a
    /// device backend's default device where [`device`](Self::device) is
    /// unset (node rank modulo the node's GPUs, as OP2 does); `None` uses
    /// MPI's (set when `op2-mpi` starts), else the launcher's variables
    /// (`MPI_LOCALRANKID`, `OMPI_COMM_WORLD_LOCAL_RANK`, `SLURM_LOCALID`),
    /// else none: the first GPU.
    pub node_rank: Option<usize>,
}

impl RuntimeOptions {
    /// The thread limit on any machine: [`RuntimeOptions::max_threads`] is
    /// the larger of this and 4 threads per core.
    pub const THREAD_LIMIT_FLOOR: usize = 1024;

    /// The largest [`threads`](Self::threads) accepted here: 4 per core (as
    /// `std::thread::available_parallelism` counts them), at least
    /// [`THREAD_LIMIT_FLOOR`](Self::THREAD_LIMIT_FLOOR).
    ///
    /// Why a limit: every thread costs a stack (2 MiB reserved by rayon and
    /// most OpenMP runtimes) and start-up time, and a loop gains nothing from
    /// more threads than cores. A typo such as 40000 would otherwise spend
    /// minutes and gigabytes building a pool that only slows the loops down.
    /// Why this one: 4 per core leaves room for oversubscription experiments
    /// on any machine, and the floor of 1024 keeps a given count valid on
    /// small machines too (tests and scripts asking for 64 threads run on a
    /// 2-core runner) while still catching typos.
    pub fn max_threads() -> usize {
        cores().saturating_mul(4).max(Self::THREAD_LIMIT_FLOOR)
    }

    /// [`threads`](Self::threads), checked against the rule documented there.
    pub fn checked_threads(&self) -> Result<Option<usize>> {
        let invalid = |reason: String| Error::InvalidOption {
            option: "threads",
            reason,
        };
        match self.threads {
            Some(0) => Err(invalid(
                "must be at least 1, got 0 (leave it unset for the backend's default)".to_string(),
            )),
            Some(n) if n > Self::max_threads() => Err(invalid(format!(
                "{n} is more than the limit of {} threads (4 per core, at least {}; \
                 this machine has {})",
                Self::max_threads(),
                Self::THREAD_LIMIT_FLOOR,
                op2_core::plural(cores(), "core", "cores")
            ))),
            n => Ok(n),
        }
    }

    /// Checks the options whose validity does not depend on the backend
    /// ([`threads`](Self::threads) and [`block_size`](Self::block_size)), as
    /// [`Runtime::with_options`] does before building anything.
    pub fn validate(&self) -> Result<()> {
        self.checked_threads()?;
        if self.block_size == Some(0) {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: "must be at least 1".to_string(),
            });
        }
        Ok(())
    }

    /// Options with `threads` worker threads (see [`threads`](Self::threads)
    /// for the valid counts).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Options with blocks of `block_size` elements.
    pub fn block_size(mut self, block_size: usize) -> Self {
        self.block_size = Some(block_size);
        self
    }

    /// Options with this C compiler command.
    pub fn cc(mut self, cc: impl Into<String>) -> Self {
        self.cc = Some(cc.into());
        self
    }

    /// Options with these C compiler flags.
    pub fn cflags(mut self, cflags: impl Into<String>) -> Self {
        self.cflags = Some(cflags.into());
        self
    }

    /// Options choosing the device (an index or a name substring).
    pub fn device(mut self, device: impl Into<String>) -> Self {
        self.device = Some(device.into());
        self
    }

    /// Options with this treatment of indirect increments on device backends.
    pub fn increments(mut self, increments: crate::Increments) -> Self {
        self.increments = Some(increments);
        self
    }

    /// The choice of [`increments`](Self::increments), else the default
    /// ([`Increments::Colouring`](crate::Increments::Colouring)). Reads no
    /// environment: [`RuntimeOptions::resolve`] has put `OP2_INCREMENTS`'s
    /// value in the options a [`Runtime`] gives its executor. Never fails.
    pub fn resolved_increments(&self) -> Result<crate::Increments> {
        Ok(self.increments.unwrap_or_default())
    }

    /// Options with translated kernels checked (or not): see [`RuntimeOptions::checked`].
    pub fn checked(mut self, checked: bool) -> Self {
        self.checked = Some(checked);
        self
    }

    /// Options whose native loop bodies run their AVX2 copies where the CPU
    /// has AVX2 and FMA (`true`) or never (`false`): see
    /// [`RuntimeOptions::wide_vectors`].
    pub fn wide_vectors(mut self, on: bool) -> Self {
        self.wide_vectors = Some(on);
        self
    }

    /// Options whose host backends run planned loops with `schedule`: see
    /// [`RuntimeOptions::host_schedule`].
    pub fn host_schedule(mut self, schedule: op2_core::HostSchedule) -> Self {
        self.host_schedule = Some(schedule);
        self
    }

    /// Options whose halo records go to MPI as `how` says: see
    /// [`RuntimeOptions::mpi_device_buffers`].
    pub fn mpi_device_buffers(mut self, how: op2_core::device_halo::MpiDeviceBuffers) -> Self {
        self.mpi_device_buffers = Some(how);
        self
    }

    /// Options whose device backends exchange halos in device memory (or
    /// not): see [`RuntimeOptions::device_halos`].
    pub fn device_halos(mut self, on: bool) -> Self {
        self.device_halos = Some(on);
        self
    }

    /// Options whose device loops wait for the device (or not): see
    /// [`RuntimeOptions::sync_loops`].
    pub fn sync_loops(mut self, sync: bool) -> Self {
        self.sync_loops = Some(sync);
        self
    }

    /// Options whose device backends lay out Dats as `layout` says where a
    /// Dat leaves the choice to the runtime: see
    /// [`RuntimeOptions::device_layout`].
    pub fn device_layout(mut self, layout: op2_core::DeviceLayout) -> Self {
        self.device_layout = Some(layout);
        self
    }

    /// The choice of [`checked`](Self::checked), else whether this is a debug
    /// build. Reads no environment: [`RuntimeOptions::resolve`] has put
    /// `OP2_CHECKED`'s value in the options a [`Runtime`] gives its executor.
    /// Never fails.
    pub fn resolved_checks(&self) -> Result<crate::codegen::Checks> {
        Ok(if crate::config::checked_or_default(self.checked) {
            crate::codegen::Checks::On
        } else {
            crate::codegen::Checks::Off
        })
    }

    /// Options that record the shape of every distinct loop run.
    pub fn record_loops(mut self, record: bool) -> Self {
        self.record_loops = record;
        self
    }

    /// Options that overlap halo exchanges with computation (or not).
    pub fn overlap(mut self, overlap: bool) -> Self {
        self.overlap = Some(overlap);
        self
    }

    /// Options with this code cache directory.
    pub fn cache_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The options the process environment sets (`OP2_CC`, `OP2_CFLAGS`,
    /// `OP2_CACHE_DIR`, `OP2_INCREMENTS`, `OP2_CHECKED`, `OP2_SYNC_LOOPS`; see
    /// [`config`](crate::config)), `None` where a variable is unset; an
    /// invalid value is an error naming the variable. Choices made afterwards
    /// with the builder methods win: `RuntimeOptions::from_env()?.checked(true)`.
    /// The device variables depend on the backend: [`RuntimeOptions::resolve`]
    /// reads them.
    pub fn from_env() -> Result<RuntimeOptions> {
        crate::config::Env::process().options()
    }

    /// These options for `backend` with everything the environment can set
    /// resolved, as [`Runtime::with_options`] does once before building the
    /// executor: each field left `None` takes its variable's value from the
    /// process environment, else the default ([`Env::resolve`](crate::config::Env::resolve)).
    /// Checks [`RuntimeOptions::validate`] first.
    pub fn resolve(&self, backend: Backend) -> Result<RuntimeOptions> {
        crate::config::Env::process().resolve(self, backend)
    }
}

/// Runs parallel loops on one backend and keeps their timings.
///
/// `par_loop!` calls [`Runtime::par_loop`]; users create a runtime with
/// [`Runtime::new`] or [`Runtime::from_env`] and read [`Runtime::timing_summary`].
pub struct Runtime {
    backend: Backend,
    executor: Box<dyn Executor>,
    overlap: bool,
    /// Native loop bodies may run their AVX2 copies (the partials add the CPU check).
    wide_vectors: bool,
    /// Halos of device-resident Dats exchanged in device memory, and how
    /// their records reach MPI.
    device_halos: crate::halo_loop::DeviceHalos,
    /// Device loops return once launched (the timing summary says so).
    launches_only: bool,
    recorded: Option<std::sync::Mutex<Vec<(&'static KernelInfo, crate::codegen::LoopShape)>>>,
    timings: Timings,
    plans: PlanCache,
    /// Transfer counters of the carriers device loops used, for the summary.
    transfers: std::sync::Mutex<crate::transfer_log::TransferLog>,
}

impl Runtime {
    /// A runtime on `backend` with default options, or an error naming what is
    /// available instead.
    pub fn new(backend: Backend) -> Result<Runtime> {
        Runtime::with_options(backend, RuntimeOptions::default())
    }

    /// A runtime on `backend` with `options`, the fields left `None` resolved
    /// from the environment, else their defaults ([`RuntimeOptions::resolve`]):
    /// an invalid variable is an error naming it.
    pub fn with_options(backend: Backend, options: RuntimeOptions) -> Result<Runtime> {
        if let Some(reason) = backend.unavailable_reason() {
            return Err(Error::BackendUnavailable {
                name: backend.name(),
                reason,
                available: Backend::available_list(),
            });
        }
        // Resolved once, here: executors get options and never read the environment.
        let options = options.resolve(backend)?;
        let executor: Box<dyn Executor> = match backend {
            Backend::Seq => Box::new(SeqExecutor),
            #[cfg(feature = "rayon")]
            Backend::Rayon => Box::new(crate::RayonExecutor::new(&options)?),
            #[cfg(feature = "jit")]
            Backend::Jit => Box::new(crate::JitExecutor::new(&options)?),
            #[cfg(feature = "opencl")]
            Backend::OpenCl => Box::new(crate::OpenClExecutor::new(&options)?),
            #[cfg(feature = "cuda")]
            Backend::Cuda => Box::new(crate::cuda::CudaExecutor::new(&options)?),
            // Reached only in builds without some backend's feature.
            #[allow(unreachable_patterns)]
            other => unreachable!("backend {other} reported available without an executor"),
        };
        let launches_only = executor.is_device()
            && options.sync_loops != Some(true)
            && !crate::config::checked_or_default(options.checked);
        Ok(Runtime {
            backend,
            executor,
            overlap: options.overlap.unwrap_or(true),
            wide_vectors: options.wide_vectors.unwrap_or(true),
            device_halos: crate::halo_loop::DeviceHalos {
                on: options.device_halos.unwrap_or(true),
                mpi_buffers: options.mpi_device_buffers.unwrap_or_default(),
            },
            launches_only,
            recorded: options.record_loops.then(|| std::sync::Mutex::new(Vec::new())),
            timings: Timings::default(),
            plans: PlanCache::default(),
            transfers: std::sync::Mutex::new(crate::transfer_log::TransferLog::default()),
        })
    }

    /// A runtime on the backend named by `OP2_BACKEND` (`seq|rayon|jit|opencl|cuda`),
    /// or on [`Backend::default_choice`] when it is unset or empty.
    pub fn from_env() -> Result<Runtime> {
        Runtime::new(Backend::from_env()?)
    }

    /// A runtime on the backend with this name.
    pub fn from_name(name: &str) -> Result<Runtime> {
        Runtime::new(name.parse()?)
    }

    /// The backend loops run on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether running the same loops again gives the same bits. True except
    /// on device backends with [`Increments::Atomics`](crate::Increments),
    /// where the order of floating-point additions varies between runs (see
    /// [`Executor::is_deterministic`]).
    pub fn is_deterministic(&self) -> bool {
        self.executor.is_deterministic()
    }

    /// Validates a loop, borrows its data, runs it on the backend and records
    /// its time. This is what `par_loop!` expands to; `body` is the generated
    /// gather / kernel / scatter code for a range of positions.
    ///
    /// The loop visits every owned element of `set`, or, with `subset` (a
    /// subset of `set`), the subset's elements: positions `0..subset.len()`,
    /// position `p` being element `subset.indices()[p]` of `set`, which stays
    /// the set direct Dats live on and maps start from. A loop over an empty
    /// subset is validated and runs nothing.
    ///
    /// # Errors
    /// What [`validate_loop`] finds; [`Error::Borrowed`] for data borrowed on
    /// the host; [`Error::InvalidSubset`] for a subset of another set than
    /// `set`, or of a distributed set in a loop that writes through a map
    /// (not supported yet); the backend's errors.
    pub fn par_loop(
        &self,
        kernel: &'static KernelInfo,
        set: &Set,
        subset: Option<&Subset>,
        args: &[ArgSpec<'_>],
        body: &LoopBody<'_>,
    ) -> Result<()> {
        if let Some(s) = subset {
            let reason = if !s.set().same(set) {
                Some(format!(
                    "is a subset of set `{}`, not of `{}`",
                    s.set().name(),
                    set.name()
                ))
            } else if set.distribution().is_some() && args.iter().any(|a| a.is_indirect() && a.access.writes()) {
                // Their exec halo would need every rank's subset.
                Some(format!(
                    "a loop over a subset of a distributed set writes through a map, which is not supported yet \
                     (set `{}`, loop `{}`): read through maps and write the subset's own elements, or loop over \
                     the whole set",
                    set.name(),
                    kernel.name
                ))
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(Error::InvalidSubset {
                    subset: s.name().to_string(),
                    reason,
                });
            }
        }
        // Dynamic sets first: validation must see the numbering the loop runs on.
        let _sets = op2_core::SetsInUse::take(set, args)?;
        if let Some(s) = subset {
            s.check_current()?;
            // Host bodies read the elements on the host: a subset selected
            // on a device brings them back here, an error rather than a
            // panic inside the body if it cannot.
            if !self.executor.is_device() {
                s.try_indices()?;
            }
        }
        validate_loop(kernel, set, args)?;
        let _borrows = LoopBorrows::take(kernel, args)?;
        if self.executor.is_device() {
            self.register_transfers(args, subset);
        } else {
            op2_core::sync_args_to_host(kernel, args)?;
        }
        let lp = ParLoop {
            kernel,
            set,
            subset,
            range: 0..subset.map_or(set.size(), Subset::len),
            args,
            plans: &self.plans,
            wide_vectors: self.wide_vectors,
        };
        if let Some(rec) = &self.recorded {
            let shape = crate::codegen::LoopShape::of(&lp, &op2_core::ReductionLayout::new(args));
            let mut rec = rec.lock().unwrap_or_else(|p| p.into_inner());
            if !rec.iter().any(|(_, s)| *s == shape) {
                rec.push((kernel, shape));
            }
        }
        let start = Instant::now();
        let device_before = op2_core::device_counts::this_thread();
        let halo = match set.distribution() {
            None => {
                let mut shared = crate::shared_globals::SharedReductions::begin(&*self.executor, args);
                let failed = shared.take_failure();
                // Nothing to run: not even a program to build.
                let ran = match (failed, subset.is_some_and(Subset::is_empty)) {
                    (Some(e), _) => Err(e),
                    (None, true) => Ok(()),
                    // SAFETY: validated above, and `_borrows` holds the
                    // data until the loop has run.
                    (None, false) => unsafe { self.executor.execute(&lp, body) },
                };
                match shared.is_empty() {
                    true => ran?,
                    false => shared.end(&*self.executor, ran)?,
                }
                op2_core::HaloTraffic::default()
            }
            // SAFETY: validated above, and `_borrows` holds the data until
            // the loop has run.
            Some(dist) => unsafe {
                crate::halo_loop::run(
                    &*self.executor,
                    dist,
                    kernel,
                    set,
                    subset,
                    args,
                    &self.plans,
                    body,
                    crate::halo_loop::Overlap(self.overlap),
                    self.device_halos,
                    self.wide_vectors,
                )
            }?,
        };
        let device = op2_core::device_counts::this_thread().since(device_before);
        self.timings.record_loop(
            kernel.name,
            start.elapsed().as_secs_f64(),
            estimate_bytes(&lp),
            halo,
            device,
        );
        Ok(())
    }

    /// Remembers the transfer counters of a device loop's carriers.
    fn register_transfers(&self, args: &[ArgSpec<'_>], subset: Option<&Subset>) {
        let mut log = self.transfers.lock().unwrap_or_else(|p| p.into_inner());
        let mut note = |name: &str, counter: std::sync::Arc<op2_core::TransferCounter>| log.note(name, &counter);
        for a in args {
            note(a.data.name(), a.data.device().lock().counter.clone());
            match a.route {
                ArgRoute::Map(m) => note(m.map.name(), m.map.device().lock().counter.clone()),
                ArgRoute::Ragged(r) => {
                    note(
                        &format!("{} offsets", r.name()),
                        r.offsets_device().lock().counter.clone(),
                    );
                    note(
                        &format!("{} targets", r.name()),
                        r.targets_device().lock().counter.clone(),
                    );
                }
                ArgRoute::Direct | ArgRoute::Whole(_) => {}
            }
        }
        if let Some(s) = subset {
            note(s.name(), s.device().lock().counter.clone());
        }
    }

    /// The kernel and shape of every distinct loop run so far, when the
    /// runtime was made with [`RuntimeOptions::record_loops`] (else empty).
    pub fn recorded_loops(&self) -> Vec<(&'static KernelInfo, crate::codegen::LoopShape)> {
        self.recorded
            .as_ref()
            .map(|r| r.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }

    /// Per-loop timings so far, in first-call order.
    pub fn timings(&self) -> Vec<LoopTiming> {
        self.timings.rows()
    }

    /// The timings as a printable table (calls, seconds, ms/call, MB/call, GB/s).
    pub fn timing_summary(&self) -> TimingSummary {
        let mut summary = self.timings.summary();
        summary.transfers = self.transfers.lock().unwrap_or_else(|p| p.into_inner()).rows();
        summary.fallbacks = self.executor.fallbacks();
        if self.launches_only {
            summary.notes.push(
                "device loops return once launched: a loop's time is its launch, and the device's work is \
                 waited for where the host next reads data (OP2_SYNC_LOOPS=1 times each loop whole)"
                    .to_string(),
            );
        }
        summary
    }

    /// How many colouring plans this runtime has built (a repeated loop reuses
    /// its plan from the cache).
    pub fn plans_built(&self) -> usize {
        self.plans.built()
    }

    /// How many colouring plans this runtime holds now: those of dropped
    /// maps and subsets go, and at most [`op2_core::PlanCache::MAX_PLANS`]
    /// stay.
    pub fn plans_held(&self) -> usize {
        self.plans.len()
    }

    /// How the backend found its compiled loops (zeros for `seq` and `rayon`).
    pub fn code_cache_stats(&self) -> op2_core::CodeCacheStats {
        self.executor.code_cache_stats()
    }

    /// Forgets the timings recorded so far (e.g. after a warm-up).
    pub fn reset_timings(&self) {
        self.timings.reset()
    }
}

/// Hardware threads of this machine (1 when it cannot be told).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Runtime({})", self.backend)
    }
}

/// A runtime lends its backend's host threads ([`Executor::workers`]) to
/// builds and compactions (`list.build_on(&rt)`), and a device backend its
/// device ([`Executor::device_work`]), where they then run.
impl op2_core::Workers for Runtime {
    fn threads(&self) -> usize {
        self.executor.workers().threads()
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        self.executor.workers().run(tasks, task);
    }

    fn device_work(&self) -> Option<&dyn op2_core::DeviceWork> {
        self.executor.device_work()
    }

    fn work_timings(&self) -> Option<&Timings> {
        Some(&self.timings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_runtime_starts() {
        assert_eq!(Runtime::new(Backend::Seq).unwrap().backend(), Backend::Seq);
        assert_eq!(Runtime::from_name("seq").unwrap().backend(), Backend::Seq);
    }

    #[test]
    fn unavailable_backend_is_an_error_naming_what_is_missing() {
        // Without the `cuda` feature: which backends exist instead. With it (and
        // no GPU here): which CUDA library is missing.
        match Runtime::new(Backend::Cuda).unwrap_err() {
            e @ Error::BackendUnavailable { name: "cuda", .. } => assert!(e.to_string().contains("seq"), "{e}"),
            e @ Error::DeviceUnavailable { backend: "cuda", .. } => assert!(e.to_string().contains("lib"), "{e}"),
            e => panic!("unexpected {e:?}"),
        }
    }

    #[test]
    fn every_backend_refuses_the_same_thread_counts_before_building_anything() {
        let max = RuntimeOptions::max_threads();
        assert!(max >= RuntimeOptions::THREAD_LIMIT_FLOOR);
        for (threads, want) in [(0, "at least 1".to_string()), (max + 1, format!("limit of {max}"))] {
            let mut seen = None;
            for backend in Backend::available() {
                let e = Runtime::with_options(backend, RuntimeOptions::default().threads(threads)).unwrap_err();
                assert!(
                    matches!(e, Error::InvalidOption { option: "threads", .. }),
                    "{backend}: {e:?}"
                );
                let text = e.to_string();
                assert!(text.contains(&want), "{backend}: {text}");
                assert_eq!(seen.get_or_insert_with(|| text.clone()), &text, "{backend}");
            }
        }
        let e = RuntimeOptions::default()
            .threads(40_000)
            .checked_threads()
            .unwrap_err()
            .to_string();
        if max < 40_000 {
            let has = format!("this machine has {}", op2_core::plural(cores(), "core", "cores"));
            assert!(e.contains("40000 is more than") && e.contains(&has), "{e}");
        }
        assert_eq!(
            RuntimeOptions::default().threads(max).checked_threads().unwrap(),
            Some(max)
        );
        assert_eq!(RuntimeOptions::default().checked_threads().unwrap(), None);
    }

    #[test]
    fn unknown_backend_name_is_an_error() {
        let e = Runtime::from_name("gpu9000").unwrap_err();
        assert!(matches!(e, Error::UnknownBackend { .. }));
    }
}
