//! One tick of the SIR epidemic on a Barabási–Albert network, in one run: the
//! hand-written parallel tick (`op2_sir::tick_by_hand_parallel`: each node pulls
//! its infected neighbours from a CSR, nodes on a rayon pool) and
//! `op2_sir::Sir::step` on `rayon` (and with `--features jit`, `jit`), 2 threads
//! each. Prints ms per tick, GB/s and the ratio DSL/hand-written.
//!
//! `cargo bench --bench sir` (`SIR_BENCH_NODES=NxM` changes the network; default
//! 1 000 000 nodes, M = 5, about 5 million edges). The epidemic starts at node
//! 0 with p = 0.05, q = 0.1, and one tick is timed at two phases: tick 11,
//! under way (about 80% of the nodes still susceptible), and tick 41, late
//! (about 8% susceptible, most recovered: a node that is not susceptible need
//! not look at its neighbours). Every iteration computes the same tick from the
//! same state, in every version; they are checked to agree on it before
//! anything is timed.
//!
//! GB/s counts the bytes a tick must move, not what caches do: per node the
//! state read and the next written (4 + 4 B), the id (8 B) and the neighbour
//! list's offset (8 B by hand, `usize`; 4 B in the DSL's ragged map), per arc
//! (both directions of an edge) the neighbour's index and its state (4 + 4 B).
//! That is what a tick moves when every node is susceptible; later ticks skip
//! the neighbours of the others, so their GB/s overstates the traffic (the
//! ratio is what compares). Both versions pull: the DSL's tick is one loop over
//! the nodes reading the neighbours' states through a ragged map, in place.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use op2::{Backend, Runtime, RuntimeOptions};
use op2_sir::{tick_by_hand_parallel, Csr, Sir};

mod support;

const GROUP: &str = "sir_tick";
const THREADS: usize = 2;
const SEED: u64 = 3;
const PQ: (f64, f64) = (0.05, 0.1);
/// The ticks timed are these plus one: the phases.
const PHASES: [u32; 2] = [10, 40];
const DSL: [(&str, Backend); 2] = [("dsl_rayon_2", Backend::Rayon), ("dsl_jit_2", Backend::Jit)];
const HAND: &str = "handwritten_rayon_2";

fn network() -> (usize, usize) {
    support::size_from_env("SIR_BENCH_NODES", (1_000_000, 5))
}

fn hand_bytes(nodes: u64, arcs: u64) -> u64 {
    nodes * (4 + 4 + 8 + 8) + arcs * (4 + 4)
}

fn dsl_bytes(nodes: u64, arcs: u64) -> u64 {
    nodes * (4 + 4 + 8 + 4) + arcs * (4 + 4)
}

/// A benchmark's name at a phase.
fn at(name: &str, phase: u32) -> String {
    format!("{name}_tick{}", phase + 1)
}

fn bench(c: &mut Criterion) -> (Vec<String>, u64, u64) {
    let (n, m) = network();
    let list = op2_graph::generate::barabasi_albert(n, m, SEED).expect("the network");
    let edges: Vec<(usize, usize)> = list.edges().iter().map(|&(a, b)| (a as usize, b as usize)).collect();
    let ids: Vec<u64> = (0..n as u64).collect();
    let (nodes, arcs) = (n as u64, 2 * edges.len() as u64);
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(10).measurement_time(Duration::from_secs(4));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool");
    let csr = Csr::new(n, &edges);
    let mut ran = Vec::new();

    // Each phase's start (the hand-written model run that many ticks) and
    // the tick after it.
    let mut state = vec![op2_sir::SUSCEPTIBLE; n];
    state[0] = op2_sir::INFECTED;
    let mut next = vec![0; n];
    let mut starts = Vec::new();
    for tick in 1..=PHASES[PHASES.len() - 1] {
        pool.install(|| tick_by_hand_parallel(&ids, &csr, &state, &mut next, PQ, SEED, tick - 1));
        std::mem::swap(&mut state, &mut next);
        if PHASES.contains(&tick) {
            pool.install(|| tick_by_hand_parallel(&ids, &csr, &state, &mut next, PQ, SEED, tick));
            starts.push((tick, state.clone(), next.clone()));
        }
    }

    group.throughput(Throughput::BytesDecimal(hand_bytes(nodes, arcs)));
    for (phase, start, _) in &starts {
        let name = at(HAND, *phase);
        group.bench_function(&name, |b| {
            b.iter(|| pool.install(|| tick_by_hand_parallel(&ids, &csr, start, &mut next, PQ, SEED, *phase)))
        });
        ran.push(name);
    }

    group.throughput(Throughput::BytesDecimal(dsl_bytes(nodes, arcs)));
    for (name, backend) in DSL {
        let rt = match Runtime::with_options(backend, RuntimeOptions::default().threads(THREADS)) {
            Ok(rt) => rt,
            Err(e) => {
                println!("{name}: skipped: {e}");
                continue;
            }
        };
        let mut sir = Sir::new(n, Some(ids.clone()), &edges, 0, PQ, SEED).expect("the model");
        for (phase, start, after) in &starts {
            sir.restart(start, *phase).expect("the phase's start");
            sir.step(&rt).expect("one tick (compiles jit loops)");
            assert!(
                sir.states() == *after,
                "{name}: tick {} differs from the hand-written one",
                phase + 1
            );
            let id = at(name, *phase);
            group.bench_function(&id, |b| {
                // Each iteration goes back to the start, untimed.
                b.iter_custom(|iters| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        sir.restart(start, *phase).expect("the phase's start");
                        let t = Instant::now();
                        sir.step(&rt).expect("a tick");
                        spent += t.elapsed();
                    }
                    spent
                })
            });
            ran.push(id);
        }
    }
    group.finish();
    (ran, nodes, arcs)
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let (ran, nodes, arcs) = bench(&mut c);
    c.final_summary();
    println!(
        "\nsir on a Barabasi-Albert network: {nodes} nodes, {arcs} arcs, {THREADS} threads. Bytes counted per \
         tick: by hand {:.1} MB, DSL {:.1} MB (see the file's docs).",
        hand_bytes(nodes, arcs) as f64 / 1e6,
        dsl_bytes(nodes, arcs) as f64 / 1e6
    );
    let line = |name: &str, ns: f64, bytes: u64| {
        format!(
            "sir: {name:<26} {:>9.3} ms/tick {:>7.2} GB/s",
            ns / 1e6,
            bytes as f64 / ns
        )
    };
    for phase in PHASES {
        let hand_name = at(HAND, phase);
        let Some(hand) = support::mean_ns(GROUP, &hand_name).filter(|_| ran.contains(&hand_name)) else {
            continue;
        };
        println!("{}", line(&hand_name, hand, hand_bytes(nodes, arcs)));
        for (name, _) in DSL {
            let name = at(name, phase);
            if let Some(t) = support::mean_ns(GROUP, &name).filter(|_| ran.contains(&name)) {
                println!(
                    "{}, ratio to hand-written = {:.3}",
                    line(&name, t, dsl_bytes(nodes, arcs)),
                    t / hand
                );
            }
        }
    }
}
