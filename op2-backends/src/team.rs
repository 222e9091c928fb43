//! `Team`: a fixed group of threads that run each phase of a loop together,
//! as OpenMP's threads do. The calling thread is member 0 and takes its
//! share itself; the other members wait between jobs spinning (yielding
//! the core to anything else runnable) for [`Team::IDLE_SPIN`] after their
//! last share before they sleep. A pool whose threads sleep as soon as
//! they are idle pays a wake-up at the start and at the end of every phase;
//! on a virtual machine a sleeping core takes 50–150 µs to run again, as
//! long as a small loop takes.
//!
//! A job is `Fn(member)` for the first `active` members: member `k` runs
//! `job(k)` once; the others are not woken. A job started on a thread
//! that is running a share of a job some team runs in parallel, or while
//! another thread's job holds the team, runs all its shares on the calling
//! thread in member order instead: slower, never a deadlock, the same work.
//! (A job nested in shares that already run that way may take the team if
//! it is free: no thread then waits on another.) So does a job
//! in a child process forked from the team's: the members are threads of
//! the parent, which a child does not have.

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

/// The current job, its lifetime erased: [`Team::run`] does not return,
/// nor unwind, before every active member is done with it.
#[derive(Clone, Copy)]
struct Posted {
    /// The job's number, from 1.
    epoch: u64,
    /// Members `0..active` run a share.
    active: usize,
    job: *const Job<'static>,
}

// SAFETY: the job is `Sync`, and `Team::run` keeps it alive until every
// active member has finished with it (see `Posted`).
unsafe impl Send for Posted {}

/// What the members share.
struct Shared {
    /// The latest job's epoch: a member that sees a new one looks at
    /// `posted`.
    announced: AtomicU64,
    /// The current job, posted before it is announced and taken down once
    /// its active members are done. Under the lock a member reads the
    /// job's epoch with its members, so a member that wakes late takes the
    /// job posted then, or none.
    posted: Mutex<Option<Posted>>,
    /// Active members (other than the caller) not yet done with the job.
    pending: AtomicUsize,
    /// Set when the team is dropped: members leave.
    stop: AtomicBool,
    /// Member `k` (from 1; index 0 unused) is parked, or about to be,
    /// waiting for an announcement: the caller unparks it.
    parked: Vec<AtomicBool>,
    /// The caller asleep waiting for `pending` to reach zero: the member
    /// that takes it there wakes it under `lock`.
    caller_asleep: AtomicBool,
    lock: Mutex<()>,
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
/// [`Team::IDLE_SPIN`] has passed since `start`; returns whether `ready`
/// held.
fn spin_until(start: Instant, ready: impl Fn() -> bool) -> bool {
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
    /// Members 1, 2, ...
    members: Vec<JoinHandle<()>>,
    /// Held by the thread whose job the team runs.
    busy: Mutex<()>,
    /// Forks of this process when the team started: a count that differs
    /// later means this is a child, without the members.
    forks: u64,
}

/// Forks this process has made, counted in each child by a `pthread_atfork`
/// handler: one atomic load on a loop's path, where asking the pid is a
/// system call (0.2 µs a phase on a virtual machine).
static FORKS: AtomicU64 = AtomicU64::new(0);

/// The fork count, with the handler registered on first use.
fn forks() -> u64 {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        #[cfg(unix)]
        {
            extern "C" fn count_fork() {
                FORKS.fetch_add(1, SeqCst);
            }
            extern "C" {
                fn pthread_atfork(
                    prepare: Option<extern "C" fn()>,
                    parent: Option<extern "C" fn()>,
                    child: Option<extern "C" fn()>,
                ) -> std::os::raw::c_int;
            }
            // SAFETY: registers a handler that only adds to an atomic, which
            // is all a forked child may do before it runs on.
            unsafe {
                pthread_atfork(None, None, Some(count_fork));
            }
        }
    });
    FORKS.load(SeqCst)
}

