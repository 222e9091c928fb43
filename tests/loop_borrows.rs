//! A loop and a `Dat::swap` of its Dat on two threads, many times over: the
//! loop must take its pointers into the Dat only once the runtime holds its
//! borrows (a swap between the two freed the buffer under the loop). The
//! ordering that rules it out: `par_loop!` makes its views inside the loop
//! body, which the runtime calls only after `LoopBorrows::take`, and a swap
//! needs both Dats' exclusive borrows. So each swap lands between two loops,
//! and every element of the Dat has been bumped the same number of times.
//!
//! The Dats are large enough (256 KiB) that the allocator returns a freed
//! buffer to the system, so a loop writing into one faults: with the views
//! taken before the borrows (as they once were) this test died of SIGSEGV
//! in every run tried (three release, two debug), and it passes with them
//! inside the body. Under `--release` too: `cargo test --release --features
//! jit --test loop_borrows`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use op2::prelude::*;
use op2::RuntimeOptions;

#[op2::kernel]
fn bump(x: &mut f64) {
    *x += 1.0;
}

/// `loops` loops bumping a Dat while another thread swaps in, and drops,
/// Dats from a pool made beforehand (so that each swap is quick).
fn race(rt: &Runtime, loops: usize) {
    let s = Set::new("s", 1 << 15).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let mut spares: Vec<Dat<f64>> = (0..300).map(|_| Dat::filled("y", &s, 1, 0.5).unwrap()).collect();
    let done = AtomicBool::new(false);
    let (ran, swapped) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|t| {
        t.spawn(|| {
            // At least `loops` loops, and on until a swap got in between
            // two (a busy machine may starve the swapping thread for a
            // while), but not forever.
            for i in 0..100 * loops {
                if i >= loops && swapped.load(Ordering::Relaxed) > 0 {
                    break;
                }
                if par_loop!(rt, bump, s, x(RW)).is_ok() {
                    ran.fetch_add(1, Ordering::Relaxed);
                }
                if i % 64 == 63 {
                    std::thread::yield_now();
                }
            }
            done.store(true, Ordering::Relaxed);
        });
        t.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let Some(y) = spares.pop() else { break };
                if x.swap(&y).is_ok() {
                    swapped.fetch_add(1, Ordering::Relaxed);
                    // The old buffer goes back to the system here.
                    drop(y);
                } else {
                    spares.push(y);
                }
            }
        });
    });
    let (ran, swapped) = (ran.into_inner(), swapped.into_inner());
    // Both sides took turns (the race was run), and loops that met a swap
    // were refused, never run on a moving buffer.
    assert!(ran > 0 && swapped > 0, "{ran} loops ran, {swapped} swaps");
    let v = x.to_vec();
    assert!(
        v.iter().all(|&e| e == v[0]),
        "every element bumped alike since the last swap: {} and {}",
        v[0],
        v.iter().find(|&&e| e != v[0]).unwrap()
    );
    assert_eq!(v[0].fract(), 0.5, "the last swap brought a Dat filled with 0.5");
    println!("{ran} loops, {swapped} swaps");
}

#[test]
fn seq_loops_and_swaps_take_turns() {
    race(&Runtime::new(Backend::Seq).unwrap(), 20_000);
}

#[cfg(feature = "rayon")]
#[test]
fn rayon_loops_and_swaps_take_turns() {
    race(
        &Runtime::with_options(Backend::Rayon, RuntimeOptions::default().threads(2)).unwrap(),
        20_000,
    );
}

#[cfg(feature = "jit")]
#[test]
fn jit_loops_and_swaps_take_turns() {
    let dir = concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache");
    race(
        &Runtime::with_options(Backend::Jit, RuntimeOptions::default().threads(2).cache_dir(dir)).unwrap(),
        20_000,
    );
}
