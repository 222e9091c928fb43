//! Boids (Reynolds' flocking, FLAME GPU's Boids example) on any op2
//! backend, described on op2's model layer (see `op2_boids`).
//!
//! ```text
//! cargo run --release --example boids -- --agents N --steps S [--seed X] [--density D]
//!     [--init FILE.csv] [--write FILE.csv] [--log FILE.csv --log-every K]
//!     [--vtk DIR --every K] [--backend NAME] [--timings]
//! mpirun -n P target/release/examples/boids ...   (built with --features mpi)
//! ```
//!
//! N boids start uniform in a periodic box of side `(N / D)^(1/3)` (D = 2
//! by default) with random headings, drawn from the counter-based streams
//! with seed X, or as the population file `--init` says (CSV or JSON lines,
//! as `--write` writes the boids at the end: read back, the same bits).
//! `--log` writes `step,count,mean_speed,polarisation` at
//! step 0 and every K steps (1 by default): the mean speed, and the length
//! of the mean unit velocity (0 for random headings, 1 for one flock); a
//! path ending in `.json` or `.jsonl` gets JSON lines instead. `--vtk DIR
//! --every K` writes the boids (positions, velocities) every K steps for
//! ParaView (`DIR/boids.pvd`; under MPI a piece per rank and a `.pvtp`
//! index per step; under MPI `--write` gathers the boids to rank 0, in id
//! order). Prints the milliseconds per step
//! to stderr and the last log row to stdout. Every backend and rank count
//! writes the same log, bit for bit. Built with `--features mpi` and
//! started with `mpirun -n P`, the boids are shared among the ranks by
//! space (`Simulation::distribute`).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use op2::model::{Agents, LogFormat, Simulation};
use op2::output::VtkSeries;
use op2::{Backend, Runtime};
use op2_boids::{boids, boids_model, box_side, flock_statistics, initial_state, speed_and_polarisation, Params};

/// The command line.
#[derive(Parser, Debug)]
#[command(name = "boids", about = "Boids (flocking) on op2")]
struct Cli {
    /// Number of boids (ignored with --init).
    #[arg(long, value_name = "N", default_value_t = 0)]
    agents: usize,
    /// Steps to run.
    #[arg(long, value_name = "S")]
    steps: u64,
    /// Seed of the initial state.
    #[arg(long, value_name = "X", default_value_t = 1)]
    seed: u64,
    /// Boids per unit volume.
    #[arg(long, value_name = "D", default_value_t = 2.0)]
    density: f64,
    /// The initial boids: a population file (`id,pos[0],...,vel[2]` CSV, or
    /// JSON lines), as --write writes; N is its number of lines.
    #[arg(long, value_name = "FILE.csv")]
    init: Option<PathBuf>,
    /// The boids at the end, as a population file (one rank).
    #[arg(long, value_name = "FILE.csv")]
    write: Option<PathBuf>,
    /// The step log: `step,count,mean_speed,polarisation` lines.
    #[arg(long, value_name = "FILE.csv")]
    log: Option<PathBuf>,
    /// Steps between log rows.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    log_every: u64,
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
    /// Print the runtime's timing summary to stderr at the end.
    #[arg(long)]
    timings: bool,
    /// Under MPI: flock the boids that read no other rank's message while
    /// the ghost messages travel, then the others (the same results).
    #[arg(long)]
    overlap: bool,
}

/// The log row of now, every rank's boids together.
fn row(sim: &Simulation, reduce: &dyn Fn(&mut [u64])) -> Result<String, String> {
    let mut stats = flock_statistics(sim).map_err(|e| e.to_string())?;
    reduce(&mut stats);
    let (speed, polarisation) = speed_and_polarisation(stats);
    Ok(format!("{},{},{speed},{polarisation}", sim.steps(), stats[0]))
}

