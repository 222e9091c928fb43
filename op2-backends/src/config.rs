//! Configuration: every environment variable op2 reads, read here and nowhere
//! else, under one set of rules (docs/ARCHITECTURE.md, Configuration).
//!
//! A [`Runtime`](crate::Runtime) resolves its settings once, when it is built
//! ([`RuntimeOptions::resolve`]): a choice made in [`RuntimeOptions`] wins, else
//! the variable, else the default. Executors receive the resolved options and
//! never read the environment. [`RuntimeOptions::from_env`] gives the options
//! the environment sets, to inspect or to override with the builder methods.
//!
//! # Variables
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `OP2_BACKEND` | `rayon` when compiled in, else `seq` ([`Backend::default_choice`]) | The backend of [`Runtime::from_env`](crate::Runtime::from_env) and [`Backend::from_env`]: `seq`, `rayon`, `jit`, `opencl` or `cuda`, in any case. |
//! | `OP2_CHECKED` | on in debug builds, off in release builds | Whether translated kernels check indices and integer division ([`RuntimeOptions::checked`]): `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`, in any case. |
//! | `OP2_SYNC_LOOPS` | off | Whether every device loop waits for the device before it returns ([`RuntimeOptions::sync_loops`]): exact per-loop times in the timing summary, at one host wait per loop. The same values as `OP2_CHECKED`. |
//! | `OP2_DEVICE_HALOS` | on | Whether device backends exchange the halos of Dats whose values are on the device in device memory, only the records crossing the bus ([`RuntimeOptions::device_halos`]); off sends such Dats through the host whole. The same values as `OP2_CHECKED`. |
//! | `OP2_MPI_DEVICE_BUFFERS` | `auto` | Whether those halos' records go to MPI in device memory ([`RuntimeOptions::mpi_device_buffers`]): `auto` (where MPI says it takes device memory, `MPIX_Query_cuda_support`, and the backend's buffers have addresses: CUDA), `on` (else an error at the first exchange naming why not) or `off` (through page-locked host memory), in any case. |
//! | `OP2_MPI_WAIT` | `auto` | How `op2-mpi`'s ranks wait for MPI ([`MpiWait`]): `auto` (sleep between polls where the node's ranks outnumber its cores, else MPI's own blocking calls), `spin` (always MPI's blocking calls) or `sleep` (always poll and sleep), in any case. Read by `Mpi::init`. |
//! | `OP2_INCREMENTS` | `colouring` | How device backends keep indirect increments race-free ([`RuntimeOptions::increments`]): `colouring` (or `coloring`), `atomics` (or `atomic`), or `auto` (measured per loop), in any case. |
//! | `OP2_DEVICE_LAYOUT` | `auto` | How device backends lay out Dats that leave it to the runtime ([`RuntimeOptions::device_layout`]): `auto`, `aos` (or `array-of-structs`) or `soa` (or `struct-of-arrays`), in any case. |
//! | `OP2_HOST_VECTORS` | `auto` | Whether native loop bodies (`seq`, `rayon`) run their AVX2 copies ([`RuntimeOptions::wide_vectors`]): `auto` (where the CPU has AVX2 and FMA) or `baseline` (never), in any case. |
//! | `OP2_HOST_SCHEDULE` | `partitions` | How host backends (`rayon`, `jit`) run loops that write through maps ([`RuntimeOptions::host_schedule`]): `partitions` (contiguous partitions' interiors in parallel, then their boundaries) or `colours` (or `colors`: the plan's block colours in turn), in any case. |
//! | `OP2_CC` | `cc` ([`DEFAULT_CC`]) | The C compiler of the `jit` backend ([`RuntimeOptions::cc`]). |
//! | `OP2_CFLAGS` | [`DEFAULT_CFLAGS`] | Its flags, separated by whitespace ([`RuntimeOptions::cflags`]). |
//! | `OP2_CACHE_DIR` | `$XDG_CACHE_HOME/op2`, else `$HOME/.cache/op2`, else `op2-cache` in the system's temporary directory | Where `jit` keeps compiled loops and `cuda` keeps them in the subdirectory `cuda` ([`RuntimeOptions::cache_dir`]). |
//! | `XDG_CACHE_HOME`, `HOME` | unset | Only for the default of `OP2_CACHE_DIR`. |
//! | `OP2_OPENCL_DEVICE` | the first GPU, else the first device | The `opencl` device: an index into the list of every platform's devices, or a substring of a device's name, in any case ([`RuntimeOptions::device`]). |
//! | `OP2_CUDA_DEVICE` | `0` | The `cuda` GPU: an ordinal, `0`, `1`, ... ([`RuntimeOptions::device`]). |
//! | `PMI_SIZE`, `OMPI_COMM_WORLD_SIZE`, `SLURM_NTASKS` | unset | How many processes the launcher started (MPICH's Hydra, Open MPI, Slurm): `op2-mpi`'s `Mpi::init` refuses an MPI world of another size, the sign of an `mpirun` of another MPI library. |
//! | `MPI_LOCALRANKID`, `OMPI_COMM_WORLD_LOCAL_RANK`, `SLURM_LOCALID` | unset | The process's rank on its node, as the launcher announces it: without a device variable, `cuda` and `opencl` take device (node rank modulo the node's devices), MPI's node rank first where `op2-mpi` has started ([`Env::node_rank`]). |
//! | `RAYON_NUM_THREADS` | this rank's share of its node's CPUs where `op2-mpi` has started, else the CPUs this process may run on | The threads of `rayon`'s shared team, which every runtime whose [`RuntimeOptions::threads`] is unset uses ([`Env::shared_threads`]); read when it is first used. |
//!
//! # Rules
//!
//! The same for every variable above:
//!
//! - The value is trimmed of surrounding whitespace, and an empty value is
//!   the same as an unset variable.
//! - A value outside those accepted is an [`Error::InvalidOption`] whose
//!   `option` is the variable's name and whose reason quotes the value and
//!   lists the accepted ones (so is a value that is not UTF-8, except for the
//!   directories, which are taken as they are).
//! - A choice made in [`RuntimeOptions`] wins over the variable, which is then
//!   not read at all; the variable wins over the default.
//! - A device variable is read only for its backend (`OP2_OPENCL_DEVICE` for
//!   `opencl`, `OP2_CUDA_DEVICE` for `cuda`), and `OP2_BACKEND` only by
//!   [`Runtime::from_env`](crate::Runtime::from_env) and
//!   [`Backend::from_env`]: a runtime whose backend is given never reads it.
//!
//! The launcher's variables are not op2's, so a value that is not a number
//! is ignored rather than refused: the check is a safety net and must not
//! stop a run that a launcher describes in a way op2 does not know. Nor is
//! `RAYON_NUM_THREADS`, rayon's: a value that is not a positive number
//! (once trimmed, as every value here) means the default, as it does for
//! rayon.
//!
//! Read by the libraries op2 uses, not by op2: `OMP_NUM_THREADS` (the
//! threads of `jit`; op2 only asks whether it is set, see
//! [`Env::jit_threads`]), `OCL_ICD_VENDORS` (where the OpenCL loader looks for
//! drivers), `LD_LIBRARY_PATH` (where `cuda` finds libcuda and libnvrtc).
//!
//! # Tests and tools
//!
//! Read by the test suite, the benchmarks and the CI script, where they are
//! used; never by the library.
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `OP2_FUZZ_CASES` | `64` | Cases of the differential fuzzer (`tests/differential.rs`). |
//! | `OP2_UPDATE_SNAPSHOTS` | unset | When set, the snapshot tests (`tests/codegen_snapshots.rs`, `tests/device_snapshots.rs`) rewrite `tests/snapshots/` instead of comparing with it. |
//! | `OP2_REQUIRE_GPU` | unset | When set, the GPU tests fail instead of skipping without a GPU or driver. |
//! | `OP2_REQUIRE_NVRTC` | unset | When set, `tests/cuda_ptx.rs` fails instead of skipping without NVRTC or ptxas. |
//! | `OP2_PTXAS` | `ptxas` | The ptxas with which `tests/cuda_ptx.rs` assembles generated PTX. |
//! | `OP2_EXPECTED_RANKS` | unset | `tests/mpi.rs` fails unless MPI's world has this many ranks (`.ci/run` sets it under `mpirun`). |
//! | `OP2_JIT_TEST_DIR` | unset | The cache directory `tests/jit_cache.rs` hands to its child processes. |
//! | `AIRFOIL_BENCH_MESH` | `200x300` (`400x600` for `cuda` in `benches/device.rs`) | The benchmarks' Airfoil mesh, `IxJ`. |
//! | `LIFE_BENCH_SIZE` | `4096x4096` | The board of the Life benchmark (`benches/life.rs`), `WxH`. |
//! | `SIR_BENCH_NODES` | `1000000x5` | The Barabási–Albert network of the SIR benchmark (`benches/sir.rs`): `NxM`, N nodes, each new one joined to M earlier ones. |
//! | `OP2_CUDA_TOOLS` | `~/.cache/op2-cuda-tools` | Where `.ci/run` installs NVRTC and ptxas. |
//!
//! `tests/codegen_snapshots.rs` also compiles its snapshots with `OP2_CC`.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use op2_core::device_halo::MpiDeviceBuffers;
use op2_core::{DeviceLayout, Error, HostSchedule, Result};

