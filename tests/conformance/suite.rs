//! The conformance suite: every function takes a runtime and checks one piece
//! of the semantics (docs/ARCHITECTURE.md, Semantics every backend shares)
//! against values computed in plain Rust here. `backend_suite!` instantiates it for a backend: each function
//! gets a factory of fresh runtimes for that backend.

use op2::prelude::*;
use op2_airfoil::{generate, AirfoilDsl, Constants};

use super::kernels::*;
pub use super::lifecycle::births_and_deaths_match_the_model;
pub use super::messages::{
    brute_force_messages_match_rust, discrete_messages_match_brute_force, sorting_senders_changes_no_result,
    spatial_messages_match_brute_force,
};

/// A small mesh: `cells` triangles over `nodes`, `edges` between nodes, with
/// repeated entries (an edge whose ends are the same node, a cell touching one
/// node twice) and sizes that are not multiples of any block size.
pub struct Mesh {
    pub nodes: Set,
    pub edges: Set,
    pub cells: Set,
    pub e2n: Map,
    pub c2n: Map,
    pub e2n_table: Vec<i32>,
    pub c2n_table: Vec<i32>,
}

pub fn mesh(n_nodes: usize) -> Mesh {
    let nodes = Set::new("nodes", n_nodes).unwrap();
    let n = n_nodes as i32;
    let mut e2n_table = Vec::new();
    for i in 0..n {
        e2n_table.extend([i, (i * 7 + 3) % n]);
    }
    e2n_table.extend([n / 2, n / 2]); // both ends the same node
    let mut c2n_table = Vec::new();
    for i in 0..n {
        c2n_table.extend([i, (i + 1) % n, (i * 5 + 2) % n]);
    }
    c2n_table.extend([1 % n, 0, 1 % n]); // one node twice in a cell
    let edges = Set::new("edges", e2n_table.len() / 2).unwrap();
    let cells = Set::new("cells", c2n_table.len() / 3).unwrap();
    let e2n = Map::new("e2n", &edges, &nodes, 2, e2n_table.clone()).unwrap();
    let c2n = Map::new("c2n", &cells, &nodes, 3, c2n_table.clone()).unwrap();
    Mesh {
        nodes,
        edges,
        cells,
        e2n,
        c2n,
        e2n_table,
        c2n_table,
    }
}

pub fn ramp(set: &Set, dim: usize, f: impl Fn(usize) -> f64) -> Dat<f64> {
    Dat::from_vec("ramp", set, dim, (0..set.size() * dim).map(f).collect()).unwrap()
}

pub fn assert_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-12 * w.abs().max(1.0);
        assert!((g - w).abs() <= tol, "entry {i}: got {g}, want {w}");
    }
}

pub fn direct_write(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let src = ramp(&m.nodes, 2, |i| i as f64 * 0.25);
    let dst = Dat::filled("dst", &m.nodes, 2, f64::NAN).unwrap();
    par_loop!(rt, copy2, m.nodes, dst(WRITE), src(READ)).unwrap();
    assert_eq!(dst.to_vec(), src.to_vec());
}

pub fn direct_rw(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let x = ramp(&m.nodes, 2, |i| i as f64);
    par_loop!(rt, affine_rw, m.nodes, x(RW)).unwrap();
    let want: Vec<f64> = (0..74)
        .map(|i| if i % 2 == 0 { 2.0 * i as f64 + 1.0 } else { -(i as f64) })
        .collect();
    assert_eq!(x.to_vec(), want);
}

pub fn direct_inc(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let x = ramp(&m.nodes, 1, |i| i as f64);
    let w = ramp(&m.nodes, 1, |i| 100.0 + i as f64);
    par_loop!(rt, inc_by_index, m.nodes, x(INC), w(READ)).unwrap();
    let want: Vec<f64> = (0..37).map(|i| i as f64 + (100.0 + i as f64 + 0.5)).collect();
    assert_eq!(x.to_vec(), want);
}

pub fn direct_min_max(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let lo = ramp(&m.nodes, 1, |i| i as f64);
    let hi = ramp(&m.nodes, 1, |i| i as f64);
    let v = ramp(&m.nodes, 1, |i| 36.0 - i as f64);
    par_loop!(rt, min_with, m.nodes, lo(MIN), v(READ)).unwrap();
    par_loop!(rt, max_with, m.nodes, hi(MAX), v(READ)).unwrap();
    let want_lo: Vec<f64> = (0..37).map(|i| f64::min(i as f64, 36.0 - i as f64)).collect();
    let want_hi: Vec<f64> = (0..37).map(|i| f64::max(i as f64, 36.0 - i as f64)).collect();
    assert_eq!(lo.to_vec(), want_lo);
    assert_eq!(hi.to_vec(), want_hi);
}

pub fn indirect_read_entries(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(41);
    let x = ramp(&m.nodes, 1, |i| (i * i) as f64);
    let out = Dat::<f64>::zeros("out", &m.edges, 1).unwrap();
    par_loop!(rt, edge_diff, m.edges, out(WRITE), x(READ, m.e2n[0]), x(READ, m.e2n[1])).unwrap();
    let xv = x.to_vec();
    let want: Vec<f64> = m
        .e2n_table
        .chunks(2)
        .map(|e| xv[e[1] as usize] - xv[e[0] as usize])
        .collect();
    assert_eq!(out.to_vec(), want);
}

pub fn indirect_inc_entries(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(41);
    let w = ramp(&m.edges, 1, |i| 1.0 + i as f64);
    let acc = ramp(&m.nodes, 1, |i| i as f64);
    par_loop!(
        rt,
        edge_spread,
        m.edges,
        w(READ),
        acc(INC, m.e2n[0]),
        acc(INC, m.e2n[1])
    )
    .unwrap();
    let mut want: Vec<f64> = (0..41).map(|i| i as f64).collect();
    for (e, ends) in m.e2n_table.chunks(2).enumerate() {
        want[ends[0] as usize] += 1.0 + e as f64;
        want[ends[1] as usize] -= 2.0 * (1.0 + e as f64);
    }
    assert_close(&acc.to_vec(), &want);
}

pub fn repeated_entry_increments_both_land(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let nodes = Set::new("nodes", 3).unwrap();
    let edges = Set::new("edges", 2).unwrap();
    let e2n = Map::new("e2n", &edges, &nodes, 2, vec![1, 1, 0, 2]).unwrap();
    let w = Dat::from_vec("w", &edges, 1, vec![4.0, 1.0]).unwrap();
    let acc = Dat::<f64>::zeros("acc", &nodes, 1).unwrap();
    par_loop!(rt, edge_spread, edges, w(READ), acc(INC, e2n[0]), acc(INC, e2n[1])).unwrap();
    // Edge 0 adds 4 and subtracts 8 on node 1: both increments land.
    assert_eq!(acc.to_vec(), vec![1.0, -4.0, -2.0]);
}

pub fn whole_map_read(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(29);
    let x = ramp(&m.nodes, 2, |i| i as f64 * 0.5);
    let out = Dat::<f64>::zeros("out", &m.cells, 2).unwrap();
    par_loop!(rt, cell_sum, m.cells, out(INC), x(READ, m.c2n)).unwrap();
    let xv = x.to_vec();
    let want: Vec<f64> = m
        .c2n_table
        .chunks(3)
        .flat_map(|c| {
            let s0: f64 = c.iter().map(|&n| xv[2 * n as usize]).sum();
            let s1: f64 = c.iter().map(|&n| xv[2 * n as usize + 1]).sum();
            [s0, s1]
        })
        .collect();
    assert_close(&out.to_vec(), &want);
}

pub fn whole_map_inc(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(29);
    let w = ramp(&m.cells, 1, |i| i as f64);
    let acc = Dat::<f64>::zeros("acc", &m.nodes, 2).unwrap();
    par_loop!(rt, cell_scatter, m.cells, w(READ), acc(INC, m.c2n)).unwrap();
    let mut want = vec![0.0; 58];
    for (c, nodes) in m.c2n_table.chunks(3).enumerate() {
        for (k, &n) in nodes.iter().enumerate() {
            want[2 * n as usize] += c as f64 * (k as f64 + 1.0);
            want[2 * n as usize + 1] += 1.0;
        }
    }
    assert_close(&acc.to_vec(), &want);
}

pub fn indirect_write_rw(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    // Each node is the first end of exactly one edge: a conflict-free WRITE.
    let nodes = Set::new("nodes", 5).unwrap();
    let edges = Set::new("edges", 5).unwrap();
    let e2n = Map::new("e2n", &edges, &nodes, 2, E2N_ONE_TO_ONE.to_vec()).unwrap();
    write_and_rw_through(rt, &edges, &nodes, &e2n);
}

/// Entry 0 of each of 5 edges is a different one of 5 nodes.
pub const E2N_ONE_TO_ONE: [i32; 10] = [3, 0, 1, 2, 0, 4, 4, 1, 2, 3];

