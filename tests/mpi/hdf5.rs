//! OP2's HDF5 files under mpirun: each rank reads its own block of rows
//! through MPI-IO, the blocks tiling every table; Airfoil from an HDF5 file,
//! distributed, runs as one rank does, and its solution gathered and written
//! reads back as one rank's.

use op2::hdf5::MeshFile;
use op2::mpi::{block_rows, Mpi};
use op2::{Backend, Runtime};
use op2_airfoil::hdf5_grid;
use op2_airfoil::AirfoilDsl;

use super::{airfoil_matches_one_rank, run_tag};

const OP2_WRITTEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/op2-hdf5/tests/data/airfoil_50x75_op2.h5");

/// Each rank reads its block of every map and Dat of the file OP2 wrote,
/// opened on all ranks at once; summed over ranks, the rows and their values
/// are the whole file's, read by one process.
pub fn blocks_read_in_parallel_tile_the_file(mpi: &Mpi) {
    let serial = MeshFile::open(OP2_WRITTEN).unwrap();
    let file = MeshFile::open_parallel(OP2_WRITTEN, mpi).unwrap();
    let (rank, size) = (mpi.rank() as u32, mpi.size() as u32);
    for name in ["pedge", "pecell", "pbedge", "pbecell", "pcell"] {
        let n = file.map_table(name).unwrap().rows;
        let mine = file.read_map_rows(name, block_rows(n, rank, size)).unwrap();
        let whole = serial.read_map_rows(name, 0..n).unwrap();
        // Rows, and values weighted by position (a block in the wrong place
        // or order changes the sum).
        let weigh = |rows: std::ops::Range<usize>, v: &[i32]| {
            let dim = v.len() / rows.len().max(1);
            v.iter()
                .enumerate()
                .map(|(k, &x)| (rows.start * dim + k + 1) as u64 * x as u64)
                .sum::<u64>()
        };
        let rows = block_rows(n, rank, size);
        let mut got = [rows.len() as u64, weigh(rows, &mine)];
        mpi.sum_u64(&mut got);
        assert_eq!(
            got,
            [n as u64, weigh(0..n, &whole)],
            "{name}: the blocks tile the table"
        );
    }
    let n = file.dat_table("p_x").unwrap().rows;
    let rows = block_rows(n, rank, size);
    let mine = file.read_dat_rows::<f64>("p_x", rows.clone()).unwrap();
    let whole = serial.read_dat_rows::<f64>("p_x", 0..n).unwrap();
    assert_eq!(mine, whole[2 * rows.start..2 * rows.end], "p_x, rank {rank}'s rows");
    // A file that is not there: an error on every rank (the open is
    // collective), naming the file.
    let e = MeshFile::open_parallel("/nonexistent-op2/mesh.h5", mpi)
        .err()
        .expect("no file");
    assert!(
        e.to_string().contains("mesh.h5") && e.to_string().contains("MPI-IO"),
        "{e}"
    );
    // A bad request is an error on the rank that made it, not a hang.
    let e = file.read_dat_rows::<f64>("p_x", n..n + 1).unwrap_err();
    assert!(e.to_string().contains("rows"), "{e}");
}

/// Airfoil from the file OP2 wrote, on every rank and distributed, against
/// one process from the same file; then its solution gathered to rank 0,
/// written and read back, and written as a checkpoint by every rank.
pub fn airfoil_from_hdf5_matches_one_rank(mpi: &Mpi) {
    let s = hdf5_grid::read(OP2_WRITTEN).unwrap();
    let seq = Runtime::new(Backend::Seq).unwrap();
    let one = AirfoilDsl::new(&s.mesh, &s.constants).unwrap();
    let global = AirfoilDsl::new(&s.mesh, &s.constants).unwrap();
    let (local, d) = global.distribute(mpi).unwrap();
    airfoil_matches_one_rank(&one, &seq, &local, &seq, 10);
    // A distributed Dat is refused by the serial writer: gather it first.
    if mpi.size() > 1 {
        let path = std::env::temp_dir().join(format!("op2-mpi-refused-{}.h5", std::process::id()));
        let e = op2::hdf5::MeshWriter::create(&path).unwrap().dat(&local.q).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert!(e.to_string().contains("is distributed: gather"), "{e}");
    }
    let gathered = d.gather(&local.q).unwrap();
    let tag = run_tag(mpi);
    if let Some(q) = gathered {
        let path = std::env::temp_dir().join(format!("op2-mpi-solution-{tag}.h5"));
        hdf5_grid::write(&path, &s.mesh, &s.constants, &q).unwrap();
        let back = hdf5_grid::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let want = one.q.to_vec();
        let q = back.q.unwrap();
        assert_eq!(q.len(), want.len());
        // Relative to each cell's state (a momentum can be 1e-19 where the
        // others are of order 1).
        for (k, (a, b)) in q.chunks(4).zip(want.chunks(4)).enumerate() {
            let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let worst = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(worst <= 1e-12 * scale, "cell {k}: q {a:?} vs one rank {b:?}");
        }
        assert!(q.chunks(4).any(|q| q != s.constants.qinf), "the flow moved");
    }
    // The same as a checkpoint, each rank writing its own rows.
    let path = std::env::temp_dir().join(format!("op2-mpi-checkpoint-{tag}.h5"));
    hdf5_grid::checkpoint(&local, &s.constants, 10)
        .write_across(&path, &d, mpi)
        .unwrap();
    if mpi.rank() == 0 {
        checkpoint_reads_back(&path, &s, &one);
    }
}

