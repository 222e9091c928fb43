//! The Airfoil benchmark (docs/ARCHITECTURE.md, The Airfoil benchmark).
//!
//! ```text
//! cargo run --release --example airfoil -- [--mesh IxJ | --grid FILE] [--write-grid FILE] [--vtk FILE.vtu]
//!     [--write-solution FILE.h5] [--checkpoint DIR --checkpoint-every K] [--resume FILE.h5]
//!     [--iterations N] [--backend NAME] [--threads N] [--block-size N] [--renumber]
//!     [--overlap on|off] [--increments colouring|atomics|auto] [--floor]
//! ```
//!
//! (`--help` describes each flag.)
//!
//! Prints `  <iter>  <rms>` every 100 iterations; on the 720 000-cell mesh
//! after 1000 iterations, PASSED or FAILED against the reference; then the
//! time per iteration (all of them, and those after the first, whose plans
//! and compiles are one-off), the per-loop timing table and, with
//! `--floor`, the bandwidth floor and the fraction of it reached.
//!
//! Built with `--features mpi` and started with `mpirun -n P`, the mesh is
//! partitioned over the ranks (rank 0 prints; loop times are the maximum over
//! ranks), and an error on any rank ends the whole run.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use op2::{Backend, Error, Increments, Runtime, RuntimeOptions};
use op2_airfoil::{
    generate, gmsh_grid, grid_file, matches_reference, AirfoilDsl, AirfoilError, Constants, Mesh, REFERENCE_RMS_1000,
};

/// The command line. Every flag takes a value; an unusable value ends the run
/// with a message naming the flag (exit status 2).
#[derive(Parser, Debug)]
#[command(name = "airfoil", about = "The Airfoil benchmark on op2", args_override_self = true)]
struct Cli {
    /// Generate a mesh of I x J cells (I, J >= 2).
    #[arg(long, value_name = "IxJ", default_value = "400x600", value_parser = parse_mesh)]
    mesh: (usize, usize),
    /// Read the mesh from an OP2 grid file instead of generating one:
    /// `new_grid.dat` (text); OP2's HDF5 layout if the name ends in `.h5` or
    /// `.hdf5` (built with feature `hdf5`; its flow state `p_q` and constants
    /// are used where it has them, as OP2's Airfoil does); a Gmsh mesh if it
    /// ends in `.msh` (format 4.1: quadrilaterals, boundary lines in physical
    /// groups `wall` and `farfield`; the edges are derived from the cells).
    #[arg(long, value_name = "FILE", conflicts_with = "mesh")]
    grid: Option<PathBuf>,
    /// Write the mesh to a grid file, of the kind its name says as for
    /// --grid (HDF5 with the initial state and the constants, as OP2's
    /// `convert_mesh` writes it).
    #[arg(long, value_name = "FILE")]
    write_grid: Option<PathBuf>,
    /// After the iterations, write the mesh, the constants and the flow
    /// state reached as an OP2 HDF5 grid file (feature `hdf5`); `--grid` on
    /// it continues from there. Under MPI each rank writes its own rows.
    #[arg(long, value_name = "FILE.h5", value_parser = parse_hdf5_path)]
    write_solution: Option<PathBuf>,
    /// Write a checkpoint (the solution file with its iteration) to
    /// `DIR/step_<k>.h5` every K iterations, keeping the last two (feature
    /// `hdf5`; written to a temporary name and renamed when whole).
    #[arg(long, value_name = "DIR", requires = "checkpoint_every")]
    checkpoint: Option<PathBuf>,
    /// Iterations between checkpoints.
    #[arg(long, value_name = "K", requires = "checkpoint", value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_every: Option<u64>,
    /// Continue from a checkpoint: its mesh, constants and flow state, from
    /// its iteration on (--iterations counts from the start); under MPI the
    /// mesh is shared out as the run that wrote it did (blocks or whole),
    /// so that on as many ranks the run ends bit for bit where the
    /// uninterrupted one does.
    #[arg(long, value_name = "FILE.h5", value_parser = parse_hdf5_path, conflicts_with_all = ["grid", "mesh"])]
    resume: Option<PathBuf>,
    /// After the iterations, write the mesh and its flow (density, velocity
    /// and pressure per cell) as a VTK UnstructuredGrid file for ParaView;
    /// under MPI one piece per rank, `FILE_<rank>.vtu`, and their index
    /// `FILE.pvtu` (open that).
    #[arg(long, value_name = "FILE.vtu")]
    vtk: Option<PathBuf>,
    /// Number of iterations.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    iterations: usize,
    /// Backend (seq, rayon, jit, opencl, cuda); default: OP2_BACKEND, else
    /// rayon where it is built in, else seq.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
    /// Worker threads of the host backends; default: RAYON_NUM_THREADS (rayon) or
    /// OMP_NUM_THREADS (jit), else under mpirun the rank's share of its node's CPUs, else
    /// every CPU.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Elements per block of the host backends' plans.
    #[arg(long, value_name = "N")]
    block_size: Option<usize>,
    /// Overlap halo exchanges with computation (distributed runs).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    overlap: Option<bool>,
    /// How device backends apply increments through maps.
    #[arg(long, value_name = "colouring|atomics|auto", value_parser = parse_increments)]
    increments: Option<Increments>,
    /// How a run under mpirun shares the mesh out: `blocks` (an HDF5
    /// --grid only: each rank reads its own block of rows and the ranks
    /// partition the mesh together, with PT-Scotch where built with feature
    /// `ptscotch`, else by the file's order; no rank ever holds the whole
    /// mesh) or `whole` (every rank reads or generates the whole mesh, METIS
    /// partitions it). Default: blocks for an HDF5 grid, whole otherwise.
    #[arg(long, value_name = "blocks|whole", value_parser = parse_distribute)]
    distribute: Option<Distribute>,
    /// Renumber the mesh for locality before the run (`op2::Renumbering`:
    /// reverse Cuthill–McKee on the cells, the other sets after them, as
    /// OP2's `op_renumber`). The rms equals the unrenumbered run's to
    /// rounding. A checkpoint holds the mesh as its run had it, so a
    /// resumed run takes it as it is.
    #[arg(long, conflicts_with = "resume")]
    renumber: bool,
    /// After the run, measure this machine's memory bandwidth (a STREAM
    /// triad on the backend's threads) and print the bandwidth floor: an
    /// iteration's bytes (the loops' estimates) over that bandwidth, and
    /// the fraction of it the iterations after the first reached. Host
    /// backends (seq, rayon, jit) in one process. Give --threads to
    /// compare like with like: without it jit's OpenMP follows
    /// OMP_NUM_THREADS, the triad the cores here.
    #[arg(long)]
    floor: bool,
}

