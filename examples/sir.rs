//! An SIR epidemic on a network, on any op2 backend.
//!
//! ```text
//! cargo run --release --example sir -- --graph SPEC --seed-node ID --p-infect P
//!     --p-recover Q --ticks T [--seed S] [--runs R] [--backend NAME]
//! ```
//!
//! SPEC: `grid:WxH` (4-neighbour, not periodic, node id y*W + x), `complete:N`,
//! `edges:FILE` (SNAP-style edge list), `mtx:FILE` (Matrix Market),
//! `ba:N,M` (Barabási–Albert), `ws:N,K,BETA` (Watts–Strogatz). Edges are
//! undirected; repeated edges count once and self loops are dropped.
//!
//! Prints `<tick> <S> <I> <R>` for ticks 0..T, stopping early when no node is
//! infected. With `--runs R`, runs R independent epidemics (seeds S, S+1, ...)
//! and prints `final <ever infected> <runs>` for each distinct final size,
//! smallest first.
//!
//! Built with `--features mpi` and started with `mpirun -n P`, the nodes are
//! partitioned over the ranks; rank 0 prints. Every rank count and backend
//! prints the same lines for the same seed.
//!
//! The epidemic runs on op2's model layer (`op2_sir::network_sir`); the
//! tests compare it with the hand-wired `op2_sir::Sir`.

use std::collections::{BTreeMap, HashSet};
use std::process::ExitCode;

use clap::Parser;
use op2::model::Simulation;
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
    /// Probability of transmission along an edge per tick.
    #[arg(long, value_name = "P")]
    p_infect: f64,
    /// Probability of recovery per tick.
    #[arg(long, value_name = "Q")]
    p_recover: f64,
    /// Ticks to run.
    #[arg(long, value_name = "T")]
    ticks: u32,
    /// Seed of the random streams (and of random graphs).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Independent runs (seeds S, S+1, ...): print the final sizes only.
    #[arg(long, value_name = "R", value_parser = clap::value_parser!(u64).range(1..))]
    runs: Option<u64>,
    /// Backend (seq, rayon, jit, opencl, cuda); default: OP2_BACKEND, else
    /// rayon where it is built in, else seq.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
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
    seed: u64,
    rt: &Runtime,
    ctx: &Ranks,
    on_tick: &mut dyn FnMut(u64, Counts),
) -> op2::Result<Counts> {
    let pq = (cli.p_infect, cli.p_recover);
    let mut sim = network_sir(rt, &net.ids, &net.edges, cli.seed_node, pq, seed)?;
    ctx.distribute(&mut sim)?;
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
    let rt = Runtime::new(backend).map_err(|e| e.to_string())?;
    let rank0 = ranks.rank() == 0;
    match cli.runs {
        None => {
            // Each tick's line as soon as it is computed.
            let mut print = |tick: u64, c: Counts| {
                if rank0 {
                    println!("{tick} {} {} {}", c.susceptible, c.infected, c.recovered);
                }
            };
            epidemic(cli, &net, cli.seed, &rt, &ranks, &mut print).map_err(|e| e.to_string())?;
        }
        Some(runs) => {
            let mut finals: BTreeMap<u64, u64> = BTreeMap::new();
            for r in 0..runs {
                let last = epidemic(cli, &net, cli.seed + r, &rt, &ranks, &mut |_, _| {}).map_err(|e| e.to_string())?;
                *finals.entry(last.infected + last.recovered).or_default() += 1;
            }
            if rank0 {
                for (size, count) in finals {
                    println!("final {size} {count}");
                }
            }
        }
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