/// WRITE and RW through entry 0 of `e2n` (a map of `E2N_ONE_TO_ONE`'s
/// entries, 32-bit or 64-bit).
pub fn write_and_rw_through<M: op2::__private::IndirectArg + Sync>(rt: &Runtime, edges: &Set, nodes: &Set, e2n: &M) {
    let src = Dat::from_vec("src", edges, 1, vec![1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let dst = Dat::filled("dst", nodes, 1, -1.0).unwrap();
    par_loop!(rt, node_write_via_map, edges, src(READ), dst(WRITE, e2n[0])).unwrap();
    assert_eq!(dst.to_vec(), vec![30.0, 20.0, 50.0, 10.0, 40.0]);
    let v = Dat::from_vec("v", nodes, 2, vec![0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 3.0, 1.0, 4.0, 1.0]).unwrap();
    par_loop!(rt, node_rw_via_map, edges, v(RW, e2n[0])).unwrap();
    assert_eq!(v.to_vec(), vec![1.0, 2.0, 2.0, 2.0, 3.0, 2.0, 4.0, 2.0, 5.0, 2.0]);
}

pub fn indirect_min_max(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(41);
    let v = ramp(&m.edges, 1, |i| ((i * 17) % 23) as f64 - 11.0);
    let lo = Dat::filled("lo", &m.nodes, 1, 0.0).unwrap();
    let hi = Dat::filled("hi", &m.nodes, 1, 0.0).unwrap();
    par_loop!(rt, node_min_via_map, m.edges, v(READ), lo(MIN, m.e2n[1])).unwrap();
    par_loop!(rt, node_max_via_map, m.edges, v(READ), hi(MAX, m.e2n[0])).unwrap();
    let vv = v.to_vec();
    let (mut want_lo, mut want_hi) = (vec![0.0f64; 41], vec![0.0f64; 41]);
    for (e, ends) in m.e2n_table.chunks(2).enumerate() {
        want_lo[ends[1] as usize] = want_lo[ends[1] as usize].min(vv[e]);
        want_hi[ends[0] as usize] = want_hi[ends[0] as usize].max(vv[e]);
    }
    assert_eq!(lo.to_vec(), want_lo);
    assert_eq!(hi.to_vec(), want_hi);
}

pub fn whole_map_min(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(29);
    let v = ramp(&m.cells, 1, |i| 50.0 - i as f64);
    let t = Dat::filled("t", &m.nodes, 1, 100.0).unwrap();
    par_loop!(rt, all_min_via_map, m.cells, v(READ), t(MIN, m.c2n)).unwrap();
    let mut want = vec![100.0f64; 29];
    for (c, nodes) in m.c2n_table.chunks(3).enumerate() {
        for &n in nodes {
            want[n as usize] = want[n as usize].min(50.0 - c as f64);
        }
    }
    assert_eq!(t.to_vec(), want);
}

pub fn global_reductions(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(97);
    let x = ramp(&m.nodes, 2, |i| ((i * 13) % 31) as f64 - 7.5);
    let sum = Global::new("sum", vec![1.0, 0.0]).unwrap();
    let lo = Global::scalar("lo", 1e9);
    let hi = Global::scalar("hi", -1e9);
    par_loop!(rt, reduce_all, m.nodes, x(READ), sum(INC), lo(MIN), hi(MAX)).unwrap();
    let xv = x.to_vec();
    let s0: f64 = 1.0 + xv.chunks(2).map(|p| p[0]).sum::<f64>();
    let s1: f64 = xv.chunks(2).map(|p| p[0] * p[1]).sum();
    assert_close(&sum.data_ro(), &[s0, s1]);
    assert_eq!(lo.value(), xv.chunks(2).map(|p| p[1]).fold(f64::INFINITY, f64::min));
    assert_eq!(hi.value(), xv.chunks(2).map(|p| p[0]).fold(f64::NEG_INFINITY, f64::max));
    // MIN/MAX keep the Global's own value when no element beats it.
    let lo2 = Global::scalar("lo2", -1e9);
    let hi2 = Global::scalar("hi2", 1e9);
    par_loop!(rt, reduce_all, m.nodes, x(READ), sum(INC), lo2(MIN), hi2(MAX)).unwrap();
    assert_eq!((lo2.value(), hi2.value()), (-1e9, 1e9));
}

pub fn global_read(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let x = ramp(&m.nodes, 1, |i| i as f64);
    let c = Global::new("c", vec![3.0, -1.0]).unwrap();
    par_loop!(rt, scale_by_const, m.nodes, x(RW), c(READ)).unwrap();
    let want: Vec<f64> = (0..37).map(|i| i as f64 * 3.0 - 1.0).collect();
    assert_eq!(x.to_vec(), want);
    assert_eq!(c.data_ro().to_vec(), vec![3.0, -1.0]);
}

pub fn integer_types(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let s = Set::new("s", 50).unwrap();
    let x = Dat::from_vec("x", &s, 1, (0..50).collect()).unwrap();
    let count = Global::<i32>::scalar("count", 0);
    let biggest = Global::scalar("biggest", i32::MIN);
    par_loop!(rt, int_ops, s, x(RW), count(INC), biggest(MAX)).unwrap();
    assert_eq!(x.to_vec(), (0..50).map(|i| i * 3 - 1).collect::<Vec<_>>());
    assert_eq!(count.value(), 50);
    assert_eq!(biggest.value(), 49 * 3 - 1);
    let a = Dat::<u32>::from_vec("a", &s, 1, (0..50).collect()).unwrap();
    let b = Dat::<i64>::zeros("b", &s, 1).unwrap();
    par_loop!(rt, u32_i64_ops, s, a(READ), b(INC)).unwrap();
    assert_eq!(
        b.to_vec(),
        (0..50).map(|i| i * 1_000_000_000_000i64).collect::<Vec<_>>()
    );
}

/// Locals whose initial values are literals take the types Rust infers
/// from their uses, not the literals' defaults (f64, i32).
pub fn locals_take_their_inferred_types(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let set = Set::new("values", 2).unwrap();
    let xs: Vec<f32> = (0..20).map(|k| 0.1 + k as f32 * 0.37).collect();
    let x = Dat::from_vec("x", &set, 10, xs.clone()).unwrap();
    let q = Dat::<u32>::zeros("q", &set, 1).unwrap();
    let w = Dat::<i64>::zeros("w", &set, 1).unwrap();
    let o = Dat::<f32>::zeros("o", &set, 1).unwrap();
    par_loop!(rt, inferred_types, set, x(READ), q(WRITE), w(WRITE), o(WRITE)).unwrap();
    let (mut want_q, mut want_w, mut want_o) = (0, 0, 0.0);
    inferred_types(xs[..10].try_into().unwrap(), &mut want_q, &mut want_w, &mut want_o);
    assert_eq!((want_q, want_w), (1_500_000_000, 10_000_000_002), "the Rust function");
    assert_eq!(q.to_vec(), [want_q; 2], "{}", rt.backend());
    assert_eq!(w.to_vec(), [want_w; 2], "{}", rt.backend());
    let mut second = 0.0;
    inferred_types(xs[10..].try_into().unwrap(), &mut want_q, &mut want_w, &mut second);
    assert_eq!(o.to_vec(), [want_o, second], "an f32 sum, {}", rt.backend());
}

/// `a..=b` loops end at `b` when `b` is the type's largest value.
pub fn inclusive_ranges_to_the_top(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let set = Set::new("values", 3).unwrap();
    let froms = [u32::MAX - 5, u32::MAX, u32::MAX - 1];
    let tops = [i32::MAX - 4, i32::MAX, i32::MAX - 9];
    let from = Dat::from_vec("from", &set, 1, froms.to_vec()).unwrap();
    let top = Dat::from_vec("top", &set, 1, tops.to_vec()).unwrap();
    let count = Dat::<u32>::zeros("count", &set, 2).unwrap();
    par_loop!(rt, inclusive_to_the_top, set, from(READ), top(READ), count(RW)).unwrap();
    let want: Vec<u32> = froms
        .iter()
        .zip(&tops)
        .flat_map(|(f, t)| {
            let mut c = [0; 2];
            inclusive_to_the_top(f, t, &mut c);
            c
        })
        .collect();
    assert_eq!(want, [6, 3, 1, 1, 2, 5], "the Rust function");
    assert_eq!(count.to_vec(), want, "{}", rt.backend());
}

/// Signed integer increments wrap past the type's largest value, directly
/// and through a map, as in release builds (natives in a debug build panic,
/// Rust's rule, so there only the translated backends run it).
pub fn integer_increments_wrap(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    if cfg!(debug_assertions) && matches!(rt.backend(), op2::Backend::Seq | op2::Backend::Rayon) {
        return;
    }
    let cells = Set::new("cells", 3).unwrap();
    let top = i32::MAX - 2;
    let x = Dat::<i32>::filled("x", &cells, 1, top).unwrap();
    par_loop!(rt, add_five, cells, x(INC)).unwrap();
    assert_eq!(x.to_vec(), [top.wrapping_add(5); 3], "direct, {}", rt.backend());
    let to_first = Map::new("to_first", &cells, &cells, 1, vec![0, 0, 1]).unwrap();
    let y = Dat::<i32>::filled("y", &cells, 1, top).unwrap();
    par_loop!(rt, add_five, cells, y(INC, to_first[0])).unwrap();
    assert_eq!(
        y.to_vec(),
        [top.wrapping_add(10), top.wrapping_add(5), top],
        "through a map, {}",
        rt.backend()
    );
}

/// A kernel's `const` items, computed from one another and sizing an
/// array, give what the Rust function gives.
pub fn constants_in_kernels(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let set = Set::new("values", 3).unwrap();
    let xs = vec![0.25, -2.0, 7.0];
    let x = Dat::from_vec("x", &set, 1, xs.clone()).unwrap();
    let out = Dat::<f64>::zeros("out", &set, 4).unwrap();
    par_loop!(rt, with_constants, set, x(READ), out(WRITE)).unwrap();
    let want: Vec<f64> = xs
        .iter()
        .flat_map(|x| {
            let mut o = [0.0; 4];
            with_constants(x, &mut o);
            o
        })
        .collect();
    assert_eq!(out.to_vec(), want, "{}", rt.backend());
}

/// Integer overflow wraps and shift amounts are masked to the type's width,
/// as in Rust's release builds, on every backend. C leaves both undefined
/// and its optimisers use that (`x + 1 > x` folded to true), so translated
/// kernels spell them through the prelude's wrapping helpers. Native
/// kernels in a debug build panic on overflow instead (Rust's rule), so
/// there only the translated backends run it.
pub fn integer_overflow_wraps_as_in_release_builds(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    if cfg!(debug_assertions) && matches!(rt.backend(), op2::Backend::Seq | op2::Backend::Rayon) {
        return;
    }
    let xs = [i32::MAX, i32::MIN, -7, 12_345];
    let ys = [i64::MAX, i64::MIN, -3, 1 << 40];
    let ss = [31u32, 32, 37, 63];
    let set = Set::new("values", 4).unwrap();
    let a = Dat::from_vec("a", &set, 1, xs.to_vec()).unwrap();
    let b = Dat::from_vec("b", &set, 1, ys.to_vec()).unwrap();
    let s = Dat::from_vec("s", &set, 1, ss.to_vec()).unwrap();
    let small = Dat::<i32>::zeros("small", &set, 8).unwrap();
    let wide = Dat::<i64>::zeros("wide", &set, 4).unwrap();
    let unsigned = Dat::<u32>::zeros("unsigned", &set, 2).unwrap();
    par_loop!(
        rt,
        overflowing,
        set,
        a(READ),
        b(READ),
        s(READ),
        small(WRITE),
        wide(WRITE),
        unsigned(WRITE)
    )
    .unwrap();
    let mut want_small = Vec::new();
    let mut want_wide = Vec::new();
    let mut want_unsigned = Vec::new();
    for ((&x, &y), &s) in xs.iter().zip(&ys).zip(&ss) {
        want_small.extend([
            x.wrapping_add(1),
            x.wrapping_mul(3),
            x.wrapping_neg(),
            if x.wrapping_add(1) > x { 1 } else { 2 },
            x.wrapping_shl(s),
            x.wrapping_shr(s),
            x.wrapping_abs(),
            x.wrapping_sub(2),
        ]);
        want_wide.extend([
            y.wrapping_add(y),
            y.wrapping_mul(7),
            y.wrapping_shl(s),
            y.wrapping_neg().wrapping_sub(1),
        ]);
        want_unsigned.extend([s.wrapping_shl(s), (s + 1).wrapping_shr(s)]);
    }
    assert_eq!(small.to_vec(), want_small, "{}", rt.backend());
    assert_eq!(wide.to_vec(), want_wide, "{}", rt.backend());
    assert_eq!(unsigned.to_vec(), want_unsigned, "{}", rt.backend());
}

pub fn f32_type(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let s = Set::new("s", 33).unwrap();
    let x = Dat::from_vec("x", &s, 2, (0..66).map(|i| i as f32).collect()).unwrap();
    let total = Global::<f32>::scalar("total", 0.0);
    par_loop!(rt, f32_ops, s, x(RW), total(INC)).unwrap();
    let want: Vec<f32> = (0..33)
        .flat_map(|e| [e as f32, e as f32 + (2 * e + 1) as f32])
        .collect();
    assert_eq!(x.to_vec(), want);
    let want_total: f32 = want.chunks(2).map(|p| p[1]).sum();
    assert!((total.value() - want_total).abs() <= 1e-4 * want_total);
}

pub fn empty_set(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let s = Set::new("empty", 0).unwrap();
    let nodes = Set::new("nodes", 3).unwrap();
    let m = Map::new("m", &s, &nodes, 2, vec![]).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let acc = Dat::filled("acc", &nodes, 1, 5.0).unwrap();
    let sum = Global::new("sum", vec![2.0, 2.0]).unwrap();
    let lo = Global::scalar("lo", 3.0);
    let hi = Global::scalar("hi", 4.0);
    par_loop!(rt, edge_spread, s, x(READ), acc(INC, m[0]), acc(INC, m[1])).unwrap();
    let xs = Dat::<f64>::zeros("xs", &s, 2).unwrap();
    par_loop!(rt, reduce_all, s, xs(READ), sum(INC), lo(MIN), hi(MAX)).unwrap();
    assert_eq!(acc.to_vec(), vec![5.0; 3]);
    assert_eq!(sum.data_ro().to_vec(), vec![2.0, 2.0]);
    assert_eq!((lo.value(), hi.value()), (3.0, 4.0));
}

pub fn loops_in_sequence_share_dats(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(53);
    let x = ramp(&m.nodes, 1, |i| i as f64);
    let flux = Dat::<f64>::zeros("flux", &m.edges, 1).unwrap();
    let acc = Dat::<f64>::zeros("acc", &m.nodes, 1).unwrap();
    for _ in 0..3 {
        par_loop!(
            rt,
            edge_diff,
            m.edges,
            flux(WRITE),
            x(READ, m.e2n[0]),
            x(READ, m.e2n[1])
        )
        .unwrap();
        par_loop!(
            rt,
            edge_spread,
            m.edges,
            flux(READ),
            acc(INC, m.e2n[0]),
            acc(INC, m.e2n[1])
        )
        .unwrap();
        par_loop!(rt, inc_by_index, m.nodes, x(INC), acc(READ)).unwrap();
    }
    let (mut xv, mut av) = ((0..53).map(|i| i as f64).collect::<Vec<_>>(), vec![0.0; 53]);
    for _ in 0..3 {
        let f: Vec<f64> = m
            .e2n_table
            .chunks(2)
            .map(|e| xv[e[1] as usize] - xv[e[0] as usize])
            .collect();
        for (e, ends) in m.e2n_table.chunks(2).enumerate() {
            av[ends[0] as usize] += f[e];
            av[ends[1] as usize] -= 2.0 * f[e];
        }
        for i in 0..53 {
            xv[i] += av[i] + 0.5;
        }
    }
    assert_close(&x.to_vec(), &xv);
}

pub fn timings_are_recorded(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let src = ramp(&m.nodes, 2, |i| i as f64);
    let dst = Dat::<f64>::zeros("dst", &m.nodes, 2).unwrap();
    par_loop!(rt, copy2, m.nodes, dst(WRITE), src(READ)).unwrap();
    par_loop!(rt, copy2, m.nodes, dst(WRITE), src(READ)).unwrap();
    let row = rt
        .timings()
        .into_iter()
        .find(|r| r.name == "copy2")
        .expect("copy2 timed");
    assert!(row.calls >= 2);
    // Two dim-2 f64 Dats over 37 elements, each moved once.
    assert_eq!(row.bytes_per_call, 2 * 37 * 2 * 8);
    assert!(rt.timing_summary().to_string().contains("copy2"));
}

pub fn many_blocks_inc_and_reductions(new_rt: &dyn Fn() -> Runtime) {
    // Big enough for several default-size blocks, and not a multiple of any.
    let rt = &new_rt();
    let m = mesh(5003);
    let w = ramp(&m.edges, 1, |i| ((i * 31) % 17) as f64 - 8.0);
    let acc = Dat::<f64>::zeros("acc", &m.nodes, 1).unwrap();
    par_loop!(
        rt,
        edge_spread,
        m.edges,
        w(READ),
        acc(INC, m.e2n[0]),
        acc(INC, m.e2n[1])
    )
    .unwrap();
    let mut want = vec![0.0; 5003];
    let wv = w.to_vec();
    for (e, ends) in m.e2n_table.chunks(2).enumerate() {
        want[ends[0] as usize] += wv[e];
        want[ends[1] as usize] -= 2.0 * wv[e];
    }
    assert_close(&acc.to_vec(), &want);
    let x = ramp(&m.nodes, 2, |i| ((i * 7) % 101) as f64 * 0.125);
    let sum = Global::new("sum", vec![0.0, 0.0]).unwrap();
    let lo = Global::scalar("lo", f64::INFINITY);
    let hi = Global::scalar("hi", f64::NEG_INFINITY);
    par_loop!(rt, reduce_all, m.nodes, x(READ), sum(INC), lo(MIN), hi(MAX)).unwrap();
    let xv = x.to_vec();
    let s0: f64 = xv.chunks(2).map(|p| p[0]).sum();
    let s1: f64 = xv.chunks(2).map(|p| p[0] * p[1]).sum();
    assert_close(&sum.data_ro(), &[s0, s1]);
    assert_eq!(lo.value(), xv.chunks(2).map(|p| p[1]).fold(f64::INFINITY, f64::min));
    assert_eq!(hi.value(), xv.chunks(2).map(|p| p[0]).fold(f64::NEG_INFINITY, f64::max));
}

pub fn set_smaller_than_a_block(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let nodes = Set::new("nodes", 2).unwrap();
    let edges = Set::new("edges", 3).unwrap();
    let e2n = Map::new("e2n", &edges, &nodes, 2, vec![0, 1, 1, 0, 1, 1]).unwrap();
    let w = Dat::from_vec("w", &edges, 1, vec![1.0, 10.0, 100.0]).unwrap();
    let acc = Dat::<f64>::zeros("acc", &nodes, 1).unwrap();
    par_loop!(rt, edge_spread, edges, w(READ), acc(INC, e2n[0]), acc(INC, e2n[1])).unwrap();
    assert_eq!(acc.to_vec(), vec![1.0 - 20.0, -2.0 + 10.0 + 100.0 - 200.0]);
}

/// Runs a sequence of loops with reductions and increments; returns every bit.
fn loop_sequence(rt: &Runtime) -> Vec<u64> {
    let m = mesh(3001);
    let x = ramp(&m.nodes, 1, |i| (i as f64).sin());
    let flux = Dat::<f64>::zeros("flux", &m.edges, 1).unwrap();
    let acc = Dat::<f64>::zeros("acc", &m.nodes, 1).unwrap();
    let sum = Global::new("sum", vec![0.0, 0.0]).unwrap();
    let lo = Global::scalar("lo", f64::INFINITY);
    let hi = Global::scalar("hi", f64::NEG_INFINITY);
    let pair = ramp(&m.nodes, 2, |i| (i as f64 * 0.37).cos());
    for _ in 0..4 {
        par_loop!(
            rt,
            edge_diff,
            m.edges,
            flux(WRITE),
            x(READ, m.e2n[0]),
            x(READ, m.e2n[1])
        )
        .unwrap();
        par_loop!(
            rt,
            edge_spread,
            m.edges,
            flux(READ),
            acc(INC, m.e2n[0]),
            acc(INC, m.e2n[1])
        )
        .unwrap();
        par_loop!(rt, inc_by_index, m.nodes, x(INC), acc(READ)).unwrap();
        par_loop!(rt, reduce_all, m.nodes, pair(READ), sum(INC), lo(MIN), hi(MAX)).unwrap();
    }
    let mut bits: Vec<u64> = x
        .to_vec()
        .iter()
        .chain(acc.to_vec().iter())
        .map(|v| v.to_bits())
        .collect();
    bits.extend(sum.data_ro().iter().map(|v| v.to_bits()));
    bits.push(lo.value().to_bits());
    bits.push(hi.value().to_bits());
    bits
}

/// Bitwise identical on deterministic runtimes; equal to rounding where the
/// order of additions varies (atomics on devices).
pub fn repeated_runs_are_bitwise_identical(new_rt: &dyn Fn() -> Runtime) {
    let rt = new_rt();
    let first = loop_sequence(&rt);
    let second = loop_sequence(&new_rt());
    if rt.is_deterministic() {
        assert!(first == second, "two runs of the same loops differ");
    } else {
        let f = |v: &[u64]| v.iter().map(|&b| f64::from_bits(b)).collect::<Vec<f64>>();
        assert_close(&f(&second), &f(&first));
    }
}

pub fn identical_loops_reuse_their_plan(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(101);
    let w = ramp(&m.edges, 1, |i| i as f64);
    let acc = Dat::<f64>::zeros("acc", &m.nodes, 1).unwrap();
    par_loop!(
        rt,
        edge_spread,
        m.edges,
        w(READ),
        acc(INC, m.e2n[0]),
        acc(INC, m.e2n[1])
    )
    .unwrap();
    let after_first = rt.plans_built();
    for _ in 0..3 {
        par_loop!(
            rt,
            edge_spread,
            m.edges,
            w(READ),
            acc(INC, m.e2n[0]),
            acc(INC, m.e2n[1])
        )
        .unwrap();
    }
    assert_eq!(rt.plans_built(), after_first, "a repeated loop must reuse its plan");
    // A loop that reads through maps only needs no plan.
    let out = Dat::<f64>::zeros("out", &m.edges, 1).unwrap();
    par_loop!(
        rt,
        edge_diff,
        m.edges,
        out(WRITE),
        acc(READ, m.e2n[0]),
        acc(READ, m.e2n[1])
    )
    .unwrap();
    assert_eq!(rt.plans_built(), after_first);
}

pub fn airfoil_matches_seq(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let mesh = generate(24, 16);
    let c = Constants::default();
    let reference_rt = Runtime::new(Backend::Seq).unwrap();
    let reference = AirfoilDsl::new(&mesh, &c).unwrap();
    let tested = AirfoilDsl::new(&mesh, &c).unwrap();
    for _ in 0..30 {
        let want = reference.iteration(&reference_rt).unwrap();
        let got = tested.iteration(rt).unwrap();
        assert!(((got - want) / want).abs() <= 1e-12, "rms {got:e} vs seq {want:e}");
    }
    // Each component against its largest magnitude (some are near zero).
    let (q, want_q) = (tested.q.to_vec(), reference.q.to_vec());
    for k in 0..4 {
        let scale = want_q.iter().skip(k).step_by(4).fold(0.0f64, |m, v| m.max(v.abs()));
        for (i, (g, w)) in q.iter().zip(&want_q).enumerate().skip(k).step_by(4) {
            assert!(
                (g - w).abs() <= 1e-12 * scale,
                "q[{i}]: {g:e} vs seq {w:e} (scale {scale:e})"
            );
        }
    }
}

/// A Dat written directly and through a map in one loop would race (the
/// planner colours map targets only): refused, naming both arguments; through
/// `Map::identity` the same loop is coloured and exact.
pub fn direct_and_indirect_writes_of_one_dat(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let n = 1000;
    let cells = Set::new("cells", n).unwrap();
    let next = Map::new(
        "next",
        &cells,
        &cells,
        1,
        (0..n as i32).map(|i| (i * 7 + 1) % n as i32).collect(),
    )
    .unwrap();
    let res = Dat::<f64>::zeros("res", &cells, 1).unwrap();
    let e = par_loop!(rt, self_and_next, cells, res(INC), res(INC, next[0])).unwrap_err();
    assert!(
        matches!(e, op2::Error::DirectAndIndirectWrite { first_index: 0, .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("argument 1") && text.contains("argument 0") && text.contains("`next`"),
        "{text}"
    );
    assert!(text.contains("Map::identity"), "{text}");
    assert_eq!(res.to_vec(), vec![0.0; n], "a refused loop writes nothing");

    let same = Map::identity("same", &cells);
    for _ in 0..3 {
        par_loop!(rt, self_and_next, cells, res(INC, same[0]), res(INC, next[0])).unwrap();
    }
    // Every element gets 1 from itself and 10 from the one element whose `next` it is.
    assert_eq!(res.to_vec(), vec![33.0; n]);
}

/// Two arguments storing to the same values of every element (WRITE or RW,
/// both directly or through the same map entry) are refused: backends that
/// stage arguments would keep the last write-back, one passing pointers
/// would apply both. Two increments are applied twice everywhere. Different entries of one map meet only where a row repeats a
/// target: that runs, and every backend keeps the last write-back there.
/// Reading one Dat twice is fine.
pub fn repeated_writes_of_the_same_values(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let n = 9;
    let cells = Set::new("cells", n).unwrap();
    let x = Dat::<f64>::filled("x", &cells, 1, 1.0).unwrap();
    let pairs = Map::new("pairs", &cells, &cells, 2, (0..n as i32).flat_map(|i| [i, i]).collect()).unwrap();
    let refused = [
        par_loop!(rt, self_and_next, cells, x(RW), x(RW)).unwrap_err(),
        par_loop!(rt, self_and_next, cells, x(WRITE), x(WRITE)).unwrap_err(),
        par_loop!(rt, self_and_next, cells, x(RW, pairs[1]), x(RW, pairs[1])).unwrap_err(),
    ];
    for e in refused {
        assert!(matches!(e, op2::Error::RepeatedWrite { first_index: 0, .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("argument 1") && text.contains("argument 0") && text.contains("pass it once"),
            "{text}"
        );
    }
    assert_eq!(x.to_vec(), vec![1.0; n], "a refused loop writes nothing");
    // Increments twice are applied twice, on every backend.
    let y = Dat::<f64>::filled("y", &cells, 1, 1.0).unwrap();
    par_loop!(rt, self_and_next, cells, y(INC), y(INC)).unwrap();
    assert_eq!(y.to_vec(), vec![12.0; n]);
    par_loop!(rt, self_and_next, cells, x(RW, pairs[0]), x(RW, pairs[1])).unwrap();
    assert_eq!(x.to_vec(), vec![11.0; n], "the second argument's write-back is kept");
    let sum = Dat::<f64>::zeros("sum", &cells, 1).unwrap();
    par_loop!(rt, sum_of_two, cells, x(READ), x(READ), sum(WRITE)).unwrap();
    assert_eq!(sum.to_vec(), vec![22.0; n]);
}

/// Float-to-integer `as` saturates and maps NaN to 0, as in Rust (a C cast of
/// an out-of-range value is undefined, and gives INT_MIN on x86).
pub fn float_to_int_casts_saturate(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let xs = vec![
        1e10,
        -1e10,
        f64::NAN,
        3.7,
        -3.7,
        f64::INFINITY,
        f64::NEG_INFINITY,
        2147483647.5,
        -2147483648.9,
        4294967295.9,
        9.3e18,
        -0.0,
    ];
    let n = xs.len();
    let set = Set::new("values", n).unwrap();
    let ys: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let x = Dat::from_vec("x", &set, 1, xs.clone()).unwrap();
    let y = Dat::from_vec("y", &set, 1, ys.clone()).unwrap();
    let a = Dat::<i32>::zeros("a", &set, 1).unwrap();
    let b = Dat::<i64>::zeros("b", &set, 1).unwrap();
    let c = Dat::<u32>::zeros("c", &set, 1).unwrap();
    let d = Dat::<i32>::zeros("d", &set, 1).unwrap();
    par_loop!(rt, casts, set, x(READ), y(READ), a(WRITE), b(WRITE), c(WRITE), d(WRITE)).unwrap();
    assert_eq!(a.to_vec(), xs.iter().map(|&v| v as i32).collect::<Vec<_>>());
    assert_eq!(b.to_vec(), xs.iter().map(|&v| v as i64).collect::<Vec<_>>());
    assert_eq!(c.to_vec(), xs.iter().map(|&v| v as u32).collect::<Vec<_>>());
    assert_eq!(d.to_vec(), ys.iter().map(|&v| v as i32).collect::<Vec<_>>());
}

/// `a * b + c` is rounded twice, as Rust rounds it, on every backend: a
/// compiler that contracts it into a fused multiply-add (OpenCL compilers
/// may, unless told not to) gives another answer for these inputs, whose
/// exact product needs one bit more than the type has.
pub fn multiply_adds_are_not_fused(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let (ef, ed) = (2f32.powi(-12), 2f64.powi(-27));
    let fs = [1.0 + ef, 1.0 + ef, -(1.0 + 2.0 * ef)];
    let ds = [1.0 + ed, 1.0 + ed, -(1.0 + 2.0 * ed)];
    let want = (fs[0] * fs[1] + fs[2], ds[0] * ds[1] + ds[2]);
    assert_eq!(want, (0.0, 0.0), "rounded twice, the product's last bit is lost");
    assert_ne!(
        (fs[0].mul_add(fs[1], fs[2]), ds[0].mul_add(ds[1], ds[2])),
        want,
        "fused, it is kept"
    );
    let set = Set::new("one", 1).unwrap();
    let f = Dat::from_vec("f", &set, 3, fs.to_vec()).unwrap();
    let d = Dat::from_vec("d", &set, 3, ds.to_vec()).unwrap();
    let out_f = Dat::<f32>::filled("out_f", &set, 1, f32::NAN).unwrap();
    let out_d = Dat::<f64>::filled("out_d", &set, 1, f64::NAN).unwrap();
    par_loop!(rt, multiply_add, set, f(READ), d(READ), out_f(WRITE), out_d(WRITE)).unwrap();
    assert_eq!((out_f.to_vec()[0], out_d.to_vec()[0]), want);
}

/// Double buffering: each step reads `cur` (directly and through the map),
/// writes `next`, then swaps them; no host access between steps, so on a
/// device the buffers and their states must swap too.
pub fn double_buffered_steps(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let cur = ramp(&m.nodes, 1, |i| (i % 8) as f64);
    let next = Dat::<f64>::filled("next", &m.nodes, 1, f64::NAN).unwrap();
    let mut want: Vec<f64> = (0..37).map(|i| (i % 8) as f64).collect();
    for _ in 0..5 {
        par_loop!(rt, halve, m.nodes, next(WRITE), cur(READ)).unwrap();
        par_loop!(
            rt,
            share_quarters,
            m.edges,
            next(INC, m.e2n[0]),
            next(INC, m.e2n[1]),
            cur(READ, m.e2n[0]),
            cur(READ, m.e2n[1])
        )
        .unwrap();
        cur.swap(&next).unwrap();
        let mut stepped: Vec<f64> = want.iter().map(|v| 0.5 * v).collect();
        for ends in m.e2n_table.chunks(2) {
            let (a, b) = (ends[0] as usize, ends[1] as usize);
            stepped[a] += 0.25 * want[b];
            stepped[b] += 0.25 * want[a];
        }
        want = stepped;
    }
    assert_close(&cur.to_vec(), &want);
    // A Dat borrowed by the host cannot swap, and the refusal changes nothing.
    let guard = next.data_ro();
    assert!(matches!(cur.swap(&next), Err(op2::Error::HostBorrow { .. })));
    drop(guard);
    assert_close(&cur.to_vec(), &want);
}

/// Counter-based random streams: every backend draws exactly the words Rust's
/// `Philox` gives for (seed, global id, call), whatever the threads or blocks,
/// and the same bits for the floats, normals included (their logarithm and
/// cosine are no math library's).
pub fn random_streams_match_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let agents = Set::with_global_ids("agents", (0..203u64).map(|i| i * 7919 + (1 << 33)).collect()).unwrap();
    let ids: Vec<i64> = agents.global_ids().iter().map(|&g| g as i64).collect();
    let id = Dat::from_vec("id", &agents, 1, ids.clone()).unwrap();
    let words = Dat::<u32>::zeros("words", &agents, 3).unwrap();
    let values = Dat::<f64>::zeros("values", &agents, 6).unwrap();
    for call in [0i64, 1, 77] {
        let seed = 0x5eed_0000_1234_i64;
        let key = Global::new("key", vec![seed, call]).unwrap();
        par_loop!(
            rt,
            random_draws,
            agents,
            words(WRITE),
            values(WRITE),
            id(READ),
            key(READ)
        )
        .unwrap();
        let (mut want_words, mut want_values) = (Vec::new(), Vec::new());
        for &g in &ids {
            let mut rng = Philox::new(seed as u64, g as u64, call as u32);
            want_words.extend([rng.next_u32(), rng.below(6), rng.below(1_000_000_007)]);
            want_values.extend([
                rng.uniform_f64(),
                rng.uniform_f32() as f64,
                if rng.bernoulli(0.3) { 1.0 } else { 0.0 },
                (rng.next_u64() >> 11) as f64,
                rng.normal_f64(),
                rng.normal_f32() as f64,
            ]);
        }
        assert_eq!(words.to_vec(), want_words, "call {call}");
        let got: Vec<u64> = values.to_vec().iter().map(|v| v.to_bits()).collect();
        let want: Vec<u64> = want_values.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "call {call}: the same bits");
    }
}

/// A `portable_math` kernel gives, on every backend, the bits its Rust
/// function gives (which calls op2's own math functions too).
pub fn portable_math_matches_rust_bit_for_bit(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let s = Set::new("s", 300).unwrap();
    let xs: Vec<f64> = (0..600)
        .map(|i| 0.1 + 19.9 * (f64::from(i) * 0.618_033_988_749_894_8).fract())
        .collect();
    let ys: Vec<f32> = (0..300)
        .map(|i| -3.0 + 6.0 * (i as f32 * 0.414_213_57).fract())
        .collect();
    let ns: Vec<i32> = (0..300).map(|i| i % 7 - 3).collect();
    let x = Dat::from_vec("x", &s, 2, xs.clone()).unwrap();
    let y = Dat::from_vec("y", &s, 1, ys.clone()).unwrap();
    let n = Dat::from_vec("n", &s, 1, ns.clone()).unwrap();
    par_loop!(rt, portable_waves, s, x(RW), y(RW), n(READ)).unwrap();
    let (mut want_x, mut want_y) = (Vec::new(), Vec::new());
    for e in 0..300 {
        let (mut xe, mut ye) = ([xs[2 * e], xs[2 * e + 1]], ys[e]);
        portable_waves(&mut xe, &mut ye, &ns[e]);
        want_x.extend(xe.map(f64::to_bits));
        want_y.push(ye.to_bits());
    }
    let got_x: Vec<u64> = x.to_vec().into_iter().map(f64::to_bits).collect();
    let got_y: Vec<u32> = y.to_vec().into_iter().map(f32::to_bits).collect();
    assert_eq!(got_x, want_x, "{}", rt.backend());
    assert_eq!(got_y, want_y, "{}", rt.backend());
}

/// Game of Life (examples/life): a blinker and a glider on a torus for a few
/// generations, cell for cell against the hand-written step.
pub fn life_blinker_and_glider(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let blinker = [(1, 2), (2, 2), (3, 2)];
    let glider_across_the_edges = [(7, 5), (8, 6), (6, 0), (7, 0), (8, 0)];
    for (w, h, alive) in [(5, 5, &blinker[..]), (9, 7, &glider_across_the_edges[..])] {
        let mut life = op2_life::Life::new(w, h, alive).unwrap();
        let mut by_hand = life.states();
        let mut scratch = vec![0; w * h];
        for generation in 1..=12 {
            life.step(rt).unwrap();
            op2_life::step_by_hand(w, h, &by_hand, &mut scratch);
            std::mem::swap(&mut by_hand, &mut scratch);
            assert_eq!(life.states(), by_hand, "{w}x{h}, generation {generation}");
            let population = life.population(rt).unwrap();
            assert_eq!(population, by_hand.iter().sum::<i32>() as u64);
            assert!(
                population == alive.len() as u64,
                "blinkers and gliders keep their population"
            );
        }
    }
}

/// SIR on a random network (examples/sir): the same states tick by tick as
/// the hand-written model, stochastic (each node's own random stream) and
/// with certain transmission and recovery.
pub fn sir_matches_the_hand_written_model(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let n = 90;
    let mut rng = Philox::new(17, 0, 0);
    let mut edges = Vec::new();
    while edges.len() < 240 {
        let (a, b) = (rng.below(n as u32) as usize, rng.below(n as u32) as usize);
        if a != b {
            edges.push((a, b));
        }
    }
    let ids: Vec<u64> = (0..n as u64).map(|i| (i * 2654435761) % 1_000_003).collect();
    for (pq, seed) in [((0.35, 0.2), 5u64), ((1.0, 1.0), 6)] {
        let want = op2_sir::sir_by_hand(&ids, &edges, 3, pq, seed, 60);
        let mut sir = op2_sir::Sir::new(n, Some(ids.clone()), &edges, 3, pq, seed).unwrap();
        assert_eq!(sir.states(), want[0]);
        for (tick, states) in want.iter().enumerate().skip(1) {
            let counts = sir.step(rt).unwrap();
            assert_eq!(&sir.states(), states, "p, q = {pq:?}, tick {tick}");
            let infected = states.iter().filter(|&&s| s == op2_sir::INFECTED).count() as u64;
            assert_eq!(counts.infected, infected);
        }
    }
}

/// A ragged graph on `n` nodes: degrees 0 to 12, repeated targets and self
/// loops included (kept as given), as CSR.
pub fn ragged_graph(n: usize) -> (Set, RaggedMap, Vec<usize>, Vec<i32>) {
    let nodes = Set::new("nodes", n).unwrap();
    let mut offsets = vec![0];
    let mut targets = Vec::new();
    let mut x = 12345u64;
    for e in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let degree = if e % 9 == 4 { 0 } else { (x >> 60) as usize % 13 };
        for k in 0..degree {
            let t = match k {
                1 => e,                                                 // a self loop
                2 if degree > 3 => targets[targets.len() - 1] as usize, // a repeat
                _ => ((x >> 20) as usize + k * 31) % n,
            };
            targets.push(t as i32);
        }
        offsets.push(targets.len());
    }
    let r = RaggedMap::new("nbrs", &nodes, &nodes, offsets.clone(), targets.clone()).unwrap();
    (nodes, r, offsets, targets)
}

/// READ through a ragged map, dim 1 and 2: every form a kernel reads a slice in.
pub fn ragged_read_matches_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let (nodes, r, offsets, targets) = ragged_graph(157);
    let vals = ramp(&nodes, 1, |i| ((i * 37) % 101) as f64 - 50.0);
    let pos = ramp(&nodes, 2, |i| (i % 13) as f64 * 0.25);
    let sum = Dat::<f64>::zeros("sum", &nodes, 1).unwrap();
    let moments = Dat::<f64>::zeros("moments", &nodes, 3).unwrap();
    let count = Dat::<i32>::zeros("count", &nodes, 1).unwrap();
    par_loop!(
        rt,
        ragged_read,
        nodes,
        vals(READ, r[..]),
        pos(READ, r[..]),
        sum(WRITE),
        moments(WRITE),
        count(WRITE)
    )
    .unwrap();
    let (v, p) = (vals.to_vec(), pos.to_vec());
    let (mut want_sum, mut want_moments, mut want_count) = (Vec::new(), Vec::new(), Vec::new());
    for e in 0..nodes.size() {
        let ts: Vec<usize> = targets[offsets[e]..offsets[e + 1]]
            .iter()
            .map(|&t| t as usize)
            .collect();
        let largest = ts.iter().map(|&t| v[t]).fold(-1.0e300, f64::max);
        want_sum.push(ts.iter().map(|&t| v[t]).sum::<f64>() + largest);
        want_moments.push(
            ts.iter()
                .enumerate()
                .map(|(j, &t)| p[2 * t] * (j as f64 + 1.0))
                .sum::<f64>(),
        );
        want_moments.push(ts.iter().map(|&t| p[2 * t + 1] * p[2 * t + 1]).sum::<f64>());
        want_moments.push(ts.last().map_or(0.0, |&t| v[t]));
        want_count.push(ts.len() as i32);
    }
    assert_close(&sum.to_vec(), &want_sum);
    assert_close(&moments.to_vec(), &want_moments);
    assert_eq!(count.to_vec(), want_count);
}

/// INC through a ragged map: repeated targets and self loops land once per
/// occurrence, and the planner keeps concurrent elements apart (values are
/// integers, so every order of the sums gives the same bits).
pub fn ragged_inc_matches_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let (nodes, r, offsets, targets) = ragged_graph(211);
    let share = ramp(&nodes, 1, |i| (i % 7) as f64);
    let out = Dat::<f64>::filled("out", &nodes, 1, 1.0).unwrap();
    let out2 = Dat::<f64>::zeros("out2", &nodes, 2).unwrap();
    let hits = Dat::<i32>::zeros("hits", &nodes, 1).unwrap();
    for _ in 0..2 {
        par_loop!(rt, ragged_spread, nodes, share(READ), out(INC, r[..]), out2(INC, r[..])).unwrap();
        par_loop!(rt, ragged_count, nodes, hits(INC, r[..])).unwrap();
    }
    let s = share.to_vec();
    let (mut want, mut want2, mut want_hits) = (
        vec![1.0; nodes.size()],
        vec![0.0; 2 * nodes.size()],
        vec![0; nodes.size()],
    );
    for _ in 0..2 {
        for e in 0..nodes.size() {
            for (j, &t) in targets[offsets[e]..offsets[e + 1]].iter().enumerate() {
                let t = t as usize;
                want[t] += s[e] * (j as f64 + 1.0);
                want2[2 * t] += s[e];
                want2[2 * t + 1] -= 1.0;
                want_hits[t] += 1;
            }
        }
    }
    assert_eq!(out.to_vec(), want);
    assert_eq!(out2.to_vec(), want2);
    assert_eq!(hits.to_vec(), want_hits);
}

/// The elements of `set` that `keep` picks: as a subset and as a list.
fn subset_of(name: &str, set: &Set, keep: impl Fn(usize) -> bool) -> (Subset, Vec<usize>) {
    let picked: Vec<usize> = (0..set.size()).filter(|&e| keep(e)).collect();
    let subset = Subset::filter(name, set, keep).unwrap();
    let want: Vec<i32> = picked.iter().map(|&e| e as i32).collect();
    assert_eq!(subset.indices(), &want[..]);
    (subset, picked)
}

/// Direct WRITE and RW over a subset: its elements change, the others keep
/// their values; indices given unsorted and repeated run once each.
pub fn subset_direct_write_and_rw(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(97);
    // Every third node and a run of neighbours: positions and elements differ.
    let (some, picked) = subset_of("some", &m.nodes, |e| e % 3 == 1 || (40..50).contains(&e));
    let src = ramp(&m.nodes, 2, |i| i as f64 * 0.25);
    let dst = Dat::filled("dst", &m.nodes, 2, -1.0).unwrap();
    par_loop!(rt, copy2, some, dst(WRITE), src(READ)).unwrap();
    let s = src.to_vec();
    let want: Vec<f64> = (0..2 * 97)
        .map(|i| if picked.contains(&(i / 2)) { s[i] } else { -1.0 })
        .collect();
    assert_eq!(dst.to_vec(), want);

    let x = ramp(&m.nodes, 2, |i| i as f64);
    let given = Subset::new("given", &m.nodes, vec![90, 3, 3, 57, 0, 96, 57]).unwrap();
    assert_eq!(given.indices(), &[0, 3, 57, 90, 96]);
    par_loop!(rt, affine_rw, &given, x(RW)).unwrap();
    par_loop!(rt, affine_rw, some, x(RW)).unwrap();
    let mut want: Vec<f64> = (0..2 * 97).map(|i| i as f64).collect();
    for e in [0, 3, 57, 90, 96].into_iter().chain(picked) {
        want[2 * e] = 2.0 * want[2 * e] + 1.0;
        want[2 * e + 1] = -want[2 * e + 1];
    }
    assert_eq!(x.to_vec(), want);
}

/// INC through map entries and through a whole map over subsets whose
/// elements share targets: the planner must colour the subset's elements.
pub fn subset_inc_through_maps(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(41);
    let (some, picked) = subset_of("some", &m.edges, |e| m.e2n_table[2 * e] % 2 == 0 || e == 41);
    let ends: Vec<i32> = picked
        .iter()
        .flat_map(|&e| [m.e2n_table[2 * e], m.e2n_table[2 * e + 1]])
        .collect();
    let mut distinct = ends.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() < ends.len(), "the subset's edges share nodes");
    let w = ramp(&m.edges, 1, |i| 1.0 + i as f64);
    let acc = ramp(&m.nodes, 1, |i| i as f64);
    par_loop!(rt, edge_spread, some, w(READ), acc(INC, m.e2n[0]), acc(INC, m.e2n[1])).unwrap();
    let mut want: Vec<f64> = (0..41).map(|i| i as f64).collect();
    for &e in &picked {
        want[m.e2n_table[2 * e] as usize] += 1.0 + e as f64;
        want[m.e2n_table[2 * e + 1] as usize] -= 2.0 * (1.0 + e as f64);
    }
    assert_close(&acc.to_vec(), &want);

    let (cells, picked) = subset_of("cells", &m.cells, |c| c % 4 != 2);
    let w = ramp(&m.cells, 1, |i| i as f64);
    let acc = Dat::<f64>::zeros("acc", &m.nodes, 2).unwrap();
    par_loop!(rt, cell_scatter, cells, w(READ), acc(INC, m.c2n)).unwrap();
    let mut want = vec![0.0; 2 * 41];
    for &c in &picked {
        for (k, &n) in m.c2n_table[3 * c..3 * c + 3].iter().enumerate() {
            want[2 * n as usize] += c as f64 * (k as f64 + 1.0);
            want[2 * n as usize + 1] += 1.0;
        }
    }
    assert_close(&acc.to_vec(), &want);
}

