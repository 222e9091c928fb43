//! An SIR epidemic on a network, on any op2 backend.
//!
//! ```text
//! cargo run --release --example sir -- --graph SPEC --seed-node ID --p-infect P
//!     --p-recover Q --ticks T [--seed S] [--runs R [--threads N] [--csv FILE]]
//!     [--backend NAME]
//! ```
//!
//! SPEC: `grid:WxH` (4-neighbour, not periodic, node id y*W + x), `complete:N`,
//! `edges:FILE` (SNAP-style edge list), `mtx:FILE` (Matrix Market),
//! `ba:N,M` (Barabási–Albert), `ws:N,K,BETA` (Watts–Strogatz). Edges are
//! undirected; repeated edges count once and self loops are dropped.
//!
//! Prints `<tick> <S> <I> <R>` for ticks 0..T, stopping early when no node is
//! infected. With `--runs R`, runs R independent epidemics (seeds S, S+1, ...)
//! as an ensemble (`op2::model::Ensemble`: `--threads N` workers, and under
//! `mpirun` each rank a share of the runs) and prints `final <ever infected>
//! <runs>` for each distinct final size, smallest first. `--p-infect` and
//! `--p-recover` then take lists (`0.02,0.05,0.1`): a sweep over every pair,
//! R runs each, its distributions printed pair by pair after a line
//! `p-infect P p-recover Q`; `--csv FILE` writes one row per run,
//! `p_infect,p_recover,seed,final_size`. Every run's result is the same
//! whatever thread or rank ran it.
//!
//! Built with `--features mpi` and started with `mpirun -n P`, a single
//! epidemic's nodes are partitioned over the ranks; rank 0 prints. Every rank count and backend
//! prints the same lines for the same seed.
//!
//! The epidemic runs on op2's model layer (`op2_sir::network_sir`); the
//! tests compare it with the hand-wired `op2_sir::Sir`.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use op2::model::{Ensemble, RunPlan, Simulation};
use op2::{Backend, Runtime};
use op2_graph::GraphSpec;
use op2_sir::{network_counts, network_sir, Counts};

/// The command line.
#[derive(Parser, Debug)]
#[command(name = "sir", about = "An SIR epidemic on a network, on op2")]
struct Cli {
    /// The network: grid:WxH, complete:N, edges:FILE, mtx:FILE, ba:N,M or ws:N,K,BETA.
    #[arg(long, value_name = "SPEC")]
    graph: String,
    /// The id of the node infected at tick 0.
    #[arg(long, value_name = "ID")]
    seed_node: u64,
    /// Probability of transmission along an edge per tick (with --runs, a
    /// comma-separated list to sweep).
    #[arg(long, value_name = "P", value_parser = parse_list, allow_hyphen_values = true)]
    p_infect: List,
    /// Probability of recovery per tick (with --runs, a list to sweep).
    #[arg(long, value_name = "Q", value_parser = parse_list, allow_hyphen_values = true)]
    p_recover: List,
    /// Ticks to run.
    #[arg(long, value_name = "T")]
    ticks: u32,
    /// Seed of the random streams (and of random graphs).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Independent runs (seeds S, S+1, ...): print the final sizes only.
    #[arg(long, value_name = "R", value_parser = clap::value_parser!(u64).range(1..))]
    runs: Option<u64>,
    /// Worker threads of an ensemble (--runs).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "runs")]
    threads: usize,
    /// One CSV row per run of an ensemble: p_infect,p_recover,seed,final_size.
    #[arg(long, value_name = "FILE", requires = "runs")]
    csv: Option<PathBuf>,
    /// Backend (seq, rayon, jit, opencl, cuda); default: OP2_BACKEND, else
    /// rayon where it is built in, else seq.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
}

/// Numbers given as a comma-separated list.
#[derive(Clone, Debug)]
struct List(Vec<f64>);

fn parse_list(value: &str) -> Result<List, String> {
    let values = value
        .split(',')
        .map(|v| v.trim().parse::<f64>().map_err(|_| format!("{v:?} is not a number")));
    values.collect::<Result<_, _>>().map(List)
}

/// The network as node ids and undirected edges between them.
struct Network {
    ids: Vec<u64>,
    edges: Vec<(u64, u64)>,
}

fn network(cli: &Cli) -> Result<Network, String> {
    let spec = GraphSpec::parse(&cli.graph).map_err(|e| e.to_string())?;
    let list = spec.build(cli.seed).map_err(|e| e.to_string())?;
    let ids: Vec<u64> = list.nodes().collect();
    // Undirected and simple: each pair once, no self loops.
    let mut seen = HashSet::new();
    let mut edges = Vec::new();
    for &(a, b) in list.edges() {
        if a != b && seen.insert((a.min(b), a.max(b))) {
            edges.push((a, b));
        }
    }
    Ok(Network { ids, edges })
}

