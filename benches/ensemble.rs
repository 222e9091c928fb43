//! Ensembles' throughput: `ENSEMBLE_BENCH_RUNS` (default 1 000) runs of the
//! network SIR on a Barabási–Albert network of 2 000 nodes (3 edges each),
//! 100 ticks, p = 0.05, q = 0.1, seeds 1.., run by `op2::model::Ensemble`
//! on 2 worker threads, against the same runs one after another on one
//! thread, in the same run (three rounds, interleaved). Prints runs per
//! second and the ratio (the bar: at least 1.8 on 2 threads).
//! Both give the same final sizes (checked).
//!
//! `cargo bench --bench ensemble`

use std::time::Instant;

use op2::model::{Ensemble, RunPlan};
use op2::{Backend, Runtime};
use op2_graph::GraphSpec;
use op2_sir::{network_counts, network_sir};

mod support;

fn main() {
    let runs = support::number_from_env("ENSEMBLE_BENCH_RUNS", 1000);
    let list = GraphSpec::parse("ba:2000,3").expect("a graph").build(1).expect("built");
    let ids: Vec<u64> = list.nodes().collect();
    let edges: Vec<(u64, u64)> = list.edges().iter().copied().filter(|(a, b)| a != b).collect();
    let plans: Vec<RunPlan> = (1..=runs).map(|s| RunPlan::new(s, 100)).collect();
    let run = |plan: &RunPlan, rt: &Runtime| -> op2::Result<String> {
        let mut sim = network_sir(rt, &ids, &edges, ids[0], (0.05, 0.1), plan.seed)?;
        sim.start()?;
        while sim.steps() < plan.steps && network_counts(&sim)?.infected > 0 {
            sim.step()?;
        }
        let c = network_counts(&sim)?;
        Ok((c.infected + c.recovered).to_string())
    };
    println!("ensemble: {runs} SIR runs on ba:2000,3, 100 ticks, seq runtimes");
    println!("| round | one after another, 1 thread (runs/s) | ensemble, 2 threads (runs/s) | ratio |");
    println!("|---|---|---|---|");
    for round in 1..=3 {
        let t = Instant::now();
        let rt = Runtime::new(Backend::Seq).expect("seq");
        let alone: Vec<String> = plans.iter().map(|p| run(p, &rt).expect("a run")).collect();
        let one = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let together = Ensemble::new(Backend::Seq)
            .threads(2)
            .run(&plans, |_, p, rt| run(p, rt))
            .expect("the ensemble");
        let two = t.elapsed().as_secs_f64();
        assert!(together == alone, "the ensemble's runs are the lone runs");
        let rate = |s: f64| runs as f64 / s;
        println!("| {round} | {:.1} | {:.1} | {:.2} |", rate(one), rate(two), one / two);
    }
}
