//! One generation of Conway's Life on a torus, in one run: the hand-written
//! parallel step (`op2_life::step_by_hand_parallel`, rows on a rayon pool), and
//! `op2_life::Life::step` on `rayon` and (with `--features jit`) `jit`, 2
//! threads each. Prints, at the end, ms per step, GB/s and the ratio
//! DSL/hand-written per backend.
//!
//! `cargo bench --bench life` (`LIFE_BENCH_SIZE=WxH` changes the board; default
//! 4096x4096, 16.8 million cells). The start is ~30% live cells drawn with
//! `op2::Philox` (seed [`SEED`]), the same on every run; both versions start
//! from it and are checked to agree after one step before anything is timed.
//!
//! GB/s counts the bytes a step must move, not what the caches do: the state
//! read once and the next state written once (4 + 4 bytes per cell). The
//! Moore neighbourhood is an `op2::Stencil`: native backends (rayon) compute
//! the neighbours and move those 8 bytes per cell too; generated code (jit)
//! reads the stencil's table (8 entries of 4 bytes per cell), 40 bytes per
//! cell. The neighbours' states, read again by the cells around them, are not
//! counted twice.

use std::time::Duration;

use criterion::{black_box, Criterion, Throughput};
use op2::{Backend, Philox, Runtime, RuntimeOptions};
use op2_life::{step_by_hand_parallel, Life};

mod support;

const GROUP: &str = "life_step";
/// Threads of every version.
const THREADS: usize = 2;
/// The seed of the start.
const SEED: u64 = 14;
/// The fraction of cells alive at the start.
const DENSITY: f64 = 0.3;
/// Bytes a step moves per cell: state read, next written (by hand, and on
/// native backends, which compute the stencil's neighbours).
const HAND_BYTES: u64 = 4 + 4;
/// Bytes a step of generated code moves per cell: as by hand, plus the
/// stencil's table (8 entries of 4 bytes).
const TABLE_BYTES: u64 = HAND_BYTES + 8 * 4;
/// The DSL runs: (name, backend, bytes per cell).
const DSL: [(&str, Backend, u64); 2] = [
    ("dsl_rayon_2", Backend::Rayon, HAND_BYTES),
    ("dsl_jit_2", Backend::Jit, TABLE_BYTES),
];
const HAND: &str = "handwritten_rayon_2";

fn board() -> (usize, usize) {
    support::size_from_env("LIFE_BENCH_SIZE", (4096, 4096))
}

/// The live cells (x, y) of the start: each alive with probability
/// [`DENSITY`], drawn in cell order from one Philox stream.
fn start(width: usize, height: usize) -> Vec<(usize, usize)> {
    let mut rng = Philox::new(SEED, 0, 0);
    (0..width * height)
        .filter(|_| rng.bernoulli(DENSITY))
        .map(|c| (c % width, c / width))
        .collect()
}

/// Times the versions; returns the names of those run.
fn bench(c: &mut Criterion) -> Vec<&'static str> {
    let (w, h) = board();
    let cells = (w * h) as u64;
    let alive = start(w, h);
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(10).measurement_time(Duration::from_secs(5));

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool");
    let mut current = vec![0i32; w * h];
    for &(x, y) in &alive {
        current[y * w + x] = 1;
    }
    let mut next = vec![0i32; w * h];
    pool.install(|| step_by_hand_parallel(w, h, &current, &mut next));
    let first = next.clone();
    group.throughput(Throughput::BytesDecimal(HAND_BYTES * cells));
    // Names are pushed only when criterion's filter lets their closure run.
    let mut ran = Vec::new();
    group.bench_function(HAND, |b| {
        ran.push(HAND);
        b.iter(|| {
            pool.install(|| step_by_hand_parallel(w, h, &current, &mut next));
            std::mem::swap(&mut current, &mut next);
            black_box(&current);
        })
    });
    drop((current, next));

    // The DSL on the threaded backends compiled into this build.
    for (name, backend, bytes) in DSL {
        group.throughput(Throughput::BytesDecimal(bytes * cells));
        let rt = match Runtime::with_options(backend, RuntimeOptions::default().threads(THREADS)) {
            Ok(rt) => rt,
            Err(e) => {
                println!("{name}: skipped: {e}");
                continue;
            }
        };
        let mut life = Life::new(w, h, &alive).expect("the board");
        life.step(&rt).expect("warm-up (compiles jit loops)");
        assert!(
            life.states() == first,
            "{name}: the first step differs from the hand-written one"
        );
        group.bench_function(name, |b| {
            ran.push(name);
            b.iter(|| life.step(&rt).expect("loop runs"))
        });
    }
    ran.dedup();
    group.finish();
    ran
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let ran = bench(&mut c);
    c.final_summary();
    let (w, h) = board();
    let cells = (w * h) as f64;
    let Some(hand) = support::mean_ns(GROUP, HAND).filter(|_| ran.contains(&HAND)) else {
        return;
    };
    println!(
        "\nlife {w}x{h} ({cells} cells), {THREADS} threads. Bytes counted per step: state read once and next \
         written once ({HAND_BYTES} B/cell, {:.1} MB; by hand and on rayon, which computes the stencil); \
         generated code also reads the stencil's 8-entry i32 table ({TABLE_BYTES} B/cell, {:.1} MB).",
        HAND_BYTES as f64 * cells / 1e6,
        TABLE_BYTES as f64 * cells / 1e6,
    );
    let line = |name: &str, ns: f64, bytes: u64| {
        format!(
            "life {w}x{h}: {name:<20} {:>9.3} ms/step {:>7.2} GB/s",
            ns / 1e6,
            bytes as f64 * cells / ns
        )
    };
    println!("{}", line(HAND, hand, HAND_BYTES));
    for (name, _, bytes) in DSL.into_iter().filter(|(name, ..)| ran.contains(name)) {
        if let Some(t) = support::mean_ns(GROUP, name) {
            println!("{}, ratio {name}/{HAND} = {:.3}", line(name, t, bytes), t / hand);
        }
    }
}