use crate::runtime::cores;
use crate::{Backend, Increments, RuntimeOptions};

/// The C compiler of `jit` when neither [`RuntimeOptions::cc`] nor `OP2_CC`
/// names one.
pub const DEFAULT_CC: &str = "cc";

/// The flags of `jit` when neither [`RuntimeOptions::cflags`] nor `OP2_CFLAGS`
/// gives them. `-ffp-contract=off` keeps `a*b+c` as two roundings, as Rust
/// computes it, so results match the native backends; `-fno-math-errno` lets
/// `sqrt` compile to one instruction (no result changes).
pub const DEFAULT_CFLAGS: &str = "-O3 -march=native -fopenmp -ffp-contract=off -fno-math-errno";

const BACKEND: &str = "OP2_BACKEND";
const CHECKED: &str = "OP2_CHECKED";
const SYNC_LOOPS: &str = "OP2_SYNC_LOOPS";
const DEVICE_HALOS: &str = "OP2_DEVICE_HALOS";
const MPI_DEVICE_BUFFERS: &str = "OP2_MPI_DEVICE_BUFFERS";
const INCREMENTS: &str = "OP2_INCREMENTS";
const MPI_WAIT: &str = "OP2_MPI_WAIT";
const DEVICE_LAYOUT: &str = "OP2_DEVICE_LAYOUT";
const CC: &str = "OP2_CC";
const CFLAGS: &str = "OP2_CFLAGS";
const CACHE_DIR: &str = "OP2_CACHE_DIR";
const OPENCL_DEVICE: &str = "OP2_OPENCL_DEVICE";
const CUDA_DEVICE: &str = "OP2_CUDA_DEVICE";
const HOST_VECTORS: &str = "OP2_HOST_VECTORS";
const HOST_SCHEDULE: &str = "OP2_HOST_SCHEDULE";

