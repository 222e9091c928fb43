//! How a rank waits for MPI (`OP2_MPI_WAIT`, decided once by `Mpi::init`).
//!
//! MPI's blocking calls spin until they finish. Where every rank has a core
//! that is the fastest wait; where ranks share cores (more ranks than cores:
//! a laptop, a 2-core CI machine) the waiting rank spins away the time slice
//! of the rank it waits for, and a collective costs a scheduler slice
//! instead of microseconds. There a wait posts the call, polls it a while
//! and then sleeps between polls, giving the core back (Open MPI does the
//! same when it sees more ranks than cores).
//!
//! The collectives and waits that recur in a run (reductions, halo and
//! agent exchanges, births, gathers of output) go through here; one-off
//! setup calls (duplicating communicators, the partition's transfer to
//! rank 0) and the libraries' own (PT-Scotch, HDF5's MPI-IO) keep MPI's
//! waits. The results are the same either way; only who holds the core
//! differs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mpi::collective::{CommunicatorCollectives, Operation, Root, SystemOperation};
use mpi::datatype::{Buffer, BufferMut, PartitionedBuffer, PartitionedBufferMut};
use mpi::ffi;
use mpi::request::{Request, Scope};
use op2_backends::config::MpiWait;

/// Whether waits sleep between polls (set by `Mpi::init`).
static SLEEPS: AtomicBool = AtomicBool::new(false);

/// Polls before a wait starts to sleep: a collective among ranks that each
/// have a core finishes within them.
const SPINS: u32 = 64;

/// The sleep between later polls: short beside a scheduler's time slice.
const NAP: Duration = Duration::from_micros(20);

/// Decides how every rank waits, with blocking collectives (called by
/// `Mpi::init` before anything else waits): `choice` (`OP2_MPI_WAIT`), and
/// for `Auto` whether `node` runs more ranks than it has CPUs for them
/// (`node_cpus`, from [`node_cpus`]: the union of its ranks' affinity masks,
/// so ranks bound one to a core count as having a core each). All ranks
/// must post collectives alike (MPI does not match a blocking one with a
/// nonblocking one), so they all sleep if any rank's choice or node says
/// so.
pub(crate) fn decide<C: CommunicatorCollectives>(world: &C, node: &C, node_cpus: usize, choice: MpiWait) {
    let mine = match choice {
        MpiWait::Spin => 0u8,
        MpiWait::Sleep => 1,
        MpiWait::Auto => u8::from(node.size() as usize > node_cpus),
    };
    let mut any = 0u8;
    world.all_reduce_into(&mine, &mut any, SystemOperation::max());
    SLEEPS.store(any != 0, Ordering::Relaxed);
}

/// The CPUs the ranks of `node` may run on together: the union of their
/// affinity masks. Collective over `node`.
pub(crate) fn node_cpus<C: CommunicatorCollectives>(node: &C) -> usize {
    let mine = cpu_mask();
    let mut union = vec![0u64; mine.len()];
    node.all_reduce_into(&mine[..], &mut union[..], SystemOperation::bitwise_or());
    union.iter().map(|w| w.count_ones() as usize).sum::<usize>().max(1)
}

/// This process's CPUs as bits (CPU `c` is bit `c % 64` of word `c / 64`):
/// Linux's affinity mask, else the first `available_parallelism` CPUs.
fn cpu_mask() -> Vec<u64> {
    const CPUS: usize = 1024;
    let mut mask = vec![0u64; CPUS / 64];
    // SAFETY: cpu_set_t is plain bits; zeroed, it is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a cpu_set_t of the size given, which is all that
    // sched_getaffinity writes.
    let got = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for cpu in 0..CPUS.min(8 * std::mem::size_of::<libc::cpu_set_t>()) {
        let on = if got {
            // SAFETY: `cpu` is below the set's size in bits.
            unsafe { libc::CPU_ISSET(cpu, &set) }
        } else {
            cpu < cpus
        };
        if on {
            mask[cpu / 64] |= 1 << (cpu % 64);
        }
    }
    mask
}

/// Whether waits sleep between polls.
pub(crate) fn sleeps() -> bool {
    SLEEPS.load(Ordering::Relaxed)
}

/// Polls `done` until it says so: spinning for [`SPINS`] polls, then
/// sleeping [`NAP`] between them.
fn poll(mut done: impl FnMut() -> bool) {
    let mut polls = 0u32;
    while !done() {
        if polls < SPINS {
            polls += 1;
            std::hint::spin_loop();
        } else {
            std::thread::sleep(NAP);
        }
    }
}

/// Waits for `request`, sleeping between polls when waits sleep.
pub(crate) fn finish<'a, D: ?Sized, S: Scope<'a>>(request: Request<'a, D, S>) {
    if !sleeps() {
        request.wait();
        return;
    }
    let mut pending = Some(request);
    poll(|| match pending.take().map(Request::test) {
        Some(Err(still)) => {
            pending = Some(still);
            false
        }
        _ => true,
    });
}