/// Global reductions over a subset see its elements only.
pub fn subset_global_reductions(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(97);
    let (some, picked) = subset_of("some", &m.nodes, |e| (e * 7) % 5 < 2);
    let x = ramp(&m.nodes, 2, |i| ((i * 13) % 31) as f64 - 7.5);
    let sum = Global::new("sum", vec![1.0, 0.0]).unwrap();
    let lo = Global::scalar("lo", 1e9);
    let hi = Global::scalar("hi", -1e9);
    par_loop!(rt, reduce_all, some, x(READ), sum(INC), lo(MIN), hi(MAX)).unwrap();
    let xv = x.to_vec();
    let s0: f64 = 1.0 + picked.iter().map(|&e| xv[2 * e]).sum::<f64>();
    let s1: f64 = picked.iter().map(|&e| xv[2 * e] * xv[2 * e + 1]).sum();
    assert_close(&sum.data_ro(), &[s0, s1]);
    assert_eq!(
        lo.value(),
        picked.iter().map(|&e| xv[2 * e + 1]).fold(f64::INFINITY, f64::min)
    );
    assert_eq!(
        hi.value(),
        picked.iter().map(|&e| xv[2 * e]).fold(f64::NEG_INFINITY, f64::max)
    );
    let ints = Dat::from_vec("ints", &m.nodes, 1, (0..97).collect()).unwrap();
    let count = Global::<i32>::scalar("count", 0);
    let biggest = Global::scalar("biggest", i32::MIN);
    par_loop!(rt, int_ops, some, ints(RW), count(INC), biggest(MAX)).unwrap();
    assert_eq!(count.value(), picked.len() as i32);
    assert_eq!(biggest.value(), *picked.last().unwrap() as i32 * 3 - 1);
}

