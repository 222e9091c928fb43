//! Every run-time error a loop can hit: the variant, and a message that names
//! the loop, the argument and the objects involved. None of them may run the
//! kernel or touch data.

use op2::prelude::*;
use op2::{Error, SetRegions};

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
    let nodes = Set::new("nodes", 4).unwrap();
    let edges = Set::new("edges", 3).unwrap();
    let cells = Set::new("cells", 1).unwrap();
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
    let out = Dat::<f64>::zeros("out", &f.nodes, 2).unwrap();
    let v3 = Dat::<f64>::filled("v3", &f.nodes, 3, 7.0).unwrap();
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
    let acc = Dat::<f64>::zeros("acc", &f.nodes, 1).unwrap();
    // The loop iterates over cells, but e2n starts from edges.
    let e = par_loop!(f.rt, bump, f.cells, acc(INC, f.e2n[0])).unwrap_err();
    assert!(matches!(e, Error::MapFromWrongSet { .. }), "{e:?}");
    contains_all(&e, &["bump", "`acc`", "e2n", "edges", "cells"]);
}

#[test]
fn map_into_wrong_set() {
    let f = fixture();
    let on_edges = Dat::<f64>::zeros("on_edges", &f.edges, 1).unwrap();
    // e2n points into nodes, but the Dat lives on edges.
    let e = par_loop!(f.rt, bump, f.edges, on_edges(INC, f.e2n[1])).unwrap_err();
    assert!(matches!(e, Error::MapIntoWrongSet { .. }), "{e:?}");
    contains_all(&e, &["bump", "`on_edges`", "e2n", "nodes", "edges"]);
}

#[test]
fn direct_dat_on_another_set() {
    let f = fixture();
    let on_nodes = Dat::<f64>::zeros("on_nodes", &f.nodes, 1).unwrap();
    let e = par_loop!(f.rt, bump, f.edges, on_nodes(RW)).unwrap_err();
    assert!(matches!(e, Error::DirectSetMismatch { .. }), "{e:?}");
    contains_all(&e, &["bump", "`on_nodes`", "nodes", "edges"]);
}

#[test]
fn map_index_out_of_range() {
    let f = fixture();
    let acc = Dat::<f64>::zeros("acc", &f.nodes, 1).unwrap();
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
    let out = Dat::<f64>::zeros("out", &f.edges, 1).unwrap();
    let x = Dat::<f64>::zeros("x", &f.nodes, 1).unwrap();
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
    let s = Dat::<f64>::zeros("s", &f.cells, 1).unwrap();
    let w = Dat::<f64>::filled("w", &f.edges, 1, 2.0).unwrap();
    par_loop!(f.rt, triple, f.cells, s(WRITE), w(READ, f.c2e)).unwrap();
    assert_eq!(s.to_vec(), vec![6.0]);
}

#[test]
fn one_dat_with_two_access_modes() {
    let f = fixture();
    let x = Dat::<f64>::filled("x", &f.nodes, 1, 1.0).unwrap();
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
    let out = Dat::<f64>::zeros("out", &f.nodes, 2).unwrap();
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
    let x = Dat::<f64>::zeros("x", &f.nodes, 1).unwrap();
    {
        let guard = x.data_ro();
        let e = par_loop!(f.rt, bump, f.nodes, x(RW)).unwrap_err();
        assert!(matches!(e, Error::Borrowed { .. }), "{e:?}");
        contains_all(&e, &["bump", "`x`", "borrowed"]);
        assert_eq!(guard[0], 0.0);
    }
    // A loop that only reads may run while the host reads too.
    let y = Dat::<f64>::zeros("y", &f.nodes, 1).unwrap();
    let guard = x.data_ro();
    par_loop!(f.rt, read_and_bump, f.nodes, x(READ), y(INC)).unwrap();
    drop(guard);
    par_loop!(f.rt, bump, f.nodes, x(RW)).unwrap();
    assert_eq!(x.to_vec(), vec![1.0; 4]);
}

