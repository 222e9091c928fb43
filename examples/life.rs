//! Conway's Game of Life (B3/S23) on a W x H torus, on any op2 backend.
//!
//! ```text
//! cargo run --release --example life -- --size WxH --pattern FILE --at X,Y
//!     --generations N [--every K] [--write FILE] [--backend NAME]
//! ```
//!
//! Places the pattern (`.cells` or `.rle`) with its top-left cell at (X, Y)
//! (x the column, y the row, growing downwards), then prints
//! `<generation> <population>` for generation 0 and every K generations up to
//! N. `--write` saves the final board as `.cells` (`.` dead, `O` alive,
//! exactly H lines of W characters).
//!
//! Built with `--features mpi` and started with `mpirun -n P`, the cells are
//! partitioned over the ranks; rank 0 prints and writes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use op2::{Backend, Runtime};
use op2_life::{Life, Pattern};

/// The command line.
#[derive(Parser, Debug)]
#[command(name = "life", about = "Conway's Game of Life (B3/S23) on a torus, on op2")]
struct Cli {
    /// The board: W columns by H rows.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    size: (usize, usize),
    /// The starting pattern, a `.cells` or `.rle` file.
    #[arg(long, value_name = "FILE")]
    pattern: PathBuf,
    /// Where the pattern's top-left cell goes: column X, row Y.
    #[arg(long, value_name = "X,Y", value_parser = parse_at, default_value = "0,0")]
    at: (usize, usize),
    /// Generations to compute.
    #[arg(long, value_name = "N")]
    generations: usize,
    /// Print the population every K generations.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Save the final board here, as `.cells`.
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
    /// Backend (seq, rayon, jit, opencl, cuda); default: OP2_BACKEND, else
    /// rayon where it is built in, else seq.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
}

fn parse_size(value: &str) -> Result<(usize, usize), String> {
    value
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        .filter(|&(w, h): &(usize, usize)| w >= 1 && h >= 1)
        .ok_or_else(|| "expected WxH with W, H >= 1 (e.g. 64x64)".to_string())
}

fn parse_at(value: &str) -> Result<(usize, usize), String> {
    value
        .split_once(',')
        .and_then(|(x, y)| Some((x.trim().parse().ok()?, y.trim().parse().ok()?)))
        .ok_or_else(|| "expected X,Y with non-negative integers (e.g. 10,20)".to_string())
}

/// The live cells of `pattern` placed at `at` on a `size` board.
fn place(pattern: &Pattern, at: (usize, usize), size: (usize, usize)) -> Result<Vec<(usize, usize)>, String> {
    let ((x0, y0), (w, h)) = (at, size);
    if x0 >= w || y0 >= h {
        return Err(format!("--at {x0},{y0} lies outside the {w}x{h} board"));
    }
    if pattern.width() > w || pattern.height() > h {
        return Err(format!(
            "the pattern ({}x{}) does not fit on the {w}x{h} board",
            pattern.width(),
            pattern.height()
        ));
    }
    // The board is a torus: a pattern near an edge wraps around it.
    Ok(pattern
        .alive()
        .iter()
        .map(|&(x, y)| ((x0 + x) % w, (y0 + y) % h))
        .collect())
}

fn run(cli: &Cli) -> Result<(), String> {
    #[cfg(feature = "mpi")]
    let mpi = op2::mpi::Mpi::init().map_err(|e| e.to_string())?;
    let pattern = Pattern::read(&cli.pattern).map_err(|e| e.to_string())?;
    let alive = place(&pattern, cli.at, cli.size)?;
    let (w, h) = cli.size;
    let backend = match &cli.backend {
        Some(name) => name.parse::<Backend>(),
        None => Backend::from_env(),
    }
    .map_err(|e| e.to_string())?;
    let rt = Runtime::new(backend).map_err(|e| e.to_string())?;
    let board = Life::new(w, h, &alive).map_err(|e| e.to_string())?;
    #[cfg(feature = "mpi")]
    let (mut life, distributed, rank) = if mpi.size() > 1 {
        let (life, d) = board.distribute(&mpi).map_err(|e| e.to_string())?;
        (life, Some(d), mpi.rank())
    } else {
        (board, None, 0)
    };
    #[cfg(not(feature = "mpi"))]
    let (mut life, rank) = (board, 0);
    let every = cli.every as usize;
    for generation in 0..=cli.generations {
        if generation > 0 {
            life.step(&rt).map_err(|e| e.to_string())?;
        }
        if generation % every == 0 {
            let population = life.population(&rt).map_err(|e| e.to_string())?;
            if rank == 0 {
                println!("{generation} {population}");
            }
        }
    }
    if let Some(path) = &cli.write {
        #[cfg(feature = "mpi")]
        let states = match &distributed {
            Some(d) => d.gather(life.current()).map_err(|e| e.to_string())?,
            None => Some(life.states()),
        };
        #[cfg(not(feature = "mpi"))]
        let states = Some(life.states());
        if let Some(states) = states {
            let board = Pattern::from_fn(w, h, |x, y| states[y * w + x] != 0);
            std::fs::write(path, board.to_cells()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("life: error: {e}");
            ExitCode::FAILURE
        }
    }
}
