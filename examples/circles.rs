//! FLAME GPU's Circles benchmark on any op2 backend.
//!
//! ```text
//! cargo run --release --example circles -- --agents N [--density D] --steps S [--seed X]
//!     [--init FILE.csv] [--write FILE.csv] [--vtk DIR --every K] [--backend NAME]
//!     [--sort-every K] [--report K] [--timings] [--overlap]
//!     [--checkpoint DIR --checkpoint-every K] [--resume FILE.h5]
//! mpirun -n P target/release/examples/circles ...   (built with --features mpi)
//! ```
//!
//! N agents start uniform in `[0, W)^3`, `W = (N / D)^(1/3)` (density D, 1 by
//! default), drawn from the counter-based random streams with seed X; or at
//! the `x,y,z` lines of `--init` (ids 0, 1, ... in file order; then N is the
//! number of lines). Each step every agent moves away from its neighbours
//! within radius 2 (see `op2_circles`). `--write` writes the final `id,x,y,z`
//! lines in id order with 9 significant digits; `--vtk DIR --every K` writes
//! the agents every K steps for ParaView (`DIR/circles.pvd`); `--sort-every
//! K` sorts the agents in memory by bin every K steps (10 by default, 0:
//! never; the results do not change, only the speed). Prints the
//! milliseconds per step (message build and move; output excluded); with
//! `--report K`, to stderr, and stdout gets a line every K steps (step 0
//! first): the step and a checksum of every agent's id and position bits,
//! the same on any backend that computes the same bits, and on any number
//! of ranks. `--timings` prints the runtime's timing summary (loops, list
//! builds, and under MPI the exchanges and the domain's balance) to stderr.
//!
//! `--checkpoint DIR --checkpoint-every K` (feature `hdf5`) writes the run
//! to `DIR/step_<k>.h5` every K steps, keeping the last two;
//! `--resume FILE` continues from such a file with the rest of the command
//! line (the same agents and density), `--steps` counting from the start of
//! the run: the resumed run ends where the uninterrupted one ends, bit for
//! bit, on any backend and number of ranks.
//!
//! The model is described on op2's model layer (`op2_circles::circles_model`)
//! and run by `op2::model::Simulation`; `op2_circles::Circles` is the same
//! model wired by hand, kept for the tests and benchmarks that compare them.
//!
//! Built with `--features mpi` and started with `mpirun -n P`, the agents
//! are shared among the ranks by space (`Simulation::distribute`): each
//! rank owns a box of the message grid, agents move to the rank of their
//! box before each step, and each rank receives the messages its agents
//! read from its neighbours' boxes. The positions come out bitwise as on
//! one rank; `--write` gathers them to rank 0, `--vtk` writes a piece per
//! rank and a `.pvtp` index per step. `--overlap` moves the
//! agents whose neighbourhood holds no other rank's message while the
//! ghost messages travel, then the others (the same positions). Rank 0 prints the
//! domain's traffic per step to stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use op2::model::Simulation;
use op2::output::VtkSeries;
use op2::{Backend, Dat, Runtime, Set};
use op2_circles::{box_side, circles, format_g9, initial_positions, read_positions, Params};

/// The command line.
#[derive(Parser, Debug)]
#[command(name = "circles", about = "FLAME GPU's Circles benchmark on op2")]
struct Cli {
    /// Number of agents (ignored with --init).
    #[arg(long, value_name = "N", default_value_t = 0)]
    agents: usize,
    /// Agents per unit volume: the box side is (N / D)^(1/3).
    #[arg(long, value_name = "D", default_value_t = 1.0)]
    density: f64,
    /// Steps to run.
    #[arg(long, value_name = "S")]
    steps: u64,
    /// Seed of the initial positions.
    #[arg(long, value_name = "X", default_value_t = 1)]
    seed: u64,
    /// Initial positions: `x,y,z` lines.
    #[arg(long, value_name = "FILE.csv")]
    init: Option<PathBuf>,
    /// Final positions: `id,x,y,z` lines in id order.
    #[arg(long, value_name = "FILE.csv")]
    write: Option<PathBuf>,
    /// Directory for VTK output (with --every).
    #[arg(long, value_name = "DIR", requires = "every")]
    vtk: Option<PathBuf>,
    /// Steps between VTK files.
    #[arg(long, value_name = "K", requires = "vtk", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    /// Backend (seq, rayon, jit, opencl, cuda); default: OP2_BACKEND, else
    /// rayon where it is built in, else seq.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
    /// Steps between sorts of the agents by bin in memory (0: never).
    #[arg(long, value_name = "K", default_value_t = Params::default().sort_every)]
    sort_every: u64,
    /// Steps between checksum lines on stdout (the timing goes to stderr).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    report: Option<u64>,
    /// Print the runtime's timing summary to stderr at the end (every
    /// rank's under MPI): loops, list builds, exchanges of agents and
    /// ghosts, and the domain's balance.
    #[arg(long)]
    timings: bool,
    /// Under MPI: move the agents that read no other rank's message while
    /// the ghost messages travel, then the others (the same positions).
    #[arg(long)]
    overlap: bool,
    /// Directory for checkpoints (with --checkpoint-every).
    #[arg(long, value_name = "DIR", requires = "checkpoint_every")]
    checkpoint: Option<PathBuf>,
    /// Steps between checkpoints (the last two are kept).
    #[arg(long, value_name = "K", requires = "checkpoint", value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_every: Option<u64>,
    /// A checkpoint to continue from.
    #[arg(long, value_name = "FILE.h5")]
    resume: Option<PathBuf>,
}