#[test]
fn failed_loops_leave_borrows_free() {
    let f = fixture();
    let x = Dat::<f64>::zeros("x", &f.nodes, 1).unwrap();
    let _ = par_loop!(f.rt, read_and_bump, f.nodes, x(READ), x(INC)).unwrap_err();
    assert!(x.try_data_mut().is_ok());
}

#[op2::kernel]
fn first_entry(out: &mut f64, v: &f64) {
    *out = *v;
}

/// Builds a map of `arity` from `table` (4 edges into 4 nodes) and a Dat of
/// `dim` on the nodes, then runs a loop through them; returns what it wrote.
fn build_and_run(arity: usize, table: Vec<i32>, dim: usize, values: Vec<f64>) -> op2::Result<Vec<f64>> {
    let rt = Runtime::new(Backend::Seq)?;
    let nodes = Set::new("nodes", 4)?;
    let edges = Set::new("edges", 4)?;
    let m = Map::new("wide", &edges, &nodes, arity, table)?;
    let x = Dat::from_vec("x", &nodes, dim, values)?;
    let out = Dat::<f64>::filled("out", &edges, 1, -1.0)?;
    par_loop!(rt, first_entry, edges, out(WRITE), x(READ, m[0]))?;
    Ok(out.to_vec())
}

#[test]
fn wrapping_sizes_are_errors_before_any_loop() {
    // The valid case runs the loop.
    assert_eq!(
        build_and_run(1, vec![3, 2, 1, 0], 1, vec![0.0, 1.0, 2.0, 3.0]).unwrap(),
        vec![3.0, 2.0, 1.0, 0.0]
    );
    // 4 edges x arity 2^63 (or 2^62) wrapped to 0 entries: the empty table
    // passed, and the loop read far out of bounds.
    for arity in [usize::MAX / 2 + 1, usize::MAX / 4 + 1, usize::MAX] {
        let e = build_and_run(arity, vec![], 1, vec![0.0; 4]).unwrap_err();
        assert!(matches!(e, Error::SizeOverflow { .. }), "arity {arity}: {e:?}");
        contains_all(&e, &["map `wide`", "edges", "overflows", &arity.to_string()]);
    }
    // 4 nodes x dim 2^62 wrapped to 0 values, and 4 x 2^61 x 8 bytes to 0 bytes.
    for dim in [1usize << 62, 1 << 61, usize::MAX] {
        let e = build_and_run(1, vec![0, 1, 2, 3], dim, vec![]).unwrap_err();
        assert!(matches!(e, Error::ShapeTooLarge { .. }), "dim {dim}: {e:?}");
        contains_all(&e, &["dat `x`", "dim", &dim.to_string()]);
    }
    let f = fixture();
    let e = Dat::<f64>::zeros("big", &f.nodes, usize::MAX / 2 + 1).unwrap_err();
    contains_all(&e, &["`big`", "dim"]);
    let e = Global::<f64>::zeros("g", usize::MAX).unwrap_err();
    contains_all(&e, &["`g`", "dim"]);
    let e = Set::with_regions(
        "halo",
        SetRegions {
            core: usize::MAX,
            owned: 0,
            exec_halo: 2,
            nonexec_halo: 0,
        },
    )
    .unwrap_err();
    assert!(matches!(e, Error::SizeOverflow { .. }), "{e:?}");
    contains_all(&e, &["set `halo`", "overflows"]);
}

#[op2::kernel]
fn add_both(res: &mut f64, next: &mut f64, w: &f64) {
    *res += *w;
    *next += 2.0 * *w;
}

