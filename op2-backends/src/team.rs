//! `Team`: a fixed group of threads that run each phase of a loop together,
//! as OpenMP's threads do. The calling thread is member 0 and takes its
//! share itself; the other members wait between phases spinning (yielding
//! the core to anything else runnable) for [`Team::IDLE_SPIN`] before they
//! sleep. A pool whose threads sleep as soon as they are idle pays a
//! wake-up at the start and at the end of every phase; on a virtual
//! machine a sleeping core takes 50–150 µs to run again, as long as a
//! small loop takes.
//!
//! A job is `Fn(member)`: member `k` of `size` runs `job(k)` once. A job
//! started from inside a job, or while another thread's job holds the
//! team, runs all its members' shares on the calling thread in member
//! order instead: slower, never a deadlock, the same work.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A job: member `k` runs `job(k)`.
pub type Job<'a> = dyn Fn(usize) + Sync + 'a;

thread_local! {
    /// Whether this thread is running a share of some team's job.
    static IN_JOB: Cell<bool> = const { Cell::new(false) };
}

/// The job of the current epoch, its lifetime erased. [`Team::run`]
/// does not return, nor unwind, before every member is done with it.
#[derive(Clone, Copy)]
struct JobPtr(*const Job<'static>);

// SAFETY: the pointee is `Sync`, and `Team::run` keeps it alive until
// every member has finished with it (see `JobPtr`).
unsafe impl Send for JobPtr {}

/// What the members share.
struct Shared {
    /// Bumped once per job; a member runs the job when it sees a new epoch.
    epoch: AtomicU64,
    /// The current job, set before its epoch is bumped.
    job: Mutex<Option<JobPtr>>,
    /// Members (other than the caller) not yet done with the current job.
    pending: AtomicUsize,
    /// Set when the team is dropped: members leave.
    stop: AtomicBool,
    /// Members asleep waiting for an epoch, and the caller asleep waiting
    /// for `pending` to reach zero: whoever changes what they wait for
    /// wakes them under `lock`.
    sleepers: AtomicUsize,
    caller_asleep: AtomicBool,
    lock: Mutex<()>,
    epoch_changed: Condvar,
    job_done: Condvar,
    /// The first panic of a member's share, for the caller to resume.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// Locks `m`, ignoring poison: every critical section here leaves its
/// data whole.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Spins (yielding to anything else runnable) until `ready` or
/// [`Team::IDLE_SPIN`] has passed; returns whether `ready` held.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= Team::IDLE_SPIN {
            return ready();
        }
        thread::yield_now();
    }
}

/// A fixed group of threads running jobs together; see the module header.
pub struct Team {
    shared: Arc<Shared>,
    members: Vec<JoinHandle<()>>,
    /// Held by the thread whose job the team runs.
    busy: Mutex<()>,
}

impl Team {
    /// How long an idle member waits for the next job awake before it
    /// sleeps: longer than a loop's bookkeeping between two phases, short
    /// enough that a program between loops soon has its cores back.
    pub const IDLE_SPIN: Duration = Duration::from_micros(300);

    /// A team of `size` members: the caller of [`Team::run`] and
    /// `size - 1` threads named `{name}-1`, `{name}-2`, ...
    pub fn new(size: usize, name: &str) -> std::io::Result<Team> {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            job: Mutex::new(None),
            pending: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            caller_asleep: AtomicBool::new(false),
            lock: Mutex::new(()),
            epoch_changed: Condvar::new(),
            job_done: Condvar::new(),
            panic: Mutex::new(None),
        });
        let mut team = Team {
            shared,
            members: Vec::new(),
            busy: Mutex::new(()),
        };
        for k in 1..size.max(1) {
            let shared = Arc::clone(&team.shared);
            // On failure `team` drops here, and its Drop stops the
            // threads already started.
            let member = thread::Builder::new()
                .name(format!("{name}-{k}"))
                .spawn(move || serve(&shared, k))?;
            team.members.push(member);
        }
        Ok(team)
    }

    /// Members, the caller included.
    pub fn size(&self) -> usize {
        self.members.len() + 1
    }

    /// Runs `job(k)` for every member `k` and returns when all are done;
    /// the caller runs `job(0)`. A panic in any share is resumed here once
    /// every member is done.
    pub fn run(&self, job: &Job<'_>) {
        let busy = match self.busy.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        let nested = IN_JOB.with(Cell::get);
        if self.members.is_empty() || busy.is_none() || nested {
            for k in 0..self.size() {
                job(k);
            }
            return;
        }
        let shared = &*self.shared;
        // SAFETY: only the lifetime is erased; this function waits below
        // until every member is done with the job, also when a share
        // panics, before it returns or unwinds.
        let erased: *const Job<'static> = unsafe { std::mem::transmute(job as *const Job<'_>) };
        *lock(&shared.job) = Some(JobPtr(erased));
        shared.pending.store(self.members.len(), SeqCst);
        shared.epoch.fetch_add(1, SeqCst);
        if shared.sleepers.load(SeqCst) > 0 {
            let _guard = lock(&shared.lock);
            shared.epoch_changed.notify_all();
        }
        let mine = run_share(job, 0);
        let done = || shared.pending.load(SeqCst) == 0;
        if !spin_until(done) {
            let mut guard = lock(&shared.lock);
            shared.caller_asleep.store(true, SeqCst);
            while !done() {
                guard = shared.job_done.wait(guard).unwrap_or_else(PoisonError::into_inner);
            }
            shared.caller_asleep.store(false, SeqCst);
        }
        *lock(&shared.job) = None;
        let theirs = lock(&shared.panic).take();
        drop(busy);
        if let Some(payload) = mine.err().or(theirs) {
            panic::resume_unwind(payload);
        }
    }
}