/// How the mesh is shared among ranks (`--distribute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Distribute {
    /// Each rank reads its block of the file; parallel partitioning.
    Blocks,
    /// Every rank holds the whole mesh; METIS.
    Whole,
}

fn parse_distribute(value: &str) -> Result<Distribute, String> {
    match value {
        "blocks" => Ok(Distribute::Blocks),
        "whole" => Ok(Distribute::Whole),
        _ => Err("expected blocks or whole".to_string()),
    }
}

/// `IxJ` with I, J >= 2.
fn parse_mesh(value: &str) -> Result<(usize, usize), String> {
    value
        .split_once('x')
        .and_then(|(i, j)| Some((i.parse().ok()?, j.parse().ok()?)))
        .filter(|&(i, j): &(usize, usize)| i >= 2 && j >= 2)
        .ok_or_else(|| "expected IxJ with I, J >= 2 (e.g. 400x600)".to_string())
}

/// A path ending in `.h5` or `.hdf5`.
fn parse_hdf5_path(value: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    match is_hdf5(&path) {
        true => Ok(path),
        false => Err("the solution is written as HDF5: expected FILE.h5 or FILE.hdf5".to_string()),
    }
}

fn parse_on_off(value: &str) -> Result<bool, String> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err("expected on or off".to_string()),
    }
}

fn parse_increments(value: &str) -> Result<Increments, String> {
    value.parse().map_err(|e| match e {
        Error::InvalidOption { reason, .. } => reason,
        e => e.to_string(),
    })
}

struct Options {
    mesh: (usize, usize),
    grid: Option<PathBuf>,
    write_grid: Option<PathBuf>,
    write_solution: Option<PathBuf>,
    checkpoint: Option<(PathBuf, u64)>,
    resume: Option<PathBuf>,
    vtk: Option<PathBuf>,
    iterations: usize,
    backend: Option<String>,
    runtime: RuntimeOptions,
    distribute: Option<Distribute>,
    renumber: bool,
    floor: bool,
}

