//! The Airfoil benchmark (docs/ARCHITECTURE.md, The Airfoil benchmark).
//!
//! ```text
//! cargo run --release --example airfoil -- [--mesh IxJ | --grid FILE] [--write-grid FILE]
//!                                          [--iterations N] [--backend NAME]
//! ```
//!
//! Prints `  <iter>  <rms>` every 100 iterations; on the 720 000-cell mesh
//! after 1000 iterations, PASSED or FAILED against the reference; then the
//! per-loop timing table.
//!
//! Built with `--features mpi` and started with `mpirun -n P`, the mesh is
//! partitioned over the ranks (rank 0 prints; loop times are the maximum over
//! ranks), and an error on any rank ends the whole run.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use op2::{Backend, Runtime, RuntimeOptions};
use op2_airfoil::{generate, grid_file, matches_reference, AirfoilDsl, AirfoilError, Constants, REFERENCE_RMS_1000};

const USAGE: &str = "usage: airfoil [--mesh IxJ | --grid FILE] [--write-grid FILE] [--iterations N] [--backend NAME]
               [--threads N] [--block-size N] [--overlap on|off] [--increments colouring|atomics]";

struct Options {
    mesh: (usize, usize),
    grid: Option<PathBuf>,
    write_grid: Option<PathBuf>,
    iterations: usize,
    backend: Option<String>,
    runtime: RuntimeOptions,
}

fn parse_options() -> Result<Options, String> {
    let mut o = Options {
        mesh: (400, 600),
        grid: None,
        write_grid: None,
        iterations: 1000,
        backend: None,
        runtime: RuntimeOptions::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Err(USAGE.to_string());
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--mesh" => {
                let parsed = value
                    .split_once('x')
                    .and_then(|(i, j)| Some((i.parse().ok()?, j.parse().ok()?)))
                    .filter(|&(i, j): &(usize, usize)| i >= 2 && j >= 2);
                o.mesh =
                    parsed.ok_or_else(|| format!("--mesh expects IxJ with I, J >= 2 (e.g. 400x600), got `{value}`"))?;
            }
            "--grid" => o.grid = Some(value.into()),
            "--write-grid" => o.write_grid = Some(value.into()),
            "--iterations" => {
                o.iterations = value
                    .parse()
                    .map_err(|_| format!("--iterations expects a number, got `{value}`"))?
            }
            "--backend" => o.backend = Some(value),
            "--threads" => {
                let n = value
                    .parse()
                    .map_err(|_| format!("--threads expects a number, got `{value}`"))?;
                o.runtime = o.runtime.threads(n);
            }
            "--overlap" => {
                let on = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("--overlap expects on or off, got `{value}`")),
                };
                o.runtime = o.runtime.overlap(on);
            }
            "--block-size" => {
                let n = value
                    .parse()
                    .map_err(|_| format!("--block-size expects a number, got `{value}`"))?;
                o.runtime = o.runtime.block_size(n);
            }
            "--increments" => {
                let i: op2::Increments = value.parse().map_err(|e| format!("--increments: {e}"))?;
                o.runtime = o.runtime.increments(i);
            }
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        }
    }
    Ok(o)
}

/// This process's place in the run: rank 0 of 1 without MPI.
struct Ranks {
    #[cfg(feature = "mpi")]
    mpi: op2::mpi::Mpi,
}

impl Ranks {
    fn init() -> Result<Ranks, AirfoilError> {
        Ok(Ranks {
            #[cfg(feature = "mpi")]
            mpi: op2::mpi::Mpi::init()?,
        })
    }

    fn rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        return self.mpi.rank();
        #[cfg(not(feature = "mpi"))]
        0
    }

    fn size(&self) -> usize {
        #[cfg(feature = "mpi")]
        return self.mpi.size();
        #[cfg(not(feature = "mpi"))]
        1
    }

    /// The slowest rank's value.
    fn max(&self, v: f64) -> f64 {
        #[cfg(feature = "mpi")]
        return self.mpi.max_f64(v);
        #[cfg(not(feature = "mpi"))]
        v
    }

    /// The local part of the state on this rank (the whole on one rank).
    fn local(&self, airfoil: AirfoilDsl) -> Result<AirfoilDsl, AirfoilError> {
        #[cfg(feature = "mpi")]
        if self.size() > 1 {
            return Ok(airfoil.distribute(&self.mpi)?);
        }
        Ok(airfoil)
    }

    /// Reports an error on this rank and ends the run. With MPI the message
    /// goes out in one write, every line prefixed `[rank r/size]`, so that
    /// the messages of several failing ranks never interleave mid-line; on
    /// more than one rank every rank is then aborted, so that none waits
    /// forever for this one.
    fn fail(&self, e: &AirfoilError) -> ExitCode {
        #[cfg(feature = "mpi")]
        {
            let message = format!("airfoil: error: {e}");
            if self.size() > 1 {
                self.mpi.abort_with(1, message);
            }
            self.mpi.eprintln(message);
        }
        #[cfg(not(feature = "mpi"))]
        eprintln!("airfoil: error on rank {}: {e}", self.rank());
        ExitCode::FAILURE
    }
}

