//! One tick of the SIR epidemic on a Barabási–Albert network, in one run: the
//! hand-written parallel tick (`op2_sir::tick_by_hand_parallel`: each node pulls
//! its infected neighbours from a CSR, nodes on a rayon pool) and
//! `op2_sir::Sir::step` on `rayon` (and with `--features jit`, `jit`), 2 threads
//! each. Prints ms per tick, GB/s and the ratio DSL/hand-written.
//!
//! `cargo bench --bench sir` (`SIR_BENCH_NODES=NxM` changes the network; default
//! 1 000 000 nodes, M = 5, about 5 million edges). Both versions start from the
//! same state (the epidemic run 10 ticks from node 0, p = 0.05, q = 0.1) and are
//! checked to agree after one more tick before anything is timed.
//!
//! GB/s counts the bytes a tick must move, not what caches do: per node the
//! state read and the next written (4 + 4 B), the id (8 B) and the neighbour
//! list's offset (8 B by hand, `usize`; 4 B in the DSL's ragged map), per arc
//! (both directions of an edge) the neighbour's index and its state (4 + 4 B).
//! Both versions pull: the DSL's tick is one loop over the nodes reading the
//! neighbours' states through a ragged map.

use std::time::Duration;

use criterion::{Criterion, Throughput};
use op2::{Backend, Runtime, RuntimeOptions};
use op2_sir::{tick_by_hand_parallel, Csr, Sir};

mod support;

const GROUP: &str = "sir_tick";
const THREADS: usize = 2;
const SEED: u64 = 3;
const PQ: (f64, f64) = (0.05, 0.1);
/// Ticks run before timing, so that the epidemic is under way.
const WARM_TICKS: u32 = 10;
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

fn bench(c: &mut Criterion) -> (Vec<&'static str>, u64, u64) {
    let (n, m) = network();
    let list = op2_graph::generate::barabasi_albert(n, m, SEED).expect("the network");
    let edges: Vec<(usize, usize)> = list.edges().iter().map(|&(a, b)| (a as usize, b as usize)).collect();
    let ids: Vec<u64> = (0..n as u64).collect();
    let (nodes, arcs) = (n as u64, 2 * edges.len() as u64);
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool");

    // The start: WARM_TICKS ticks of the hand-written model.
    let csr = Csr::new(n, &edges);
    let mut state = vec![op2_sir::SUSCEPTIBLE; n];
    state[0] = op2_sir::INFECTED;
    let mut next = vec![0; n];
    for tick in 1..=WARM_TICKS {
        pool.install(|| tick_by_hand_parallel(&ids, &csr, &state, &mut next, PQ, SEED, tick - 1));
        std::mem::swap(&mut state, &mut next);
    }
    let start = state.clone();
    pool.install(|| tick_by_hand_parallel(&ids, &csr, &state, &mut next, PQ, SEED, WARM_TICKS));
    let first = next.clone();

    let mut ran = Vec::new();
    group.throughput(Throughput::BytesDecimal(hand_bytes(nodes, arcs)));
    let mut tick = WARM_TICKS;
    group.bench_function(HAND, |b| {
        ran.push(HAND);
        b.iter(|| {
            tick += 1;
            pool.install(|| tick_by_hand_parallel(&ids, &csr, &state, &mut next, PQ, SEED, tick - 1));
            std::mem::swap(&mut state, &mut next);
        })
    });

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
        for _ in 0..WARM_TICKS {
            sir.step(&rt).expect("warm-up (compiles jit loops)");
        }
        assert!(
            sir.states() == start,
            "{name}: the start differs from the hand-written one"
        );
        sir.step(&rt).expect("one tick");
        assert!(
            sir.states() == first,
            "{name}: a tick differs from the hand-written one"
        );
        group.bench_function(name, |b| {
            ran.push(name);
            b.iter(|| sir.step(&rt).expect("a tick"))
        });
    }
    ran.dedup();
    group.finish();
    (ran, nodes, arcs)
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let (ran, nodes, arcs) = bench(&mut c);
    c.final_summary();
    let Some(hand) = support::mean_ns(GROUP, HAND).filter(|_| ran.contains(&HAND)) else {
        return;
    };
    println!(
        "\nsir on a Barabasi-Albert network: {nodes} nodes, {arcs} arcs, {THREADS} threads. Bytes counted per \
         tick: by hand {:.1} MB, DSL {:.1} MB (see the file's docs).",
        hand_bytes(nodes, arcs) as f64 / 1e6,
        dsl_bytes(nodes, arcs) as f64 / 1e6
    );
    let line = |name: &str, ns: f64, bytes: u64| {
        format!(
            "sir: {name:<20} {:>9.3} ms/tick {:>7.2} GB/s",
            ns / 1e6,
            bytes as f64 / ns
        )
    };
    println!("{}", line(HAND, hand, hand_bytes(nodes, arcs)));
    for name in ran.into_iter().filter(|&name| name != HAND) {
        if let Some(t) = support::mean_ns(GROUP, name) {
            println!(
                "{}, ratio {name}/{HAND} = {:.3}",
                line(name, t, dsl_bytes(nodes, arcs)),
                t / hand
            );
        }
    }
}