/// Runs member `k`'s share of `job`, marking the thread as inside a job.
fn run_share(job: &Job<'_>, k: usize) -> std::thread::Result<()> {
    let outer = IN_JOB.with(|f| f.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| job(k)));
    IN_JOB.with(|f| f.set(outer));
    result
}

/// A member's life: wait for an epoch, run its share, report, again.
fn serve(shared: &Shared, k: usize) {
    let mut seen = 0;
    loop {
        let fresh = || shared.epoch.load(SeqCst) != seen || shared.stop.load(SeqCst);
        if !spin_until(fresh) {
            let mut guard = lock(&shared.lock);
            shared.sleepers.fetch_add(1, SeqCst);
            while !fresh() {
                guard = shared.epoch_changed.wait(guard).unwrap_or_else(PoisonError::into_inner);
            }
            shared.sleepers.fetch_sub(1, SeqCst);
        }
        if shared.stop.load(SeqCst) {
            return;
        }
        seen = shared.epoch.load(SeqCst);
        let job = lock(&shared.job).expect("a job is set before its epoch");
        // SAFETY: `Team::run` keeps the job alive until `pending` is zero,
        // which this member's decrement below is part of.
        if let Err(payload) = run_share(unsafe { &*job.0 }, k) {
            lock(&shared.panic).get_or_insert(payload);
        }
        if shared.pending.fetch_sub(1, SeqCst) == 1 && shared.caller_asleep.load(SeqCst) {
            let _guard = lock(&shared.lock);
            shared.job_done.notify_all();
        }
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.stop.store(true, SeqCst);
        {
            let _guard = lock(&self.shared.lock);
            self.shared.epoch_changed.notify_all();
        }
        for member in self.members.drain(..) {
            // A member's panics are caught in its shares; it cannot have
            // failed otherwise.
            let _ = member.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_member_runs_each_job_once() {
        for size in [1, 2, 3, 5] {
            let team = Team::new(size, "t").unwrap();
            for _ in 0..200 {
                let counts: Vec<AtomicUsize> = (0..size).map(|_| AtomicUsize::new(0)).collect();
                team.run(&|k| {
                    counts[k].fetch_add(1, SeqCst);
                });
                assert!(counts.iter().all(|c| c.load(SeqCst) == 1), "size {size}");
            }
        }
    }

    #[test]
    fn members_that_slept_wake_for_the_next_job() {
        let team = Team::new(3, "t").unwrap();
        let total = AtomicUsize::new(0);
        for _ in 0..3 {
            thread::sleep(Team::IDLE_SPIN * 4);
            team.run(&|k| {
                total.fetch_add(k + 1, SeqCst);
            });
        }
        assert_eq!(total.load(SeqCst), 3 * (1 + 2 + 3));
    }

    #[test]
    fn a_job_inside_a_job_runs_on_the_calling_thread() {
        let team = Team::new(2, "t").unwrap();
        let inner = AtomicUsize::new(0);
        team.run(&|_| {
            team.run(&|k| {
                inner.fetch_add(k + 1, SeqCst);
            })
        });
        // Each of the 2 outer shares ran both inner shares (1 + 2).
        assert_eq!(inner.load(SeqCst), 2 * 3);
    }

    #[test]
    fn two_callers_share_a_team() {
        let team = Team::new(2, "t").unwrap();
        let total = AtomicUsize::new(0);
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..500 {
                        team.run(&|_| {
                            total.fetch_add(1, SeqCst);
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(SeqCst), 2 * 500 * 2);
    }

    #[test]
    fn a_panic_in_a_member_reaches_the_caller_and_the_team_goes_on() {
        let team = Team::new(3, "t").unwrap();
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            team.run(&|k| {
                if k == 2 {
                    panic!("share {k} failed");
                }
            })
        }));
        let payload = caught.expect_err("the member's panic is resumed");
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("share 2 failed")
        );
        let total = AtomicUsize::new(0);
        team.run(&|k| {
            total.fetch_add(k, SeqCst);
        });
        assert_eq!(total.load(SeqCst), 1 + 2);
    }
}