/// How a rank of a distributed run waits for MPI to finish a collective or a
/// message (`OP2_MPI_WAIT`).
///
/// MPI's blocking calls spin: the lowest latency where every rank has a core
/// of its own, but where ranks share cores (more ranks than cores, as on a
/// laptop or a small CI machine) a waiting rank spins away the time slice of
/// the rank it waits for. Sleeping between polls gives that core back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpiWait {
    /// Sleep between polls where the node's ranks outnumber its cores, else
    /// spin (the default).
    Auto,
    /// Always MPI's own blocking calls.
    Spin,
    /// Always post the call, then poll it and sleep between polls.
    Sleep,
}

/// The variables through which launchers announce how many processes they
/// started (MPICH's Hydra, Open MPI, Slurm).
const LAUNCHER_SIZES: [&str; 3] = ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"];

/// The variables through which they announce a process's rank on its node.
const LAUNCHER_NODE_RANKS: [&str; 3] = ["MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"];

/// A device layout's name as `OP2_DEVICE_LAYOUT` (and the examples'
/// `--layout`) take it, in any case; `None` for other text.
pub fn parse_device_layout(v: &str) -> Option<DeviceLayout> {
    match v.trim().to_ascii_lowercase().as_str() {
        "auto" => Some(DeviceLayout::Auto),
        "aos" | "array-of-structs" => Some(DeviceLayout::ArrayOfStructs),
        "soa" | "struct-of-arrays" => Some(DeviceLayout::StructOfArrays),
        _ => None,
    }
}

/// Whether translated kernels are checked when nothing says: in debug builds.
fn default_checked() -> bool {
    cfg!(debug_assertions)
}

fn process_lookup(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Where the variables come from: the process environment
/// ([`Env::process`]) or any lookup from name to value ([`Env::new`]), which
/// lets tests try values without changing the process environment.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    lookup: &'a dyn Fn(&str) -> Option<OsString>,
}

impl fmt::Debug for Env<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Env")
    }
}

impl Env<'static> {
    /// The process environment.
    pub fn process() -> Env<'static> {
        Env {
            lookup: &process_lookup,
        }
    }
}

impl<'a> Env<'a> {
    /// The variables `lookup` gives (`None`: unset).
    pub fn new(lookup: &'a dyn Fn(&str) -> Option<OsString>) -> Env<'a> {
        Env { lookup }
    }

    /// `name`'s value, trimmed; `None` when unset or empty; an error when it
    /// is not UTF-8.
    fn text(&self, name: &'static str) -> Result<Option<String>> {
        match (self.lookup)(name) {
            None => Ok(None),
            Some(raw) => match raw.into_string() {
                Ok(v) => Ok(Some(v.trim().to_string()).filter(|v| !v.is_empty())),
                Err(raw) => Err(invalid(name, format!("`{}` is not valid UTF-8", raw.to_string_lossy()))),
            },
        }
    }

    /// `name`'s value as a directory: trimmed when it is UTF-8, `None` when
    /// unset or empty.
    fn dir(&self, name: &'static str) -> Option<PathBuf> {
        let raw = (self.lookup)(name)?;
        let dir = match raw.into_string() {
            Ok(v) => OsString::from(v.trim()),
            Err(raw) => raw,
        };
        (!dir.is_empty()).then(|| dir.into())
    }

    /// `name`'s value through `parse`; a value `parse` refuses is an error
    /// saying that it is not `expected`.
    fn parse<T>(&self, name: &'static str, expected: &str, parse: impl FnOnce(&str) -> Option<T>) -> Result<Option<T>> {
        match self.text(name)? {
            None => Ok(None),
            Some(v) => match parse(&v) {
                Some(t) => Ok(Some(t)),
                None => Err(invalid(name, format!("`{v}` is not {expected}"))),
            },
        }
    }

    /// `OP2_BACKEND`.
    pub fn backend(&self) -> Result<Option<Backend>> {
        let names: Vec<&str> = Backend::ALL.iter().rev().map(|b| b.name()).collect();
        let expected = format!(
            "one of: {} (this build can run: {})",
            names.join(", "),
            Backend::available_list()
        );
        self.parse(BACKEND, &expected, |v| v.parse().ok())
    }

    /// `OP2_CHECKED`.
    pub fn checked(&self) -> Result<Option<bool>> {
        self.switch(CHECKED)
    }

    /// `OP2_SYNC_LOOPS`.
    pub fn sync_loops(&self) -> Result<Option<bool>> {
        self.switch(SYNC_LOOPS)
    }

    /// `OP2_DEVICE_HALOS`.
    pub fn device_halos(&self) -> Result<Option<bool>> {
        self.switch(DEVICE_HALOS)
    }

    /// `OP2_MPI_DEVICE_BUFFERS`.
    pub fn mpi_device_buffers(&self) -> Result<Option<MpiDeviceBuffers>> {
        self.parse(MPI_DEVICE_BUFFERS, "auto, on, off", |v| {
            match v.to_ascii_lowercase().as_str() {
                "auto" => Some(MpiDeviceBuffers::Auto),
                "on" => Some(MpiDeviceBuffers::On),
                "off" => Some(MpiDeviceBuffers::Off),
                _ => None,
            }
        })
    }

    /// `OP2_MPI_WAIT`: `auto`, `spin` or `sleep`.
    pub fn mpi_wait(&self) -> Result<Option<MpiWait>> {
        self.parse(MPI_WAIT, "auto, spin, sleep", |v| {
            match v.to_ascii_lowercase().as_str() {
                "auto" => Some(MpiWait::Auto),
                "spin" => Some(MpiWait::Spin),
                "sleep" => Some(MpiWait::Sleep),
                _ => None,
            }
        })
    }

    /// `OP2_HOST_VECTORS`: `Some(true)` for `auto`, `Some(false)` for `baseline`.
    pub fn host_vectors(&self) -> Result<Option<bool>> {
        self.parse(HOST_VECTORS, "auto, baseline", |v| {
            match v.to_ascii_lowercase().as_str() {
                "auto" => Some(true),
                "baseline" => Some(false),
                _ => None,
            }
        })
    }

    /// `OP2_HOST_SCHEDULE`: `partitions`, or `colours` (`colors`).
    pub fn host_schedule(&self) -> Result<Option<HostSchedule>> {
        self.parse(HOST_SCHEDULE, "partitions, colours", |v| {
            match v.to_ascii_lowercase().as_str() {
                "partitions" => Some(HostSchedule::Partitions),
                "colours" | "colors" => Some(HostSchedule::Colours),
                _ => None,
            }
        })
    }

    /// A variable that is on or off.
    fn switch(&self, name: &'static str) -> Result<Option<bool>> {
        self.parse(name, "one of: 1, 0, true, false, yes, no, on, off", |v| {
            match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Some(true),
                "0" | "false" | "no" | "off" => Some(false),
                _ => None,
            }
        })
    }

