//! Checkpoints of mesh programs (`op2::hdf5::MeshCheckpoint`, feature
//! `hdf5`): Airfoil checkpointed after k iterations and resumed from the
//! file ends bit for bit where the uninterrupted run ends, on every
//! backend; Dats and Globals a program declared itself come back through
//! `restore`; what does not fit, a file cut short, a grid file and another
//! version are refused with an error naming the file and the object.
#![cfg(feature = "hdf5")]

use op2::hdf5::{MeshCheckpoint, MeshCheckpointFile, MeshWriter, MESH_CHECKPOINT_FORMAT};
use op2::prelude::*;
use op2::Error;
use op2_airfoil::{generate, hdf5_grid, AirfoilDsl, Constants};

#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

#[path = "support/scratch.rs"]
mod scratch;
use scratch::Scratch;

/// This test's own directory, `op2-mesh-checkpoint-<name>-<pid>`, removed when done.
fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("mesh-checkpoint-{name}"))
}

/// Airfoil on a 24x16 mesh: 12 iterations straight, and 5, a checkpoint,
/// then a fresh Airfoil declared from the checkpoint alone for 7 more. The
/// same rms every iteration and the same flow state, bit for bit.
#[test]
fn airfoil_resumes_bitwise_from_its_checkpoint_on_every_backend() {
    let dir = scratch("airfoil");
    let (mesh, c) = (generate(24, 16), Constants::default());
    for rt in backends() {
        let what = rt.backend().to_string();
        let whole = AirfoilDsl::new(&mesh, &c).unwrap();
        let want: Vec<f64> = (0..12).map(|_| whole.iteration(&rt).unwrap()).collect();
        let first = AirfoilDsl::new(&mesh, &c).unwrap();
        for _ in 0..5 {
            first.iteration(&rt).unwrap();
        }
        let path = dir.join(format!("{what}.h5"));
        hdf5_grid::checkpoint(&first, &c, 5).write(&path).unwrap();
        assert!(!dir.join(format!("{what}.h5.writing")).exists(), "{what}: renamed");
        drop(first);
        assert_eq!(MeshCheckpointFile::open(&path).unwrap().step(), 5);
        let back = hdf5_grid::read(&path).unwrap();
        assert_eq!(back.mesh, mesh, "{what}: the mesh comes back");
        let resumed = AirfoilDsl::new(&back.mesh, &back.constants).unwrap();
        resumed.q.try_data_mut().unwrap().copy_from_slice(&back.q.unwrap());
        let got: Vec<f64> = (0..7).map(|_| resumed.iteration(&rt).unwrap()).collect();
        assert_eq!(
            got,
            want[5..],
            "{what}: the rms of every iteration after the checkpoint"
        );
        assert!(resumed.q.to_vec() == whole.q.to_vec(), "{what}: the flow state");
    }
}

/// A small program's own carriers: two sets, a map, Dats of three types,
/// a Global and a constant.
struct Program {
    cells: Set,
    nodes: Set,
    corners: Map,
    x: Dat<f64>,
    flag: Dat<i32>,
    count: Dat<u32>,
    total: Global<f64>,
}

fn program(seed: f64) -> Program {
    let cells = Set::new("cells", 6).unwrap();
    let nodes = Set::new("nodes", 8).unwrap();
    let corners = Map::new("corners", &cells, &nodes, 2, (0..12).map(|k| (k * 5) % 8).collect()).unwrap();
    let x = Dat::from_vec("x", &nodes, 2, (0..16).map(|k| seed + k as f64 / 3.0).collect()).unwrap();
    let flag = Dat::from_vec("flag", &cells, 1, (0..6).map(|k| k * 7 - 20).collect()).unwrap();
    let count = Dat::from_vec("count", &cells, 3, (0..18).map(|k| k * 1000 + seed as u32).collect()).unwrap();
    let total = Global::new("total", vec![seed * 0.1, -2.5]).unwrap();
    Program {
        cells,
        nodes,
        corners,
        x,
        flag,
        count,
        total,
    }
}

fn write_program(p: &Program, path: &std::path::Path) {
    MeshCheckpoint::new(42)
        .map(&p.corners)
        .dat(&p.x)
        .dat_as("p_flag", &p.flag)
        .dat(&p.count)
        .global(&p.total)
        .unwrap()
        .constant("gamma", &[1.4f64])
        .write(path)
        .unwrap();
}

