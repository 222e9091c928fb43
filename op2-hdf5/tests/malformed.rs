//! Files that break OP2's layout: each gives an error naming the file, the
//! object and what was wrong; none panics or reads a wrong value.
#![cfg(feature = "hdf5")]

use std::path::Path;

use hdf5::types::FixedAscii;
use op2_core::{Error, Set};
use op2_hdf5::{MeshFile, MeshWriter};

#[path = "../../tests/support/scratch.rs"]
mod scratch;
use scratch::Scratch;

/// This test's own directory, `op2-hdf5-bad-<name>-<pid>`, removed when done.
fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("hdf5-bad-{name}"))
}

/// A good little mesh: 3 cells, 4 nodes, `pcell` (dim 2) and `p_q` (dim 2).
fn good(path: &Path) {
    let w = MeshWriter::create(path).unwrap();
    w.write_set_size("cells", 3).unwrap();
    w.write_set_size("nodes", 4).unwrap();
    w.write_map_table("pcell", 2, &[0, 1, 1, 2, 2, 3]).unwrap();
    w.write_dat_table("p_q", 2, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    w.write_constant("gam", &[1.4f64]).unwrap();
    w.finish().unwrap();
}

/// Changes the good file with `edit`, then expects `read` to fail with a
/// [`Error::MeshFile`] on `object` whose reason holds `why`.
fn refused(
    name: &str,
    edit: impl Fn(&hdf5::File),
    read: impl Fn(&MeshFile) -> op2_core::Result<()>,
    object: &str,
    why: &str,
) {
    let dir = scratch(name);
    let path = dir.join("bad.h5");
    good(&path);
    edit(&hdf5::File::append(&path).unwrap());
    let f = MeshFile::open(&path).unwrap();
    match read(&f) {
        Err(e @ Error::MeshFile { .. }) => {
            let Error::MeshFile {
                path: p,
                object: o,
                reason,
            } = &e
            else {
                unreachable!()
            };
            assert_eq!((p.as_path(), o.as_str()), (path.as_path(), object), "{name}: {e}");
            assert!(reason.contains(why), "{name}: {e}");
            assert!(
                e.to_string().contains("bad.h5"),
                "{name}: the message names the file: {e}"
            );
        }
        other => panic!("{name}: expected an error on `{object}`, got {:?}", other.map(|_| ())),
    }
}

fn sets(f: &MeshFile) -> (Set, Set) {
    (f.set("cells").unwrap(), f.set("nodes").unwrap())
}

#[test]
fn each_break_of_the_layout_is_named() {
    let read_q = |f: &MeshFile| f.dat::<f64>("p_q", &sets(f).0).map(drop);
    let read_map = |f: &MeshFile| {
        let (cells, nodes) = sets(f);
        f.map("pcell", &cells, &nodes).map(drop)
    };
    let nothing = |_: &hdf5::File| {};
    refused(
        "missing",
        nothing,
        |f| f.dat::<f64>("p_x", &sets(f).0).map(drop),
        "p_x",
        "no such dat",
    );
    refused(
        "missing set",
        nothing,
        |f| f.set("edges").map(drop),
        "edges",
        "no such set",
    );
    refused(
        "wrong type",
        nothing,
        |f| f.dat::<f32>("p_q", &sets(f).0).map(drop),
        "p_q",
        "holds double, read as float",
    );
    refused(
        "wrong set",
        nothing,
        |f| f.dat::<f64>("p_q", &sets(f).1).map(drop),
        "p_q",
        "set `nodes` has 4",
    );
    refused(
        "set too small",
        nothing,
        |f| f.map("pcell", &sets(f).0, &Set::new("few", 3).unwrap()).map(drop),
        "pcell",
        "element 2 maps to 3",
    );
    refused(
        "rows",
        nothing,
        |f| f.read_dat_rows::<f64>("p_q", 2..4).map(drop),
        "p_q",
        "rows 2..4 asked for",
    );
    refused(
        "dat as map",
        nothing,
        |f| f.map_table("p_q").map(drop),
        "p_q",
        "a map holds int, not double",
    );
    refused(
        "constant type",
        nothing,
        |f| f.constant::<i32>("gam").map(drop),
        "gam",
        "holds double, read as int",
    );
    refused(
        "no dim",
        |h| h.dataset("p_q").unwrap().delete_attr("dim").unwrap(),
        read_q,
        "p_q/dim",
        "missing attribute",
    );
    refused(
        "dim lies",
        |h| {
            h.dataset("p_q")
                .unwrap()
                .attr("dim")
                .unwrap()
                .write_raw(&[3i32])
                .unwrap()
        },
        read_q,
        "p_q/dim",
        "says 3 but the dataset has 2",
    );
    refused(
        "size lies",
        |h| {
            h.dataset("p_q")
                .unwrap()
                .attr("size")
                .unwrap()
                .write_raw(&[8i32])
                .unwrap()
        },
        read_q,
        "p_q/size",
        "says 8 bytes per element",
    );
    refused(
        "map size lies",
        |h| {
            h.dataset("pcell")
                .unwrap()
                .attr("size")
                .unwrap()
                .write_raw(&[4i32])
                .unwrap()
        },
        read_map,
        "pcell/size",
        "says 4 elements but the dataset has 3",
    );
    refused(
        "unknown type",
        |h| {
            let d = h.dataset("p_q").unwrap();
            d.delete_attr("type").unwrap();
            let quad = FixedAscii::<4>::from_ascii(b"quad").unwrap();
            d.new_attr::<FixedAscii<4>>()
                .create("type")
                .unwrap()
                .write_scalar(&quad)
                .unwrap();
        },
        read_q,
        "p_q/type",
        "unknown type \"quad\"",
    );
    refused(
        "type lies",
        |h| {
            let d = h.dataset("p_q").unwrap();
            d.delete_attr("type").unwrap();
            let int = FixedAscii::<3>::from_ascii(b"int").unwrap();
            d.new_attr::<FixedAscii<3>>()
                .create("type")
                .unwrap()
                .write_scalar(&int)
                .unwrap();
        },
        |f| f.dat::<i32>("p_q", &sets(f).0).map(drop),
        "p_q",
        "the type attribute says \"int\" but the data are stored as double",
    );
    refused(
        "not 2-D",
        |h| {
            h.unlink("p_q").unwrap();
            h.new_dataset::<f64>().shape([6]).create("p_q").unwrap();
        },
        read_q,
        "p_q",
        "a dat is a 2-D dataset [size][dim], found shape [6]",
    );
    refused(
        "set of two",
        |h| {
            h.unlink("cells").unwrap();
            h.new_dataset::<i32>().shape([2]).create("cells").unwrap();
        },
        |f| f.set("cells").map(drop),
        "cells",
        "a set is one integer",
    );
    refused(
        "negative set",
        |h| h.dataset("cells").unwrap().write_raw(&[-3i32]).unwrap(),
        |f| f.set("cells").map(drop),
        "cells",
        "-3 is not a set size",
    );
    refused(
        "a group",
        |h| {
            h.unlink("p_q").unwrap();
            h.create_group("p_q").unwrap();
        },
        read_q,
        "p_q",
        "not a dataset",
    );
}

#[test]
fn a_file_that_is_not_hdf5_is_named() {
    let dir = scratch("text");
    let path = dir.join("bad.h5");
    std::fs::write(&path, "4 3 2 1\n").unwrap();
    let e = MeshFile::open(&path).err().expect("not HDF5");
    assert!(
        e.to_string().contains("bad.h5") && e.to_string().contains("cannot open as HDF5"),
        "{e}"
    );
    let e = MeshFile::open(path.with_file_name("absent.h5")).err().expect("no file");
    assert!(e.to_string().contains("absent.h5"), "{e}");
}

#[test]
fn writing_what_is_not_a_table_is_refused() {
    let dir = scratch("write");
    let path = dir.join("bad.h5");
    let w = MeshWriter::create(&path).unwrap();
    let e = w.write_dat_table("p_q", 3, &[1.0f64; 4]).unwrap_err();
    assert!(
        e.to_string().contains("4 values are not whole elements of dim 3"),
        "{e}"
    );
    let e = w.write_map_table("pcell", 0, &[]).unwrap_err();
    assert!(e.to_string().contains("dim must be at least 1"), "{e}");
    let e = w.write_constant::<f64>("gam", &[]).unwrap_err();
    assert!(e.to_string().contains("at least one value"), "{e}");
}

/// Replaces `name` of `h` by a chunked dataset of `shape` whose chunks were
/// never written, with OP2's attributes for `dim` values of double each.
fn never_written(h: &hdf5::File, name: &str, shape: &[usize], dim: i64) {
    h.unlink(name).unwrap();
    let chunk: Vec<usize> = shape.iter().map(|_| 1).collect();
    let d = h.new_dataset::<f64>().chunk(chunk).shape(shape).create(name).unwrap();
    d.new_attr::<i64>().create("dim").unwrap().write_scalar(&dim).unwrap();
    d.new_attr::<i64>()
        .create("size")
        .unwrap()
        .write_scalar(&(dim * 8))
        .unwrap();
    let double = FixedAscii::<6>::from_ascii(b"double").unwrap();
    d.new_attr::<FixedAscii<6>>()
        .create("type")
        .unwrap()
        .write_scalar(&double)
        .unwrap();
}

/// A header may promise more values than the file holds (chunks never
/// written read as zeros): 2^36 values in a file of a few kilobytes must be
/// an error before a byte is allocated for them, not an abort.
#[test]
fn values_a_file_declares_but_does_not_hold_are_refused() {
    let huge = 1usize << 36;
    let read_q = |f: &MeshFile| f.dat::<f64>("p_q", &sets(f).0).map(drop);
    refused(
        "huge table",
        |h| never_written(h, "p_q", &[3, huge], huge as i64),
        read_q,
        "p_q",
        "it was not written whole",
    );
    refused(
        "huge rows",
        |h| never_written(h, "p_q", &[3, huge], huge as i64),
        |f| f.read_dat_rows::<f64>("p_q", 1..2).map(drop),
        "p_q",
        "it was not written whole",
    );
    refused(
        "huge constant",
        |h| never_written(h, "gam", &[huge], huge as i64),
        |f| f.constant::<f64>("gam").map(drop),
        "gam",
        "it was not written whole",
    );
    refused(
        "unwritten table",
        |h| never_written(h, "p_q", &[3, 2], 2),
        read_q,
        "p_q",
        "declares 48 bytes of values ([3, 2] of 8 bytes) but the file stores 0",
    );
    refused(
        "many dims",
        |h| {
            let d = h.dataset("p_q").unwrap();
            d.delete_attr("dim").unwrap();
            d.new_attr::<i64>().shape([1000]).create("dim").unwrap();
        },
        read_q,
        "p_q/dim",
        "expected one integer, found 1000",
    );
}
