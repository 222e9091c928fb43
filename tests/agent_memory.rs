//! A long agent run stays within a fixed amount of memory on every backend:
//! 1 000 steps of births and deaths, a ragged map rebuilt after each round
//! (a new map every step, as a model whose agents come and go needs), an
//! increment through it and a random draw. Plans of dropped maps, the ids
//! random streams keep and device buffers must all go with what they
//! belonged to. Measured by a counting allocator (Rust's heap, exact) and
//! the resident set (what the OpenCL driver allocates too, coarsely).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use op2::prelude::*;
use op2::RuntimeOptions;

/// Counts the bytes Rust has allocated and not freed.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator; counting only updates
// an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// One test at a time: the count is the whole process's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The resident set in bytes (Linux), or 0 where unknown.
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(0)
        * 4096
}

/// Each agent spreads its weight over its neighbours, then dies or has a
/// child with probabilities that pull the population back to its start.
#[op2::kernel]
fn live(w: &f64, acc: &mut [f64], pressure: &f64, rng: &mut Philox, fate: &mut Fate) {
    for j in 0..acc.len() {
        acc[j] += *w;
    }
    let u = rng.uniform_f64();
    if u < 0.05 * *pressure {
        fate.die();
    } else if u > 1.0 - 0.05 / *pressure {
        fate.spawn();
    }
}

#[op2::kernel]
fn settle(w: &mut f64, acc: &f64) {
    *w = 0.5 * *w + 0.001 * *acc;
}

const AGENTS: usize = 2_000;
const STEPS: usize = 1_000;
/// Steps before the first measure: capacities and caches have grown.
const WARM: usize = 100;

/// Runs the model on `rt`; returns the growth of Rust's live heap and of
/// the resident set from step `WARM` to the end (the largest seen).
fn run(rt: &Runtime) -> (isize, isize) {
    let agents = Set::dynamic("agents", AGENTS, 2 * AGENTS).unwrap();
    let w = Dat::from_vec("w", &agents, 1, (0..AGENTS).map(|i| (i % 7) as f64).collect()).unwrap();
    let acc = Dat::<f64>::zeros("acc", &agents, 1).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    let rng = RandomStreams::new("rng", 17);
    let pressure = Global::scalar("pressure", 1.0);
    let (mut heap0, mut rss0, mut heap_max, mut rss_max) = (0, 0, 0, 0);
    for step in 0..STEPS {
        let n = agents.size();
        assert!(n > AGENTS / 2 && n < 2 * AGENTS, "step {step}: {n} agents");
        let ids = agents.global_ids();
        let mut offsets = vec![0];
        let mut targets = Vec::new();
        for e in 0..n {
            let degree = 1 + (ids[e] % 3) as usize;
            targets.extend((1..=degree).map(|k| ((e + k * 7) % n) as i32));
            offsets.push(targets.len());
        }
        let links = RaggedMap::new("links", &agents, &agents, offsets, targets).unwrap();
        pressure.data_mut()[0] = n as f64 / AGENTS as f64;
        par_loop!(rt, settle, agents, w(RW), acc(READ)).unwrap();
        acc.data_mut().fill(0.0);
        par_loop!(
            rt,
            live,
            agents,
            w(READ),
            acc(INC, links[..]),
            pressure(READ),
            rng(DRAW),
            life(FATE)
        )
        .unwrap();
        drop(links);
        let (heap, rss) = (LIVE.load(Ordering::Relaxed), resident());
        if step == WARM {
            (heap0, rss0) = (heap, rss);
        }
        if step >= WARM {
            heap_max = heap_max.max(heap);
            rss_max = rss_max.max(rss);
        }
    }
    (heap_max as isize - heap0 as isize, rss_max as isize - rss0 as isize)
}

fn bounded(rt: Runtime) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (heap, rss) = run(&rt);
    println!(
        "{:?}: over {} steps, heap grew {heap} bytes, resident set {rss} bytes; {} plans held, {} built",
        rt.backend(),
        STEPS - WARM,
        rt.plans_held(),
        rt.plans_built()
    );
    // What was once left behind each step: a plan (10^4 bytes and more) on
    // every colouring backend, two transfer counters (350 bytes) on
    // devices; 3 * 10^5 bytes over the run at the least. The agents' own
    // buffers grow only with the largest population seen.
    assert!(heap < 192 << 10, "Rust's heap grew by {heap} bytes");
    assert!(rss < 48 << 20, "the resident set grew by {rss} bytes");
    assert!(rt.plans_held() <= 4, "{} plans held", rt.plans_held());
}

#[test]
fn seq_stays_bounded() {
    bounded(Runtime::new(Backend::Seq).unwrap());
}

#[cfg(feature = "rayon")]
#[test]
fn rayon_stays_bounded() {
    bounded(Runtime::with_options(Backend::Rayon, RuntimeOptions::default().threads(2)).unwrap());
}

#[cfg(feature = "jit")]
#[test]
fn jit_stays_bounded() {
    let dir = concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache");
    bounded(Runtime::with_options(Backend::Jit, RuntimeOptions::default().threads(2).cache_dir(dir)).unwrap());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_stays_bounded() {
    bounded(Runtime::new(Backend::OpenCl).unwrap());
}
