//! Predators and prey on any op2 backend: births and deaths of mobile agents.
//!
//! ```text
//! cargo run --release --example predator_prey -- [--prey N] [--predators M] [--steps S]
//!     [--seed X] [--size W] [--prey-step A] [--predator-step B] [--sense R] [--kill K]
//!     [--crowd-radius C] [--crowd Q] [--prey-birth P] [--gain G] [--threshold T]
//!     [--energy E] [--vtk DIR --every K] [--csv DIR] [--backend NAME] [--timings] [--overlap]
//!     [--checkpoint DIR --checkpoint-every K] [--resume FILE.h5]
//! mpirun -n P target/release/examples/predator_prey ...   (built with --features mpi)
//! ```
//!
//! Prints `<step> <prey> <predators>` after every step (step 0 is the
//! start), then the milliseconds per step to stderr; the model is in
//! `op2_predator_prey`. The same seed gives the same lines on every backend
//! and thread count. `--vtk DIR --every K` writes both populations every K
//! steps for ParaView (`DIR/prey.pvd`, `DIR/predators.pvd`, with the
//! predators' energy); `--csv DIR` writes the final `DIR/prey.csv`
//! (`id,x,y`) and `DIR/predators.csv` (`id,x,y,energy`). `--timings` prints
//! the runtime's timing summary to stderr. `--checkpoint DIR
//! --checkpoint-every K` (feature `hdf5`) writes the run to
//! `DIR/step_<k>.h5` every K steps, keeping the last two; `--resume FILE`
//! continues from one with the rest of the command line (`--steps` counts
//! from the start: the resumed run prints the lines the whole run prints
//! from the checkpoint's step on).
//!
//! Built with `--features mpi` and started with `mpirun -n P`, both
//! populations are shared among the ranks by space
//! (`op2::mpi::AgentDomain`); rank 0 prints the counts of all ranks, the
//! same lines as one rank's, and the domain's traffic per step.
//! `--overlap` lets the prey that see no other rank's predator choose
//! their eater while the predators' ghost messages travel (the same
//! lines). `--vtk` writes a piece per rank and a `.pvtp` index per step;
//! `--csv` gathers the rows to rank 0.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use op2::model::Simulation;
use op2::output::{CsvTable, VtkSeries};
use op2::{Backend, Dat, Runtime, Set};
use op2_predator_prey::{predator_prey, Params};

/// The command line (defaults: `Params::default()`).
#[derive(Parser, Debug)]
#[command(name = "predator_prey", about = "Predators and prey on op2")]
struct Cli {
    /// Initial prey.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    prey: usize,
    /// Initial predators.
    #[arg(long, value_name = "M", default_value_t = 200)]
    predators: usize,
    /// Steps to run.
    #[arg(long, value_name = "S", default_value_t = 100)]
    steps: u64,
    /// Seed of the initial state and of the random streams.
    #[arg(long, value_name = "X", default_value_t = 1)]
    seed: u64,
    /// Side of the periodic square (a whole number up to 1024).
    #[arg(long, value_name = "W")]
    size: Option<f64>,
    /// Largest prey step per axis (a multiple of 1/16).
    #[arg(long, value_name = "A")]
    prey_step: Option<f64>,
    /// Largest predator step per axis (a multiple of 1/16).
    #[arg(long, value_name = "B")]
    predator_step: Option<f64>,
    /// Predators' sensing radius.
    #[arg(long, value_name = "R")]
    sense: Option<f64>,
    /// Predators' kill radius.
    #[arg(long, value_name = "K")]
    kill: Option<f64>,
    /// Prey crowding radius.
    #[arg(long, value_name = "C")]
    crowd_radius: Option<f64>,
    /// Prey within the crowding radius that stop births.
    #[arg(long, value_name = "Q")]
    crowd: Option<i32>,
    /// Prey birth probability per step.
    #[arg(long, value_name = "P")]
    prey_birth: Option<f64>,
    /// Energy per prey eaten.
    #[arg(long, value_name = "G")]
    gain: Option<i32>,
    /// Energy at which a predator splits.
    #[arg(long, value_name = "T")]
    threshold: Option<i32>,
    /// Largest initial predator energy.
    #[arg(long, value_name = "E")]
    energy: Option<i32>,
    /// Directory for VTK output (with --every).
    #[arg(long, value_name = "DIR", requires = "every")]
    vtk: Option<PathBuf>,
    /// Steps between VTK files.
    #[arg(long, value_name = "K", requires = "vtk", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    /// Directory for the final populations as CSV.
    #[arg(long, value_name = "DIR")]
    csv: Option<PathBuf>,
    /// Backend (seq, rayon, jit, opencl, cuda); default: OP2_BACKEND, else
    /// rayon where it is built in, else seq.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
    /// Print the runtime's timing summary to stderr (every rank's under MPI).
    #[arg(long)]
    timings: bool,
    /// Under MPI: the prey that see no other rank's predator choose while
    /// the predators' ghost messages travel.
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

impl Cli {
    fn params(&self) -> Params {
        let d = Params::default();
        Params {
            size: self.size.unwrap_or(d.size),
            prey_step: self.prey_step.unwrap_or(d.prey_step),
            predator_step: self.predator_step.unwrap_or(d.predator_step),
            sense: self.sense.unwrap_or(d.sense),
            kill: self.kill.unwrap_or(d.kill),
            crowd_radius: self.crowd_radius.unwrap_or(d.crowd_radius),
            prey_birth: self.prey_birth.unwrap_or(d.prey_birth),
            crowd: self.crowd.unwrap_or(d.crowd),
            gain: self.gain.unwrap_or(d.gain),
            threshold: self.threshold.unwrap_or(d.threshold),
            initial_energy: self.energy.unwrap_or(d.initial_energy),
        }
    }
}

/// The populations here and their variables.
struct Agents<'a> {
    prey: &'a Set,
    prey_pos: &'a Dat<f64>,
    predators: &'a Set,
    predator_pos: &'a Dat<f64>,
    energy: &'a Dat<i32>,
}

