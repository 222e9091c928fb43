//! What a device API (OpenCL, CUDA, ...) supplies to the shared
//! [`DeviceExecutor`](super::DeviceExecutor): its source dialect, compiling a
//! program, buffers, and launching. Everything else about running a loop on a
//! device (programs per loop shape, transfers, plans, partials, increments,
//! counters) is shared; a new device API costs one implementation of this trait.

use op2_core::{DeviceBuffer, KernelInfo, Result};

use crate::codegen::{Checks, DeviceLanguage, LoopShape};
use crate::IndirectWrites;

/// How [`DeviceApi::build`] obtained a program: for the code cache counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Built {
    /// Compiled from source.
    Compiled,
    /// Loaded from the on-disk cache.
    FromDisk,
    /// The cached object was corrupt or truncated: compiled again.
    Rebuilt,
}

/// The arguments of one launch of a loop's `op2_loop` entry point, in the
/// names of its generated signature. Each API passes them in its dialect's
/// order and form.
pub struct LaunchArgs<'a, M> {
    /// Thread blocks (work-groups) in this launch.
    pub blocks: usize,
    /// Threads (elements) per block.
    pub block_size: usize,
    /// The plan's block lists (null without a plan).
    pub units: M,
    /// First unit of this launch.
    pub unit_offset: usize,
    /// First position of the loop's range (an element without a subset).
    pub start: usize,
    /// One past the last position of the loop's range.
    pub end: usize,
    /// The plan's element colours (null without a plan).
    pub colours: M,
    /// The plan's element colour count per block (null without a plan).
    pub ncolours: M,
    /// Reduction partials, one slot per unit (null without reductions).
    pub partials: M,
    /// First partial slot of this launch.
    pub partial_offset: usize,
    /// Checked mode's failure record (null when checks are off).
    pub report: M,
    /// A subset's elements, for a loop over a subset (whose entry point then
    /// takes them after `report`); `None` for a loop over a whole set.
    pub elems: Option<M>,
    /// Whether the loop reduces Globals (and so needs `block_size` words of
    /// block-shared scratch).
    pub reduces: bool,
    /// Each argument's data buffer, in argument order.
    pub data: &'a [M],
    /// Each argument's column stride, passed right after its data, for the
    /// arguments in columns (`stride{k}`); `None` for the others.
    pub strides: &'a [Option<i64>],
    /// Each argument's map buffers, in the order the signature takes them:
    /// a map's table, or a ragged map's offsets then targets.
    pub maps: &'a [[Option<M>; 2]],
}

/// An argument of a utility entry point ([`DeviceApi::launch_utility`]):
/// a buffer or a `long`, 8 bytes each on every API.
#[derive(Clone, Copy, Debug)]
pub enum UtilityArg<M> {
    /// A buffer (or the null buffer).
    Mem(M),
    /// A `long`.
    Long(i64),
}

/// What the shared executor needs to know about one device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// The device's name, for messages.
    pub name: String,
    /// The id that buffers made by this context report (from
    /// [`next_context_id`](super::next_context_id)).
    pub context_id: u64,
    /// The most threads a block may have.
    pub max_block_size: usize,
    /// The most blocks one launch may have.
    pub max_blocks_per_launch: usize,
    /// Why atomic updates of 64-bit values are unavailable, if they are: loops
    /// that would need them are then coloured instead.
    pub missing_64_bit_atomics: Option<String>,
    /// Whether Dats left to the runtime lie in columns here
    /// ([`DeviceLayout::Auto`](op2_core::DeviceLayout::Auto)): on GPUs,
    /// whose threads of a block load together; not on CPUs (PoCL), where
    /// one thread runs a block's elements in turn and rows keep each
    /// element's values in one cache line (Airfoil 40 % slower in columns).
    pub prefers_columns: bool,
}

/// One device API under the shared executor.
pub trait DeviceApi: Send + Sync + Sized + 'static {
    /// The backend's name (`opencl`, `cuda`).
    const BACKEND: &'static str;
    /// What the API calls a thread block, for messages (`work-group`).
    const BLOCK: &'static str;
    /// What the API calls a thread, for messages (`work-items`, plural).
    const THREADS: &'static str;
    /// The language of its generated source (for utility programs).
    const LANGUAGE: DeviceLanguage;
    /// What a kernel argument for a buffer is (`cl_mem`, a device pointer).
    type Mem: Copy;
    /// One compiled loop, ready to launch.
    type Program: Send + Sync;
    /// A compiled program of several entry points, for the work around
    /// loops (a message build).
    type Utility: Send + Sync;

    /// The facts the shared executor needs about the device.
    fn info(&self) -> &DeviceInfo;
    /// The device's name, for messages.
    fn device_name(&self) -> &str {
        &self.info().name
    }
    /// The id that buffers made by this context report.
    fn context_id(&self) -> u64 {
        self.info().context_id
    }

    /// The generated source of a loop in this API's dialect.
    fn source(kernel: &KernelInfo, shape: &LoopShape, writes: IndirectWrites, checks: Checks) -> String;
    /// Compiles `source` (the loop `loop_name`).
    fn build(&self, loop_name: &str, source: &str) -> Result<(Self::Program, Built)>;
    /// The most threads a block of `program` may have: the device's limit,
    /// or less for a kernel that needs many registers.
    fn program_max_block_size(&self, program: &Self::Program) -> Result<usize>;

    /// A new buffer of `bytes` bytes for the carrier `name`.
    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>>;

    /// `bytes` bytes of page-locked host memory, for copies at the bus's
    /// full speed (`None`: the API has none).
    fn pinned_memory(&self, bytes: usize) -> Result<Option<Box<dyn op2_core::HostMemory>>> {
        let _ = bytes;
        Ok(None)
    }
    /// The kernel argument for one of this context's buffers.
    fn mem_of(&self, buffer: &dyn DeviceBuffer) -> Self::Mem;
    /// The kernel argument for "no buffer" (a null pointer).
    fn null_mem(&self) -> Self::Mem;

    /// Enqueues one launch of `program` (of the loop `loop_name`), counted
    /// with `op2_core::device_counts::count_launch` (as is each utility
    /// launch, and each finish with `count_wait`).
    fn launch(&self, program: &Self::Program, loop_name: &str, args: &LaunchArgs<'_, Self::Mem>) -> Result<()>;
    /// Compiles `source` (the utility `name`), with the entry points `entries`.
    fn build_utility(&self, name: &str, source: &str, entries: &[&str]) -> Result<Self::Utility>;
    /// Enqueues `blocks` blocks of `block_size` threads of the entry point
    /// `entry` (an index into the `entries` it was built with).
    fn launch_utility(
        &self,
        utility: &Self::Utility,
        entry: usize,
        blocks: usize,
        block_size: usize,
        args: &[UtilityArg<Self::Mem>],
    ) -> Result<()>;

    /// Waits until every launch so far has finished.
    fn finish(&self, loop_name: &str) -> Result<()>;

    /// Submits the work queued so far without waiting for it (a driver may
    /// hold queued commands until then). Nothing by default.
    fn flush(&self, loop_name: &str) -> Result<()> {
        let _ = loop_name;
        Ok(())
    }
}
