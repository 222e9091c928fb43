//! The Airfoil benchmark (DESIGN.md section 9).
//!
//! ```text
//! cargo run --release --example airfoil -- [--mesh IxJ | --grid FILE] [--write-grid FILE]
//!                                          [--iterations N] [--backend NAME]
//! ```
//!
//! Prints `  <iter>  <rms>` every 100 iterations; on the 720 000-cell mesh
//! after 1000 iterations, PASSED or FAILED against the reference; then the
//! per-loop timing table.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use op2::{Backend, Runtime, RuntimeOptions};
use op2_airfoil::{generate, grid_file, matches_reference, AirfoilDsl, AirfoilError, Constants, REFERENCE_RMS_1000};

const USAGE: &str = "usage: airfoil [--mesh IxJ | --grid FILE] [--write-grid FILE] [--iterations N] [--backend NAME]
               [--threads N] [--block-size N]";

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
            "--block-size" => {
                let n = value
                    .parse()
                    .map_err(|_| format!("--block-size expects a number, got `{value}`"))?;
                o.runtime = o.runtime.block_size(n);
            }
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        }
    }
    Ok(o)
}

fn run(o: &Options) -> Result<bool, AirfoilError> {
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
    println!(
        "airfoil: backend {}, {} nodes, {} cells, {} edges, {} boundary edges (mesh ready in {:.2} s)",
        rt.backend(),
        mesh.nnode(),
        mesh.ncell(),
        mesh.nedge(),
        mesh.nbedge(),
        start.elapsed().as_secs_f64()
    );
    let airfoil = AirfoilDsl::new(&mesh, &Constants::default())?;
    let progress = std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut rms_1000 = None;
    for iter in 1..=o.iterations {
        let rms = airfoil.iteration(&rt)?;
        if iter % 100 == 0 {
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
    let seconds = start.elapsed().as_secs_f64();
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
    println!("{}", rt.timing_summary());
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
    match run(&options) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("airfoil: error: {e}");
            ExitCode::FAILURE
        }
    }
}