#[test]
fn identity_map_passes_a_dat_directly_next_to_another_map() {
    let n = 5000;
    let cells = Set::new("cells", n).unwrap();
    let next = Map::new(
        "next",
        &cells,
        &cells,
        1,
        (0..n as i32).map(|i| (i + 1) % n as i32).collect(),
    )
    .unwrap();
    let same = Map::identity("same", &cells);
    let w = Dat::from_vec("w", &cells, 1, (0..n).map(|i| (i % 7) as f64).collect()).unwrap();
    let mut results = Vec::new();
    for backend in [Backend::Seq, Backend::Rayon] {
        let rt = Runtime::new(backend).unwrap();
        let res = Dat::<f64>::zeros("res", &cells, 1).unwrap();
        // Directly and through `next`: the direct writes are not coloured.
        let e = par_loop!(rt, add_both, cells, res(INC), res(INC, next[0]), w(READ)).unwrap_err();
        assert!(matches!(e, Error::DirectAndIndirectWrite { .. }), "{e:?}");
        contains_all(&e, &["add_both", "`res`", "Map::identity"]);
        par_loop!(rt, add_both, cells, res(INC, same[0]), res(INC, next[0]), w(READ)).unwrap();
        results.push(res.to_vec());
    }
    let want: Vec<f64> = (0..n)
        .map(|i| (i % 7) as f64 + 2.0 * ((i + n - 1) % n % 7) as f64)
        .collect();
    assert_eq!(results[0], want);
    assert_eq!(results[1], want, "coloured through the identity map");
}

#[test]
fn subset_index_out_of_range() {
    let f = fixture();
    let e = Subset::new("busy", &f.edges, vec![0, 2, 3, 9]).unwrap_err();
    assert!(matches!(e, Error::InvalidSubset { .. }), "{e:?}");
    contains_all(&e, &["subset `busy`", "index 3", "set `edges`", "3 elements"]);
}

#[test]
fn subset_loop_checks_dats_and_maps_against_the_parent_set() {
    let f = fixture();
    let some = Subset::new("some", &f.edges, vec![2, 0]).unwrap();
    let on_nodes = Dat::<f64>::zeros("on_nodes", &f.nodes, 1).unwrap();
    let e = par_loop!(f.rt, bump, some, on_nodes(RW)).unwrap_err();
    assert!(matches!(e, Error::DirectSetMismatch { .. }), "{e:?}");
    contains_all(&e, &["bump", "argument 0", "`on_nodes`", "`nodes`", "`edges`"]);
    // A map from another set than the subset's parent.
    let w = Dat::<f64>::zeros("w", &f.cells, 1).unwrap();
    let acc = Dat::<f64>::zeros("acc", &f.edges, 1).unwrap();
    let e = par_loop!(f.rt, read_and_bump, some, w(READ), acc(INC, f.c2e[0])).unwrap_err();
    assert!(matches!(e, Error::DirectSetMismatch { .. }), "{e:?}");
    let ones = Dat::<f64>::filled("ones", &f.edges, 1, 1.0).unwrap();
    let e = par_loop!(f.rt, read_and_bump, some, ones(READ), on_nodes(INC, f.c2e[0])).unwrap_err();
    assert!(matches!(e, Error::MapFromWrongSet { .. }), "{e:?}");
    contains_all(&e, &["`c2e`", "`cells`", "`edges`"]);
    assert_eq!(on_nodes.to_vec(), vec![0.0; 4], "nothing may run");
    // Through the subset's own parent, the loop runs.
    par_loop!(f.rt, read_and_bump, some, ones(READ), on_nodes(INC, f.e2n[1])).unwrap();
    assert_eq!(on_nodes.to_vec(), vec![0.0, 1.0, 0.0, 1.0]);
}

#[test]
fn runtime_refuses_a_subset_of_another_set() {
    let f = fixture();
    let some = Subset::new("some", &f.edges, vec![1]).unwrap();
    let x = Dat::<f64>::zeros("x", &f.nodes, 1).unwrap();
    let args = [op2_core::ArgSpec::direct(op2_core::ArgData::Dat(&x), op2::Access::Rw)];
    let e =
        f.rt.par_loop(&<bump as op2::Kernel>::INFO, &f.nodes, Some(&some), &args, &|_, _| {
            panic!("nothing may run")
        })
        .unwrap_err();
    assert!(matches!(e, Error::InvalidSubset { .. }), "{e:?}");
    contains_all(&e, &["subset `some`", "`edges`", "`nodes`"]);
}

/// A distributed set whose communication must never be used.
struct Unused;

