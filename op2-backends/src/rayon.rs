//! The rayon backend, `RayonExecutor`: it runs a loop's `Schedule` phase by phase, the
//! units of a phase in parallel: chunks of a loop with no indirect writes, and for a
//! planned loop the `HostSchedule` the options choose (partitions' interiors then their
//! boundaries, or the plan's block colours). Each unit has its own reduction partials,
//! combined in a fixed order, so results are bitwise the same with any thread count.
//!
//! Each thread takes one contiguous run of a phase's units. With
//! `RuntimeOptions::threads` unset the threads are rayon's global pool, shared with the
//! rest of the program; with it set they are a `Team` of that many (the calling thread
//! and the rest), which wait between phases awake for a while as OpenMP's threads do, so
//! that back-to-back phases do not each pay a wake-up. A phase of one run stays on the
//! calling thread. It implements op2-core's `Executor`, and `Workers` so builds and
//! compactions share its threads.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use op2_core::{Error, Executor, HostSchedule, LoopBody, ParLoop, ReductionLayout, Result, Workers};
use rayon::prelude::*;

use crate::team::Team;
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
    threads: Threads,
    block_size: usize,
    schedule: HostSchedule,
}

/// The threads loops run on.
enum Threads {
    /// rayon's global pool (sized by `RAYON_NUM_THREADS`), shared with the
    /// rest of the program.
    Global,
    /// A team of the executor's own.
    Team(Team),
}

impl RayonExecutor {
    /// An executor on a team of `options.threads` threads (the caller and
    /// `threads - 1` more), or on rayon's global pool (sized by
    /// `RAYON_NUM_THREADS`) when unset. Fails on a count
    /// [`RuntimeOptions::checked_threads`] refuses, or when the system
    /// cannot start the threads.
    pub fn new(options: &RuntimeOptions) -> Result<RayonExecutor> {
        let threads = match options.checked_threads()? {
            None => Threads::Global,
            Some(n) => Threads::Team(Team::new(n, "op2-rayon").map_err(|e| Error::InvalidOption {
                option: "threads",
                reason: format!("could not start {n} threads: {e}"),
            })?),
        };
        Ok(RayonExecutor {
            threads,
            block_size: options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
            schedule: options.host_schedule.unwrap_or_default(),
        })
    }

    /// Threads loops run on.
    pub fn threads(&self) -> usize {
        match &self.threads {
            Threads::Global => rayon::current_num_threads(),
            Threads::Team(team) => team.size(),
        }
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
            let runs = units.len().div_ceil(run);
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
            if runs <= 1 {
                // One thread's work (one thread, or a phase of one unit:
                // a small boundary): the caller does it, rather than
                // waking a pool thread and sleeping until it is done.
                run_units(0, slots);
                continue;
            }
            match &self.threads {
                Threads::Team(team) => {
                    // The runs' slots, one lock each: member `k` takes run
                    // `k`'s.
                    let run_slots: Vec<Mutex<&mut [u64]>> = if words == 0 {
                        (0..runs).map(|_| Mutex::new(&mut [][..])).collect()
                    } else {
                        slots.chunks_mut(words * run).map(Mutex::new).collect()
                    };
                    team.run(runs, &|k| {
                        let mut slots = run_slots[k].lock().unwrap_or_else(PoisonError::into_inner);
                        run_units(k, &mut slots);
                    });
                }
                // A parallel iterator, which needs only the threads that
                // take a run: others may be busy with the program's own work.
                Threads::Global if words == 0 => {
                    (0..runs).into_par_iter().for_each(|k| run_units(k, &mut []));
                }
                Threads::Global => slots
                    .par_chunks_mut(words * run)
                    .enumerate()
                    .for_each(|(k, slots)| run_units(k, slots)),
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
        // On the calling thread, which hands each phase to the threads.
        self.run_loop(lp, body);
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
        match &self.threads {
            Threads::Global => (0..tasks).into_par_iter().for_each(task),
            // Each member takes the next task until none is left.
            Threads::Team(team) => {
                let next = AtomicUsize::new(0);
                team.run(tasks, &|_| loop {
                    let t = next.fetch_add(1, Ordering::Relaxed);
                    if t >= tasks {
                        break;
                    }
                    task(t);
                });
            }
        }
    }
}
