//! One loop per access mode, argument form and element type, a loop over a
//! subset, plus one Airfoil iteration: what the code-generation tests compile for every
//! target (C snapshots, CUDA to PTX).

use op2::prelude::*;
use op2_airfoil::{generate, AirfoilDsl, Constants};

use super::kernels::*;

/// Runs every catalogue loop once on `rt`.
/// Reads through one map with 64-bit entries and adds through another
/// entry of it (the catalogue's long-map loop), beside a 32-bit map.
#[op2::kernel]
fn far_exchange(t: &f64, acc: &mut [f64; 2], e: &f64) {
    acc[0] += *t;
    acc[1] += *e;
}

pub fn run_catalogue(rt: &Runtime) {
    AirfoilDsl::new(&generate(4, 3), &Constants::default())
        .unwrap()
        .iteration(rt)
        .unwrap();
    let nodes = Set::new("nodes", 5).unwrap();
    let edges = Set::new("edges", 4).unwrap();
    let cells = Set::new("cells", 2).unwrap();
    let e2n = Map::new("e2n", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3, 3, 4]).unwrap();
    let same_edges = Map::identity("same_edges", &edges);
    let c2n = Map::new("c2n", &cells, &nodes, 3, vec![0, 1, 2, 2, 3, 4]).unwrap();
    let on_edges = Dat::<f64>::zeros("on_edges", &edges, 1).unwrap();
    let on_nodes = Dat::<f64>::zeros("on_nodes", &nodes, 1).unwrap();
    let pairs = Dat::<f64>::zeros("pairs", &nodes, 2).unwrap();
    let on_cells = Dat::<f64>::zeros("on_cells", &cells, 1).unwrap();
    let g2 = Global::new("g2", vec![0.0, 0.0]).unwrap();
    let lo = Global::scalar("lo", 0.0);
    let hi = Global::scalar("hi", 0.0);
    par_loop!(rt, cell_scatter, cells, on_cells(READ), pairs(INC, c2n)).unwrap();
    par_loop!(rt, reduce_all, nodes, pairs(READ), g2(INC), lo(MIN), hi(MAX)).unwrap();
    par_loop!(rt, node_min_via_map, edges, on_edges(READ), on_nodes(MIN, e2n[1])).unwrap();
    par_loop!(rt, node_write_via_map, edges, on_edges(READ), on_nodes(WRITE, e2n[0])).unwrap();
    par_loop!(rt, node_rw_via_map, edges, pairs(RW, e2n[0])).unwrap();
    // Through a map with 64-bit entries (LongMap): only its table is read as such.
    let e2n_long = LongMap::new("e2n_long", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3, 3, 4]).unwrap();
    par_loop!(
        rt,
        far_exchange,
        edges,
        on_nodes(READ, e2n_long[1]),
        pairs(INC, e2n_long[0]),
        on_edges(READ, same_edges[0])
    )
    .unwrap();
    let ints = Dat::<i32>::zeros("ints", &nodes, 1).unwrap();
    let count = Global::<i32>::scalar("count", 0);
    let biggest = Global::<i32>::scalar("biggest", 0);
    par_loop!(rt, int_ops, nodes, ints(RW), count(INC), biggest(MAX)).unwrap();
    let f = Dat::<f32>::zeros("f", &nodes, 2).unwrap();
    let total = Global::<f32>::scalar("total", 0.0);
    par_loop!(rt, f32_ops, nodes, f(RW), total(INC)).unwrap();
    let a = Dat::<u32>::zeros("a", &nodes, 1).unwrap();
    let b = Dat::<i64>::zeros("b", &nodes, 1).unwrap();
    par_loop!(rt, u32_i64_ops, nodes, a(READ), b(INC)).unwrap();
    // A kernel drawing from a counter-based random stream.
    let words = Dat::<u32>::zeros("words", &nodes, 3).unwrap();
    let values = Dat::<f64>::zeros("values", &nodes, 6).unwrap();
    let id = Dat::from_vec("id", &nodes, 1, vec![10i64, 11, 12, 13, 14]).unwrap();
    let key = Global::new("key", vec![5i64, 0]).unwrap();
    par_loop!(
        rt,
        random_draws,
        nodes,
        words(WRITE),
        values(WRITE),
        id(READ),
        key(READ)
    )
    .unwrap();
    // A spatial message list: its variables read whole, its bins through `list(NEAR)`.
    let near_pos = Dat::from_vec(
        "near_pos",
        &nodes,
        2,
        vec![0.5f32, 0.5, 1.5, 0.5, 2.5, 2.5, 0.5, 1.5, 9.0, -3.0],
    )
    .unwrap();
    let grid = SpatialGrid::new_2d("near", [0.0; 2], [3.0; 2], 1.0, Boundary::Clamp).unwrap();
    let near = MessageList::spatial("near", grid, &near_pos).unwrap();
    let near_id = near.carry(&a).unwrap();
    near.build().unwrap();
    let near_n = Dat::<i32>::zeros("near_n", &nodes, 1).unwrap();
    par_loop!(
        rt,
        near_count,
        nodes,
        near_pos(READ),
        near_n(WRITE),
        near_id(READ, near[..]),
        near(NEAR)
    )
    .unwrap();
    // A discrete message list: the cells within a radius.
    let cell = Dat::from_vec("cell", &nodes, 2, vec![0, 0, 1, 0, 2, 2, 0, 1, 7, -3]).unwrap();
    let cells_grid = SpatialGrid::discrete_2d("cells", [3, 3], Boundary::Wrap).unwrap();
    let cells_list = MessageList::spatial("cells", cells_grid, &cell).unwrap();
    let cells_id = cells_list.carry(&a).unwrap();
    cells_list.build().unwrap();
    par_loop!(
        rt,
        within_count,
        nodes,
        cell(READ),
        near_n(WRITE),
        cells_id(READ, cells_list[..]),
        cells_list(NEAR)
    )
    .unwrap();
    // Through a ragged map: READ (dim 1 and 2) and INC (f64 and i32).
    let nbrs = RaggedMap::new(
        "nbrs",
        &nodes,
        &nodes,
        vec![0, 2, 2, 5, 6, 7],
        vec![1, 4, 0, 0, 3, 2, 4],
    )
    .unwrap();
    let (sum, moments, degree) = (
        Dat::<f64>::zeros("sum", &nodes, 1).unwrap(),
        Dat::<f64>::zeros("moments", &nodes, 3).unwrap(),
        Dat::<i32>::zeros("degree", &nodes, 1).unwrap(),
    );
    par_loop!(
        rt,
        ragged_read,
        nodes,
        on_nodes(READ, nbrs[..]),
        pairs(READ, nbrs[..]),
        sum(WRITE),
        moments(WRITE),
        degree(WRITE)
    )
    .unwrap();
    par_loop!(
        rt,
        ragged_spread,
        nodes,
        on_nodes(READ),
        sum(INC, nbrs[..]),
        pairs(INC, nbrs[..])
    )
    .unwrap();
    par_loop!(rt, ragged_count, nodes, ints(INC, nbrs[..])).unwrap();
    // Over a subset: a direct RW, a ragged READ, an INC through a map and a reduction.
    let some = Subset::new("some", &nodes, vec![3, 0, 2]).unwrap();
    let n2n = Map::new("n2n", &nodes, &nodes, 1, vec![1, 1, 3, 1, 0]).unwrap();
    let next = Dat::<f64>::zeros("next", &nodes, 1).unwrap();
    let subset_total = Global::scalar("subset_total", 0.0);
    par_loop!(
        rt,
        subset_step,
        some,
        sum(RW),
        on_nodes(READ, nbrs[..]),
        next(INC, n2n[0]),
        subset_total(INC)
    )
    .unwrap();
    // A random stream as a kernel parameter (`streams(DRAW)`).
    let streams = RandomStreams::new("streams", 5);
    par_loop!(rt, stream_draws, nodes, words(WRITE), streams(DRAW), values(WRITE)).unwrap();
    // Through a stencil (generated code reads its table).
    let lattice = Set::new("lattice", 6).unwrap();
    let moore = Stencil::torus("moore", &lattice, (3, 2), &Stencil::MOORE).unwrap();
    let (at, around) = (
        Dat::<f64>::zeros("at", &lattice, 2).unwrap(),
        Dat::<f64>::zeros("around", &lattice, 2).unwrap(),
    );
    let right = Dat::<f64>::zeros("right", &lattice, 1).unwrap();
    par_loop!(
        rt,
        stencil_gather,
        lattice,
        at(WRITE),
        around(READ, moore),
        right(READ, moore[4])
    )
    .unwrap();
    // Births and deaths: a `&mut Fate` parameter (`life(FATE)`) and an offspring Dat.
    let agents = Set::dynamic("agents", 4, 4).unwrap();
    let mass = Dat::from_vec("mass", &agents, 1, vec![0.5, 2.0, -1.0, 3.0]).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    let child_mass = life.offspring(&mass).unwrap();
    par_loop!(rt, split_or_die, agents, mass(RW), child_mass(WRITE), life(FATE)).unwrap();
}
