//! Every run-time error a loop can hit: the variant, and a message that names
//! the loop, the argument and the objects involved. None of them may run the
//! kernel or touch data.

use op2::prelude::*;
use op2::Error;

#[op2::kernel]
fn set_pair(out: &mut [f64; 2], v: &[f64; 2]) {
    out[0] = v[0];
    out[1] = v[1];
}

#[op2::kernel]
fn bump(v: &mut f64) {
    *v += 1.0;
}

#[op2::kernel]
fn read_and_bump(a: &f64, b: &mut f64) {
    *b += *a;
}

#[op2::kernel]
fn triple(out: &mut f64, v: &[[f64; 1]; 3]) {
    *out = v[0][0] + v[1][0] + v[2][0];
}

struct Fixture {
    rt: Runtime,
    nodes: Set,
    edges: Set,
    cells: Set,
    e2n: Map,
    c2e: Map,
}

fn fixture() -> Fixture {
    let nodes = Set::new("nodes", 4);
    let edges = Set::new("edges", 3);
    let cells = Set::new("cells", 1);
    let e2n = Map::new("e2n", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3]).unwrap();
    let c2e = Map::new("c2e", &cells, &edges, 3, vec![0, 1, 2]).unwrap();
    Fixture {
        rt: Runtime::new(Backend::Seq).unwrap(),
        nodes,
        edges,
        cells,
        e2n,
        c2e,
    }
}

fn contains_all(e: &Error, parts: &[&str]) {
    let msg = e.to_string();
    for p in parts {
        assert!(msg.contains(p), "message {msg:?} should mention {p:?}");
    }
}

#[test]
fn wrong_dim() {
    let f = fixture();
    let out = Dat::<f64>::zeros("out", &f.nodes, 2);
    let v3 = Dat::<f64>::filled("v3", &f.nodes, 3, 7.0);
    let e = par_loop!(f.rt, set_pair, f.nodes, out(WRITE), v3(READ)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DimMismatch {
                expected: 2,
                found: 3,
                ..
            }
        ),
        "{e:?}"
    );
    contains_all(&e, &["set_pair", "argument 1", "`v3`", "`v`", "dim 2", "dim 3"]);
    assert_eq!(out.to_vec(), vec![0.0; 8], "nothing may run");
}

#[test]
fn map_from_wrong_set() {
    let f = fixture();
    let acc = Dat::<f64>::zeros("acc", &f.nodes, 1);
    // The loop iterates over cells, but e2n starts from edges.
    let e = par_loop!(f.rt, bump, f.cells, acc(INC, f.e2n[0])).unwrap_err();
    assert!(matches!(e, Error::MapFromWrongSet { .. }), "{e:?}");
    contains_all(&e, &["bump", "`acc`", "e2n", "edges", "cells"]);
}

#[test]
fn map_into_wrong_set() {
    let f = fixture();
    let on_edges = Dat::<f64>::zeros("on_edges", &f.edges, 1);
    // e2n points into nodes, but the Dat lives on edges.
    let e = par_loop!(f.rt, bump, f.edges, on_edges(INC, f.e2n[1])).unwrap_err();
    assert!(matches!(e, Error::MapIntoWrongSet { .. }), "{e:?}");
    contains_all(&e, &["bump", "`on_edges`", "e2n", "nodes", "edges"]);
}

#[test]
fn direct_dat_on_another_set() {
    let f = fixture();
    let on_nodes = Dat::<f64>::zeros("on_nodes", &f.nodes, 1);
    let e = par_loop!(f.rt, bump, f.edges, on_nodes(RW)).unwrap_err();
    assert!(matches!(e, Error::DirectSetMismatch { .. }), "{e:?}");
    contains_all(&e, &["bump", "`on_nodes`", "nodes", "edges"]);
}

#[test]
fn map_index_out_of_range() {
    let f = fixture();
    let acc = Dat::<f64>::zeros("acc", &f.nodes, 1);
    let e = par_loop!(f.rt, bump, f.edges, acc(INC, f.e2n[2])).unwrap_err();
    assert!(
        matches!(e, Error::MapIndexOutOfRange { index: 2, arity: 2, .. }),
        "{e:?}"
    );
    contains_all(&e, &["bump", "`acc`", "e2n", "index 2", "arity 2"]);
}

