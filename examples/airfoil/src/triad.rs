//! The machine's memory bandwidth, for Airfoil's bandwidth floor: a STREAM
//! triad (`a = b + s c`) on a given number of threads, over arrays far
//! larger than any last-level cache. The floor of an iteration is its bytes
//! (the loops' estimates) over this bandwidth; `airfoil --floor` and the
//! Airfoil benchmark report how close a run comes to it.
//!
//! Each thread first touches, then triads, its own contiguous share of the
//! arrays, as an OpenMP `schedule(static)` STREAM does, so pages sit near the
//! thread that streams them on a machine with several memory nodes.

use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Elements per array: 3 arrays of 256 MB.
const ELEMENTS: usize = 32 << 20;
/// Triads timed; the fastest counts, as STREAM reports its best.
const REPEATS: usize = 20;
/// Bytes a triad moves per element: two doubles read, one written (the
/// write's cache-line fill is not counted, as STREAM does not count it).
const BYTES_PER_ELEMENT: f64 = 24.0;

/// The best triad bandwidth of 20 runs on `threads` threads (at least 1),
/// in GB/s (10^9 bytes per second).
pub fn stream_triad_gbytes_per_s(threads: usize) -> f64 {
    triad(ELEMENTS, threads)
}

/// The best triad over arrays of `elements` (at least 1) on `threads`
/// threads (at most one per element), in GB/s.
fn triad(elements: usize, threads: usize) -> f64 {
    let elements = elements.max(1);
    let (mut a, mut b, mut c) = (vec![0.0f64; elements], vec![0.0f64; elements], vec![0.0f64; elements]);
    let per_thread = elements.div_ceil(threads.max(1));
    let workers = elements.div_ceil(per_thread);
    let barrier = Barrier::new(workers);
    // Each worker's time per repeat; a repeat lasts as long as its slowest.
    let times: Vec<Vec<Duration>> = std::thread::scope(|s| {
        let handles: Vec<_> = a
            .chunks_mut(per_thread)
            .zip(b.chunks_mut(per_thread))
            .zip(c.chunks_mut(per_thread))
            .map(|((a, b), c)| {
                let barrier = &barrier;
                s.spawn(move || {
                    // `vec!` of zeros maps untouched pages: this is the first touch.
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
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a triad thread panicked"))
            .collect()
    });
    let best = (0..REPEATS)
        .map(|r| times.iter().map(|t| t[r]).max().unwrap_or_default())
        .min()
        .unwrap_or_default()
        .as_secs_f64();
    // A clock too coarse for a tiny array reads 0: count a nanosecond.
    BYTES_PER_ELEMENT * elements as f64 / best.max(1e-9) / 1e9
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
        let gbs = triad(1 << 20, 3);
        assert!(gbs.is_finite() && gbs > 0.01, "{gbs} GB/s on 3 threads");
        // More threads than elements, and a single element: they end (the
        // barrier has as many parties as threads started) with a finite
        // figure, whatever a clock read costs against so little work.
        for (elements, threads) in [(5, 8), (1, 1)] {
            let gbs = triad(elements, threads);
            assert!(
                gbs.is_finite() && gbs > 0.0,
                "{gbs} GB/s for {elements} elements on {threads} threads"
            );
        }
    }
}