/// Waits for every request in `requests` (`MPI_Waitall`'s contract: each
/// becomes `MPI_REQUEST_NULL`), sleeping between polls when waits sleep.
/// Returns MPI's error code, 0 on success.
///
/// # Safety
/// The requests are live or null, and the memory they use stays valid until
/// this returns.
pub(crate) unsafe fn finish_all(requests: &mut [ffi::MPI_Request]) -> i32 {
    let n = requests.len() as std::os::raw::c_int;
    if !sleeps() {
        // SAFETY: the caller's contract.
        return unsafe { ffi::MPI_Waitall(n, requests.as_mut_ptr(), ffi::RSMPI_STATUSES_IGNORE) };
    }
    let mut rc = 0;
    poll(|| {
        let mut flag: std::os::raw::c_int = 0;
        // SAFETY: the caller's contract.
        rc = unsafe { ffi::MPI_Testall(n, requests.as_mut_ptr(), &mut flag, ffi::RSMPI_STATUSES_IGNORE) };
        rc != 0 || flag != 0
    });
    rc
}

/// Runs `blocking` where waits spin; else posts `post` (the nonblocking
/// form, in the request scope its arrow names) and waits for it with [`finish`].
macro_rules! waited {
    ($blocking:expr; $sc:ident => $post:expr) => {
        if sleeps() {
            mpi::request::scope(|$sc| finish($post));
        } else {
            $blocking;
        }
    };
}

/// `comm.all_reduce_into`, waiting as decided.
pub(crate) fn all_reduce_into<C, S, R, O>(comm: &C, send: &S, recv: &mut R, op: O)
where
    C: CommunicatorCollectives + ?Sized,
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
    O: Operation,
{
    waited!(comm.all_reduce_into(send, recv, op); sc => comm.immediate_all_reduce_into(sc, send, recv, op));
}

/// `comm.all_to_all_into`, waiting as decided.
pub(crate) fn all_to_all_into<C, S, R>(comm: &C, send: &S, recv: &mut R)
where
    C: CommunicatorCollectives + ?Sized,
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
{
    waited!(comm.all_to_all_into(send, recv); sc => comm.immediate_all_to_all_into(sc, send, recv));
}

/// `comm.all_to_all_varcount_into`, waiting as decided.
pub(crate) fn all_to_all_varcount_into<C, S, R>(comm: &C, send: &S, recv: &mut R)
where
    C: CommunicatorCollectives + ?Sized,
    S: PartitionedBuffer + ?Sized,
    R: PartitionedBufferMut + ?Sized,
{
    waited!(comm.all_to_all_varcount_into(send, recv); sc => comm.immediate_all_to_all_varcount_into(sc, send, recv));
}

/// `comm.all_gather_into`, waiting as decided.
pub(crate) fn all_gather_into<C, S, R>(comm: &C, send: &S, recv: &mut R)
where
    C: CommunicatorCollectives + ?Sized,
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
{
    waited!(comm.all_gather_into(send, recv); sc => comm.immediate_all_gather_into(sc, send, recv));
}

/// `comm.all_gather_varcount_into`, waiting as decided.
pub(crate) fn all_gather_varcount_into<C, S, R>(comm: &C, send: &S, recv: &mut R)
where
    C: CommunicatorCollectives + ?Sized,
    S: Buffer + ?Sized,
    R: PartitionedBufferMut + ?Sized,
{
    waited!(comm.all_gather_varcount_into(send, recv); sc => comm.immediate_all_gather_varcount_into(sc, send, recv));
}

/// `root.broadcast_into`, waiting as decided.
pub(crate) fn broadcast_into<P, B>(root: &P, buffer: &mut B)
where
    P: Root + ?Sized,
    B: BufferMut + ?Sized,
{
    waited!(root.broadcast_into(buffer); sc => root.immediate_broadcast_into(sc, buffer));
}

/// `root.gather_varcount_into` (a rank that is not the root), waiting as
/// decided.
pub(crate) fn gather_varcount_into<P, S>(root: &P, send: &S)
where
    P: Root + ?Sized,
    S: Buffer + ?Sized,
{
    waited!(root.gather_varcount_into(send); sc => root.immediate_gather_varcount_into(sc, send));
}

/// `root.gather_varcount_into_root` (the root), waiting as decided.
pub(crate) fn gather_varcount_into_root<P, S, R>(root: &P, send: &S, recv: &mut R)
where
    P: Root + ?Sized,
    S: Buffer + ?Sized,
    R: PartitionedBufferMut + ?Sized,
{
    waited!(root.gather_varcount_into_root(send, recv); sc => root.immediate_gather_varcount_into_root(sc, send, recv));
}
