//! The contract between the runtime and its backends: the `Executor` trait, `ParLoop`
//! (one validated loop with its data borrowed, as a backend sees it) and `LoopBody` (the
//! code `par_loop!` generates for a range of positions). Every backend in op2-backends
//! implements `Executor`; code-generating ones report their caches through
//! `CodeCacheCounters` and `CodeCacheStats`.
use std::ops::Range;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::{
    ArgSpec, DeviceWork, HostSchedule, KernelInfo, LoopSchedule, Partials, Plan, PlanCache, Result, Schedule,
    ScopedThreads, Set, Subset, Workers,
};

/// The workers of backends that lend one thread.
static ONE_THREAD: ScopedThreads = ScopedThreads::one();

/// The loop body a backend runs: called with a range of consecutive positions
/// of the loop's range ([`ParLoop::range`]) and that chunk's reduction
/// partials. `par_loop!` builds it (gather, kernel call, scatter per element);
/// over a [`Subset`] it maps each position to its element itself.
pub type LoopBody<'a> = dyn Fn(Range<usize>, &mut Partials<'_>) + Sync + 'a;

/// One parallel loop, validated and with its data borrowed, as backends see it.
#[derive(Clone)]
pub struct ParLoop<'a> {
    /// The kernel.
    pub kernel: &'static KernelInfo,
    /// The iteration set (a subset's parent set): direct Dats live on it and
    /// maps start from it.
    pub set: &'a Set,
    /// The elements visited, when the loop runs over a subset of `set`:
    /// position `p` of `range` is element `subset.indices()[p]`.
    pub subset: Option<&'a Subset>,
    /// The positions to run: elements of `set` without a subset (all owned
    /// ones on one process; a region of them when a distributed runtime
    /// overlaps a halo exchange), positions in the subset's indices with one.
    pub range: std::ops::Range<usize>,
    /// The arguments, in kernel-parameter order.
    pub args: &'a [ArgSpec<'a>],
    /// The runtime's plan cache.
    pub plans: &'a PlanCache,
    /// Whether the runtime allows native loop bodies their AVX2 copies: what
    /// the executors of native bodies pass on in the partials they give
    /// them, which add the check that the CPU has AVX2 and FMA.
    pub wide_vectors: bool,
}

impl<'a> ParLoop<'a> {
    /// The loop's name (its kernel's).
    pub fn name(&self) -> &'static str {
        self.kernel.name
    }

    /// The colouring plan for this loop (cached), or `None` when no argument
    /// writes through a map and elements can run in any order.
    pub fn plan(&self, block_size: usize) -> Option<Arc<Plan>> {
        self.plans
            .plan(self.set, self.subset, self.range.clone(), self.args, block_size)
    }

    /// How a host backend runs this loop: `kind` of its plan (cached, blocks
    /// of `block_size`) when it writes through a map, else chunks of
    /// `block_size` positions in one phase.
    pub fn schedule(&self, block_size: usize, kind: HostSchedule) -> LoopSchedule {
        match self.plan(block_size) {
            Some(plan) => LoopSchedule::Planned(plan, kind),
            None => LoopSchedule::Chunks(Schedule::chunks(self.range.clone(), block_size)),
        }
    }

    /// The element of each position, for a loop over a subset (`None`: the
    /// position is the element).
    pub fn elements(&self) -> Option<&'a [i32]> {
        self.subset.map(Subset::indices)
    }

    /// The element at position `p` of the range.
    pub fn element(&self, p: usize) -> usize {
        self.elements().map_or(p, |ix| ix[p] as usize)
    }
}

/// A way of running parallel loops (sequential, threads, JIT, devices).
///
/// The runtime has already validated the loop and borrowed its data when it
/// calls [`Executor::execute`]; the executor runs `body` over every position
/// of `lp.range` exactly once and folds Global reductions into the Globals.
/// Executors that generate code map positions to elements through
/// [`ParLoop::elements`] themselves.
pub trait Executor: Send + Sync {
    /// The backend's name (`seq`, `rayon`, ...).
    fn name(&self) -> &'static str;

    /// Runs one loop.
    ///
    /// # Safety
    /// The loop was validated (`validate_loop`) and the caller holds its
    /// data's borrows (`LoopBorrows::take` over `lp.args`) until this
    /// returns: executors read and write the data through raw pointers, and
    /// only the borrows keep another thread from moving or freeing it
    /// (`Dat::swap`, a lifecycle's reallocation) meanwhile.
    unsafe fn execute(&self, lp: &ParLoop<'_>, body: &LoopBody<'_>) -> Result<()>;

    /// Whether loops run on a device with its own memory (the runtime then
    /// leaves transfers to the executor instead of bringing data to the host).
    fn is_device(&self) -> bool {
        false
    }

    /// Counters of the backend's generated-code caches (zero for backends
    /// that generate no code).
    fn code_cache_stats(&self) -> CodeCacheStats {
        CodeCacheStats::default()
    }

    /// Whether running the same loops again gives the same bits (false where
    /// the order of floating-point updates varies between runs, as with
    /// atomic increments on a device).
    fn is_deterministic(&self) -> bool {
        true
    }

    /// The host threads the backend lends to the work around its loops
    /// (message builds, compactions, sorts): the caller's thread alone
    /// unless the backend says otherwise.
    fn workers(&self) -> &dyn Workers {
        &ONE_THREAD
    }

    /// The device that does the work around loops in its own memory (a
    /// device backend), so that Dats stay there; `None` for host backends.
    fn device_work(&self) -> Option<&dyn DeviceWork> {
        None
    }

    /// The choices the backend made that its options did not fix (colouring
    /// where the device lacks the atomics asked for, the form a loop
    /// measured faster under automatic increments), one line each, for the
    /// timing summary.
    fn fallbacks(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The live counters behind [`CodeCacheStats`], shared by the backends that
/// compile code; safe to bump from any thread.
#[derive(Debug, Default)]
pub struct CodeCacheCounters {
    compiled: AtomicUsize,
    disk_hits: AtomicUsize,
    memory_hits: AtomicUsize,
    rebuilt: AtomicUsize,
}

impl CodeCacheCounters {
    /// A loop was compiled from source.
    pub fn compiled(&self) {
        self.compiled.fetch_add(1, Ordering::Relaxed);
    }

    /// A loop was found compiled on disk.
    pub fn disk_hit(&self) {
        self.disk_hits.fetch_add(1, Ordering::Relaxed);
    }

    /// A call found its loop loaded in memory.
    pub fn memory_hit(&self) {
        self.memory_hits.fetch_add(1, Ordering::Relaxed);
    }

    /// A cached object was corrupt or truncated (it is then compiled again,
    /// which [`compiled`](Self::compiled) counts).
    pub fn rebuilt(&self) {
        self.rebuilt.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn stats(&self) -> CodeCacheStats {
        CodeCacheStats {
            compiled: self.compiled.load(Ordering::Relaxed),
            disk_hits: self.disk_hits.load(Ordering::Relaxed),
            memory_hits: self.memory_hits.load(Ordering::Relaxed),
            rebuilt: self.rebuilt.load(Ordering::Relaxed),
        }
    }
}

/// How a code-generating backend found its compiled loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodeCacheStats {
    /// Loops compiled from source.
    pub compiled: usize,
    /// Loops found compiled on disk.
    pub disk_hits: usize,
    /// Calls that found their loop loaded in memory.
    pub memory_hits: usize,
    /// Cached objects found corrupt or truncated and rebuilt.
    pub rebuilt: usize,
}