    /// `OP2_INCREMENTS`.
    pub fn increments(&self) -> Result<Option<Increments>> {
        self.parse(
            INCREMENTS,
            "one of: colouring (or coloring), atomics (or atomic), auto",
            |v| v.parse().ok(),
        )
    }

    /// `OP2_DEVICE_LAYOUT`.
    pub fn device_layout(&self) -> Result<Option<DeviceLayout>> {
        self.parse(
            DEVICE_LAYOUT,
            "one of: auto, aos (or array-of-structs), soa (or struct-of-arrays)",
            parse_device_layout,
        )
    }

    /// `OP2_CC`.
    pub fn cc(&self) -> Result<Option<String>> {
        self.text(CC)
    }

    /// `OP2_CFLAGS`.
    pub fn cflags(&self) -> Result<Option<String>> {
        self.text(CFLAGS)
    }

    /// `OP2_CACHE_DIR`.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        self.dir(CACHE_DIR)
    }

    /// `OP2_CACHE_DIR`, else its default: `$XDG_CACHE_HOME/op2`, else
    /// `$HOME/.cache/op2`, else `op2-cache` in the system's temporary
    /// directory.
    pub fn default_cache_dir(&self) -> PathBuf {
        self.cache_dir()
            .or_else(|| self.dir("XDG_CACHE_HOME").map(|d| d.join("op2")))
            .or_else(|| self.dir("HOME").map(|h| h.join(".cache").join("op2")))
            .unwrap_or_else(|| std::env::temp_dir().join("op2-cache"))
    }

    /// The device variable of `backend`: `OP2_OPENCL_DEVICE` for `opencl`,
    /// `OP2_CUDA_DEVICE` (an ordinal) for `cuda`; `None` for the others.
    pub fn device(&self, backend: Backend) -> Result<Option<String>> {
        match backend {
            Backend::OpenCl => self.text(OPENCL_DEVICE),
            Backend::Cuda => self.parse(CUDA_DEVICE, "a GPU ordinal (0, 1, ...)", |v| {
                v.parse::<usize>().ok().map(|_| v.to_string())
            }),
            _ => Ok(None),
        }
    }

    /// This process's rank on its node as a launcher announces it (the
    /// first of `MPI_LOCALRANKID`, `OMPI_COMM_WORLD_LOCAL_RANK`,
    /// `SLURM_LOCALID` that is a number).
    pub fn launcher_node_rank(&self) -> Option<usize> {
        LAUNCHER_NODE_RANKS
            .into_iter()
            .find_map(|name| self.text(name).ok()??.parse().ok())
    }

    /// The node rank that picks a device backend's default device: MPI's
    /// (`op2_core::node_rank`, set when `op2-mpi` starts), else the
    /// launcher's ([`Env::launcher_node_rank`]), else none (one process).
    pub fn node_rank(&self) -> Option<usize> {
        op2_core::node_rank()
            .map(|n| n.rank)
            .or_else(|| self.launcher_node_rank())
    }

    /// `RAYON_NUM_THREADS`: a positive count, else `None` (unset, `0` or
    /// not a number: the default, as for rayon).
    pub fn rayon_num_threads(&self) -> Option<usize> {
        self.text("RAYON_NUM_THREADS").ok()??.parse().ok().filter(|&n| n > 0)
    }

    /// The threads of `rayon`'s shared team, which runtimes whose
    /// [`RuntimeOptions::threads`] is unset share: `RAYON_NUM_THREADS`,
    /// else this rank's share of its node's CPUs where `op2-mpi` has started
    /// ([`NodeRank::cpu_share`](op2_core::NodeRank::cpu_share)), else the
    /// CPUs this process may run on; at most
    /// [`RuntimeOptions::max_threads`].
    pub fn shared_threads(&self) -> usize {
        let own = cores();
        self.rayon_num_threads()
            .unwrap_or_else(|| op2_core::node_rank().map_or(own, |n| n.cpu_share(own)))
            .min(RuntimeOptions::max_threads())
    }

    /// The threads of a `jit` runtime whose [`RuntimeOptions::threads`] is
    /// unset: this rank's share of its node's CPUs where `op2-mpi` has
    /// started and `OMP_NUM_THREADS` is unset, else `None` (OpenMP's
    /// default: `OMP_NUM_THREADS`, else every CPU, which ranks sharing a
    /// node would each start and spin against one another).
    pub fn jit_threads(&self) -> Option<usize> {
        // Set means anything but unset or empty (the module's rules); a value
        // that is not UTF-8 is set, for OpenMP to judge.
        let omp_set = !matches!(self.text("OMP_NUM_THREADS"), Ok(None));
        default_jit_threads(omp_set, op2_core::node_rank(), cores())
    }

    /// The process counts launchers announce, with the variable each came
    /// from, in the order `PMI_SIZE`, `OMPI_COMM_WORLD_SIZE`, `SLURM_NTASKS`.
    /// Values that are not numbers are left out (see the module's rules).
    pub fn launcher_sizes(&self) -> Vec<(&'static str, usize)> {
        LAUNCHER_SIZES
            .into_iter()
            .filter_map(|name| Some((name, self.text(name).ok()??.parse().ok()?)))
            .collect()
    }

    /// The options this environment sets: `cc`, `cflags`, `cache_dir`,
    /// `increments`, `checked`, `sync_loops`, `device_halos` and `device_layout` from their variables, `None` where a
    /// variable is unset. The device variables depend on the backend and are
    /// read by [`Env::resolve`].
    pub fn options(&self) -> Result<RuntimeOptions> {
        Ok(RuntimeOptions {
            cc: self.cc()?,
            cflags: self.cflags()?,
            cache_dir: self.cache_dir(),
            increments: self.increments()?,
            checked: self.checked()?,
            sync_loops: self.sync_loops()?,
            device_halos: self.device_halos()?,
            mpi_device_buffers: self.mpi_device_buffers()?,
            device_layout: self.device_layout()?,
            wide_vectors: self.host_vectors()?,
            host_schedule: self.host_schedule()?,
            ..RuntimeOptions::default()
        })
    }

    /// `options` for `backend` with everything the environment can set
    /// resolved: each field left `None` takes its variable's value, else the
    /// default (`device` stays `None` when neither says, meaning the
    /// backend's default device; `overlap` defaults to on). Checks
    /// [`RuntimeOptions::validate`] first.
    pub fn resolve(&self, options: &RuntimeOptions, backend: Backend) -> Result<RuntimeOptions> {
        options.validate()?;
        let mut r = options.clone();
        if r.increments.is_none() {
            r.increments = Some(self.increments()?.unwrap_or_default());
        }
        if r.checked.is_none() {
            r.checked = Some(self.checked()?.unwrap_or_else(default_checked));
        }
        if r.sync_loops.is_none() {
            r.sync_loops = Some(self.sync_loops()?.unwrap_or(false));
        }
        if r.device_layout.is_none() {
            r.device_layout = Some(self.device_layout()?.unwrap_or_default());
        }
        if r.device_halos.is_none() {
            r.device_halos = Some(self.device_halos()?.unwrap_or(true));
        }
        if r.mpi_device_buffers.is_none() {
            r.mpi_device_buffers = Some(self.mpi_device_buffers()?.unwrap_or_default());
        }
        if r.wide_vectors.is_none() {
            r.wide_vectors = Some(self.host_vectors()?.unwrap_or(true));
        }
        if r.host_schedule.is_none() {
            r.host_schedule = Some(self.host_schedule()?.unwrap_or_default());
        }
        if r.node_rank.is_none() {
            r.node_rank = self.node_rank();
        }
        if r.threads.is_none() && backend == Backend::Jit {
            r.threads = self.jit_threads();
        }
        if r.cc.is_none() {
            r.cc = Some(self.cc()?.unwrap_or_else(|| DEFAULT_CC.to_string()));
        }
        if r.cflags.is_none() {
            r.cflags = Some(self.cflags()?.unwrap_or_else(|| DEFAULT_CFLAGS.to_string()));
        }
        if r.cache_dir.is_none() {
            r.cache_dir = Some(self.default_cache_dir());
        }
        if r.device.is_none() {
            r.device = self.device(backend)?;
        }
        r.overlap.get_or_insert(true);
        Ok(r)
    }
}