impl From<Cli> for Options {
    fn from(cli: Cli) -> Options {
        let mut runtime = RuntimeOptions::default();
        if let Some(n) = cli.threads {
            runtime = runtime.threads(n);
        }
        if let Some(on) = cli.overlap {
            runtime = runtime.overlap(on);
        }
        if let Some(n) = cli.block_size {
            runtime = runtime.block_size(n);
        }
        if let Some(i) = cli.increments {
            runtime = runtime.increments(i);
        }
        Options {
            mesh: cli.mesh,
            // A checkpoint is a grid file with its flow state.
            grid: cli.grid.or(cli.resume.clone()),
            checkpoint: cli.checkpoint.zip(cli.checkpoint_every),
            resume: cli.resume,
            write_grid: cli.write_grid,
            write_solution: cli.write_solution,
            vtk: cli.vtk,
            iterations: cli.iterations,
            backend: cli.backend,
            runtime,
            distribute: cli.distribute,
            renumber: cli.renumber,
            floor: cli.floor,
        }
    }
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
    /// `counts` are the whole mesh's.
    fn local(&self, airfoil: AirfoilDsl, counts: [usize; 4], constants: Constants) -> Result<Local, AirfoilError> {
        #[allow(unused_mut)]
        let mut local = Local {
            airfoil,
            counts,
            constants,
            #[cfg(feature = "mpi")]
            distributed: None,
            #[cfg(all(feature = "mpi", feature = "hdf5"))]
            blocks: None,
        };
        #[cfg(feature = "mpi")]
        if self.size() > 1 {
            let (airfoil, d) = local.airfoil.distribute(&self.mpi)?;
            local.airfoil = airfoil;
            local.distributed = Some(d);
        }
        Ok(local)
    }

    /// This rank's part of the HDF5 grid at `path`, read in blocks and
    /// distributed with no rank holding the whole mesh.
    fn read_blocks(&self, path: &Path) -> Result<Local, AirfoilError> {
        #[cfg(all(feature = "mpi", feature = "hdf5"))]
        {
            // The Dats are read after the cut: never beside the partitioner's memory.
            let (mut d, constants) = op2_airfoil::hdf5_grid::distribute_blocks(path, &self.mpi, &block_partitioner())?;
            let airfoil = AirfoilDsl::from_blocks(&mut d, &constants)?;
            let counts = ["nodes", "cells", "edges", "bedges"].map(|s| d.global_size(s).unwrap_or(0));
            Ok(Local {
                airfoil,
                counts,
                constants,
                distributed: None,
                blocks: Some(d),
            })
        }
        #[cfg(not(all(feature = "mpi", feature = "hdf5")))]
        Err(AirfoilError::NotBuiltIn {
            feature: "mpi,hdf5",
            what: format!("reading {} in blocks (--distribute blocks)", path.display()),
        })
    }

