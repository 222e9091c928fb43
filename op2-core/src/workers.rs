//! Host threads for the work around loops (message builds, compactions,
//! sorts): a backend lends its threads through [`Workers`], and the work is
//! cut into tasks that do not depend on how many threads run them, so its
//! result is the same bits on every thread count.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{DeviceWork, Timings};

/// Runs independent tasks, some at once.
pub trait Workers: Sync {
    /// How many tasks may run at once (at least 1): callers cut their work
    /// into about this many pieces, or more.
    fn threads(&self) -> usize;

    /// Runs `task(i)` for every `i` in `0..tasks`, each exactly once, and
    /// returns when all are done. Tasks must not depend on their order.
    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync));

    /// The device whose memory the work runs in when the data lives there
    /// (a device backend's runtime); `None`: the work runs on the host.
    fn device_work(&self) -> Option<&dyn DeviceWork> {
        None
    }

    /// Where work done on these workers outside loops (list builds,
    /// exchanges of agents) is timed: a runtime's own timings, so that its
    /// [`TimingSummary`](crate::TimingSummary) shows it; `None`: not timed.
    fn work_timings(&self) -> Option<&Timings> {
        None
    }
}

/// A reference lends what it refers to (so `&rt` and `rt` both serve).
impl<W: Workers + ?Sized> Workers for &W {
    fn threads(&self) -> usize {
        (**self).threads()
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        (**self).run(tasks, task);
    }

    fn device_work(&self) -> Option<&dyn DeviceWork> {
        (**self).device_work()
    }

    fn work_timings(&self) -> Option<&Timings> {
        (**self).work_timings()
    }
}

/// Workers on scoped threads started for each [`Workers::run`] (the caller
/// runs tasks too): for backends without a thread pool of their own, and
/// for the builds called without a runtime. Starting a thread costs a few
/// microseconds, so callers run small work on one thread
/// ([`Workers::threads`] of 1 runs everything on the caller).
#[derive(Clone, Copy, Debug)]
pub struct ScopedThreads {
    threads: usize,
}

impl ScopedThreads {
    /// `threads` at once (0 counts as 1).
    pub const fn new(threads: usize) -> ScopedThreads {
        ScopedThreads {
            threads: if threads == 0 { 1 } else { threads },
        }
    }

    /// The caller's thread alone.
    pub const fn one() -> ScopedThreads {
        ScopedThreads::new(1)
    }

    /// As many as the machine runs at once (`available_parallelism`).
    pub fn available() -> ScopedThreads {
        ScopedThreads::new(std::thread::available_parallelism().map_or(1, usize::from))
    }
}

impl Workers for ScopedThreads {
    fn threads(&self) -> usize {
        self.threads
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        let helpers = self.threads.min(tasks).saturating_sub(1);
        if helpers == 0 {
            (0..tasks).for_each(task);
            return;
        }
        // Tasks are taken in turn, so uneven ones balance out.
        let next = AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= tasks {
                break;
            }
            task(i);
        };
        std::thread::scope(|s| {
            for _ in 0..helpers {
                s.spawn(work);
            }
            work();
        });
    }
}

/// Below this many elements a step runs on the caller's thread (starting
/// threads would cost more than it saves).
pub const PARALLEL_MIN: usize = 16_384;

/// How many parts to cut `n` elements into on `workers`.
pub fn parts_for(workers: &dyn Workers, n: usize) -> usize {
    if n < PARALLEL_MIN {
        1
    } else {
        workers.threads().min(n / PARALLEL_MIN).clamp(1, MAX_PARTS)
    }
}

/// The indices `e` in `0..n` with `keep(e)`, ascending, into `out`.
pub fn select_indices(n: usize, keep: &(dyn Fn(usize) -> bool + Sync), out: &mut Vec<u32>, workers: &dyn Workers) {
    out.clear();
    let parts = parts_for(workers, n);
    // Each part counts its indices, then writes them at its offset.
    let mut bounds = [0usize; MAX_PARTS + 1];
    run_on_pieces(workers, &mut bounds[1..=parts], 1, parts, &|i, count| {
        count[0] = piece(n, parts, i).filter(|&e| keep(e)).count();
    });
    for i in 0..parts {
        bounds[i + 1] += bounds[i];
    }
    out.resize(bounds[parts], 0);
    run_on_parts(workers, out, &bounds[..=parts], &|i, to| {
        for (slot, e) in to.iter_mut().zip(piece(n, parts, i).filter(|&e| keep(e))) {
            *slot = e as u32;
        }
    });
}

/// `out` becomes the elements `from` of `src` (`bytes` each, in that
/// order), copied in parallel.
pub fn gather_elements(src: &[u8], bytes: usize, from: &[u32], out: &mut Vec<u8>, workers: &dyn Workers) {
    out.clear();
    out.resize(from.len() * bytes, 0);
    let parts = parts_for(workers, from.len());
    run_on_pieces(workers, out, bytes, parts, &|i, part| {
        for (to, &e) in part.chunks_exact_mut(bytes).zip(&from[piece(from.len(), parts, i)]) {
            let e = e as usize * bytes;
            to.copy_from_slice(&src[e..e + bytes]);
        }
    });
}