/// READ and INC through a ragged map over a subset: each element's own
/// targets (by element, not by position).
pub fn subset_ragged_matches_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let (nodes, r, offsets, targets) = ragged_graph(157);
    let (some, picked) = subset_of("some", &nodes, |e| e % 4 != 0 && e % 11 != 3);
    let vals = ramp(&nodes, 1, |i| ((i * 37) % 101) as f64 - 50.0);
    let pos = ramp(&nodes, 2, |i| (i % 13) as f64 * 0.25);
    let sum = Dat::filled("sum", &nodes, 1, -7.0).unwrap();
    let moments = Dat::filled("moments", &nodes, 3, -7.0).unwrap();
    let count = Dat::filled("count", &nodes, 1, -7).unwrap();
    par_loop!(
        rt,
        ragged_read,
        some,
        vals(READ, r[..]),
        pos(READ, r[..]),
        sum(WRITE),
        moments(WRITE),
        count(WRITE)
    )
    .unwrap();
    let (v, p) = (vals.to_vec(), pos.to_vec());
    let (mut want_sum, mut want_moments, mut want_count) = (
        vec![-7.0; nodes.size()],
        vec![-7.0; 3 * nodes.size()],
        vec![-7; nodes.size()],
    );
    for &e in &picked {
        let ts: Vec<usize> = targets[offsets[e]..offsets[e + 1]]
            .iter()
            .map(|&t| t as usize)
            .collect();
        let largest = ts.iter().map(|&t| v[t]).fold(-1.0e300, f64::max);
        want_sum[e] = ts.iter().map(|&t| v[t]).sum::<f64>() + largest;
        want_moments[3 * e] = ts
            .iter()
            .enumerate()
            .map(|(j, &t)| p[2 * t] * (j as f64 + 1.0))
            .sum::<f64>();
        want_moments[3 * e + 1] = ts.iter().map(|&t| p[2 * t + 1] * p[2 * t + 1]).sum::<f64>();
        want_moments[3 * e + 2] = ts.last().map_or(0.0, |&t| v[t]);
        want_count[e] = ts.len() as i32;
    }
    assert_close(&sum.to_vec(), &want_sum);
    assert_close(&moments.to_vec(), &want_moments);
    assert_eq!(count.to_vec(), want_count);

    let share = ramp(&nodes, 1, |i| (i % 7) as f64);
    let out = Dat::<f64>::filled("out", &nodes, 1, 1.0).unwrap();
    let out2 = Dat::<f64>::zeros("out2", &nodes, 2).unwrap();
    let hits = Dat::<i32>::zeros("hits", &nodes, 1).unwrap();
    par_loop!(rt, ragged_spread, some, share(READ), out(INC, r[..]), out2(INC, r[..])).unwrap();
    par_loop!(rt, ragged_count, some, hits(INC, r[..])).unwrap();
    let s = share.to_vec();
    let (mut want, mut want2, mut want_hits) = (
        vec![1.0; nodes.size()],
        vec![0.0; 2 * nodes.size()],
        vec![0; nodes.size()],
    );
    for &e in &picked {
        for (j, &t) in targets[offsets[e]..offsets[e + 1]].iter().enumerate() {
            let t = t as usize;
            want[t] += s[e] * (j as f64 + 1.0);
            want2[2 * t] += s[e];
            want2[2 * t + 1] -= 1.0;
            want_hits[t] += 1;
        }
    }
    assert_eq!(out.to_vec(), want);
    assert_eq!(out2.to_vec(), want2);
    assert_eq!(hits.to_vec(), want_hits);
}