    /// Each rank's peak resident memory (VmHWM, bytes), on every rank
    /// (collective); empty where the system does not say.
    fn peak_memory(&self) -> Vec<u64> {
        let mine = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map_or(0, |kb| kb * 1024);
        #[allow(unused_mut)]
        let mut all = vec![0u64; self.size()];
        all[self.rank()] = mine;
        #[cfg(feature = "mpi")]
        self.mpi.sum_u64(&mut all);
        if all.contains(&0) {
            return Vec::new();
        }
        all
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

/// How a grid read in blocks is cut: PT-Scotch on the cells joined by the
/// edges between them (`pecell`, as OP2's Airfoil partitions), else the
/// file's order.
#[cfg(all(feature = "mpi", feature = "hdf5"))]
fn block_partitioner() -> op2::mpi::BlockPartitioner {
    #[cfg(feature = "ptscotch")]
    return op2::mpi::BlockPartitioner::PtScotchThrough("pecell".into());
    #[cfg(not(feature = "ptscotch"))]
    op2::mpi::BlockPartitioner::FileOrder
}

/// This rank's Airfoil state and, on more than one rank, its distribution.
struct Local {
    airfoil: AirfoilDsl,
    /// Nodes, cells, edges and boundary edges in the whole mesh.
    counts: [usize; 4],
    /// The constants the mesh came with (written with the solution).
    #[cfg_attr(not(feature = "hdf5"), allow(dead_code))]
    constants: Constants,
    #[cfg(feature = "mpi")]
    distributed: Option<op2::mpi::Distributed>,
    /// The distribution from blocks.
    #[cfg(all(feature = "mpi", feature = "hdf5"))]
    blocks: Option<op2::mpi::BlockDistributed>,
}

impl Local {
    /// Writes the mesh, the constants and the flow state after `iter`
    /// iterations to `path` as a checkpoint in OP2's layout
    /// (`op2::hdf5::MeshCheckpoint`; collective: on more than one rank
    /// each writes its own rows). Whether this rank reports it.
    fn write_solution(&self, path: &Path, iter: usize, ranks: &Ranks) -> Result<bool, AirfoilError> {
        #[cfg(feature = "hdf5")]
        {
            #[cfg(feature = "mpi")]
            let blocks = self.blocks.is_some();
            #[cfg(not(feature = "mpi"))]
            let blocks = false;
            let checkpoint = op2_airfoil::hdf5_grid::checkpoint(&self.airfoil, &self.constants, iter as u64)
                .constant::<i32>(CHECKPOINT_BLOCKS, &[i32::from(blocks)]);
            #[cfg(feature = "mpi")]
            {
                let spread: Option<&dyn op2::mpi::SpreadMesh> = match (&self.distributed, &self.blocks) {
                    (Some(d), _) => Some(d),
                    (_, Some(d)) => Some(d),
                    _ => None,
                };
                if let Some(mesh) = spread {
                    checkpoint.write_across(path, mesh, &ranks.mpi)?;
                    return Ok(ranks.rank() == 0);
                }
            }
            checkpoint.write(path)?;
            Ok(ranks.rank() == 0)
        }
        #[cfg(not(feature = "hdf5"))]
        {
            let _ = (iter, ranks);
            Err(AirfoilError::NotBuiltIn {
                feature: "hdf5",
                what: format!("writing {}", path.display()),
            })
        }
    }

    /// Writes the solution after iteration `iter` as the checkpoint
    /// `DIR/step_<iter>.h5` (collective). Returns the file's path.
    fn write_checkpoint(&self, dir: &Path, iter: usize, ranks: &Ranks) -> Result<PathBuf, AirfoilError> {
        if ranks.rank() == 0 {
            std::fs::create_dir_all(dir)
                .map_err(|e| AirfoilError::Usage(format!("--checkpoint {}: {e}", dir.display())))?;
        }
        let path = dir.join(format!("step_{iter}.h5"));
        self.write_solution(&path, iter, ranks)?;
        Ok(path)
    }
}

/// Whether `path` names a Gmsh file (`.msh`).
fn is_gmsh(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("msh")
}

/// Whether `path` names an HDF5 file (`.h5`, `.hdf5`).
fn is_hdf5(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("h5" | "hdf5"))
}

/// The mesh, flow state and constants of an OP2 HDF5 grid file.
fn read_hdf5(path: &Path) -> Result<(Mesh, Option<Vec<f64>>, Constants), AirfoilError> {
    #[cfg(feature = "hdf5")]
    {
        let s = op2_airfoil::hdf5_grid::read(path)?;
        Ok((s.mesh, s.q, s.constants))
    }
    #[cfg(not(feature = "hdf5"))]
    Err(AirfoilError::NotBuiltIn {
        feature: "hdf5",
        what: format!("reading {}", path.display()),
    })
}

/// Writes an OP2 HDF5 grid file.
fn write_hdf5(path: &Path, mesh: &Mesh, constants: &Constants, q: &[f64]) -> Result<(), AirfoilError> {
    #[cfg(feature = "hdf5")]
    return op2_airfoil::hdf5_grid::write(path, mesh, constants, q);
    #[cfg(not(feature = "hdf5"))]
    {
        let _ = (mesh, constants, q);
        Err(AirfoilError::NotBuiltIn {
            feature: "hdf5",
            what: format!("writing {}", path.display()),
        })
    }
}

fn run(o: &Options, ranks: &Ranks) -> Result<bool, AirfoilError> {
    let root = ranks.rank() == 0;
    let backend = match &o.backend {
        Some(name) => name.parse()?,
        None => Backend::from_env()?,
    };
    if o.floor && ranks.size() > 1 {
        return Err(AirfoilError::Usage(format!(
            "--floor measures one process's memory bandwidth: run it without mpirun (here {} ranks)",
            ranks.size()
        )));
    }
    if o.floor && matches!(backend, Backend::OpenCl | Backend::Cuda) {
        return Err(AirfoilError::Usage(format!(
            "--floor measures the host's memory bandwidth: give a host backend (seq, rayon or jit), not {backend}"
        )));
    }
    let rt = Runtime::with_options(backend, o.runtime.clone())?;
    let start = Instant::now();
    // A resumed run shares the mesh out as the run that wrote it did, so
    // that its sums add in the same order.
    let (first, blocks_before) = match &o.resume {
        Some(path) => checkpoint_info(path)?,
        None => (0, false),
    };
    let distribute = match (o.distribute, &o.resume) {
        (None, Some(_)) => Some(if blocks_before {
            Distribute::Blocks
        } else {
            Distribute::Whole
        }),
        (d, _) => d,
    };
    let in_blocks = match (distribute, &o.grid) {
        (Some(Distribute::Blocks), Some(path)) if is_hdf5(path) => Some(path),
        (Some(Distribute::Blocks), _) => {
            return Err(AirfoilError::Usage(
                "--distribute blocks reads an HDF5 grid in blocks: give --grid FILE.h5".into(),
            ))
        }
        (None, Some(path)) if is_hdf5(path) && ranks.size() > 1 => Some(path),
        _ => None,
    };
    let local = match in_blocks {
        Some(path) if o.renumber => {
            return Err(AirfoilError::Usage(format!(
                "--renumber needs the whole mesh on a rank, but {} is read in blocks: add --distribute whole",
                path.display()
            )))
        }
        Some(path) if o.write_grid.is_some() => {
            return Err(AirfoilError::Usage(format!(
                "--write-grid needs the whole mesh on a rank, but {} is read in blocks: add --distribute whole",
                path.display()
            )))
        }
        Some(path) => ranks.read_blocks(path)?,
        None => whole_mesh(o, ranks)?,
    };
    if root {
        let [nodes, cells, edges, bedges] = local.counts;
        println!(
            "airfoil: backend {}, {}, {nodes} nodes, {cells} cells, {edges} edges, {bedges} boundary edges (mesh ready in {:.2} s{})",
            rt.backend(),
            match ranks.size() {
                1 => "1 rank".to_string(),
                n => format!("{n} ranks"),
            },
            start.elapsed().as_secs_f64(),
            if in_blocks.is_some() { ", read in blocks" } else { "" }
        );
    }
    let airfoil = &local.airfoil;
    let progress = root && std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut first_done = None;
    let mut rms_1000 = None;
    let mut checkpoints = std::collections::VecDeque::new();
    let mut checkpointing = std::time::Duration::ZERO;
    for iter in first + 1..=o.iterations {
        // The rms is read (from a device: downloaded) only when printed.
        airfoil.step(&rt)?;
        if first_done.is_none() {
            // Its one-off costs (plans, compiles, first touches) end here;
            // a device's queued work is waited for first.
            airfoil.rms();
            first_done = Some(Instant::now());
        }
        if iter % 100 == 0 && root {
            if progress {
                eprint!("\r\x1b[K");
            }
            println!("  {iter}  {:.16e}", airfoil.rms());
        } else if progress && iter % 10 == 0 {
            eprint!("\r  iteration {iter}/{}", o.iterations);
        }
        if iter == 1000 {
            rms_1000 = Some(airfoil.rms());
        }
        if let Some((dir, every)) = &o.checkpoint {
            if iter as u64 % every == 0 {
                // A resumed run counts the folder's earlier files among
                // the two it keeps.
                #[cfg(feature = "hdf5")]
                if checkpoints.is_empty() {
                    checkpoints.extend(op2::hdf5::checkpoints_before(dir, iter as u64));
                }
                let writing = Instant::now();
                checkpoints.push_back(local.write_checkpoint(dir, iter, ranks)?);
                while checkpoints.len() > 2 {
                    let old = checkpoints.pop_front().expect("three written");
                    if root {
                        std::fs::remove_file(&old)
                            .map_err(|e| AirfoilError::Usage(format!("{}: {e}", old.display())))?;
                    }
                }
                checkpointing += writing.elapsed();
            }
        }
    }
    // Waits for a device's queued work, so that the time counts all of it.
    airfoil.rms();
    let iterated = Iterated {
        start,
        end: Instant::now(),
        first_done,
        checkpointing,
        ran: o.iterations.saturating_sub(first),
        rms_1000,
    };
    run_end(o, ranks, &rt, &local, &iterated)
}

/// The iteration a checkpoint was written after, and whether its run read
/// the mesh in blocks.
fn checkpoint_info(path: &Path) -> Result<(usize, bool), AirfoilError> {
    #[cfg(feature = "hdf5")]
    {
        let checkpoint = op2::hdf5::MeshCheckpointFile::open(path)?;
        let file = checkpoint.file();
        let blocks = file.contains(CHECKPOINT_BLOCKS) && file.constant::<i32>(CHECKPOINT_BLOCKS)? == [1];
        Ok((checkpoint.step() as usize, blocks))
    }
    #[cfg(not(feature = "hdf5"))]
    Err(AirfoilError::NotBuiltIn {
        feature: "hdf5",
        what: format!("resuming from {}", path.display()),
    })
}

/// Where a checkpoint says whether its run read the mesh in blocks (1) or
/// whole (0): a resumed run shares it out the same way by default.
#[cfg(feature = "hdf5")]
const CHECKPOINT_BLOCKS: &str = "airfoil/blocks";

/// Every rank reads or generates the whole mesh, writes it if asked (rank
/// 0), and keeps its part.
fn whole_mesh(o: &Options, ranks: &Ranks) -> Result<Local, AirfoilError> {
    let root = ranks.rank() == 0;
    let (mesh, q0, constants) = match &o.grid {
        Some(path) if is_hdf5(path) => read_hdf5(path)?,
        Some(path) if is_gmsh(path) => (gmsh_grid::read(path)?, None, Constants::default()),
        Some(path) => (grid_file::read(path)?, None, Constants::default()),
        None => (generate(o.mesh.0, o.mesh.1), None, Constants::default()),
    };
    let (mesh, q0) = match o.renumber {
        false => (mesh, q0),
        true => {
            let (renumbered, cells) = mesh.renumbered()?;
            let q0 = q0.map(|q| {
                cells
                    .iter()
                    .flat_map(|&c| q[4 * c as usize..4 * c as usize + 4].to_vec())
                    .collect()
            });
            (renumbered, q0)
        }
    };
    let counts = [mesh.nnode(), mesh.ncell(), mesh.nedge(), mesh.nbedge()];
    // The mesh is kept only for the grid file written from it; otherwise
    // its tables move into the maps and Dats (peak memory: never held
    // twice).
    let keep = o.write_grid.is_some();
    let (airfoil, mesh) = if keep {
        (AirfoilDsl::new(&mesh, &constants)?, Some(mesh))
    } else {
        (AirfoilDsl::from_mesh(mesh, &constants)?, None)
    };
    if let Some(q0) = q0 {
        airfoil.q.try_data_mut()?.copy_from_slice(&q0);
    }
    // One writer: every rank has the whole mesh here.
    if let (Some(path), Some(mesh)) = (o.write_grid.as_ref().filter(|_| root), &mesh) {
        if is_hdf5(path) {
            write_hdf5(path, mesh, &constants, &airfoil.q.try_data_ro()?)?;
        } else if is_gmsh(path) {
            gmsh_grid::write(path, mesh)?;
        } else {
            grid_file::write(path, mesh)?;
        }
    }
    ranks.local(airfoil, counts, constants)
}

/// What the iterations leave for the report.
struct Iterated {
    /// When they began.
    start: Instant,
    /// When they ended (before any file is written).
    end: Instant,
    /// When the first of them ended (with its plans and compiles).
    first_done: Option<Instant>,
    /// Time spent writing checkpoints (all after the first iteration's
    /// end): not an iteration's work, so not in the steady time.
    checkpointing: std::time::Duration,
    /// How many this run made.
    ran: usize,
    /// The rms at iteration 1000, when the run reached it.
    rms_1000: Option<f64>,
}

/// After the iterations: VTK and solution files, the reference check and
/// the timings.
fn run_end(o: &Options, ranks: &Ranks, rt: &Runtime, local: &Local, it: &Iterated) -> Result<bool, AirfoilError> {
    let Iterated {
        start,
        end,
        first_done,
        checkpointing,
        ran,
        rms_1000,
    } = *it;
    let root = ranks.rank() == 0;
    let airfoil = &local.airfoil;
    let progress = root && std::io::stderr().is_terminal();
    if progress {
        eprint!("\r\x1b[K");
    }
    if let Some(path) = &o.vtk {
        match ranks.size() {
            1 => airfoil.write_vtk(path)?,
            n => {
                let index = airfoil.write_vtk_piece(path, ranks.rank(), n)?;
                if root {
                    println!("wrote {} ({n} pieces)", index.display());
                }
            }
        }
    }
    let seconds = ranks.max((end - start).as_secs_f64());
    // The iterations after the first: the steady state, one-off costs excluded.
    let steady_ms = first_done
        .filter(|_| ran > 1)
        .map(|t| 1e3 * ranks.max((end - t).saturating_sub(checkpointing).as_secs_f64()) / (ran - 1) as f64);
    let mut summary = rt.timing_summary();
    for row in &mut summary.loops {
        row.seconds = ranks.max(row.seconds);
        row.exchange_seconds = ranks.max(row.exchange_seconds);
        row.halo_bytes = ranks.max(row.halo_bytes as f64) as u64;
    }
    // After the timing: writing is not an iteration's work.
    if let Some(path) = &o.write_solution {
        if local.write_solution(path, o.iterations, ranks)? {
            println!(
                "wrote {} (the mesh and the flow state after {} iterations)",
                path.display(),
                o.iterations
            );
        }
    }
    let peaks = ranks.peak_memory();
    if !root {
        return Ok(true);
    }
    let mut passed = true;
    if local.counts[1] == 720_000 {
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
        "\n{ran} iterations in {:.3} s ({:.3} ms/iteration)",
        seconds,
        1e3 * seconds / ran.max(1) as f64
    );
    if let Some(ms) = steady_ms {
        println!("after the first iteration (plans, compiles): {ms:.3} ms/iteration");
    }
    println!();
    println!("{summary}");
    if o.floor {
        print_floor(rt, &summary, ran, steady_ms)?;
    }
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
            "rank 0 halo exchanges in {ran} iterations: q {}, adt {}, x {}, res {}",
            airfoil.q.halo_exchanges(),
            airfoil.adt.halo_exchanges(),
            airfoil.x.halo_exchanges(),
            airfoil.res.halo_exchanges()
        );
        if !peaks.is_empty() {
            let mib: Vec<String> = peaks
                .iter()
                .map(|&b| format!("{:.1}", b as f64 / (1 << 20) as f64))
                .collect();
            println!("peak resident memory per rank (MiB): {}", mib.join(", "));
        }
    }
    Ok(passed)
}

