//! Airfoil and OP2's HDF5 layout (feature `hdf5`): the mesh OP2's
//! `convert_mesh` wrote is the generator's mesh, value for value; a state
//! written and read back continues bit for bit; malformed Airfoil files are
//! named.
#![cfg(feature = "hdf5")]

use op2::{Backend, Runtime};
use op2_airfoil::hdf5_grid::{read, write};
use op2_airfoil::{generate, AirfoilDsl, Constants};

const OP2_WRITTEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/op2-hdf5/tests/data/airfoil_50x75_op2.h5");

#[path = "support/scratch.rs"]
mod scratch;
use scratch::Scratch;

/// This test's own directory, `op2-airfoil-h5-<name>-<pid>`, removed when done.
fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("airfoil-h5-{name}"))
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn the_mesh_op2_wrote_is_the_generators_value_for_value() {
    let s = read(OP2_WRITTEN).unwrap();
    let mesh = generate(50, 75);
    assert_eq!(s.mesh, mesh, "every node, map entry and bound");
    assert_eq!(s.constants, Constants::default(), "OP2's constants, bit for bit");
    let q = s.q.expect("convert_mesh writes p_q");
    assert!(q.chunks(4).all(|c| c == Constants::default().qinf), "the free stream");
    // And so Airfoil from the file runs as from the generator, bit for bit.
    let rt = Runtime::new(Backend::Seq).unwrap();
    let (a, b) = (
        AirfoilDsl::new(&s.mesh, &s.constants).unwrap(),
        AirfoilDsl::new(&mesh, &Constants::default()).unwrap(),
    );
    for _ in 0..5 {
        assert_eq!(a.iteration(&rt).unwrap().to_bits(), b.iteration(&rt).unwrap().to_bits());
    }
}

#[test]
fn a_state_written_and_read_back_continues_bit_for_bit() {
    let mesh = generate(12, 8);
    let c = Constants::default();
    let rt = Runtime::new(Backend::Seq).unwrap();
    let straight = AirfoilDsl::new(&mesh, &c).unwrap();
    for _ in 0..10 {
        straight.iteration(&rt).unwrap();
    }
    let dir = scratch("restart");
    let path = dir.join("state.h5");
    write(&path, &mesh, &c, &straight.q.to_vec()).unwrap();
    let s = read(&path).unwrap();
    assert_eq!((&s.mesh, &s.constants), (&mesh, &c));
    let q = s.q.unwrap();
    assert_eq!(bits(&q), bits(&straight.q.to_vec()), "q after 10 iterations");
    assert!(q.chunks(4).any(|q| q != c.qinf), "the state is not the free stream");
    let resumed = AirfoilDsl::new(&s.mesh, &s.constants).unwrap();
    resumed.q.data_mut().copy_from_slice(&q);
    for iter in 11..=20 {
        let (a, b) = (straight.iteration(&rt).unwrap(), resumed.iteration(&rt).unwrap());
        assert_eq!(a.to_bits(), b.to_bits(), "rms at iteration {iter}");
    }
    assert_eq!(bits(&resumed.q.to_vec()), bits(&straight.q.to_vec()));
}

#[test]
fn an_airfoil_file_with_the_wrong_things_is_named() {
    let mesh = generate(6, 4);
    let c = Constants::default();
    let q: Vec<f64> = c.qinf.iter().copied().cycle().take(4 * mesh.ncell()).collect();
    let dir = scratch("bad");
    let broken = |name: &str, edit: &dyn Fn(&op2::hdf5::MeshWriter)| {
        let path = dir.join(format!("{name}.h5"));
        write(&path, &mesh, &c, &q).unwrap();
        let w = op2::hdf5::MeshWriter::append(&path).unwrap();
        edit(&w);
        w.finish().unwrap();
        read(&path).unwrap_err().to_string()
    };
    let e = broken("bound", &|w| {
        let mut bound = mesh.bound.clone();
        bound[3] = 7;
        w.write_dat_table("p_bound", 1, &bound).unwrap();
    });
    assert!(
        e.contains("bound.h5") && e.contains("`p_bound`") && e.contains("boundary edge 3 is of kind 7"),
        "{e}"
    );
    let e = broken("arity", &|w| {
        w.write_map_table("pbecell", 2, &vec![0; 2 * mesh.nbedge()]).unwrap()
    });
    assert!(
        e.contains("`pbecell`") && e.contains("1 entries per element, the file's 2"),
        "{e}"
    );
    let e = broken("q dim", &|w| {
        w.write_dat_table("p_q", 2, &q[..2 * mesh.ncell()]).unwrap()
    });
    assert!(
        e.contains("`p_q`") && e.contains("4 values per element, the file's 2"),
        "{e}"
    );
    let e = broken("qinf", &|w| w.write_constant("qinf", &[1.0f64, 2.0]).unwrap());
    assert!(e.contains("`qinf`") && e.contains("4 values, the file's 2"), "{e}");
    let e = broken("x", &|w| w.write_dat_table("p_x", 2, &mesh.x[2..]).unwrap());
    assert!(
        e.contains("`p_x`") && e.contains(&format!("set `nodes` has {}", mesh.nnode())),
        "{e}"
    );
    let e = broken("bound dim", &|w| {
        let bound: Vec<i32> = mesh.bound.iter().flat_map(|&b| [b, b]).collect();
        w.write_dat_table("p_bound", 2, &bound).unwrap();
    });
    assert!(
        e.contains("`p_bound`") && e.contains("1 values per element, the file's 2"),
        "{e}"
    );
    let e = broken("nan x", &|w| {
        let mut x = mesh.x.clone();
        x[7] = f64::NAN;
        w.write_dat_table("p_x", 2, &x).unwrap();
    });
    assert!(
        e.contains("`p_x`") && e.contains("value 1 of element 3 is NaN, not a finite number"),
        "{e}"
    );
    let e = broken("infinite cfl", &|w| w.write_constant("cfl", &[f64::INFINITY]).unwrap());
    assert!(e.contains("`cfl`") && e.contains("is inf, not a finite number"), "{e}");
    let e = write(dir.join("short.h5"), &mesh, &c, &q[4..]).unwrap_err().to_string();
    assert!(e.contains("`p_q`"), "{e}");
}
