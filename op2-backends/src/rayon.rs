//! The rayon backend, `RayonExecutor`: it runs a loop's `Schedule` phase by phase, the
//! units of a phase in parallel: chunks of a loop with no indirect writes, and for a
//! planned loop the `HostSchedule` the options choose (partitions' interiors then their
//! boundaries, or the plan's block colours). Each unit has its own reduction partials,
//! combined in a fixed order, so results are bitwise the same with any thread count. It
//! implements op2-core's `Executor`, and `Workers` so builds and compactions share its
//! threads.
use op2_core::{Error, Executor, HostSchedule, LoopBody, ParLoop, ReductionLayout, Result, Workers};
use rayon::prelude::*;

use crate::RuntimeOptions;

/// Elements per block when the runtime options do not say (chosen by the
/// Airfoil benchmark with the colours schedule: 1024 to 8192 are within 10%
/// at 720 000 cells on 2 threads; larger blocks mean fewer colours and fewer
/// passes over memory). Partitions are whole blocks, and the boundary runs in
/// blocks of this many positions.
pub const DEFAULT_BLOCK_SIZE: usize = 4096;

/// The rayon backend. Loops that write through no map run in fixed-size chunks
/// in parallel; planned loops run their [`HostSchedule`] phase by phase, the
/// units of a phase in parallel. Every unit has its own reduction partials,
/// combined in a fixed order, and no schedule depends on the thread count: a
/// loop gives bitwise the same result on every run and with any number of
/// threads (for a given block size and schedule).
pub struct RayonExecutor {
    pool: Option<rayon::ThreadPool>,
    block_size: usize,
    schedule: HostSchedule,
}

impl RayonExecutor {
    /// An executor on a dedicated pool of `options.threads` threads, or on
    /// rayon's global pool (sized by `RAYON_NUM_THREADS`) when unset. Fails
    /// on a count [`RuntimeOptions::checked_threads`] refuses.
    pub fn new(options: &RuntimeOptions) -> Result<RayonExecutor> {
        let pool = match options.checked_threads()? {
            None => None,
            Some(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(|i| format!("op2-rayon-{i}"))
                    .build()
                    .map_err(|e| Error::InvalidOption {
                        option: "threads",
                        reason: e.to_string(),
                    })?,
            ),
        };
        Ok(RayonExecutor {
            pool,
            block_size: options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
            schedule: options.host_schedule.unwrap_or_default(),
        })
    }

    /// Threads loops run on.
    pub fn threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
    }

    fn run_loop(&self, lp: &ParLoop<'_>, body: &LoopBody<'_>) {
        let layout = ReductionLayout::new(lp.args);
        let words = layout.words_per_chunk();
        // One partials slot per unit of the schedule, in its order.
        let schedule = lp.schedule(self.block_size, self.schedule);
        let mut partials = layout.new_partials(lp.args, schedule.nunits());
        for f in 0..schedule.nphases() {
            let units = schedule.phase(f);
            let slots = &mut partials[units.start * words..units.end * words];
            // Each thread takes one contiguous run of the units, as OpenMP's
            // static schedule does: the threads' memory streams stay apart
            // (two threads in neighbouring units share cache lines at the
            // units' edges and defeat each other's prefetching). Results do
            // not depend on this: each unit has its own partials.
            let run = units.len().div_ceil(self.threads()).max(1);
            // The `k`th run of units, with its partials slots.
            let run_units = |k: usize, slots: &mut [u64]| {
                let first = units.start + k * run;
                for u in first..(first + run).min(units.end) {
                    let slot = &mut slots[(u - first) * words..(u - first + 1) * words];
                    let mut p = layout.partials(slot).with_wide_vectors(lp.wide_vectors);
                    for r in schedule.unit(u) {
                        body(r, &mut p);
                    }
                }
            };
            if words == 0 {
                let runs = units.len().div_ceil(run);
                (0..runs).into_par_iter().for_each(|k| run_units(k, &mut []));
            } else {
                slots
                    .par_chunks_mut(words * run)
                    .enumerate()
                    .for_each(|(k, slots)| run_units(k, slots));
            }
        }
        layout.combine_all(lp.args, &partials);
    }
}

impl Executor for RayonExecutor {
    fn name(&self) -> &'static str {
        "rayon"
    }

    unsafe fn execute(&self, lp: &ParLoop<'_>, body: &LoopBody<'_>) -> Result<()> {
        match &self.pool {
            Some(pool) => pool.install(|| self.run_loop(lp, body)),
            None => self.run_loop(lp, body),
        }
        Ok(())
    }

    fn workers(&self) -> &dyn Workers {
        self
    }
}

/// Builds and compactions run on the loops' threads.
impl Workers for RayonExecutor {
    fn threads(&self) -> usize {
        RayonExecutor::threads(self)
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        let all = || (0..tasks).into_par_iter().for_each(task);
        match &self.pool {
            Some(pool) => pool.install(all),
            None => all(),
        }
    }
}
