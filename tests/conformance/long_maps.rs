//! Maps with 64-bit entries (`LongMap`): loops through a long map give
//! the same results as through the 32-bit map with the same entries, for
//! every access (READ, INC, WRITE, RW, MIN; one entry and all of them), on
//! every backend: native views and generated code read each table at its
//! width.

use op2::prelude::*;

use super::kernels::*;
use super::suite::{assert_close, mesh, ramp, write_and_rw_through, Mesh, E2N_ONE_TO_ONE};

/// `m` again, its entries (`table`) stored as 64-bit integers.
fn long(m: &Map, table: &[i32]) -> LongMap {
    let wide: Vec<i64> = table.iter().map(|&v| i64::from(v)).collect();
    let long = LongMap::new(
        format!("{}_long", m.name()),
        m.from_set(),
        m.to_set(),
        m.arity(),
        wide.clone(),
    )
    .unwrap();
    assert_eq!(long.values(), wide);
    long
}

/// The suite's loops through `e2n` and `c2n` (maps of `mesh`'s shape);
/// every result.
fn run<M: op2::__private::IndirectArg + Sync>(rt: &Runtime, mesh: &Mesh, e2n: &M, c2n: &M) -> Vec<Vec<f64>> {
    let w = ramp(&mesh.edges, 1, |i| 1.0 + i as f64 * 0.37);
    let acc = ramp(&mesh.nodes, 1, |i| i as f64);
    par_loop!(rt, edge_spread, mesh.edges, w(READ), acc(INC, e2n[0]), acc(INC, e2n[1])).unwrap();
    let x = ramp(&mesh.nodes, 2, |i| i as f64 * 0.5 - 3.0);
    let sums = Dat::<f64>::zeros("sums", &mesh.cells, 2).unwrap();
    par_loop!(rt, cell_sum, mesh.cells, sums(INC), x(READ, c2n)).unwrap();
    let cw = ramp(&mesh.cells, 1, |i| i as f64 * 1.25);
    let spread = Dat::<f64>::zeros("spread", &mesh.nodes, 2).unwrap();
    par_loop!(rt, cell_scatter, mesh.cells, cw(READ), spread(INC, c2n)).unwrap();
    let v = ramp(&mesh.edges, 1, |i| ((i * 17) % 23) as f64 - 11.0);
    let lo = Dat::filled("lo", &mesh.nodes, 1, 0.0).unwrap();
    par_loop!(rt, node_min_via_map, mesh.edges, v(READ), lo(MIN, e2n[1])).unwrap();
    vec![acc.to_vec(), sums.to_vec(), spread.to_vec(), lo.to_vec()]
}

pub fn long_maps_match_narrow_maps(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(53);
    let narrow = run(rt, &m, &m.e2n, &m.c2n);
    let (e2n, c2n) = (long(&m.e2n, &m.e2n_table), long(&m.c2n, &m.c2n_table));
    let wide = run(rt, &m, &e2n, &c2n);
    for (k, (n, w)) in narrow.iter().zip(&wide).enumerate() {
        assert_close(w, n);
        if k == 3 {
            assert_eq!(w, n, "minima are exact");
        }
    }
    // WRITE and RW through one entry of a conflict-free long map.
    let nodes = Set::new("nodes", 5).unwrap();
    let edges = Set::new("edges", 5).unwrap();
    let table = E2N_ONE_TO_ONE.iter().map(|&v| i64::from(v)).collect();
    let e2n = LongMap::new("e2n", &edges, &nodes, 2, table).unwrap();
    write_and_rw_through(rt, &edges, &nodes, &e2n);
}