impl op2_core::Distribution for Unused {
    fn start_exchange(&self, _: &dyn op2_core::DatHandle) -> op2::Result<Box<dyn op2_core::PendingExchange>> {
        panic!("no halo exchange may start")
    }
    fn all_reduce(&self, _: &mut [u8], _: op2::ScalarType, _: op2::Access) -> op2::Result<()> {
        panic!("no reduction may run")
    }
    fn rank_and_size(&self) -> (usize, usize) {
        (0, 2)
    }
}

/// A loop over a subset of a distributed set that writes through a map is
/// refused before anything runs (its exec halo would need every rank's
/// subset); one that writes its own elements runs over them alone.
#[test]
fn subsets_of_distributed_sets_that_write_through_maps_are_refused() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let regions = SetRegions {
        core: 3,
        owned: 1,
        exec_halo: 1,
        nonexec_halo: 1,
    };
    let cells = Set::distributed("cells", regions, std::sync::Arc::new(Unused)).unwrap();
    let some = Subset::new("some", &cells, vec![0, 3]).unwrap();
    let x = Dat::<f64>::zeros("x", &cells, 1).unwrap();
    x.data_mut(); // a stale halo: a loop reading it would exchange first
    let next = Map::new("next", &cells, &cells, 1, vec![1, 2, 3, 4, 5, 0]).unwrap();
    let e = par_loop!(rt, bump, some, x(INC, next[0])).unwrap_err();
    assert!(matches!(e, Error::InvalidSubset { .. }), "{e:?}");
    contains_all(&e, &["subset `some`", "writes through a map", "`cells`", "bump"]);
    assert_eq!(x.to_vec(), vec![0.0; 6], "nothing may run");
    // Its own elements: no halo is read, nothing is reduced.
    par_loop!(rt, bump, some, x(RW)).unwrap();
    assert_eq!(x.to_vec(), vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
}

#[op2::kernel]
fn neighbour_sum(out: &mut f64, v: &[f64]) {
    for &x in v {
        *out += x;
    }
}

#[op2::kernel]
fn push_to_neighbours(v: &mut [[f64; 2]]) {
    for j in 0..v.len() {
        v[j][0] += 1.0;
    }
}

#[test]
fn ragged_map_from_or_into_the_wrong_set() {
    let f = fixture();
    // Edges to their nodes, varying in number.
    let r = RaggedMap::new("e2n_ragged", &f.edges, &f.nodes, vec![0, 2, 3, 3], vec![0, 1, 2]).unwrap();
    let out = Dat::<f64>::zeros("out", &f.cells, 1).unwrap();
    let on_nodes = Dat::<f64>::filled("on_nodes", &f.nodes, 1, 1.0).unwrap();
    let e = par_loop!(f.rt, neighbour_sum, f.cells, out(INC), on_nodes(READ, r[..])).unwrap_err();
    assert!(matches!(e, Error::MapFromWrongSet { .. }), "{e:?}");
    contains_all(
        &e,
        &[
            "neighbour_sum",
            "argument 1",
            "`on_nodes`",
            "e2n_ragged",
            "edges",
            "cells",
        ],
    );
    let on_edges = Dat::<f64>::zeros("on_edges", &f.edges, 1).unwrap();
    let on_cells = Dat::<f64>::zeros("on_cells", &f.cells, 1).unwrap();
    let e = par_loop!(f.rt, neighbour_sum, f.edges, on_edges(INC), on_cells(READ, r[..])).unwrap_err();
    assert!(matches!(e, Error::MapIntoWrongSet { .. }), "{e:?}");
    contains_all(&e, &["e2n_ragged", "nodes", "cells"]);
    // Dims are checked as for any argument.
    let pairs = Dat::<f64>::zeros("pairs", &f.nodes, 3).unwrap();
    let e = par_loop!(f.rt, push_to_neighbours, f.edges, pairs(INC, r[..])).unwrap_err();
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
    assert_eq!(pairs.to_vec(), vec![0.0; 12], "nothing may run");
    assert_eq!(on_edges.to_vec(), vec![0.0; 3], "nothing may run");
}