impl<'a> Agents<'a> {
    fn of(sim: &'a Simulation<'_>) -> op2::Result<Agents<'a>> {
        Ok(Agents {
            prey: sim.population("prey")?,
            prey_pos: sim.variable("prey", "pos")?,
            predators: sim.population("predator")?,
            predator_pos: sim.variable("predator", "pos")?,
            energy: sim.variable("predator", "energy")?,
        })
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let backend = match &cli.backend {
        Some(name) => name.parse::<Backend>(),
        None => Backend::from_env(),
    }
    .map_err(|e| e.to_string())?;
    #[cfg(feature = "mpi")]
    let mpi = op2::mpi::Mpi::init().map_err(|e| e.to_string())?;
    let rt = Runtime::new(backend).map_err(|e| e.to_string())?;
    #[cfg(feature = "mpi")]
    let (rank, ranks) = (mpi.rank(), mpi.size());
    #[cfg(not(feature = "mpi"))]
    let (rank, ranks) = (0usize, 1usize);
    #[cfg(not(feature = "hdf5"))]
    if cli.checkpoint.is_some() || cli.resume.is_some() {
        return Err("--checkpoint and --resume need op2 built with the `hdf5` feature".into());
    }
    let (params, prey, predators, seed) = (cli.params(), cli.prey, cli.predators, cli.seed);
    let mut sim = predator_prey(&rt, params, (prey, predators), seed, (rank, ranks)).map_err(|e| e.to_string())?;
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
    // Every rank's agents, printed by rank 0.
    let print_counts = |step: u64, sim: &Simulation| -> Result<(), String> {
        let a = Agents::of(sim).map_err(|e| e.to_string())?;
        #[allow(unused_mut)]
        let mut counts = [a.prey.size() as u64, a.predators.size() as u64];
        #[cfg(feature = "mpi")]
        mpi.sum_u64(&mut counts);
        if rank == 0 {
            println!("{step} {} {}", counts[0], counts[1]);
        }
        Ok(())
    };
    // A resumed run continues the series its checkpoint's run wrote.
    let mut series = match &cli.vtk {
        Some(dir) => Some((
            VtkSeries::in_pieces(dir, "prey", rank, ranks)
                .map_err(|e| e.to_string())?
                .resumed_at(sim.steps()),
            VtkSeries::in_pieces(dir, "predators", rank, ranks)
                .map_err(|e| e.to_string())?
                .resumed_at(sim.steps()),
        )),
        None => None,
    };
    let every = cli.every.unwrap_or(1);
    let mut write_vtk = |sim: &Simulation| -> Result<(), String> {
        if let Some((prey, preds)) = &mut series {
            let (step, a) = (sim.steps(), Agents::of(sim).map_err(|e| e.to_string())?);
            if step % every == 0 {
                prey.write(step, step as f64, a.prey_pos, &[])
                    .map_err(|e| e.to_string())?;
                preds
                    .write(step, step as f64, a.predator_pos, &[a.energy])
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    };
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
    print_counts(sim.steps(), &sim)?;
    write_vtk(&sim)?;
    let mut stepping = 0.0;
    let first = sim.steps();
    while sim.steps() < cli.steps {
        let t = Instant::now();
        sim.step().map_err(|e| e.to_string())?;
        stepping += t.elapsed().as_secs_f64();
        print_counts(sim.steps(), &sim)?;
        write_vtk(&sim)?;
        #[cfg(feature = "hdf5")]
        if let Some(c) = &mut checkpoints {
            c.after_step(&sim).map_err(|e| format!("--checkpoint: {e}"))?;
        }
    }
    let ran = sim.steps() - first;
    if rank == 0 {
        let on = match ranks {
            1 => String::new(),
            _ => format!(" x {ranks} ranks"),
        };
        eprintln!(
            "{prey} prey, {predators} predators, {ran} steps on {}{on}: {:.3} ms per step",
            rt.backend(),
            1e3 * stepping / ran.max(1) as f64
        );
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
    if let Some(dir) = &cli.csv {
        let a = Agents::of(&sim).map_err(|e| e.to_string())?;
        let tables = [
            ("prey.csv", CsvTable::new(a.prey).named(a.prey_pos, &["x", "y"])),
            (
                "predators.csv",
                CsvTable::new(a.predators)
                    .named(a.predator_pos, &["x", "y"])
                    .named(a.energy, &["energy"]),
            ),
        ];
        for (name, table) in tables {
            let mine = table.to_string().map_err(|e| e.to_string())?;
            // Every rank's rows, merged in id order by rank 0.
            #[cfg(feature = "mpi")]
            let parts = mpi.gather_bytes(mine.as_bytes()).map_err(|e| e.to_string())?;
            #[cfg(not(feature = "mpi"))]
            let parts = Some(vec![mine.into_bytes()]);
            if let Some(parts) = parts {
                let texts: Vec<&str> = parts.iter().map(|p| std::str::from_utf8(p).unwrap_or("")).collect();
                let text = op2::output::merge_by_id(&texts).map_err(|e| e.to_string())?;
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                let path = dir.join(name);
                std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
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
            eprintln!("predator_prey: {e}");
            ExitCode::FAILURE
        }
    }
}