#[test]
fn whole_map_arity_mismatch() {
    let f = fixture();
    let out = Dat::<f64>::zeros("out", &f.edges, 1);
    let x = Dat::<f64>::zeros("x", &f.nodes, 1);
    let e = par_loop!(f.rt, triple, f.edges, out(WRITE), x(READ, f.e2n)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ArityMismatch {
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{e:?}"
    );
    contains_all(&e, &["triple", "`x`", "e2n", "3", "arity 2"]);
    // The right map passes.
    let s = Dat::<f64>::zeros("s", &f.cells, 1);
    let w = Dat::<f64>::filled("w", &f.edges, 1, 2.0);
    par_loop!(f.rt, triple, f.cells, s(WRITE), w(READ, f.c2e)).unwrap();
    assert_eq!(s.to_vec(), vec![6.0]);
}

#[test]
fn one_dat_with_two_access_modes() {
    let f = fixture();
    let x = Dat::<f64>::filled("x", &f.nodes, 1, 1.0);
    let e = par_loop!(f.rt, read_and_bump, f.nodes, x(READ), x(INC)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ConflictingAccess {
                access: Access::Inc,
                first_index: 0,
                first_access: Access::Read,
                ..
            }
        ),
        "{e:?}"
    );
    contains_all(&e, &["read_and_bump", "argument 1", "`x`", "INC", "READ"]);
    assert_eq!(x.to_vec(), vec![1.0; 4]);
}

#[test]
fn write_on_a_global() {
    let f = fixture();
    let g = Global::scalar("total", 0.0);
    let e = par_loop!(f.rt, bump, f.nodes, g(WRITE)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::GlobalAccess {
                access: Access::Write,
                ..
            }
        ),
        "{e:?}"
    );
    contains_all(&e, &["bump", "`total`", "WRITE"]);
    let e = par_loop!(f.rt, bump, f.nodes, g(RW)).unwrap_err();
    assert!(matches!(e, Error::GlobalAccess { access: Access::Rw, .. }), "{e:?}");
}

#[test]
fn global_dim_mismatch() {
    let f = fixture();
    let out = Dat::<f64>::zeros("out", &f.nodes, 2);
    let g = Global::new("pair", vec![1.0, 2.0, 3.0]).unwrap();
    let e = par_loop!(f.rt, set_pair, f.nodes, out(WRITE), g(READ)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DimMismatch {
                expected: 2,
                found: 3,
                ..
            }
        ),
        "{e:?}"
    );
    contains_all(&e, &["`pair`"]);
}

#[test]
fn host_borrow_blocks_a_writing_loop() {
    let f = fixture();
    let x = Dat::<f64>::zeros("x", &f.nodes, 1);
    {
        let guard = x.data_ro();
        let e = par_loop!(f.rt, bump, f.nodes, x(RW)).unwrap_err();
        assert!(matches!(e, Error::Borrowed { .. }), "{e:?}");
        contains_all(&e, &["bump", "`x`", "borrowed"]);
        assert_eq!(guard[0], 0.0);
    }
    // A loop that only reads may run while the host reads too.
    let y = Dat::<f64>::zeros("y", &f.nodes, 1);
    let guard = x.data_ro();
    par_loop!(f.rt, read_and_bump, f.nodes, x(READ), y(INC)).unwrap();
    drop(guard);
    par_loop!(f.rt, bump, f.nodes, x(RW)).unwrap();
    assert_eq!(x.to_vec(), vec![1.0; 4]);
}

#[test]
fn failed_loops_leave_borrows_free() {
    let f = fixture();
    let x = Dat::<f64>::zeros("x", &f.nodes, 1);
    let _ = par_loop!(f.rt, read_and_bump, f.nodes, x(READ), x(INC)).unwrap_err();
    assert!(x.try_data_mut().is_ok());
}