#[test]
fn dats_and_globals_a_program_declared_are_restored_exactly() {
    let dir = scratch("restore");
    let path = dir.join("program.h5");
    let written = program(3.0);
    write_program(&written, &path);
    let k = MeshCheckpointFile::open(&path).unwrap();
    assert_eq!(k.step(), 42);
    assert_eq!(
        k.contents(),
        [
            "set cells",
            "set nodes",
            "map corners cells nodes",
            "dat x nodes f64 2",
            "dat p_flag cells i32 1",
            "dat count cells u32 3",
            "global total f64 2",
            "constant gamma",
        ]
    );
    // Into other values, on sets declared afresh.
    let fresh = program(9.0);
    k.restore(&fresh.x).unwrap();
    k.restore_as("p_flag", &fresh.flag).unwrap();
    k.restore(&fresh.count).unwrap();
    k.restore_global(&fresh.total).unwrap();
    assert_eq!(fresh.x.to_vec(), written.x.to_vec());
    assert_eq!(fresh.flag.to_vec(), written.flag.to_vec());
    assert_eq!(fresh.count.to_vec(), written.count.to_vec());
    assert_eq!(fresh.total.data_ro()[..], written.total.data_ro()[..]);
    // The file is a grid file too: the mesh declared from it.
    let file = k.file();
    let cells = file.set("cells").unwrap();
    let nodes = file.set("nodes").unwrap();
    assert_eq!((cells.size(), nodes.size()), (6, 8));
    let corners = file.map("corners", &cells, &nodes).unwrap();
    assert_eq!(corners.values(), written.corners.values());
    assert_eq!(file.constant::<f64>("gamma").unwrap(), [1.4]);
    let _ = (&written.cells, &written.nodes);
}

