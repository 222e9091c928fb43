//! The rayon backend, `RayonExecutor`: it runs a loop's `Schedule` phase by phase, the
//! units of a phase in parallel: chunks of a loop with no indirect writes, and for a
//! planned loop the `HostSchedule` the options choose (partitions' interiors then their
//! boundaries, or the plan's block colours). Each unit has its own reduction partials,
//! combined in a fixed order, so results are bitwise the same with any thread count.
//!
//! Each thread takes one contiguous run of a phase's units. The threads are a `Team`
//! (the calling thread and the rest), which wait between phases awake for a while as
//! OpenMP's threads do, so that back-to-back phases do not each pay a wake-up: with
//! `RuntimeOptions::threads` set a team of that many of the runtime's own; unset, the
//! process's shared team (`Env::shared_threads`: `RAYON_NUM_THREADS`, else the rank's
//! share of its node's CPUs), started on first use, which runtimes on
//! other threads use in turn (a loop that finds it busy runs on its own thread), as
//! OpenMP's one team does. A phase of one run stays on the calling thread. It implements
//! op2-core's `Executor`, and `Workers` so builds and compactions share its threads.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

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
    /// The process's shared team ([`shared_team`]).
    Shared,
    /// A team of the executor's own.
    Own(Team),
}

/// The team every executor without a thread count shares, started by the
/// first executor that uses it (a loop, or a question about its threads),
/// not when one is built, so that a program that starts MPI after its
/// runtime still gets its rank's share
/// ([`Env::shared_threads`](crate::config::Env::shared_threads) threads);
/// `None` where the system could not start them (loops then run on rayon's
/// global pool).
fn shared_team() -> Option<&'static Team> {
    static SHARED: OnceLock<Option<Team>> = OnceLock::new();
    SHARED
        .get_or_init(|| Team::new(crate::config::Env::process().shared_threads(), "op2-shared").ok())
        .as_ref()
}

impl RayonExecutor {
    /// An executor on a team of `options.threads` threads (the caller and
    /// `threads - 1` more), or on the process's shared team when unset (see
    /// the module's header). Fails on a count
    /// [`RuntimeOptions::checked_threads`] refuses, or when the system
    /// cannot start the threads of a team of its own.
    pub fn new(options: &RuntimeOptions) -> Result<RayonExecutor> {
        let threads = match options.checked_threads()? {
            None => Threads::Shared,
            Some(n) => Threads::Own(Team::new(n, "op2-rayon").map_err(|e| Error::InvalidOption {
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
        match self.team() {
            Some(team) => team.size(),
            None => rayon::current_num_threads(),
        }
    }

    /// The team loops run on; `None`: rayon's global pool.
    fn team(&self) -> Option<&Team> {
        match &self.threads {
            Threads::Shared => shared_team(),
            Threads::Own(team) => Some(team),
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
            match self.team() {
                Some(team) => {
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
                None if words == 0 => {
                    (0..runs).into_par_iter().for_each(|k| run_units(k, &mut []));
                }
                None => slots
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
        match self.team() {
            None => (0..tasks).into_par_iter().for_each(task),
            // Each member takes the next task until none is left.
            Some(team) => {
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