/// The bandwidth floor (`--floor`): a triad on the runtime's threads, an
/// iteration's bytes over its bandwidth, and the fraction of it reached
/// (no triad where there is no steady time to compare it with).
fn print_floor(
    rt: &Runtime,
    summary: &op2::TimingSummary,
    ran: usize,
    steady_ms: Option<f64>,
) -> Result<(), AirfoilError> {
    let Some(ms) = steady_ms else {
        println!("\nfloor: needs 2 iterations or more (the loops' bytes and the time after the first)");
        return Ok(());
    };
    let threads = op2::Workers::threads(rt);
    let triad = op2_airfoil::triad::stream_triad_gbytes_per_s(threads)
        .map_err(|e| AirfoilError::Usage(format!("--floor: measuring the memory bandwidth: {e}")))?;
    let bytes = summary.loops.iter().map(op2::LoopTiming::bytes).sum::<f64>() / ran.max(1) as f64;
    let floor_ms = bytes / triad / 1e6;
    println!(
        "\nfloor: a STREAM triad on {threads} thread{} streams {triad:.2} GB/s; an iteration moves {:.1} MB \
         (the loops' estimates): {floor_ms:.3} ms/iteration at that bandwidth",
        if threads == 1 { "" } else { "s" },
        bytes / 1e6
    );
    println!(
        "fraction of the floor reached (the floor over the time per iteration after the first): {:.3}",
        floor_ms / ms
    );
    Ok(())
}

fn main() -> ExitCode {
    let options = Options::from(Cli::parse());
    // op2 logs through `tracing`; `RUST_LOG=op2_backends=debug` shows JIT
    // compiles, cache hits, plans and halo exchanges on stderr. Unset, only
    // errors would print (op2 logs none), so the output is unchanged.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
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