#[test]
fn what_does_not_fit_is_refused_naming_the_object() {
    let dir = scratch("refused");
    let path = dir.join("program.h5");
    let p = program(1.0);
    write_program(&p, &path);
    let k = MeshCheckpointFile::open(&path).unwrap();
    let message = |e: Error| e.to_string();

    // A Dat of another dim, type, set size, or name.
    let wide = Dat::<f64>::zeros("x", &p.nodes, 3).unwrap();
    let e = message(k.restore(&wide).unwrap_err());
    assert!(e.contains("dat x nodes f64 2") && e.contains("3"), "{e}");
    let typed = Dat::<f32>::zeros("x", &p.nodes, 2).unwrap();
    let e = message(k.restore(&typed).unwrap_err());
    assert!(e.contains("f32"), "{e}");
    let small = Set::new("nodes", 7).unwrap();
    let e = message(k.restore(&Dat::<f64>::zeros("x", &small, 2).unwrap()).unwrap_err());
    assert!(e.contains("8 elements in the checkpoint, 7"), "{e}");
    let e = message(k.restore(&Dat::<f64>::zeros("y", &p.nodes, 2).unwrap()).unwrap_err());
    assert!(e.contains("no dat") && e.contains("x, p_flag, count"), "{e}");
    let e = message(
        k.restore_global(&Global::<f64>::zeros("total", 3).unwrap())
            .unwrap_err(),
    );
    assert!(e.contains("global total f64 2"), "{e}");
    // Nothing was half written into the refused Dats.
    assert!(wide.to_vec().iter().all(|&v| v == 0.0));

    // Two objects under one name, and a name of the checkpoint's own.
    let e = MeshCheckpoint::new(1)
        .dat(&p.x)
        .dat_as("x", &p.flag)
        .write(dir.join("twice.h5"))
        .unwrap_err();
    assert!(message(e).contains("two objects"));
    let e = MeshCheckpoint::new(1)
        .dat_as("checkpoint/step", &p.x)
        .write(dir.join("own.h5"))
        .unwrap_err();
    assert!(message(e).contains("checkpoint's own"));
    assert!(!dir.join("twice.h5").exists() && !dir.join("own.h5.writing").exists());
    let e = MeshCheckpoint::new(1)
        .dat_as("my x", &p.x)
        .write(dir.join("spaced.h5"))
        .unwrap_err();
    assert!(message(e).contains("without spaces"));
    // Names HDF5 would read as another's: refused, not written over it.
    for (what, k) in [
        ("lead", MeshCheckpoint::new(1).constant("/checkpoint/step", &[0i64])),
        ("twice", MeshCheckpoint::new(1).dat_as("p_q", &p.x).dat_as("/p_q", &p.x)),
        (
            "double",
            MeshCheckpoint::new(1).dat_as("a/b", &p.x).dat_as("a//b", &p.x),
        ),
        ("dot", MeshCheckpoint::new(1).dat_as("a/./b", &p.x)),
        (
            "inside",
            MeshCheckpoint::new(1).dat_as("a/b", &p.x).dat_as("a", &p.count),
        ),
    ] {
        let e = message(k.write(dir.join(format!("{what}.h5"))).unwrap_err());
        assert!(
            e.contains("joined by single `/`s") || e.contains("would be in this one"),
            "{what}: {e}"
        );
    }
    let e = message(
        MeshCheckpoint::new(u64::MAX)
            .dat(&p.x)
            .write(dir.join("late.h5"))
            .unwrap_err(),
    );
    assert!(e.contains("past i64::MAX"), "{e}");
    MeshCheckpoint::new(1)
        .dat_as("globalsum", &p.x)
        .write(dir.join("globalsum.h5"))
        .unwrap();

    // Tables that do not say what the contents line says: refused, never
    // a panic or a Dat half filled.
    let odd = dir.join("odd.h5");
    std::fs::copy(&path, &odd).unwrap();
    let w = MeshWriter::append(&odd).unwrap();
    w.write_dat_table::<f64>("x", 3, &[0.5; 24]).unwrap();
    w.write_constant::<f64>("globals/total", &[1.0, 2.0, 3.0]).unwrap();
    w.finish().unwrap();
    let k = MeshCheckpointFile::open(&odd).unwrap();
    let fresh = program(7.0);
    let e = message(k.restore(&fresh.x).unwrap_err());
    assert!(e.contains("8 rows of 3"), "{e}");
    let e = message(k.restore_global(&fresh.total).unwrap_err());
    assert!(e.contains("3 values"), "{e}");
    assert_eq!(fresh.x.to_vec(), program(7.0).x.to_vec(), "nothing written");

    // A grid file, and another version of the layout.
    let grid = dir.join("grid.h5");
    let w = MeshWriter::create(&grid).unwrap();
    w.set(&p.cells).unwrap();
    w.finish().unwrap();
    let e = message(MeshCheckpointFile::open(&grid).err().unwrap());
    assert!(e.contains("grid.h5") && e.contains("not a checkpoint"), "{e}");
    let newer = dir.join("newer.h5");
    std::fs::copy(&path, &newer).unwrap();
    let w = MeshWriter::append(&newer).unwrap();
    w.write_constant::<i32>("checkpoint/format", &[MESH_CHECKPOINT_FORMAT + 1])
        .unwrap();
    w.finish().unwrap();
    let e = message(MeshCheckpointFile::open(&newer).err().unwrap());
    assert!(e.contains("checkpoint/format") && e.contains("version"), "{e}");
}

/// A checkpoint cut short at every eighth of its length: refused when
/// opened or when read, naming the file, never a panic or a partial load.
#[test]
fn checkpoints_cut_short_are_refused_at_every_eighth() {
    let dir = scratch("cut");
    let path = dir.join("program.h5");
    write_program(&program(2.0), &path);
    let whole = std::fs::read(&path).unwrap();
    for eighth in 0..8 {
        let cut = dir.join(format!("cut-{eighth}.h5"));
        std::fs::write(&cut, &whole[..whole.len() * eighth / 8]).unwrap();
        let fresh = program(5.0);
        let read = MeshCheckpointFile::open(&cut).and_then(|k| {
            k.restore(&fresh.x)?;
            k.restore_as("p_flag", &fresh.flag)?;
            k.restore(&fresh.count)?;
            k.restore_global(&fresh.total)
        });
        match read {
            Err(Error::MeshFile { path, .. }) => assert_eq!(path, cut, "the error names the file"),
            Err(e) => panic!("cut at {eighth}/8: an error of another kind: {e}"),
            Ok(()) => panic!("cut at {eighth}/8: read from a file cut short"),
        }
    }
}