impl Team {
    /// How long a member waits awake, after its last share, for the next job
    /// that needs it before it sleeps: longer than a loop's bookkeeping
    /// between two phases, short enough that a program between loops (or
    /// running phases too small for every member) soon has its cores back.
    pub const IDLE_SPIN: Duration = Duration::from_micros(300);

    /// A team of `size` members (at least 1): the caller of [`Team::run`]
    /// and `size - 1` threads named `{name}-1`, `{name}-2`, ...
    pub fn new(size: usize, name: &str) -> std::io::Result<Team> {
        let size = size.max(1);
        let shared = Arc::new(Shared {
            announced: AtomicU64::new(0),
            posted: Mutex::new(None),
            pending: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            parked: (0..size).map(|_| AtomicBool::new(false)).collect(),
            caller_asleep: AtomicBool::new(false),
            lock: Mutex::new(()),
            job_done: Condvar::new(),
            panic: Mutex::new(None),
        });
        let mut team = Team {
            shared,
            members: Vec::new(),
            busy: Mutex::new(()),
            forks: forks(),
        };
        for k in 1..size {
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

    /// Runs `job(k)` for members `k` in `0..active` (at most the team's
    /// size) and returns when all are done; the caller runs `job(0)`. A
    /// panic in any share is resumed here once every share is done.
    pub fn run(&self, active: usize, job: &Job<'_>) {
        let active = active.min(self.size());
        let inline = || {
            for k in 0..active {
                job(k);
            }
        };
        // A job for one member, or inside a job, never holds the team: a
        // caller on another thread may use it meanwhile. A forked child has
        // no members to wait for (nor may it take locks they held).
        if active <= 1 || IN_JOB.with(Cell::get) || FORKS.load(SeqCst) != self.forks {
            return inline();
        }
        let busy = match self.busy.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return inline(),
        };
        let shared = &*self.shared;
        // SAFETY: only the lifetime is erased; this function waits below
        // until every active member is done with the job, also when a
        // share panics, before it returns or unwinds.
        let erased: *const Job<'static> = unsafe { std::mem::transmute(job as *const Job<'_>) };
        // Only the holder of `busy` announces: the next epoch is its own.
        let epoch = shared.announced.load(SeqCst) + 1;
        shared.pending.store(active - 1, SeqCst);
        *lock(&shared.posted) = Some(Posted {
            epoch,
            active,
            job: erased,
        });
        shared.announced.store(epoch, SeqCst);
        for (k, member) in self.members.iter().enumerate().take(active - 1) {
            if shared.parked[k + 1].load(SeqCst) {
                member.thread().unpark();
            }
        }
        let mine = run_share(job, 0);
        let done = || shared.pending.load(SeqCst) == 0;
        if !spin_until(Instant::now(), done) {
            let mut guard = lock(&shared.lock);
            shared.caller_asleep.store(true, SeqCst);
            while !done() {
                guard = shared.job_done.wait(guard).unwrap_or_else(PoisonError::into_inner);
            }
            shared.caller_asleep.store(false, SeqCst);
        }
        *lock(&shared.posted) = None;
        let theirs = lock(&shared.panic).take();
        drop(busy);
        let payload = match mine {
            Err(mine) => {
                if let Some(theirs) = theirs {
                    discard(theirs);
                }
                Some(mine)
            }
            Ok(()) => theirs,
        };
        if let Some(payload) = payload {
            panic::resume_unwind(payload);
        }
    }
}

/// Drops the payload of a panic that is not the one reported. A payload
/// whose own drop panics is leaked instead: unwinding out of a member
/// would end its thread before it reports its share, and the caller would
/// wait for it for ever.
fn discard(payload: Box<dyn Any + Send>) {
    if let Err(inner) = panic::catch_unwind(AssertUnwindSafe(|| drop(payload))) {
        std::mem::forget(inner);
    }
}

/// Runs member `k`'s share of `job`, marking the thread as inside a job.
fn run_share(job: &Job<'_>, k: usize) -> std::thread::Result<()> {
    let outer = IN_JOB.with(|f| f.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| job(k)));
    IN_JOB.with(|f| f.set(outer));
    result
}

