//! The machine's memory bandwidth, for Airfoil's bandwidth floor: a STREAM
//! triad (`a = b + s c`) on a given number of threads, over arrays far
//! larger than any last-level cache. The floor of an iteration is its bytes
//! (the loops' estimates) over this bandwidth; `airfoil --floor` and the
//! Airfoil benchmark report how close a run comes to it.
//!
//! Each thread first touches, then triads, its own contiguous share of the
//! arrays, as an OpenMP `schedule(static)` STREAM does, so pages sit near the
//! thread that streams them on a machine with several memory nodes.

use std::io;
use std::sync::{Barrier, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Elements per array: 3 arrays of 256 MB.
const ELEMENTS: usize = 32 << 20;
/// Triads timed; the fastest counts, as STREAM reports its best.
const REPEATS: usize = 20;
/// Bytes a triad moves per element: two doubles read, one written (the
/// write's cache-line fill is not counted, as STREAM does not count it).
const BYTES_PER_ELEMENT: f64 = 24.0;

/// The best triad bandwidth of 20 runs on `threads` threads (at least 1),
/// in GB/s (10^9 bytes per second). An `Err` where the three 256 MB
/// arrays cannot be had or a thread cannot be started.
pub fn stream_triad_gbytes_per_s(threads: usize) -> io::Result<f64> {
    triad(ELEMENTS, threads)
}

/// `elements` zeros, or an `Err` where the allocator refuses them.
fn zeros(elements: usize) -> io::Result<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(elements).map_err(|e| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("the triad's arrays ({} MB each): {e}", (elements * 8) >> 20),
        )
    })?;
    v.resize(elements, 0.0);
    Ok(v)
}

/// The best triad over arrays of `elements` (at least 1) on `threads`
/// threads (at most one per element), in GB/s.
fn triad(elements: usize, threads: usize) -> io::Result<f64> {
    let elements = elements.max(1);
    let (mut a, mut b, mut c) = (zeros(elements)?, zeros(elements)?, zeros(elements)?);
    let per_thread = elements.div_ceil(threads.max(1));
    let workers = elements.div_ceil(per_thread);
    let barrier = Barrier::new(workers);
    // The workers start together once all of them exist, or give up if
    // one could not be started (they would wait at the barrier forever).
    let gate = (Mutex::new(None::<bool>), Condvar::new());
    let open = |go: bool| {
        *gate.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(go);
        gate.1.notify_all();
    };
    // Each worker's time per repeat; a repeat lasts as long as its slowest.
    let times: io::Result<Vec<Vec<Duration>>> = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(workers);
        let chunks = a
            .chunks_mut(per_thread)
            .zip(b.chunks_mut(per_thread))
            .zip(c.chunks_mut(per_thread));
        for ((a, b), c) in chunks {
            let (barrier, gate) = (&barrier, &gate);
            let started = std::thread::Builder::new().spawn_scoped(s, move || {
                let mut go = gate.0.lock().unwrap_or_else(|e| e.into_inner());
                while go.is_none() {
                    go = gate.1.wait(go).unwrap_or_else(|e| e.into_inner());
                }
                if *go != Some(true) {
                    return Vec::new();
                }
                drop(go);
                // `zeros` maps untouched pages: this is the first touch.
                a.fill(0.0);
                b.fill(1.0);
                c.fill(2.0);
                (0..REPEATS)
                    .map(|_| {
                        barrier.wait();
                        let start = Instant::now();
                        triad_pass(a, b, c);
                        std::hint::black_box(&mut *a);
                        start.elapsed()
                    })
                    .collect()
            });
            match started {
                Ok(h) => handles.push(h),
                Err(e) => {
                    open(false);
                    return Err(io::Error::new(
                        e.kind(),
                        format!("starting triad thread {} of {workers}: {e}", handles.len() + 1),
                    ));
                }
            }
        }
        open(true);
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| io::Error::other("a triad thread panicked")))
            .collect()
    });
    let times = times?;
    let best = (0..REPEATS)
        .map(|r| times.iter().map(|t| t[r]).max().unwrap_or_default())
        .min()
        .unwrap_or_default()
        .as_secs_f64();
    // A clock too coarse for a tiny array reads 0: count a nanosecond.
    Ok(BYTES_PER_ELEMENT * elements as f64 / best.max(1e-9) / 1e9)
}

/// `a = b + 3 c`, in AVX2 where the CPU has it: wider loads keep more
/// misses in flight, and the floor should be the best the machine streams
/// (on the 2-core Zen 3 VM a C triad gained about 20% from AVX2).
fn triad_pass(a: &mut [f64], b: &[f64], c: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { triad_pass_avx2(a, b, c) };
    }
    triad_pass_plain(a, b, c)
}

/// [`triad_pass_plain`] compiled for AVX2.
///
/// # Safety
///
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn triad_pass_avx2(a: &mut [f64], b: &[f64], c: &[f64]) {
    triad_pass_plain(a, b, c)
}

#[inline(always)]
fn triad_pass_plain(a: &mut [f64], b: &[f64], c: &[f64]) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + 3.0 * c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_triad_reports_a_plausible_bandwidth() {
        // Any machine streams 24 MB faster than 0.01 GB/s, even unoptimised.
        let gbs = triad(1 << 20, 3).unwrap();
        assert!(gbs.is_finite() && gbs > 0.01, "{gbs} GB/s on 3 threads");
        // More threads than elements, and a single element: they end (the
        // barrier has as many parties as threads started) with a finite
        // figure, whatever a clock read costs against so little work.
        for (elements, threads) in [(5, 8), (1, 1)] {
            let gbs = triad(elements, threads).unwrap();
            assert!(
                gbs.is_finite() && gbs > 0.0,
                "{gbs} GB/s for {elements} elements on {threads} threads"
            );
        }
        // Arrays no allocator gives: an error, not an abort.
        let e = triad(usize::MAX / 16, 2).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::OutOfMemory, "{e}");
    }
}
