//! Reading and distributing the 720 000-cell Airfoil mesh on the ranks of an
//! `mpirun`, two ways in one run: from an HDF5 grid read in blocks (each
//! rank its own rows through MPI-IO, PT-Scotch cutting the cells joined by
//! their edges, rows moved to their owners: `Mpi::distribute_blocks`), and
//! in memory (every rank generates the whole mesh, METIS cuts it on rank 0,
//! every rank keeps its part: `Mpi::distribute`). Prints the median and
//! fastest of each and the ratio blocks / in memory (below 1: the HDF5 path
//! is faster).
//!
//! ```text
//! cargo bench --features mpi,hdf5,ptscotch --bench mesh_distribution --no-run
//! mpirun -n 2 target/release/deps/mesh_distribution-* [REPEATS]
//! ```
//!
//! Not criterion: each rank would choose its own number of iterations, and
//! every iteration here is collective, so the ranks must agree on a fixed
//! count (REPEATS, default 5, alternating the two ways; the grid file is
//! written once, first, into the system's temporary directory, by rank 0).

use std::time::Instant;

use op2::mpi::{BlockPartitioner, Mpi};
use op2_airfoil::{generate, hdf5_grid, AirfoilDsl, Constants};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mpi = Mpi::init().expect("MPI starts");
    let repeats: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(5);
    let mut tag = [if mpi.rank() == 0 {
        u64::from(std::process::id())
    } else {
        0
    }];
    mpi.sum_u64(&mut tag);
    let path = std::env::temp_dir().join(format!("op2-bench-720k-{}.h5", tag[0]));
    let c = Constants::default();
    if mpi.rank() == 0 {
        let mesh = generate(400, 600);
        let q: Vec<f64> = c.qinf.iter().copied().cycle().take(4 * mesh.ncell()).collect();
        hdf5_grid::write(&path, &mesh, &c, &q).expect("the grid is written");
    }
    mpi.sum_u64(&mut [0]);
    let (mut blocks, mut memory) = (Vec::new(), Vec::new());
    let mut cells = [0u64; 2];
    for _ in 0..repeats {
        let start = Instant::now();
        let (mesh, constants) = hdf5_grid::read_blocks(&path, &mpi).expect("read in blocks");
        let mut d = mpi
            .distribute_blocks(mesh, "cells", &BlockPartitioner::PtScotchThrough("pecell".into()))
            .expect("distributed from blocks");
        let local = AirfoilDsl::from_blocks(&mut d, &constants).expect("Airfoil from blocks");
        blocks.push(mpi.max_f64(start.elapsed().as_secs_f64()));
        cells[0] = local.cells.size() as u64;

        let start = Instant::now();
        let global = AirfoilDsl::new(&generate(400, 600), &c).expect("Airfoil");
        let (local, _) = global.distribute(&mpi).expect("distributed in memory");
        memory.push(mpi.max_f64(start.elapsed().as_secs_f64()));
        cells[1] = local.cells.size() as u64;
    }
    mpi.sum_u64(&mut cells);
    if mpi.rank() == 0 {
        std::fs::remove_file(&path).ok();
        assert_eq!(cells, [720_000, 720_000], "both ways own every cell once");
        let (b, m) = (median(blocks.clone()), median(memory.clone()));
        let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "mesh_distribution on {} ranks, 720 000 cells, {repeats} repeats (seconds, slowest rank):",
            mpi.size()
        );
        println!(
            "  hdf5 blocks + PT-Scotch: median {b:.3}, fastest {:.3}",
            fastest(&blocks)
        );
        println!(
            "  generate + METIS:        median {m:.3}, fastest {:.3}",
            fastest(&memory)
        );
        println!("  ratio blocks / in memory: {:.2}", b / m);
    }
}