/// One epidemic: the counts at ticks 0..=T (stopping when none is infected).
fn epidemic(
    cli: &Cli,
    net: &Network,
    (pq, seed): ((f64, f64), u64),
    rt: &Runtime,
    ctx: Option<&Ranks>,
    on_tick: &mut dyn FnMut(u64, Counts),
) -> op2::Result<Counts> {
    let mut sim = network_sir(rt, &net.ids, &net.edges, cli.seed_node, pq, seed)?;
    if let Some(ranks) = ctx {
        ranks.distribute(&mut sim)?;
    }
    sim.start()?;
    let mut counts = network_counts(&sim)?;
    on_tick(0, counts);
    while sim.steps() < u64::from(cli.ticks) && counts.infected > 0 {
        sim.step()?;
        counts = network_counts(&sim)?;
        on_tick(sim.steps(), counts);
    }
    Ok(counts)
}

/// The ranks of a distributed run (one process without `mpi`).
struct Ranks {
    #[cfg(feature = "mpi")]
    mpi: op2::mpi::Mpi,
}

impl Ranks {
    fn init() -> Result<Ranks, String> {
        Ok(Ranks {
            #[cfg(feature = "mpi")]
            mpi: op2::mpi::Mpi::init().map_err(|e| e.to_string())?,
        })
    }

    fn rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        return self.mpi.rank();
        #[cfg(not(feature = "mpi"))]
        0
    }

    /// Cuts the network among the ranks, if there are several.
    fn distribute(&self, sim: &mut Simulation<'_>) -> op2::Result<()> {
        #[cfg(feature = "mpi")]
        if self.mpi.size() > 1 {
            sim.distribute(&self.mpi, op2::mpi::DomainOptions::default())?;
        }
        let _ = sim;
        Ok(())
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let ranks = Ranks::init()?;
    let net = network(cli)?;
    if !net.ids.contains(&cli.seed_node) {
        return Err(format!(
            "--seed-node {}: the network has no node with this id",
            cli.seed_node
        ));
    }
    let backend = match &cli.backend {
        Some(name) => name.parse::<Backend>(),
        None => Backend::from_env(),
    }
    .map_err(|e| e.to_string())?;
    let rank0 = ranks.rank() == 0;
    let Some(runs) = cli.runs else {
        let (&[p], &[q]) = (&cli.p_infect.0[..], &cli.p_recover.0[..]) else {
            return Err("a single epidemic takes one --p-infect and one --p-recover (lists need --runs)".into());
        };
        let rt = Runtime::new(backend).map_err(|e| e.to_string())?;
        // Each tick's line as soon as it is computed.
        let mut print = |tick: u64, c: Counts| {
            if rank0 {
                println!("{tick} {} {} {}", c.susceptible, c.infected, c.recovered);
            }
        };
        epidemic(cli, &net, ((p, q), cli.seed), &rt, Some(&ranks), &mut print).map_err(|e| e.to_string())?;
        return Ok(());
    };
    // The sweep: every pair, `runs` seeds each.
    let mut plans = Vec::new();
    for &p in &cli.p_infect.0 {
        for &q in &cli.p_recover.0 {
            for r in 0..runs {
                let plan = RunPlan::new(cli.seed + r, u64::from(cli.ticks));
                plans.push(plan.with("p_infect", p).with("p_recover", q));
            }
        }
    }
    let ensemble = Ensemble::new(backend).threads(cli.threads);
    #[cfg(feature = "mpi")]
    let ensemble = ensemble.across(&ranks.mpi);
    let finals = ensemble
        .run(&plans, |_, plan, rt| {
            let pq = (plan.parameter("p_infect")?, plan.parameter("p_recover")?);
            let last = epidemic(cli, &net, (pq, plan.seed), rt, None, &mut |_, _| {})?;
            Ok((last.infected + last.recovered).to_string())
        })
        .map_err(|e| e.to_string())?;
    if !rank0 {
        return Ok(());
    }
    let sweep = cli.p_infect.0.len() * cli.p_recover.0.len() > 1;
    let mut csv = String::from("p_infect,p_recover,seed,final_size\n");
    for (pair, chunk) in plans.chunks(runs as usize).zip(finals.chunks(runs as usize)) {
        let (p, q) = (pair[0].parameters[0].1, pair[0].parameters[1].1);
        let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
        for (plan, size) in pair.iter().zip(chunk) {
            csv += &format!("{p},{q},{},{size}\n", plan.seed);
            *counts
                .entry(size.parse().map_err(|_| format!("run output {size:?}"))?)
                .or_default() += 1;
        }
        if sweep {
            println!("p-infect {p} p-recover {q}");
        }
        for (size, count) in counts {
            println!("final {size} {count}");
        }
    }
    if let Some(path) = &cli.csv {
        std::fs::write(path, csv).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sir: error: {e}");
            ExitCode::FAILURE
        }
    }
}