/// The agents here, their ids and positions (the model's `circle.id` and
/// `circle.pos`).
fn agents<'a>(sim: &'a Simulation<'_>) -> op2::Result<(&'a Set, &'a Dat<u32>, &'a Dat<f32>)> {
    Ok((
        sim.population("circle")?,
        sim.variable("circle", "id")?,
        sim.variable("circle", "pos")?,
    ))
}

/// An order-independent checksum of the agents here: a sum over agents of
/// a mix of the id and the position bits (40 bits each, so that sums over
/// 2^24 agents do not wrap).
fn checksum(set: &Set, pos: &Dat<f32>) -> u64 {
    let ids = set.global_ids();
    let pos = pos.to_vec();
    ids.iter()
        .zip(pos.chunks_exact(3))
        .map(|(&id, p)| {
            let mut h = id ^ 0x9e37_79b9_7f4a_7c15;
            for c in p {
                h = (h ^ u64::from(c.to_bits())).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                h ^= h >> 31;
            }
            h >> 24
        })
        .sum()
}

fn run(cli: &Cli) -> Result<(), String> {
    #[cfg(feature = "mpi")]
    let mpi = op2::mpi::Mpi::init().map_err(|e| e.to_string())?;
    #[cfg(feature = "mpi")]
    let (rank, ranks) = (mpi.rank(), mpi.size());
    #[cfg(not(feature = "mpi"))]
    let (rank, ranks) = (0usize, 1usize);
    #[cfg(not(feature = "hdf5"))]
    if cli.checkpoint.is_some() || cli.resume.is_some() {
        return Err("--checkpoint and --resume need op2 built with the `hdf5` feature".into());
    }
    if !(cli.density.is_finite() && cli.density > 0.0) {
        return Err(format!("--density must be positive, not {}", cli.density));
    }
    let positions = match &cli.init {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            read_positions(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => {
            if cli.agents == 0 {
                return Err("give --agents N (N > 0) or --init FILE.csv".into());
            }
            initial_positions(cli.agents, box_side(cli.agents, cli.density), cli.seed)
        }
    };
    if positions.is_empty() {
        return Err("no agents".into());
    }
    let side = box_side(positions.len(), cli.density);
    let backend = match &cli.backend {
        Some(name) => name.parse::<Backend>(),
        None => Backend::from_env(),
    }
    .map_err(|e| e.to_string())?;
    let rt = Runtime::new(backend).map_err(|e| e.to_string())?;
    let params = Params {
        sort_every: cli.sort_every,
        ..Params::default()
    };
    // This rank's share: every `ranks`-th agent (from the first step on,
    // those in its box of the message grid).
    let ids: Vec<u64> = (rank..positions.len()).step_by(ranks).map(|i| i as u64).collect();
    let mine: Vec<[f32; 3]> = ids.iter().map(|&i| positions[i as usize]).collect();
    let mut sim = circles(&rt, &ids, &mine, side, params).map_err(|e| e.to_string())?;
    #[cfg(feature = "hdf5")]
    if let Some(file) = &cli.resume {
        use op2::model::Checkpoints;
        #[cfg(feature = "mpi")]
        let resumed = sim.resume_across(file, &mpi);
        #[cfg(not(feature = "mpi"))]
        let resumed = sim.resume(file);
        resumed.map_err(|e| format!("--resume: {e}"))?;
    }
    #[cfg(feature = "mpi")]
    if ranks > 1 {
        sim.distribute(&mpi, Default::default()).map_err(|e| e.to_string())?;
        sim.set_overlap(cli.overlap);
    }
    // The checksum of every rank's agents, printed by rank 0.
    let report = |sim: &Simulation| -> Result<(), String> {
        let Some(every) = cli.report else { return Ok(()) };
        if sim.steps() % every != 0 {
            return Ok(());
        }
        let (set, _, pos) = agents(sim).map_err(|e| e.to_string())?;
        #[allow(unused_mut)]
        let mut sums = [set.size() as u64, checksum(set, pos)];
        #[cfg(feature = "mpi")]
        mpi.sum_u64(&mut sums);
        if rank == 0 {
            println!("step {}: {} agents, checksum {:016x}", sim.steps(), sums[0], sums[1]);
        }
        Ok(())
    };
    report(&sim)?;
    // A resumed run continues the series its checkpoint's run wrote.
    let mut series = match &cli.vtk {
        Some(dir) => Some(
            VtkSeries::in_pieces(dir, "circles", rank, ranks)
                .map_err(|e| e.to_string())?
                .resumed_at(sim.steps()),
        ),
        None => None,
    };
    let every = cli.every.unwrap_or(1);
    let write_vtk = |series: &mut Option<VtkSeries>, sim: &Simulation| -> Result<(), String> {
        if let Some(s) = series {
            if sim.steps() % every == 0 {
                let (_, ids, pos) = agents(sim).map_err(|e| e.to_string())?;
                s.write(sim.steps(), sim.steps() as f64, pos, &[ids])
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    };
    write_vtk(&mut series, &sim)?;
    let mut stepping = 0.0;
    let first = sim.steps();
    #[cfg(feature = "hdf5")]
    let mut checkpoints = match (&cli.checkpoint, cli.checkpoint_every) {
        (Some(dir), Some(k)) => {
            let c = op2::model::CheckpointEvery::new(dir, k);
            #[cfg(feature = "mpi")]
            let c = c.across(&mpi);
            Some(c)
        }
        _ => None,
    };
    while sim.steps() < cli.steps {
        let t = Instant::now();
        sim.step().map_err(|e| e.to_string())?;
        // The position comes back to the host only for output.
        stepping += t.elapsed().as_secs_f64();
        write_vtk(&mut series, &sim)?;
        report(&sim)?;
        #[cfg(feature = "hdf5")]
        if let Some(c) = &mut checkpoints {
            c.after_step(&sim).map_err(|e| format!("--checkpoint: {e}"))?;
        }
    }
    let ran = sim.steps() - first;
    let timing = format!(
        "{} agents, {} steps on {}{}: {:.3} ms per step",
        positions.len(),
        ran,
        rt.backend(),
        if ranks > 1 {
            format!(" x {ranks} ranks")
        } else {
            String::new()
        },
        1e3 * stepping / ran.max(1) as f64
    );
    if rank == 0 {
        if cli.report.is_some() {
            eprintln!("{timing}");
        } else {
            println!("{timing}");
        }
    }
    if cli.timings {
        #[cfg(feature = "mpi")]
        mpi.eprintln(rt.timing_summary());
        #[cfg(not(feature = "mpi"))]
        eprintln!("{}", rt.timing_summary());
    }
    #[cfg(feature = "mpi")]
    if let Some(d) = sim.domain() {
        mpi.eprintln(d.stats().per_step(ran));
    }
    if let Some(path) = &cli.write {
        // Every agent's id and position, gathered on rank 0.
        let (set, _, pos) = agents(&sim).map_err(|e| e.to_string())?;
        let mut records = Vec::with_capacity(set.size() * 20);
        for (&id, p) in set.global_ids().iter().zip(pos.to_vec().chunks_exact(3)) {
            records.extend_from_slice(&id.to_le_bytes());
            p.iter().for_each(|c| records.extend_from_slice(&c.to_le_bytes()));
        }
        #[cfg(feature = "mpi")]
        let gathered = mpi.gather_bytes(&records).map_err(|e| e.to_string())?;
        #[cfg(not(feature = "mpi"))]
        let gathered = Some(vec![records]);
        if let Some(parts) = gathered {
            let mut by_id = vec![None; positions.len()];
            for r in parts.iter().flat_map(|p| p.chunks_exact(20)) {
                let id = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
                let c = |k: usize| f32::from_le_bytes(r[8 + 4 * k..12 + 4 * k].try_into().expect("4 bytes"));
                let slot = by_id
                    .get_mut(id as usize)
                    .ok_or(format!("agent {id} is not one of the run's"))?;
                *slot = Some([c(0), c(1), c(2)]);
            }
            let mut text = String::with_capacity(positions.len() * 40);
            for (id, p) in by_id.iter().enumerate() {
                let p = p.ok_or(format!("agent {id} is missing from the run"))?;
                text += &format!("{id},{},{},{}\n", format_g9(p[0]), format_g9(p[1]), format_g9(p[2]));
            }
            std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("circles: {e}");
            ExitCode::FAILURE
        }
    }
}
