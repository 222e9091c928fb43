//! The model layer's cost per step: Circles described on `op2::model` and
//! run by its `Simulation`, against the hand-wired `op2_circles::Circles`
//! (the same Set, Dats, list and loop wired by hand), in one run, on
//! `rayon` with 2 threads; then the same for the network SIR
//! (`op2_sir::network_sir` against `op2_sir::Sir`, on a Barabási–Albert
//! network, p = 0.05, q = 0.1). Each pair steps the same agents from the
//! same start and computes the same bits, so each timed step does the same
//! work; the two alternate step by step. Prints ms per step and the ratio
//! model/hand-wired (the bar: at most 1.05).
//!
//! `cargo bench --bench model` (`MODEL_BENCH_AGENTS=N`, default 1 000 000
//! circles at density 1; `MODEL_BENCH_NODES=N`, default 1 000 000 nodes of
//! 5 edges each; `MODEL_BENCH_STEPS=S`, default 40, after one untimed step
//! each). Under `mpirun -n P` (built with `--features mpi`) both are shared
//! among the ranks (`Circles::shared`, `Sir::distribute`,
//! `Simulation::distribute`) and rank 0 prints the same lines.

use std::time::{Duration, Instant};

use op2::{Backend, Runtime, RuntimeOptions};
use op2_circles::{box_side, circles, initial_positions, Circles, Params};
use op2_sir::{network_counts, network_sir, Sir};

const THREADS: usize = 2;
const SEED: u64 = 11;

mod support;

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read.
    let n = support::number_from_env("MODEL_BENCH_AGENTS", 1_000_000) as usize;
    let steps = support::number_from_env("MODEL_BENCH_STEPS", 40);
    #[cfg(feature = "mpi")]
    let mpi = op2::mpi::Mpi::init().expect("MPI");
    #[cfg(feature = "mpi")]
    let (rank, ranks) = (mpi.rank(), mpi.size());
    #[cfg(not(feature = "mpi"))]
    let (rank, ranks) = (0usize, 1usize);
    let rt = match Runtime::with_options(Backend::Rayon, RuntimeOptions::default().threads(THREADS)) {
        Ok(rt) => rt,
        Err(e) => {
            println!("model: skipped: {e}");
            return;
        }
    };
    let nodes = support::number_from_env("MODEL_BENCH_NODES", 1_000_000) as usize;
    #[cfg(feature = "mpi")]
    circles_cost(&rt, n, steps, rank, ranks, &mpi);
    #[cfg(not(feature = "mpi"))]
    circles_cost(&rt, n, steps, rank, ranks);
    #[cfg(feature = "mpi")]
    sir_cost(&rt, nodes, steps, rank, ranks, &mpi);
    #[cfg(not(feature = "mpi"))]
    sir_cost(&rt, nodes, steps, rank, ranks);
}

/// The time of `steps` steps of each version, stepped alternately after
/// one untimed step each (programs, first sort); `check` compares what the
/// two returned after each pair (step number from 1), outside the timing.
fn alternate<H, M>(
    steps: u64,
    mut hand: impl FnMut() -> H,
    mut model: impl FnMut() -> M,
    mut check: impl FnMut(H, M, u64),
) -> (Duration, Duration) {
    let (mut t_hand, mut t_model) = (Duration::ZERO, Duration::ZERO);
    for step in 0..=steps {
        let t = Instant::now();
        let h = hand();
        let between = Instant::now();
        let m = model();
        if step > 0 {
            t_hand += between - t;
            t_model += between.elapsed();
        }
        check(h, m, step + 1);
    }
    (t_hand, t_model)
}

/// Prints the ratio of the two ms per step, `what` naming them.
fn report(what: &str, t_hand: Duration, t_model: Duration, steps: u64) {
    let ms = |d: Duration| 1e3 * d.as_secs_f64() / steps.max(1) as f64;
    println!("model: {what}");
    println!("model: hand-wired   {:>9.3} ms/step", ms(t_hand));
    println!(
        "model: model layer  {:>9.3} ms/step, ratio model/hand-wired = {:.3}",
        ms(t_model),
        t_model.as_secs_f64() / t_hand.as_secs_f64()
    );
}