/// One loop with everything at once over a subset: a direct RW, a ragged
/// READ, an INC through a map whose targets the subset's elements share, and
/// a reduction; repeated, so that each step reads the last one's results.
pub fn subset_mixed_step_matches_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let (nodes, r, offsets, targets) = ragged_graph(173);
    let n = nodes.size();
    let table: Vec<i32> = (0..n).map(|e| ((e * 5) % 17) as i32).collect();
    let to17 = Map::new("to17", &nodes, &nodes, 1, table.clone()).unwrap();
    let (some, picked) = subset_of("some", &nodes, |e| e % 3 != 0);
    let x = ramp(&nodes, 1, |i| (i % 9) as f64);
    let nbr = ramp(&nodes, 1, |i| (i % 5) as f64 - 2.0);
    let next = Dat::<f64>::zeros("next", &nodes, 1).unwrap();
    let total = Global::scalar("total", 0.0);
    let (mut want_x, nv, mut want_next, mut want_total) = (x.to_vec(), nbr.to_vec(), vec![0.0; n], 0.0);
    for _ in 0..3 {
        par_loop!(
            rt,
            subset_step,
            some,
            x(RW),
            nbr(READ, r[..]),
            next(INC, to17[0]),
            total(INC)
        )
        .unwrap();
        for &e in &picked {
            let s: f64 = targets[offsets[e]..offsets[e + 1]]
                .iter()
                .map(|&t| nv[t as usize])
                .sum();
            want_x[e] = 0.5 * want_x[e] + s;
            want_next[table[e] as usize] += want_x[e];
            want_total += s;
        }
    }
    assert_close(&x.to_vec(), &want_x);
    assert_close(&next.to_vec(), &want_next);
    assert_close(&[total.value()], &[want_total]);
}

