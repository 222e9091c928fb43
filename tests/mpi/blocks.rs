//! Distribution from blocks (`Mpi::distribute_blocks`): each rank gives only
//! its block of rows of every table; given the in-memory path's partition,
//! every rank ends with exactly the in-memory path's local sets (regions and
//! global ids), map tables and Dats, halos included; bad input is an error on
//! every rank.

use op2::mpi::{block_rows, BlockMesh, BlockPartitioner, Mpi, Partitioner};
use op2::prelude::*;
use op2_airfoil::generate;

/// Some partition of the cells, the same on every rank, not in blocks.
fn owner(cell: usize, nranks: u32) -> u32 {
    (((cell / 37) * 5 + cell % 3) % nranks as usize) as u32
}

/// This rank's block of a table of `width` values per row.
fn block<T: Copy>(all: &[T], width: usize, n: usize, mpi: &Mpi) -> Vec<T> {
    let rows = block_rows(n, mpi.rank() as u32, mpi.size() as u32);
    all[rows.start * width..rows.end * width].to_vec()
}

pub fn blocks_distribute_as_the_in_memory_path(mpi: &Mpi) {
    let (rank, size) = (mpi.rank() as u32, mpi.size() as u32);
    let m = generate(12, 8);
    let nodes = Set::new("nodes", m.nnode()).unwrap();
    let edges = Set::new("edges", m.nedge()).unwrap();
    let bedges = Set::new("bedges", m.nbedge()).unwrap();
    let cells = Set::new("cells", m.ncell()).unwrap();
    let maps = [
        Map::new("pedge", &edges, &nodes, 2, m.edge.clone()).unwrap(),
        Map::new("pecell", &edges, &cells, 2, m.ecell.clone()).unwrap(),
        Map::new("pbedge", &bedges, &nodes, 2, m.bedge.clone()).unwrap(),
        Map::new("pbecell", &bedges, &cells, 1, m.becell.clone()).unwrap(),
        Map::new("pcell", &cells, &nodes, 4, m.cell.clone()).unwrap(),
    ];
    let x = Dat::from_vec("x", &nodes, 2, m.x.clone()).unwrap();
    let bound = Dat::from_vec("bound", &bedges, 1, m.bound.clone()).unwrap();
    let owners: Vec<u32> = (0..m.ncell()).map(|c| owner(c, size)).collect();
    let sets = [&nodes, &edges, &bedges, &cells];
    let d = mpi
        .distribute_with(
            &sets,
            &maps.iter().collect::<Vec<_>>(),
            &[],
            &cells,
            &Partitioner::Given(owners.clone()),
        )
        .unwrap();

    let mut b = BlockMesh::new(rank, size);
    let ids: Vec<_> = sets.iter().map(|s| b.add_set(s.name(), s.size())).collect();
    let index = |s: &Set| sets.iter().position(|x| x.same(s)).unwrap();
    for map in &maps {
        let (from, to) = (index(map.from_set()), index(map.to_set()));
        let rows = block(map.values(), map.arity(), sets[from].size(), mpi);
        b.add_map(map.name(), ids[from], ids[to], map.arity(), rows);
    }
    b.add_dat("x", ids[0], 2, block(&m.x, 2, m.nnode(), mpi));
    b.add_dat("bound", ids[2], 1, block(&m.bound, 1, m.nbedge(), mpi));
    let mine = block(&owners, 1, m.ncell(), mpi);
    let blocks = mpi
        .distribute_blocks(b, "cells", &BlockPartitioner::Given(mine))
        .unwrap();

    for s in sets {
        let (want, got) = (d.set(s).unwrap(), blocks.set(s.name()).unwrap());
        assert_eq!(got.regions(), want.regions(), "rank {rank}: regions of {}", s.name());
        assert_eq!(
            got.global_ids(),
            want.global_ids(),
            "rank {rank}: elements of {}",
            s.name()
        );
    }
    for map in &maps {
        let (want, got) = (d.map(map).unwrap(), blocks.map(map.name()).unwrap());
        assert_eq!(
            got.values(),
            want.values(),
            "rank {rank}: local table of {}",
            map.name()
        );
    }
    assert_eq!(
        blocks.dat::<f64>("x").unwrap().to_vec(),
        d.dat(&x).unwrap().to_vec(),
        "rank {rank}: x"
    );
    assert_eq!(
        blocks.dat::<i32>("bound").unwrap().to_vec(),
        d.dat(&bound).unwrap().to_vec(),
        "rank {rank}: bound"
    );
    // And back: the owned rows return to the blocks they came from.
    let local_x = blocks.dat::<f64>("x").unwrap();
    assert_eq!(blocks.to_blocks(&local_x).unwrap(), block(&m.x, 2, m.nnode(), mpi));
    let e = blocks.dat::<f32>("x").unwrap_err();
    assert!(e.to_string().contains("dat `x` was distributed as f64, not f32"), "{e}");
    // The halos exchange: a loop over edges incrementing cells through
    // pecell sums, on every rank, what it sums on one.
    let seq = Runtime::new(Backend::Seq).unwrap();
    let g_count = Dat::<f64>::zeros("count", &cells, 1).unwrap();
    let l_cells = blocks.set("cells").unwrap();
    let l_count = Dat::<f64>::zeros("count", &l_cells, 1).unwrap();
    let g_pecell = &maps[1];
    par_loop!(seq, tally, edges, g_count(INC, g_pecell[0]), g_count(INC, g_pecell[1])).unwrap();
    let l_edges = blocks.set("edges").unwrap();
    let l_pecell = blocks.map("pecell").unwrap();
    par_loop!(
        seq,
        tally,
        l_edges,
        l_count(INC, l_pecell[0]),
        l_count(INC, l_pecell[1])
    )
    .unwrap();
    let want = g_count.to_vec();
    let got = l_count.to_vec();
    for (l, &g) in l_cells.global_ids()[..l_cells.size()].iter().enumerate() {
        assert_eq!(got[l], want[g as usize], "rank {rank}: cell {g}'s edges");
    }
}

#[op2::kernel]
fn tally(a: &mut f64, b: &mut f64) {
    *a += 1.0;
    *b += 1.0;
}

/// A mistake on one rank is an error on every rank, naming it.
pub fn bad_blocks_are_an_error_on_every_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank() as u32, mpi.size() as u32);
    let mut b = BlockMesh::new(rank, size);
    let cells = b.add_set("cells", 10);
    let nodes = b.add_set("nodes", 4);
    let n = b.rows(cells).len();
    // The last rank points one row outside the nodes.
    let rows: Vec<i32> = (0..n).map(|i| if rank == size - 1 && i == 0 { 4 } else { 1 }).collect();
    b.add_map("c2n", cells, nodes, 1, rows);
    let e = mpi
        .distribute_blocks(b, "cells", &BlockPartitioner::FileOrder)
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("map `c2n`: row") && e.to_string().contains("outside `nodes`"),
        "{e}"
    );
    let mut b = BlockMesh::new(rank, size);
    b.add_set("cells", 10);
    let e = mpi
        .distribute_blocks(b, "faces", &BlockPartitioner::FileOrder)
        .err()
        .unwrap();
    assert!(e.to_string().contains("no set named `faces`"), "{e}");
}