fn run(o: &Options, ranks: &Ranks) -> Result<bool, AirfoilError> {
    let root = ranks.rank() == 0;
    let backend = match &o.backend {
        Some(name) => name.parse()?,
        None => Backend::from_env()?,
    };
    let rt = Runtime::with_options(backend, o.runtime.clone())?;
    let start = Instant::now();
    let mesh = match &o.grid {
        Some(path) => grid_file::read(path)?,
        None => generate(o.mesh.0, o.mesh.1),
    };
    if let Some(path) = &o.write_grid {
        grid_file::write(path, &mesh)?;
    }
    if root {
        println!(
            "airfoil: backend {}, {}, {} nodes, {} cells, {} edges, {} boundary edges (mesh ready in {:.2} s)",
            rt.backend(),
            match ranks.size() {
                1 => "1 rank".to_string(),
                n => format!("{n} ranks"),
            },
            mesh.nnode(),
            mesh.ncell(),
            mesh.nedge(),
            mesh.nbedge(),
            start.elapsed().as_secs_f64()
        );
    }
    let airfoil = ranks.local(AirfoilDsl::new(&mesh, &Constants::default())?)?;
    let progress = root && std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut rms_1000 = None;
    for iter in 1..=o.iterations {
        let rms = airfoil.iteration(&rt)?;
        if iter % 100 == 0 && root {
            if progress {
                eprint!("\r\x1b[K");
            }
            println!("  {iter}  {rms:.16e}");
        } else if progress && iter % 10 == 0 {
            eprint!("\r  iteration {iter}/{}", o.iterations);
        }
        if iter == 1000 {
            rms_1000 = Some(rms);
        }
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    let seconds = ranks.max(start.elapsed().as_secs_f64());
    let mut summary = rt.timing_summary();
    for row in &mut summary.loops {
        row.seconds = ranks.max(row.seconds);
        row.exchange_seconds = ranks.max(row.exchange_seconds);
        row.halo_bytes = ranks.max(row.halo_bytes as f64) as u64;
    }
    if !root {
        return Ok(true);
    }
    let mut passed = true;
    if mesh.ncell() == 720_000 {
        match rms_1000 {
            Some(rms) => {
                passed = matches_reference(rms);
                let verdict = if passed { "PASSED" } else { "FAILED" };
                let rel = (rms - REFERENCE_RMS_1000) / REFERENCE_RMS_1000;
                println!("{verdict}: rms {rms:.12e} at iteration 1000, reference {REFERENCE_RMS_1000:.12e}, relative difference {rel:.2e} (tolerance 1e-7)");
            }
            None => println!("reference check skipped: it needs 1000 iterations"),
        }
    }
    println!(
        "\n{} iterations in {:.3} s ({:.3} ms/iteration)\n",
        o.iterations,
        seconds,
        1e3 * seconds / o.iterations.max(1) as f64
    );
    println!("{summary}");
    if ranks.size() > 1 {
        let halo = |s: &op2::Set| {
            let r = s.regions();
            format!(
                "{} core, {} owned, {} exec halo, {} non-exec halo",
                r.core, r.owned, r.exec_halo, r.nonexec_halo
            )
        };
        println!(
            "\nrank 0 of {}: cells {}; nodes {}; edges {}",
            ranks.size(),
            halo(&airfoil.cells),
            halo(&airfoil.nodes),
            halo(&airfoil.edges)
        );
        println!(
            "rank 0 halo exchanges in {} iterations: q {}, adt {}, x {}, res {}",
            o.iterations,
            airfoil.q.halo_exchanges(),
            airfoil.adt.halo_exchanges(),
            airfoil.x.halo_exchanges(),
            airfoil.res.halo_exchanges()
        );
    }
    Ok(passed)
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    let ranks = match Ranks::init() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("airfoil: error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&options, &ranks) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => ranks.fail(&e),
    }
}