/// A loop over an empty subset runs nothing and succeeds, whatever it writes.
pub fn subset_empty(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(23);
    let none = Subset::filter("none", &m.edges, |_| false).unwrap();
    assert!(none.is_empty());
    let w = ramp(&m.edges, 1, |i| i as f64);
    let acc = Dat::filled("acc", &m.nodes, 1, 5.0).unwrap();
    par_loop!(rt, edge_spread, none, w(READ), acc(INC, m.e2n[0]), acc(INC, m.e2n[1])).unwrap();
    assert_eq!(acc.to_vec(), vec![5.0; 23]);
    let no_nodes = Subset::new("no nodes", &m.nodes, vec![]).unwrap();
    let x = ramp(&m.nodes, 2, |i| i as f64);
    let sum = Global::new("sum", vec![2.0, 2.0]).unwrap();
    let lo = Global::scalar("lo", 3.0);
    let hi = Global::scalar("hi", 4.0);
    par_loop!(rt, reduce_all, no_nodes, x(READ), sum(INC), lo(MIN), hi(MAX)).unwrap();
    let dst = Dat::filled("dst", &m.nodes, 2, -1.0).unwrap();
    par_loop!(rt, copy2, no_nodes, dst(WRITE), x(READ)).unwrap();
    assert_eq!(sum.data_ro().to_vec(), vec![2.0, 2.0]);
    assert_eq!((lo.value(), hi.value()), (3.0, 4.0));
    assert_eq!(dst.to_vec(), vec![-1.0; 46]);
}