/// The most parts [`run_on_parts`] cuts a slice into.
pub const MAX_PARTS: usize = 64;

/// Cuts `0..len` into `parts` consecutive ranges of nearly equal length
/// (the first ones one longer): range `i` of them.
pub fn piece(len: usize, parts: usize, i: usize) -> std::ops::Range<usize> {
    let (q, r) = (len / parts, len % parts);
    let start = i * q + i.min(r);
    start..start + q + usize::from(i < r)
}

/// Runs `f(i, &mut data[bounds[i]..bounds[i + 1]])` for every part `i`,
/// the parts at once on `workers`.
///
/// # Panics
/// If `bounds` has more than [`MAX_PARTS`] parts, descends, or ends past
/// `data` (callers compute them: a bug, not bad input).
pub fn run_on_parts<T: Send>(
    workers: &dyn Workers,
    data: &mut [T],
    bounds: &[usize],
    f: &(dyn Fn(usize, &mut [T]) + Sync),
) {
    let parts = bounds.len().saturating_sub(1);
    assert!(parts <= MAX_PARTS, "{parts} parts, more than {MAX_PARTS}");
    let mut own = [0usize; MAX_PARTS + 1];
    own[..bounds.len()].copy_from_slice(bounds);
    let own = &own[..bounds.len()];
    assert!(
        own.windows(2).all(|w| w[0] <= w[1]) && own.last().is_none_or(|&e| e <= data.len()),
        "parts {own:?} of a slice of {}",
        data.len()
    );
    let base = SharedMut(data.as_mut_ptr());
    workers.run(parts, &|i| {
        // SAFETY: the bounds (copied, so they cannot change meanwhile)
        // ascend inside `data`, which this call borrows exclusively:
        // the parts are disjoint and each is handed to one task.
        f(i, unsafe { base.slice(own[i]..own[i + 1]) })
    });
}

/// As [`run_on_parts`], with `parts` nearly equal parts of `unit`
/// elements each (a part holds whole units).
pub fn run_on_pieces<T: Send>(
    workers: &dyn Workers,
    data: &mut [T],
    unit: usize,
    parts: usize,
    f: &(dyn Fn(usize, &mut [T]) + Sync),
) {
    let units = data.len() / unit.max(1);
    let mut bounds = [0usize; MAX_PARTS + 1];
    let parts = parts.clamp(1, MAX_PARTS);
    for i in 0..parts {
        bounds[i + 1] = piece(units, parts, i).end * unit;
    }
    run_on_parts(workers, data, &bounds[..=parts], f);
}

/// Views a slice of `u32` as atomics, for tasks that store into places
/// they know no other task touches (a scatter).
pub fn as_atomic(data: &mut [u32]) -> &[std::sync::atomic::AtomicU32] {
    // SAFETY: `AtomicU32` has the size, alignment and bit validity of
    // `u32`, and the exclusive borrow lasts as long as the view.
    unsafe { &*(data as *mut [u32] as *const [std::sync::atomic::AtomicU32]) }
}

/// A pointer that tasks share, each writing its own disjoint part.
#[derive(Clone, Copy)]
struct SharedMut<T>(*mut T);

// SAFETY: tasks write disjoint parts only (see `run_on_parts`).
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// The slice `range` of the buffer behind the pointer.
    ///
    /// # Safety
    /// `range` is inside the buffer, and no other task touches it meanwhile.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, range: std::ops::Range<usize>) -> &mut [T] {
        // SAFETY: as the caller promises.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(range.start), range.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_runs_once_on_any_thread_count() {
        for threads in [1, 2, 3, 8] {
            let hits: Vec<AtomicUsize> = (0..37).map(|_| AtomicUsize::new(0)).collect();
            ScopedThreads::new(threads).run(hits.len(), &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "{threads} threads");
        }
    }

    #[test]
    fn parts_are_disjoint_and_cover_the_slice() {
        let mut data = vec![0usize; 23];
        run_on_pieces(&ScopedThreads::new(3), &mut data, 2, 4, &|i, part| {
            part.iter_mut().for_each(|x| *x += i + 1);
        });
        // 11 units of 2 in 4 parts: 3, 3, 3, 2 units; the odd element is left.
        let want: Vec<usize> = [1; 6]
            .into_iter()
            .chain([2; 6])
            .chain([3; 6])
            .chain([4; 4])
            .chain([0])
            .collect();
        assert_eq!(data, want);
    }

    #[test]
    #[should_panic(expected = "parts")]
    fn descending_bounds_are_refused() {
        let mut data = [0u8; 4];
        run_on_parts(&ScopedThreads::one(), &mut data, &[0, 3, 2, 4], &|_, _| {});
    }

    #[test]
    fn pieces_cover_the_range_in_order() {
        for (len, pieces) in [(10, 3), (2, 5), (0, 4), (100, 1)] {
            let all: Vec<usize> = (0..pieces).flat_map(|i| piece(len, pieces, i)).collect();
            assert_eq!(all, (0..len).collect::<Vec<_>>(), "{len} in {pieces}");
        }
    }
}