/// The checkpoint at `path` (removed after) holds the mesh `s` came with,
/// bit for bit, and `one`'s state after 10 iterations to rounding.
fn checkpoint_reads_back(path: &std::path::Path, s: &hdf5_grid::GridState, one: &AirfoilDsl) {
    let k = op2::hdf5::MeshCheckpointFile::open(path).unwrap();
    assert_eq!(k.step(), 10);
    let back = hdf5_grid::read(path).unwrap();
    std::fs::remove_file(path).unwrap();
    assert_eq!(back.mesh, s.mesh, "every map and Dat in the global numbering");
    assert_eq!(back.constants, s.constants);
    let (q, want) = (back.q.unwrap(), one.q.to_vec());
    assert_eq!(q.len(), want.len());
    for (k, (a, b)) in q.chunks(4).zip(want.chunks(4)).enumerate() {
        let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let worst = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(worst <= 1e-12 * scale, "cell {k}: q {a:?} vs one rank {b:?}");
    }
}

/// Airfoil read in blocks from the file OP2 wrote (each rank its own rows,
/// partitioned in parallel: PT-Scotch where built), against one process;
/// then each rank writes its rows of a checkpoint, which one process reads
/// back as one rank's mesh and solution.
pub fn airfoil_read_in_blocks_matches_one_rank(mpi: &Mpi) {
    let s = hdf5_grid::read(OP2_WRITTEN).unwrap();
    let seq = Runtime::new(Backend::Seq).unwrap();
    let one = AirfoilDsl::new(&s.mesh, &s.constants).unwrap();
    let (blocks, constants) = hdf5_grid::read_blocks(OP2_WRITTEN, mpi).unwrap();
    assert_eq!(constants, s.constants);
    let mut d = mpi
        .distribute_blocks(blocks, "cells", &op2::mpi::BlockPartitioner::default())
        .unwrap();
    let local = AirfoilDsl::from_blocks(&mut d, &constants).unwrap();
    airfoil_matches_one_rank(&one, &seq, &local, &seq, 10);
    let path = std::env::temp_dir().join(format!("op2-mpi-blocks-{}.h5", run_tag(mpi)));
    hdf5_grid::checkpoint(&local, &constants, 10)
        .write_across(&path, &d, mpi)
        .unwrap();
    if mpi.rank() == 0 {
        checkpoint_reads_back(&path, &s, &one);
    }
    // Its Dats read after the cut, as the airfoil example reads them: the
    // same run.
    let (mut d, constants) =
        hdf5_grid::distribute_blocks(OP2_WRITTEN, mpi, &op2::mpi::BlockPartitioner::default()).unwrap();
    assert_eq!(constants, s.constants);
    let late = AirfoilDsl::from_blocks(&mut d, &constants).unwrap();
    let one_again = AirfoilDsl::new(&s.mesh, &s.constants).unwrap();
    airfoil_matches_one_rank(&one_again, &seq, &late, &seq, 10);
    // A grid that is not there: an error on every rank, naming it.
    let Err(e) = hdf5_grid::read_blocks("/nonexistent-op2/grid.h5", mpi) else {
        panic!("no file, yet read")
    };
    assert!(e.to_string().contains("grid.h5"), "{e}");
    let Err(e) = hdf5_grid::distribute_blocks("/nonexistent-op2/grid.h5", mpi, &Default::default()) else {
        panic!("no file, yet distributed")
    };
    assert!(e.to_string().contains("grid.h5"), "{e}");
}
