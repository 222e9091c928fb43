//! Written, read back, compared: every element type and several dims, as
//! op2 objects and as blocks of rows; groups; empty sets; replacing.
#![cfg(feature = "hdf5")]

use op2_core::{Dat, Map, Scalar, Set};
use op2_hdf5::{MeshFile, MeshWriter, Table};

#[path = "../../tests/support/scratch.rs"]
mod scratch;
use scratch::Scratch;

/// This test's own directory, `op2-hdf5-<name>-<pid>`, removed when done.
fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("hdf5-{name}"))
}

/// Values of every kind a type can hold: extremes, negatives, fractions.
fn values<T: Scalar>(n: usize, of: impl Fn(usize) -> T) -> Vec<T> {
    (0..n).map(of).collect()
}

fn round_trip<T: Scalar>(path: &std::path::Path, of: impl Fn(usize) -> T + Copy) {
    let set = Set::new("things", 13).unwrap();
    for dim in [1, 2, 3, 7] {
        let name = format!("p_{}_{dim}", T::TYPE.rust_name());
        let dat = Dat::from_vec(name.as_str(), &set, dim, values(13 * dim, of)).unwrap();
        let w = MeshWriter::append(path).unwrap();
        w.set(&set).unwrap();
        w.dat(&dat).unwrap();
        w.write_constant(&format!("c_{name}"), &values(dim, of)).unwrap();
        w.finish().unwrap();

        let f = MeshFile::open(path).unwrap();
        let table = f.dat_table(&name).unwrap();
        assert_eq!(
            table,
            Table {
                rows: 13,
                dim,
                element: T::TYPE
            },
            "{name}"
        );
        let back: Dat<T> = f.dat(&name, &f.set("things").unwrap()).unwrap();
        let bits = |v: &[T]| bytemuck::cast_slice::<T, u8>(v).to_vec();
        assert_eq!(bits(&back.to_vec()), bits(&dat.to_vec()), "{name}: bit for bit");
        assert_eq!(back.dim(), dim);
        // A block of rows is those rows, and an empty block reads nothing.
        let rows = f.read_dat_rows::<T>(&name, 4..9).unwrap();
        assert_eq!(bits(&rows), bits(&dat.to_vec()[4 * dim..9 * dim]), "{name}: rows 4..9");
        assert!(f.read_dat_rows::<T>(&name, 5..5).unwrap().is_empty());
        let c = f.constant::<T>(&format!("c_{name}")).unwrap();
        assert_eq!(bits(&c), bits(&values(dim, of)), "constant {name}");
    }
}

#[test]
fn every_type_and_dim_reads_back_bit_for_bit() {
    let dir = scratch("types");
    let path = dir.join("types.h5");
    round_trip::<f64>(&path, |k| {
        if k == 5 {
            f64::MIN_POSITIVE
        } else {
            (k as f64 - 6.5) / 3.0 * 1e300f64.powf((k % 3) as f64 / 2.0)
        }
    });
    round_trip::<f32>(&path, |k| if k == 2 { f32::MAX } else { (k as f32 - 6.5) / 7.0 });
    round_trip::<i32>(&path, |k| if k == 1 { i32::MIN } else { (k as i32 - 7) * 1_000_003 });
    round_trip::<i64>(&path, |k| if k == 3 { i64::MAX } else { (k as i64 - 7) << 40 });
    round_trip::<u32>(&path, |k| if k == 4 { u32::MAX } else { k as u32 * 77 });
    // The last write of each type is still there after the others.
    let f = MeshFile::open(&path).unwrap();
    for t in ["f64", "f32", "i32", "i64", "u32"] {
        assert!(f.contains(&format!("p_{t}_7")), "{t}");
    }
}

#[test]
fn maps_groups_and_empty_sets_read_back() {
    let dir = scratch("maps");
    let path = dir.join("mesh.h5");
    let nodes = Set::new("nodes", 6).unwrap();
    let cells = Set::new("cells", 3).unwrap();
    let empty = Set::new("none", 0).unwrap();
    let pcell = Map::new("pcell", &cells, &nodes, 4, vec![0, 1, 4, 3, 1, 2, 5, 4, 3, 4, 5, 0]).unwrap();
    let w = MeshWriter::create(&path).unwrap();
    for s in [&nodes, &cells, &empty] {
        w.set(s).unwrap();
    }
    w.map(&pcell).unwrap();
    w.write_map_table("meshes/second/pcell", 4, pcell.values()).unwrap();
    w.dat(&Dat::<f64>::zeros("p_none", &empty, 3).unwrap()).unwrap();
    w.finish().unwrap();

    let f = MeshFile::open(&path).unwrap();
    let (nodes, cells, empty) = (f.set("nodes").unwrap(), f.set("cells").unwrap(), f.set("none").unwrap());
    assert_eq!((nodes.size(), cells.size(), empty.size()), (6, 3, 0));
    let back = f.map("pcell", &cells, &nodes).unwrap();
    assert_eq!((back.arity(), back.values()), (4, pcell.values()));
    assert_eq!(f.map_table("meshes/second/pcell").unwrap().rows, 3);
    assert_eq!(
        f.read_map_rows("meshes/second/pcell", 1..3).unwrap(),
        &pcell.values()[4..]
    );
    let none: Dat<f64> = f.dat("p_none", &empty).unwrap();
    assert_eq!((none.dim(), none.to_vec().len()), (3, 0));
    assert!(!f.contains("meshes/third/pcell") && !f.contains("absent"));
}

#[test]
fn appending_replaces_an_object_and_keeps_the_rest() {
    let dir = scratch("append");
    let path = dir.join("state.h5");
    let cells = Set::new("cells", 4).unwrap();
    let w = MeshWriter::create(&path).unwrap();
    w.set(&cells).unwrap();
    w.dat(&Dat::from_vec("p_q", &cells, 2, vec![1.0f64; 8]).unwrap())
        .unwrap();
    w.finish().unwrap();
    // The solution written over the initial state, as a different type.
    let w = MeshWriter::append(&path).unwrap();
    w.dat(&Dat::from_vec("p_q", &cells, 1, vec![7.5f32; 4]).unwrap())
        .unwrap();
    w.finish().unwrap();
    let f = MeshFile::open(&path).unwrap();
    assert_eq!(f.set_size("cells").unwrap(), 4);
    assert_eq!(f.read_dat_rows::<f32>("p_q", 0..4).unwrap(), vec![7.5f32; 4]);
}