fn run(cli: &Cli) -> Result<(), String> {
    #[cfg(feature = "mpi")]
    let mpi = op2::mpi::Mpi::init().map_err(|e| e.to_string())?;
    #[cfg(feature = "mpi")]
    let (rank, ranks) = (mpi.rank(), mpi.size());
    #[cfg(not(feature = "mpi"))]
    let (rank, ranks) = (0usize, 1usize);
    #[cfg(feature = "mpi")]
    let reduce = |v: &mut [u64]| mpi.sum_u64(v);
    #[cfg(not(feature = "mpi"))]
    let reduce = |_: &mut [u64]| {};
    if !(cli.density.is_finite() && cli.density > 0.0) {
        return Err("give a positive --density".into());
    }
    let backend = match &cli.backend {
        Some(name) => name.parse::<Backend>(),
        None => Backend::from_env(),
    }
    .map_err(|e| e.to_string())?;
    let rt = Runtime::new(backend).map_err(|e| e.to_string())?;
    let params = Params::default();
    // Every boid, then this rank's share: every `ranks`-th (from the first
    // step on, those in its box of the message grid).
    let (all, side) = match &cli.init {
        Some(path) => {
            let model = boids_model(1.0, params).map_err(|e| e.to_string())?;
            let all = Agents::read(&model, "boid", path).map_err(|e| e.to_string())?;
            let side = box_side(all.len(), cli.density);
            (all, side)
        }
        None => {
            let side = box_side(cli.agents, cli.density);
            let (pos, vel) = initial_state(cli.agents, side, cli.seed, &params);
            (Agents::new(cli.agents).set("pos", pos).set("vel", vel), side)
        }
    };
    if all.is_empty() {
        return Err("give --agents N > 0 or --init FILE".into());
    }
    let agents = all.len();
    let mut sim = boids(&rt, all.share(rank, ranks), side, params).map_err(|e| e.to_string())?;
    #[cfg(feature = "mpi")]
    if ranks > 1 {
        sim.distribute(&mpi, Default::default()).map_err(|e| e.to_string())?;
        sim.set_overlap(cli.overlap);
    }
    let mut log = match (&cli.log, rank) {
        (Some(path), 0) => {
            let mut f = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
            if LogFormat::of_path(path) == LogFormat::Csv {
                writeln!(f, "step,count,mean_speed,polarisation").map_err(|e| e.to_string())?;
            }
            Some((f, LogFormat::of_path(path)))
        }
        _ => None,
    };
    let mut last = String::new();
    let mut write_row = |sim: &Simulation| -> Result<(), String> {
        if cli.log.is_none() || sim.steps() % cli.log_every != 0 {
            return Ok(());
        }
        last = row(sim, &reduce)?;
        if let Some((f, format)) = &mut log {
            let line = match format {
                LogFormat::Csv => last.clone(),
                LogFormat::JsonLines => {
                    let v: Vec<&str> = last.split(',').collect();
                    format!(
                        "{{\"step\":{},\"count\":{},\"mean_speed\":{},\"polarisation\":{}}}",
                        v[0], v[1], v[2], v[3]
                    )
                }
            };
            writeln!(f, "{line}").map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    let mut series = match &cli.vtk {
        Some(dir) => Some(VtkSeries::in_pieces(dir, "boids", rank, ranks).map_err(|e| e.to_string())?),
        None => None,
    };
    let every = cli.every.unwrap_or(1);
    let write_vtk = |series: &mut Option<VtkSeries>, sim: &Simulation| -> Result<(), String> {
        if let Some(s) = series {
            if sim.steps() % every == 0 {
                let pos = sim.variable::<f32>("boid", "pos").map_err(|e| e.to_string())?;
                let vel = sim.variable::<f32>("boid", "vel").map_err(|e| e.to_string())?;
                s.write(sim.steps(), sim.steps() as f64, pos, &[vel])
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    };
    write_row(&sim)?;
    write_vtk(&mut series, &sim)?;
    let mut stepping = 0.0;
    for _ in 0..cli.steps {
        let t = Instant::now();
        sim.step().map_err(|e| e.to_string())?;
        stepping += t.elapsed().as_secs_f64();
        write_row(&sim)?;
        write_vtk(&mut series, &sim)?;
    }
    if rank == 0 {
        let on = if ranks > 1 {
            format!(" x {ranks} ranks")
        } else {
            String::new()
        };
        eprintln!(
            "{agents} boids, {} steps on {}{on}: {:.3} ms per step",
            cli.steps,
            rt.backend(),
            1e3 * stepping / cli.steps.max(1) as f64
        );
    }
    if cli.timings {
        #[cfg(feature = "mpi")]
        mpi.eprintln(rt.timing_summary());
        #[cfg(not(feature = "mpi"))]
        eprintln!("{}", rt.timing_summary());
    }
    if let Some(path) = &cli.write {
        // In id order, gathered by rank 0: the same file on any rank count.
        #[cfg(feature = "mpi")]
        sim.write_population_across("boid", path, &mpi)
            .map_err(|e| e.to_string())?;
        #[cfg(not(feature = "mpi"))]
        sim.write_population_by_id("boid", path).map_err(|e| e.to_string())?;
    }
    let last = match cli.log {
        Some(_) => last,
        None => row(&sim, &reduce)?,
    };
    if rank == 0 {
        println!("{last}");
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("boids: {e}");
            ExitCode::FAILURE
        }
    }
}