/// Member `k`'s life: wait for an announcement, run its share if it is
/// active, report, again. It spins for [`Team::IDLE_SPIN`] after its last
/// share, not after the last job: jobs that do not need it (small phases)
/// let it sleep, and the caller wakes it when one does.
fn serve(shared: &Shared, k: usize) {
    // The last epoch this member has dealt with.
    let mut seen = 0;
    let mut idle_since = Instant::now();
    loop {
        let fresh = || shared.announced.load(SeqCst) > seen || shared.stop.load(SeqCst);
        if !spin_until(idle_since, fresh) {
            // Parked is set before the last look, and the caller looks at
            // it after announcing: one of the two sees the other.
            shared.parked[k].store(true, SeqCst);
            while !fresh() {
                thread::park();
            }
            shared.parked[k].store(false, SeqCst);
        }
        if shared.stop.load(SeqCst) {
            return;
        }
        let announced = shared.announced.load(SeqCst);
        let posted = *lock(&shared.posted);
        let job = match posted {
            Some(p) if p.epoch > seen => {
                seen = p.epoch;
                if k >= p.active {
                    continue;
                }
                p.job
            }
            // Jobs that did not need this member, finished already. A job
            // taken between its posting and its announcement leaves `seen`
            // ahead of `announced`: moved back, it would be taken again.
            _ => {
                seen = seen.max(announced);
                continue;
            }
        };
        // SAFETY: `Team::run` keeps the job alive until `pending` is zero,
        // which this member's decrement below is part of.
        if let Err(payload) = run_share(unsafe { &*job }, k) {
            let mut first = lock(&shared.panic);
            match *first {
                None => *first = Some(payload),
                Some(_) => {
                    drop(first);
                    discard(payload);
                }
            }
        }
        if shared.pending.fetch_sub(1, SeqCst) == 1 && shared.caller_asleep.load(SeqCst) {
            let _guard = lock(&shared.lock);
            shared.job_done.notify_all();
        }
        idle_since = Instant::now();
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.stop.store(true, SeqCst);
        for member in &self.members {
            member.thread().unpark();
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
                team.run(team.size(), &|k| {
                    counts[k].fetch_add(1, SeqCst);
                });
                assert!(counts.iter().all(|c| c.load(SeqCst) == 1), "size {size}");
            }
        }
    }

    #[test]
    fn only_the_active_members_run() {
        let team = Team::new(4, "t").unwrap();
        for round in 0..300 {
            let active = round % 6;
            let counts: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
            if round % 50 == 0 {
                // Let the members fall asleep now and then.
                thread::sleep(Team::IDLE_SPIN * 3);
            }
            team.run(active, &|k| {
                counts[k].fetch_add(1, SeqCst);
            });
            let ran: Vec<usize> = counts.iter().map(|c| c.load(SeqCst)).collect();
            let expected: Vec<usize> = (0..4).map(|k| usize::from(k < active)).collect();
            assert_eq!(ran, expected, "active {active}");
        }
    }

    #[test]
    fn members_no_job_needs_go_to_sleep() {
        let team = Team::new(3, "t").unwrap();
        // Jobs back to back for members 0 and 1 only: member 2 sees them
        // come and must still fall asleep. (On a loaded machine gaps between
        // the jobs would let a member that spun on after every job it saw
        // sleep too; on free cores it would spin as long as jobs come.)
        let start = Instant::now();
        let asleep = || team.shared.parked[2].load(SeqCst);
        while !asleep() && start.elapsed() < Duration::from_secs(5) {
            team.run(2, &|_| {});
        }
        assert!(
            asleep(),
            "member 2 still spins after {:?} of jobs without it",
            start.elapsed()
        );
        // It wakes for the next job that needs it.
        let ran = AtomicUsize::new(0);
        team.run(3, &|_| {
            ran.fetch_add(1, SeqCst);
        });
        assert_eq!(ran.load(SeqCst), 3);
    }

    #[test]
    fn members_that_slept_wake_for_the_next_job() {
        let team = Team::new(3, "t").unwrap();
        let total = AtomicUsize::new(0);
        for _ in 0..3 {
            thread::sleep(Team::IDLE_SPIN * 4);
            team.run(team.size(), &|k| {
                total.fetch_add(k + 1, SeqCst);
            });
        }
        assert_eq!(total.load(SeqCst), 3 * (1 + 2 + 3));
    }

    #[test]
    fn a_job_inside_a_job_runs_on_the_calling_thread() {
        let team = Team::new(2, "t").unwrap();
        let inner = AtomicUsize::new(0);
        team.run(team.size(), &|_| {
            team.run(team.size(), &|k| {
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
                        team.run(team.size(), &|_| {
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
            team.run(team.size(), &|k| {
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
        team.run(team.size(), &|k| {
            total.fetch_add(k, SeqCst);
        });
        assert_eq!(total.load(SeqCst), 1 + 2);
    }
    #[test]
    fn panics_whose_payloads_panic_when_dropped_do_not_stall_the_team() {
        // Every share panics with a payload that panics again when dropped:
        // one is resumed, the others are dropped by the members and the
        // caller, and none of those drops may end a member before it
        // reports its share.
        struct Bomb;
        impl Drop for Bomb {
            fn drop(&mut self) {
                if !thread::panicking() {
                    panic!("a payload that panics when dropped");
                }
            }
        }
        let team = Arc::new(Team::new(4, "t").unwrap());
        let (done, finished) = std::sync::mpsc::channel();
        let caller = {
            let team = team.clone();
            thread::spawn(move || {
                for _ in 0..20 {
                    let caught =
                        panic::catch_unwind(AssertUnwindSafe(|| team.run(team.size(), &|_| panic::panic_any(Bomb))));
                    // The resumed Bomb is leaked here: dropping it would panic.
                    std::mem::forget(caught);
                }
                let total = AtomicUsize::new(0);
                team.run(team.size(), &|k| {
                    total.fetch_add(k, SeqCst);
                });
                done.send(total.load(SeqCst)).unwrap();
            })
        };
        let total = finished.recv_timeout(Duration::from_secs(60));
        assert_eq!(total, Ok(1 + 2 + 3), "the caller waited for ever on a member that died");
        caller.join().unwrap();
    }

    /// `fork` is libc's: the `jit` feature brings it in.
    #[cfg(feature = "jit")]
    #[test]
    fn a_forked_child_runs_jobs_on_its_own_thread() {
        let team = Team::new(3, "t").unwrap();
        team.run(3, &|_| {});
        // SAFETY: the child only runs the job below (atomics on its stack,
        // no allocation, no lock) and leaves by `_exit`.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            let total = AtomicUsize::new(0);
            team.run(3, &|k| {
                total.fetch_add(k + 1, SeqCst);
            });
            // Nor does the child's drop wait for the members (glibc marks
            // the parent's other threads ended in a child, so joins return).
            drop(team);
            // SAFETY: leaves the child at once, as a forked child should.
            unsafe { libc::_exit(if total.load(SeqCst) == 1 + 2 + 3 { 0 } else { 1 }) };
        }
        let start = Instant::now();
        let mut status = 0;
        let exited = |status: &mut i32| {
            // SAFETY: `child` is this process's child; `status` is live.
            unsafe { libc::waitpid(child, status, libc::WNOHANG) != 0 }
        };
        while !exited(&mut status) {
            if start.elapsed() > Duration::from_secs(30) {
                // SAFETY: `child` is this process's child; `status` is live.
                unsafe {
                    libc::kill(child, libc::SIGKILL);
                    libc::waitpid(child, &mut status, 0);
                }
                panic!("the child waited for ever on members it does not have");
            }
            thread::sleep(Duration::from_millis(10));
        }
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "status {status}"
        );
    }
}