/// Circles: `n` agents, `steps` timed steps of each version.
fn circles_cost(
    rt: &Runtime,
    n: usize,
    steps: u64,
    rank: usize,
    ranks: usize,
    #[cfg(feature = "mpi")] mpi: &op2::mpi::Mpi,
) {
    let side = box_side(n, 1.0);
    let start = initial_positions(n, side, SEED);
    let p = Params::default();
    let ids: Vec<u64> = (rank..n).step_by(ranks).map(|i| i as u64).collect();
    let mine: Vec<[f32; 3]> = ids.iter().map(|&i| start[i as usize]).collect();
    #[cfg(feature = "mpi")]
    let mut hand = if ranks > 1 {
        Circles::shared(mpi, &start, side, p, Default::default()).expect("the hand-wired model")
    } else {
        Circles::new(&start, side, p).expect("the hand-wired model")
    };
    #[cfg(not(feature = "mpi"))]
    let mut hand = Circles::new(&start, side, p).expect("the hand-wired model");
    let mut sim = circles(rt, &ids, &mine, side, p).expect("the described model");
    #[cfg(feature = "mpi")]
    if ranks > 1 {
        sim.distribute(mpi, Default::default()).expect("a domain");
    }
    let (t_hand, t_model) = alternate(
        steps,
        || hand.step(rt).expect("a hand-wired step"),
        || sim.step().expect("a model step"),
        |(), (), _| {},
    );
    // The same bits: every agent here is where the hand-wired model has it.
    let pos = sim.variable::<f32>("circle", "pos").expect("positions").to_vec();
    let want = hand.positions();
    let here = sim.population("circle").expect("the circles").global_ids();
    for (&id, p) in here.iter().zip(pos.chunks_exact(3)) {
        assert_eq!(p, want[id as usize], "agent {id} differs from the hand-wired model");
    }
    if rank == 0 {
        let what = format!("circles {n} agents, {steps} steps on rayon ({THREADS} threads) x {ranks} ranks");
        report(&what, t_hand, t_model, steps);
    }
}

/// The network SIR: `n` nodes, `steps` timed ticks of each version.
fn sir_cost(
    rt: &Runtime,
    n: usize,
    steps: u64,
    rank: usize,
    ranks: usize,
    #[cfg(feature = "mpi")] mpi: &op2::mpi::Mpi,
) {
    let list = op2_graph::generate::barabasi_albert(n, 5, SEED).expect("the network");
    let by_id: Vec<(u64, u64)> = list.edges().to_vec();
    let edges: Vec<(usize, usize)> = by_id.iter().map(|&(a, b)| (a as usize, b as usize)).collect();
    let ids: Vec<u64> = (0..n as u64).collect();
    let pq = (0.05, 0.1);
    let hand = Sir::new(n, None, &edges, 0, pq, SEED).expect("the hand-wired model");
    #[cfg(feature = "mpi")]
    let mut hand = if ranks > 1 {
        hand.distribute(mpi).expect("a cut").0
    } else {
        hand
    };
    #[cfg(not(feature = "mpi"))]
    let mut hand = hand;
    let mut sim = network_sir(rt, &ids, &by_id, 0, pq, SEED).expect("the described model");
    #[cfg(feature = "mpi")]
    if ranks > 1 {
        sim.distribute(mpi, Default::default()).expect("a cut");
    }
    let (t_hand, t_model) = alternate(
        steps,
        || hand.step(rt).expect("a hand-wired tick"),
        || {
            sim.step().expect("a model tick");
            network_counts(&sim).expect("counts")
        },
        |want, got, tick| assert_eq!(got, want, "tick {tick}"),
    );
    if rank == 0 {
        let what = format!("network SIR {n} nodes, {steps} ticks on rayon ({THREADS} threads) x {ranks} ranks");
        report(&what, t_hand, t_model, steps);
    }
}