/// A subset chosen by the values a loop just computed (on a device backend,
/// read back from the device), then a loop over it.
pub fn subset_where_dat(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(61);
    let x = ramp(&m.nodes, 2, |i| i as f64);
    par_loop!(rt, affine_rw, m.nodes, x(RW)).unwrap();
    // Now x[e] = (4e + 1, -(2e + 1)).
    let big = Subset::where_dat("big", &x, |v| v[0] > 60.0 && v[1] < -40.0).unwrap();
    let want: Vec<i32> = (20..61).collect();
    assert_eq!(big.indices(), &want[..]);
    par_loop!(rt, affine_rw, big, x(RW)).unwrap();
    let got = x.to_vec();
    for e in 0..61 {
        let (a, b) = (4.0 * e as f64 + 1.0, -(2.0 * e as f64 + 1.0));
        let want = if e >= 20 { [2.0 * a + 1.0, -b] } else { [a, b] };
        assert_eq!(&got[2 * e..2 * e + 2], &want, "element {e}");
    }
}

/// Lattices for the stencil tests: one that is all border, thin ones whose
/// offsets wrap onto the same site, and one whose rows span several blocks
/// of 7 and end inside them.
const LATTICES: [(usize, usize); 5] = [(1, 4), (2, 3), (4, 1), (7, 5), (33, 9)];

