//! A file OP2's own `convert_mesh` wrote (the 50x75 Airfoil mesh): every
//! object Airfoil needs reads, with the sizes, shapes and constants OP2 gave
//! them; the test objects OP2 adds are skipped; the mesh holds together.
#![cfg(feature = "hdf5")]

use op2_core::{Dat, ScalarType};
use op2_hdf5::{MeshFile, Table};

fn file() -> MeshFile {
    MeshFile::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/airfoil_50x75_op2.h5")).unwrap()
}

#[test]
fn the_airfoil_mesh_op2_wrote_reads_whole() {
    let f = file();
    let size = |n| f.set_size(n).unwrap();
    let (nnode, ncell, nedge, nbedge) = (size("nodes"), size("cells"), size("edges"), size("bedges"));
    assert_eq!((nnode, ncell, nedge, nbedge), (11476, 11250, 22325, 350));
    let nodes = f.set("nodes").unwrap();
    let cells = f.set("cells").unwrap();
    let edges = f.set("edges").unwrap();
    let bedges = f.set("bedges").unwrap();
    for (name, from, to, dim) in [
        ("pedge", &edges, &nodes, 2),
        ("pecell", &edges, &cells, 2),
        ("pbedge", &bedges, &nodes, 2),
        ("pbecell", &bedges, &cells, 1),
        ("pcell", &cells, &nodes, 4),
    ] {
        let map = f.map(name, from, to).unwrap();
        assert_eq!(map.arity(), dim, "{name}");
    }
    let x: Dat<f64> = f.dat("p_x", &nodes).unwrap();
    assert_eq!(
        f.dat_table("p_x").unwrap(),
        Table {
            rows: nnode,
            dim: 2,
            element: ScalarType::F64
        }
    );
    assert!(x.to_vec().iter().all(|v| v.is_finite()));
    let bound: Dat<i32> = f.dat("p_bound", &bedges).unwrap();
    assert!(bound.to_vec().iter().all(|&b| b == 1 || b == 2), "wall or far field");
    for q in ["p_q", "p_qold", "p_res"] {
        assert_eq!(f.dat_table(q).unwrap().dim, 4, "{q}");
    }
    // Stored from single-precision literals, as Airfoil computes them.
    assert_eq!(f.constant::<f64>("gam").unwrap(), [1.4f32 as f64]);
    assert_eq!(f.constant::<f64>("cfl").unwrap(), [0.9f32 as f64]);
    assert_eq!(f.constant::<f64>("qinf").unwrap().len(), 4);
    // Every cell's initial state is the free stream.
    let qinf = f.constant::<f64>("qinf").unwrap();
    let q = f.read_dat_rows::<f64>("p_q", 0..ncell).unwrap();
    assert!(q.chunks(4).all(|c| c == &qinf[..]), "q = qinf");
    // OP2's extra test objects, in a group, read like any other.
    assert_eq!(f.map_table("group3/pedge_test").unwrap().rows, nedge);
}

#[test]
fn blocks_of_rows_tile_the_whole() {
    let f = file();
    let whole = f.read_map_rows("pcell", 0..11250).unwrap();
    for parts in [1, 2, 3, 4, 7] {
        let mut joined = Vec::new();
        for p in 0..parts {
            let rows = 11250 * p / parts..11250 * (p + 1) / parts;
            joined.extend(f.read_map_rows("pcell", rows).unwrap());
        }
        assert_eq!(joined, whole, "{parts} blocks");
    }
}