/// [`Env::jit_threads`] for a process whose `OMP_NUM_THREADS` is set or
/// not, on `node` (`None`: no MPI), that may run on `own` CPUs.
fn default_jit_threads(omp_set: bool, node: Option<op2_core::NodeRank>, own: usize) -> Option<usize> {
    node.filter(|_| !omp_set).map(|n| n.cpu_share(own))
}

fn invalid(name: &'static str, reason: String) -> Error {
    Error::InvalidOption { option: name, reason }
}

/// Whether translated kernels are checked under `checked` (`None`: the default).
pub(crate) fn checked_or_default(checked: Option<bool>) -> bool {
    checked.unwrap_or_else(default_checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment of these variables only.
    fn with<R>(vars: &[(&str, &str)], f: impl FnOnce(Env<'_>) -> R) -> R {
        let lookup = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v));
        f(Env::new(&lookup))
    }

    fn error_of<T: fmt::Debug>(r: Result<T>) -> (&'static str, String) {
        match r {
            Err(Error::InvalidOption { option, reason }) => (option, reason),
            other => panic!("expected an invalid option, got {other:?}"),
        }
    }

    #[test]
    fn values_are_trimmed_and_empty_is_unset() {
        with(
            &[
                ("OP2_BACKEND", "  SEQ\n"),
                ("OP2_CHECKED", " On "),
                ("OP2_INCREMENTS", "\tAtomic "),
                ("OP2_CC", " gcc-13 "),
                ("OP2_CFLAGS", "   "),
                ("OP2_CACHE_DIR", " /tmp/x "),
                ("OP2_OPENCL_DEVICE", ""),
                ("OP2_CUDA_DEVICE", " 1 "),
            ],
            |env| {
                assert_eq!(env.backend().unwrap(), Some(Backend::Seq));
                assert_eq!(env.checked().unwrap(), Some(true));
                assert_eq!(env.increments().unwrap(), Some(Increments::Atomics));
                assert_eq!(env.cc().unwrap().as_deref(), Some("gcc-13"));
                assert_eq!(env.cflags().unwrap(), None);
                assert_eq!(env.cache_dir(), Some(PathBuf::from("/tmp/x")));
                assert_eq!(env.device(Backend::OpenCl).unwrap(), None);
                assert_eq!(env.device(Backend::Cuda).unwrap().as_deref(), Some("1"));
                assert_eq!(env.device(Backend::Seq).unwrap(), None);
            },
        );
        with(
            &[("OP2_BACKEND", " "), ("OP2_CHECKED", ""), ("OP2_INCREMENTS", "  ")],
            |env| {
                assert_eq!(env.backend().unwrap(), None);
                assert_eq!(env.checked().unwrap(), None);
                assert_eq!(env.increments().unwrap(), None);
            },
        );
    }

    #[test]
    fn every_accepted_value_parses() {
        for (v, want) in [
            ("1", true),
            ("TRUE", true),
            ("yes", true),
            ("on", true),
            ("0", false),
            ("false", false),
            ("No", false),
            ("off", false),
        ] {
            with(
                &[("OP2_CHECKED", v), ("OP2_SYNC_LOOPS", v), ("OP2_DEVICE_HALOS", v)],
                |env| {
                    assert_eq!(env.checked().unwrap(), Some(want), "{v}");
                    assert_eq!(env.sync_loops().unwrap(), Some(want), "{v}");
                    assert_eq!(env.device_halos().unwrap(), Some(want), "{v}");
                },
            );
        }
        for (v, want) in [
            ("auto", MpiDeviceBuffers::Auto),
            ("ON", MpiDeviceBuffers::On),
            ("Off", MpiDeviceBuffers::Off),
        ] {
            with(&[("OP2_MPI_DEVICE_BUFFERS", v)], |env| {
                assert_eq!(env.mpi_device_buffers().unwrap(), Some(want), "{v}")
            });
        }
        for (v, want) in [
            ("auto", MpiWait::Auto),
            ("Spin", MpiWait::Spin),
            ("SLEEP", MpiWait::Sleep),
        ] {
            with(&[("OP2_MPI_WAIT", v)], |env| {
                assert_eq!(env.mpi_wait().unwrap(), Some(want), "{v}")
            });
        }
        with(&[], |env| assert_eq!(env.mpi_wait().unwrap(), None));
        for (v, want) in [
            ("colouring", Increments::Colouring),
            ("Coloring", Increments::Colouring),
            ("ATOMICS", Increments::Atomics),
            ("atomic", Increments::Atomics),
            ("Auto", Increments::Auto),
        ] {
            with(&[("OP2_INCREMENTS", v)], |env| {
                assert_eq!(env.increments().unwrap(), Some(want), "{v}")
            });
        }
        for (v, want) in [
            ("auto", DeviceLayout::Auto),
            ("AoS", DeviceLayout::ArrayOfStructs),
            ("array-of-structs", DeviceLayout::ArrayOfStructs),
            ("SOA", DeviceLayout::StructOfArrays),
            ("Struct-Of-Arrays", DeviceLayout::StructOfArrays),
        ] {
            with(&[("OP2_DEVICE_LAYOUT", v)], |env| {
                assert_eq!(env.device_layout().unwrap(), Some(want), "{v}")
            });
        }
        for (v, want) in [
            ("partitions", HostSchedule::Partitions),
            ("Colours", HostSchedule::Colours),
            ("COLORS", HostSchedule::Colours),
        ] {
            with(&[("OP2_HOST_SCHEDULE", v)], |env| {
                assert_eq!(env.host_schedule().unwrap(), Some(want), "{v}")
            });
        }
        for b in Backend::ALL {
            with(&[("OP2_BACKEND", b.name())], |env| {
                assert_eq!(env.backend().unwrap(), Some(b))
            });
        }
    }

    #[test]
    fn a_bad_value_names_the_variable_the_value_and_the_accepted_ones() {
        type Read = fn(Env<'_>) -> (&'static str, String);
        let cases: [(&str, &str, Read, &str); 10] = [
            (
                "OP2_HOST_SCHEDULE",
                "stripes",
                |e| error_of(e.host_schedule()),
                "partitions, colours",
            ),
            (
                "OP2_DEVICE_LAYOUT",
                "columns",
                |e| error_of(e.device_layout()),
                "auto, aos (or array-of-structs), soa",
            ),
            (
                "OP2_CHECKED",
                "maybe",
                |e| error_of(e.checked()),
                "1, 0, true, false, yes, no, on, off",
            ),
            (
                "OP2_SYNC_LOOPS",
                "often",
                |e| error_of(e.sync_loops()),
                "1, 0, true, false, yes, no, on, off",
            ),
            (
                "OP2_DEVICE_HALOS",
                "host",
                |e| error_of(e.device_halos()),
                "1, 0, true, false, yes, no, on, off",
            ),
            (
                "OP2_MPI_DEVICE_BUFFERS",
                "gpu",
                |e| error_of(e.mpi_device_buffers()),
                "auto, on, off",
            ),
            ("OP2_INCREMENTS", "Locks", |e| error_of(e.increments()), "colouring"),
            ("OP2_MPI_WAIT", "yield", |e| error_of(e.mpi_wait()), "auto, spin, sleep"),
            (
                "OP2_BACKEND",
                "fortran",
                |e| error_of(e.backend()),
                "seq, rayon, jit, opencl, cuda",
            ),
            (
                "OP2_CUDA_DEVICE",
                "gpu0",
                |e| error_of(e.device(Backend::Cuda)),
                "GPU ordinal",
            ),
        ];
        for (name, value, read, accepted) in cases {
            let (option, reason) = with(&[(name, value)], read);
            assert_eq!(option, name);
            assert!(
                reason.contains(&format!("`{value}`")) && reason.contains(accepted),
                "{reason}"
            );
            let e = Error::InvalidOption { option, reason };
            assert!(e.to_string().contains(name), "{e}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn text_that_is_not_utf8_is_an_error_and_a_directory_is_taken_as_it_is() {
        use std::os::unix::ffi::OsStringExt;
        let bad = || OsString::from_vec(vec![b'a', 0xff]);
        let lookup = |_: &str| Some(bad());
        let env = Env::new(&lookup);
        let (option, reason) = error_of(env.cc());
        assert_eq!(option, "OP2_CC");
        assert!(reason.contains("UTF-8"), "{reason}");
        assert_eq!(env.cache_dir(), Some(PathBuf::from(bad())));
    }

    #[test]
    fn the_device_variable_is_the_backends_own() {
        with(&[("OP2_OPENCL_DEVICE", " pocl "), ("OP2_CUDA_DEVICE", "x")], |env| {
            assert_eq!(env.device(Backend::OpenCl).unwrap().as_deref(), Some("pocl"));
            assert!(env.device(Backend::Cuda).is_err());
            // A bad OP2_CUDA_DEVICE troubles no other backend.
            let r = env.resolve(&RuntimeOptions::default(), Backend::OpenCl).unwrap();
            assert_eq!(r.device.as_deref(), Some("pocl"));
            let r = env.resolve(&RuntimeOptions::default(), Backend::Seq).unwrap();
            assert_eq!(r.device, None);
            // Nor cuda when a device is chosen explicitly.
            let r = env
                .resolve(&RuntimeOptions::default().device("0"), Backend::Cuda)
                .unwrap();
            assert_eq!(r.device.as_deref(), Some("0"));
        });
    }

    #[test]
    fn the_cache_directory_falls_back_in_order() {
        let all = [("OP2_CACHE_DIR", "/a"), ("XDG_CACHE_HOME", "/b"), ("HOME", "/c")];
        with(&all, |env| assert_eq!(env.default_cache_dir(), PathBuf::from("/a")));
        with(&all[1..], |env| {
            assert_eq!(env.default_cache_dir(), PathBuf::from("/b/op2"))
        });
        with(&all[2..], |env| {
            assert_eq!(env.default_cache_dir(), PathBuf::from("/c/.cache/op2"))
        });
        with(&[("OP2_CACHE_DIR", " "), ("XDG_CACHE_HOME", ""), ("HOME", "")], |env| {
            assert_eq!(env.default_cache_dir(), std::env::temp_dir().join("op2-cache"))
        });
    }

    #[test]
    fn explicit_options_win_over_the_environment_and_it_over_defaults() {
        let vars = [
            ("OP2_CHECKED", "off"),
            ("OP2_INCREMENTS", "atomics"),
            ("OP2_CC", "clang"),
            ("OP2_CACHE_DIR", "/env"),
        ];
        with(&vars, |env| {
            let from_env = env.options().unwrap();
            assert_eq!(from_env.checked, Some(false));
            assert_eq!(from_env.increments, Some(Increments::Atomics));
            assert_eq!(from_env.cc.as_deref(), Some("clang"));
            assert_eq!(from_env.cflags, None);
            assert_eq!(from_env.cache_dir, Some(PathBuf::from("/env")));

            let explicit = RuntimeOptions::default()
                .checked(true)
                .increments(Increments::Colouring)
                .cc("gcc")
                .cache_dir("/mine");
            let r = env.resolve(&explicit, Backend::Seq).unwrap();
            assert_eq!(r.checked, Some(true));
            assert_eq!(r.increments, Some(Increments::Colouring));
            assert_eq!(r.cc.as_deref(), Some("gcc"));
            assert_eq!(r.cache_dir, Some(PathBuf::from("/mine")));

            let r = env.resolve(&RuntimeOptions::default(), Backend::Seq).unwrap();
            assert_eq!(r.checked, Some(false));
            assert_eq!(r.increments, Some(Increments::Atomics));
            assert_eq!(r.cc.as_deref(), Some("clang"));
            assert_eq!(r.cflags.as_deref(), Some(DEFAULT_CFLAGS));
            assert_eq!(r.cache_dir, Some(PathBuf::from("/env")));
            assert_eq!(r.overlap, Some(true));
        });
        with(&[], |env| {
            let r = env.resolve(&RuntimeOptions::default(), Backend::Seq).unwrap();
            assert_eq!(r.checked, Some(cfg!(debug_assertions)));
            assert_eq!(r.sync_loops, Some(false));
            assert_eq!(r.device_halos, Some(true));
            assert_eq!(r.mpi_device_buffers, Some(MpiDeviceBuffers::Auto));
            assert_eq!(r.increments, Some(Increments::Colouring));
            assert_eq!(r.cc.as_deref(), Some(DEFAULT_CC));
            assert_eq!(r.threads, None);
        });
    }

    #[test]
    fn a_variable_overridden_by_an_option_is_not_read() {
        with(&[("OP2_CHECKED", "maybe"), ("OP2_INCREMENTS", "locks")], |env| {
            assert!(env.resolve(&RuntimeOptions::default(), Backend::Seq).is_err());
            let explicit = RuntimeOptions::default().checked(false).increments(Increments::Atomics);
            assert!(env.resolve(&explicit, Backend::Seq).is_ok());
        });
    }

    #[test]
    fn resolving_checks_the_options_first() {
        with(&[("OP2_CHECKED", "maybe")], |env| {
            let e = env
                .resolve(&RuntimeOptions::default().threads(0), Backend::Seq)
                .unwrap_err();
            assert!(matches!(e, Error::InvalidOption { option: "threads", .. }), "{e}");
        });
    }

    #[test]
    fn launcher_sizes_that_are_not_numbers_are_left_out() {
        with(
            &[
                ("PMI_SIZE", " 4 "),
                ("OMPI_COMM_WORLD_SIZE", "four"),
                ("SLURM_NTASKS", "2"),
            ],
            |env| assert_eq!(env.launcher_sizes(), vec![("PMI_SIZE", 4), ("SLURM_NTASKS", 2)]),
        );
        with(&[], |env| assert!(env.launcher_sizes().is_empty()));
    }

    #[test]
    fn a_launchers_node_rank_picks_the_default_device() {
        // The first of the launchers' variables that is a number.
        with(
            &[
                ("MPI_LOCALRANKID", "x"),
                ("OMPI_COMM_WORLD_LOCAL_RANK", " 3 "),
                ("SLURM_LOCALID", "1"),
            ],
            |env| assert_eq!(env.launcher_node_rank(), Some(3)),
        );
        with(&[("SLURM_LOCALID", "1")], |env| {
            assert_eq!(env.launcher_node_rank(), Some(1));
            // No MPI in this test process: the launcher's rank resolves.
            let r = env.resolve(&RuntimeOptions::default(), Backend::Cuda).unwrap();
            assert_eq!(r.node_rank, Some(1));
            assert_eq!(op2_core::default_device_index(r.node_rank, 2), 1);
        });
        with(&[], |env| assert_eq!(env.launcher_node_rank(), None));
    }

    #[test]
    fn the_shared_team_follows_rayon_num_threads() {
        // No MPI in this test process: the default is this process's CPUs.
        let cpus = cores();
        with(&[("RAYON_NUM_THREADS", " 3 ")], |env| {
            assert_eq!(env.rayon_num_threads(), Some(3));
            assert_eq!(env.shared_threads(), 3);
        });
        for ignored in ["0", "x", "-2", ""] {
            with(&[("RAYON_NUM_THREADS", ignored)], |env| {
                assert_eq!(env.rayon_num_threads(), None, "{ignored:?}");
                assert_eq!(env.shared_threads(), cpus, "{ignored:?}");
            });
        }
        with(&[], |env| assert_eq!(env.shared_threads(), cpus));
        // A count no team may have is capped, as `threads` is checked.
        with(&[("RAYON_NUM_THREADS", "100000000")], |env| {
            assert_eq!(env.shared_threads(), RuntimeOptions::max_threads());
        });
    }

    #[test]
    fn jit_takes_its_ranks_share_unless_openmp_is_told() {
        let node = op2_core::NodeRank {
            rank: 1,
            ranks: 4,
            cpus: 16,
        };
        assert_eq!(default_jit_threads(false, Some(node), 16), Some(4));
        assert_eq!(
            default_jit_threads(true, Some(node), 16),
            None,
            "OMP_NUM_THREADS decides"
        );
        assert_eq!(default_jit_threads(false, None, 16), None, "no MPI: OpenMP's default");
        // No MPI in this test process: resolving leaves the count to OpenMP,
        // and a count given wins.
        with(&[], |env| {
            assert_eq!(env.jit_threads(), None);
            let r = env.resolve(&RuntimeOptions::default(), Backend::Jit).unwrap();
            assert_eq!(r.threads, None);
            let r = env
                .resolve(&RuntimeOptions::default().threads(3), Backend::Jit)
                .unwrap();
            assert_eq!(r.threads, Some(3));
        });
    }
}