/// READ through a Stencil, whole (Moore, dim 2) and one entry (the
/// von Neumann right neighbour), over the whole set and over a subset,
/// against the stencil's table in Rust.
pub fn stencil_read_matches_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    for (w, h) in LATTICES {
        let cells = Set::new("cells", w * h).unwrap();
        let moore = Stencil::torus("moore", &cells, (w, h), &Stencil::MOORE).unwrap();
        let plus = Stencil::torus("plus", &cells, (w, h), &Stencil::VON_NEUMANN).unwrap();
        let pos = ramp(&cells, 2, |i| ((i * 37) % 101) as f64 - 50.0);
        let val = ramp(&cells, 1, |i| (i % 13) as f64);
        let out = Dat::<f64>::zeros("out", &cells, 2).unwrap();
        par_loop!(
            rt,
            stencil_gather,
            cells,
            out(WRITE),
            pos(READ, moore),
            val(READ, plus[2])
        )
        .unwrap();
        let (p, v, m, q) = (
            pos.to_vec(),
            val.to_vec(),
            moore.values().to_vec(),
            plus.values().to_vec(),
        );
        let want: Vec<f64> = (0..w * h)
            .flat_map(|e| {
                let around = &m[e * 8..e * 8 + 8];
                let a: f64 = around
                    .iter()
                    .enumerate()
                    .map(|(k, &t)| p[2 * t as usize] * (k as f64 + 1.0))
                    .sum();
                let b: f64 = around.iter().map(|&t| p[2 * t as usize + 1]).sum();
                [a + v[q[e * 4 + 2] as usize], b]
            })
            .collect();
        assert_close(&out.to_vec(), &want);

        // Over the odd-numbered cells: the subset's elements take the path
        // that wraps, whatever their place.
        let (odd, picked) = subset_of("odd", &cells, |e| e % 2 == 1);
        let sub = Dat::<f64>::filled("sub", &cells, 2, -1.0).unwrap();
        par_loop!(
            rt,
            stencil_gather,
            odd,
            sub(WRITE),
            pos(READ, moore),
            val(READ, plus[2])
        )
        .unwrap();
        let mut want_sub = vec![-1.0; 2 * w * h];
        for &e in &picked {
            want_sub[2 * e..2 * e + 2].copy_from_slice(&want[2 * e..2 * e + 2]);
        }
        assert_close(&sub.to_vec(), &want_sub);
    }
}

/// INC through a Stencil, one entry and whole: the planner colours through
/// the stencil's table; increments onto one site from several entries of one
/// element (thin lattices wrap) all land.
pub fn stencil_inc_matches_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    for (w, h) in LATTICES {
        let cells = Set::new("cells", w * h).unwrap();
        let moore = Stencil::torus("moore", &cells, (w, h), &Stencil::MOORE).unwrap();
        let plus = Stencil::torus("plus", &cells, (w, h), &Stencil::VON_NEUMANN).unwrap();
        let weight = ramp(&cells, 1, |i| (i % 5) as f64 + 1.0);
        let up = Dat::<f64>::filled("up", &cells, 1, 0.5).unwrap();
        let all = Dat::<f64>::zeros("all", &cells, 1).unwrap();
        for _ in 0..2 {
            par_loop!(
                rt,
                stencil_spread,
                cells,
                weight(READ),
                up(INC, moore[1]),
                all(INC, plus)
            )
            .unwrap();
        }
        let (wt, m, q) = (weight.to_vec(), moore.values().to_vec(), plus.values().to_vec());
        let (mut want_up, mut want_all) = (vec![0.5; w * h], vec![0.0; w * h]);
        for _ in 0..2 {
            for e in 0..w * h {
                want_up[m[e * 8 + 1] as usize] += wt[e];
                for k in 0..4 {
                    want_all[q[e * 4 + k] as usize] += wt[e] * (k as f64 + 1.0);
                }
            }
        }
        assert_eq!(up.to_vec(), want_up, "{w}x{h}");
        assert_eq!(all.to_vec(), want_all, "{w}x{h}");
    }
}

/// What `stream_draws` draws from one stream, in Rust.
fn draws_of(rng: &mut Philox) -> ([u32; 3], [f64; 6]) {
    (
        [rng.next_u32(), rng.below(6), rng.below(1_000_000_007)],
        [
            rng.uniform_f64(),
            rng.uniform_f32() as f64,
            if rng.bernoulli(0.3) { 1.0 } else { 0.0 },
            (rng.next_u64() >> 11) as f64,
            rng.normal_f64(),
            rng.normal_f32() as f64,
        ],
    )
}

/// A `&mut Philox` parameter given `streams(DRAW)`: element `e` of the
/// streams' `n`-th loop draws from `Philox::new(seed, global id, n)`, over a
/// set and over a subset, every loop a new counter.
pub fn stream_parameter_matches_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let agents = Set::with_global_ids("agents", (0..203u64).map(|i| i * 7919 + (1 << 33)).collect()).unwrap();
    let streams = RandomStreams::new("draws", 0x5eed_0000_1234);
    let (some, picked) = subset_of("some", &agents, |e| e % 3 != 1);
    for n in 0..3u32 {
        assert_eq!(streams.loops(), n);
        let words = Dat::<u32>::zeros("words", &agents, 3).unwrap();
        let values = Dat::<f64>::filled("values", &agents, 6, -1.0).unwrap();
        let over_subset = n == 1;
        if over_subset {
            par_loop!(rt, stream_draws, some, words(WRITE), streams(DRAW), values(WRITE)).unwrap();
        } else {
            par_loop!(rt, stream_draws, agents, words(WRITE), streams(DRAW), values(WRITE)).unwrap();
        }
        let (mut want_words, mut want_values) = (vec![0u32; 3 * 203], vec![-1.0f64; 6 * 203]);
        for e in 0..203 {
            if over_subset && !picked.contains(&e) {
                continue;
            }
            let mut rng = Philox::new(0x5eed_0000_1234, agents.global_id(e).unwrap(), n);
            let (w, v) = draws_of(&mut rng);
            want_words[3 * e..3 * e + 3].copy_from_slice(&w);
            want_values[6 * e..6 * e + 6].copy_from_slice(&v);
            // The streams' own account of the stream agrees.
            assert_eq!(draws_of(&mut streams.stream_of(&agents, e, n).unwrap()).0, w);
        }
        assert_eq!(words.to_vec(), want_words, "loop {n}");
        let got: Vec<u64> = values.to_vec().iter().map(|v| v.to_bits()).collect();
        let want: Vec<u64> = want_values.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "loop {n}: the same bits");
    }
    assert_eq!(streams.loops(), 3);
    // A loop that fails (a Dat on another set) runs nothing and draws nothing.
    let other = Set::new("other", 5).unwrap();
    let (words, values) = (
        Dat::<u32>::zeros("w", &other, 3).unwrap(),
        Dat::<f64>::zeros("v", &agents, 6).unwrap(),
    );
    assert!(par_loop!(rt, stream_draws, agents, words(WRITE), streams(DRAW), values(WRITE)).is_err());
    assert_eq!(streams.loops(), 3);
    streams.set_loops(1);
    assert_eq!(streams.loops(), 1);
}

/// Two stream parameters in one kernel (two RandomStreams, each with its own
/// counter), beside an increment through a map.
pub fn two_stream_parameters(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let m = mesh(37);
    let (a, b) = (RandomStreams::new("a", 1), RandomStreams::new("b", 2));
    b.set_loops(40);
    let hits = Dat::<f64>::zeros("hits", &m.nodes, 1).unwrap();
    let out = Dat::<u32>::zeros("out", &m.edges, 2).unwrap();
    par_loop!(
        rt,
        two_streams,
        m.edges,
        a(DRAW),
        hits(INC, m.e2n[1]),
        b(DRAW),
        out(WRITE)
    )
    .unwrap();
    let want: Vec<u32> = (0..m.edges.size() as u64)
        .flat_map(|e| [Philox::new(1, e, 0).next_u32(), Philox::new(2, e, 40).next_u32()])
        .collect();
    assert_eq!(out.to_vec(), want);
    let mut want_hits = vec![0.0; m.nodes.size()];
    for e in 0..m.edges.size() {
        want_hits[m.e2n_table[2 * e + 1] as usize] += 1.0;
    }
    assert_eq!(hits.to_vec(), want_hits);
    assert_eq!((a.loops(), b.loops()), (1, 41));
}
