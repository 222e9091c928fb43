//! The network SIR as an ensemble's run, shared by `tests/ensemble.rs` and
//! the distributed tests: a small random network, plans over seeds and
//! probabilities, and a run's output (its counts tick by tick).

use op2::model::RunPlan;
use op2::Runtime;
use op2_sir::{network_counts, network_sir};

/// 200 nodes (ids 3i + 2) and 500 random edges between them.
pub fn small_network() -> (Vec<u64>, Vec<(u64, u64)>) {
    let mut rng = op2::Philox::new(23, 0, 0);
    let ids: Vec<u64> = (0..200u64).map(|i| 3 * i + 2).collect();
    let mut edges = Vec::new();
    while edges.len() < 500 {
        let (a, b) = (rng.below(200) as usize, rng.below(200) as usize);
        if a != b {
            edges.push((ids[a], ids[b]));
        }
    }
    (ids, edges)
}

/// `n` plans: seeds 1.., 20 to 40 ticks, probabilities over a small grid.
pub fn plans(n: usize) -> Vec<RunPlan> {
    (0..n)
        .map(|k| {
            RunPlan::new(1 + k as u64, 20 + (k % 21) as u64)
                .with("p_infect", [0.05, 0.1, 0.2, 0.4][k % 4])
                .with("p_recover", [0.1, 0.3][(k / 4) % 2])
        })
        .collect()
}

/// One run of `plan`: its counts after each tick, one line per tick.
pub fn epidemic_log(rt: &Runtime, ids: &[u64], edges: &[(u64, u64)], plan: &RunPlan) -> op2::Result<String> {
    let pq = (plan.parameter("p_infect")?, plan.parameter("p_recover")?);
    let mut sim = network_sir(rt, ids, edges, ids[0], pq, plan.seed)?;
    let mut log = String::new();
    sim.start()?;
    while sim.steps() < plan.steps {
        sim.step()?;
        let c = network_counts(&sim)?;
        log += &format!("{} {} {} {}\n", sim.steps(), c.susceptible, c.infected, c.recovered);
    }
    Ok(log)
}

/// Every plan's output as a lone run gives it, one after another on seq.
pub fn lone_logs(ids: &[u64], edges: &[(u64, u64)], plans: &[RunPlan]) -> Vec<String> {
    let seq = Runtime::new(op2::Backend::Seq).unwrap();
    plans
        .iter()
        .map(|p| epidemic_log(&seq, ids, edges, p).unwrap())
        .collect()
}
