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

    let (b, _) = generated_blocks(&m, mpi, true);
    let mine = block(&owners, 1, m.ncell(), mpi);
    let mut blocks = mpi
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
    // A set not of the mesh on one rank: an error on every rank, not a
    // rank left in the exchange.
    {
        use op2::mpi::SpreadMesh;
        let stray = Set::new("stray", 3).unwrap();
        let set = if rank as usize == mpi.size() - 1 {
            &stray
        } else {
            local_x.set()
        };
        let owned = local_x.set().regions().owned_size();
        let bytes = vec![0u8; if set.same(&stray) { 0 } else { owned * 16 }];
        let e = blocks.rows_to_blocks(set, &bytes, 16).unwrap_err();
        assert!(
            e.to_string().contains("stray") || e.to_string().contains("rank"),
            "rank {rank}: {e}"
        );
    }
    let e = blocks.dat::<f32>("x").unwrap_err();
    assert!(e.to_string().contains("dat `x` was distributed as f64, not f32"), "{e}");
    // Taken, a Dat is handed over under its new name with the same values,
    // and the distribution keeps none of it.
    let e = blocks.take_dat::<f32>("bound", "b").unwrap_err();
    assert!(
        e.to_string().contains("dat `bound` was distributed as i32, not f32"),
        "{e}"
    );
    let taken = blocks.take_dat::<i32>("bound", "b").unwrap();
    assert_eq!(taken.name(), "b");
    assert_eq!(
        taken.to_vec(),
        d.dat(&bound).unwrap().to_vec(),
        "rank {rank}: bound taken"
    );
    for e in [
        blocks.dat::<i32>("bound").unwrap_err(),
        blocks.take_dat::<i32>("bound", "b").unwrap_err(),
    ] {
        assert!(e.to_string().contains("dat `bound` was taken already"), "{e}");
    }
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

/// The generated mesh's blocks on this rank: its sets and maps, and its
/// Dats `x` and `bound` where `with_dats`.
fn generated_blocks(m: &op2_airfoil::Mesh, mpi: &Mpi, with_dats: bool) -> (BlockMesh, [op2::mpi::BlockSetId; 4]) {
    let mut b = BlockMesh::new(mpi.rank() as u32, mpi.size() as u32);
    let nodes = b.add_set("nodes", m.nnode());
    let edges = b.add_set("edges", m.nedge());
    let bedges = b.add_set("bedges", m.nbedge());
    let cells = b.add_set("cells", m.ncell());
    for (name, from, n, to, arity, values) in [
        ("pedge", edges, m.nedge(), nodes, 2, &m.edge),
        ("pecell", edges, m.nedge(), cells, 2, &m.ecell),
        ("pbedge", bedges, m.nbedge(), nodes, 2, &m.bedge),
        ("pbecell", bedges, m.nbedge(), cells, 1, &m.becell),
        ("pcell", cells, m.ncell(), nodes, 4, &m.cell),
    ] {
        b.add_map(name, from, to, arity, block(values, arity, n, mpi));
    }
    let ids = [nodes, edges, bedges, cells];
    if with_dats {
        add_generated_dats(&mut b, m, mpi, ids);
    }
    (b, ids)
}

fn add_generated_dats(b: &mut BlockMesh, m: &op2_airfoil::Mesh, mpi: &Mpi, ids: [op2::mpi::BlockSetId; 4]) {
    b.add_dat("x", ids[0], 2, block(&m.x, 2, m.nnode(), mpi));
    b.add_dat("bound", ids[2], 1, block(&m.bound, 1, m.nbedge(), mpi));
}

/// Dats read after the cut (`distribute_blocks_with`) end where Dats read
/// before it do, under PT-Scotch's cut where built with it: the same local
/// sets and the same local values, the reader called once on every rank.
pub fn dats_read_after_the_cut_distribute_alike(mpi: &Mpi) {
    let rank = mpi.rank();
    let m = generate(12, 8);
    let (before, _) = generated_blocks(&m, mpi, true);
    let mut want = mpi
        .distribute_blocks(before, "cells", &BlockPartitioner::default())
        .unwrap();
    let (after, ids) = generated_blocks(&m, mpi, false);
    let mut calls = 0;
    let mut got = mpi
        .distribute_blocks_with(after, "cells", &BlockPartitioner::default(), |b| {
            calls += 1;
            add_generated_dats(b, &m, mpi, ids);
            Ok(())
        })
        .unwrap();
    assert_eq!(calls, 1, "rank {rank}: the reader ran {calls} times");
    for s in ["nodes", "edges", "bedges", "cells"] {
        let (w, g) = (want.set(s).unwrap(), got.set(s).unwrap());
        assert_eq!(g.regions(), w.regions(), "rank {rank}: regions of {s}");
        assert_eq!(g.global_ids(), w.global_ids(), "rank {rank}: elements of {s}");
    }
    assert_eq!(
        got.take_dat::<f64>("x", "x").unwrap().to_vec(),
        want.take_dat::<f64>("x", "x").unwrap().to_vec(),
        "rank {rank}: x"
    );
    assert_eq!(
        got.take_dat::<i32>("bound", "bound").unwrap().to_vec(),
        want.take_dat::<i32>("bound", "bound").unwrap().to_vec(),
        "rank {rank}: bound"
    );
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
    // A reader of Dats after the cut that fails, or finds a mistake, on one
    // rank fails the distribution on every rank, with that rank's reason.
    let last = size - 1;
    let m = generate(6, 4);
    for refuse in [false, true] {
        let (b, _) = generated_blocks(&m, mpi, false);
        let e = mpi
            .distribute_blocks_with(b, "cells", &BlockPartitioner::FileOrder, |b| {
                match (rank == last, refuse) {
                    (false, _) => Ok(()),
                    (true, false) => Err(op2::Error::Mpi {
                        reason: "p_q: cannot read rows".into(),
                    }),
                    (true, true) => {
                        b.refuse("p_q: a density below zero".into());
                        Ok(())
                    }
                }
            })
            .err()
            .unwrap();
        let want = if refuse {
            "a density below zero"
        } else {
            "cannot read rows"
        };
        assert!(e.to_string().contains(want), "rank {rank}: {e}");
    }
    // Sets, maps or Dats that differ between ranks would leave the ranks
    // in different exchanges: an error on every rank instead.
    if size > 1 {
        let (mut b, _) = generated_blocks(&m, mpi, false);
        if rank == last {
            b.add_set("extra", 5);
        }
        let e = mpi
            .distribute_blocks(b, "cells", &BlockPartitioner::FileOrder)
            .err()
            .unwrap();
        // The rank apart from the others says what it has, or (where its
        // digest is the lowest) the lowest of the others does.
        let e = e.to_string();
        assert!(
            e.contains("sets, maps, primary set and partitioner differ from another rank's"),
            "rank {rank}: {e}"
        );
        assert_eq!(
            e.contains("set `extra` of 5"),
            e.contains(&format!("rank {last}'s")),
            "rank {rank}: {e}"
        );
        let (b, ids) = generated_blocks(&m, mpi, false);
        let e = mpi
            .distribute_blocks_with(b, "cells", &BlockPartitioner::FileOrder, |b| {
                add_generated_dats(b, &m, mpi, ids);
                if rank == last {
                    let n = b.rows(ids[3]).len();
                    b.add_dat("extra", ids[3], 1, vec![0.0f64; n]);
                }
                Ok(())
            })
            .err()
            .unwrap();
        let e = e.to_string();
        assert!(
            e.contains("sets, maps and Dats differ from another rank's"),
            "rank {rank}: {e}"
        );
        assert_eq!(
            e.contains("Dat `extra` on `cells`"),
            e.contains(&format!("rank {last}'s")),
            "rank {rank}: {e}"
        );
    }
}

/// Choices that decide the exchanges, made differently on one rank, and a
/// mesh one rank cannot hold: an error on every rank, never a rank that
/// goes on alone into an exchange the others have left.
pub fn choices_and_failures_of_one_rank_fail_every_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank() as u32, mpi.size() as u32);
    let m = generate(6, 4);
    if size > 1 {
        let (b, _) = generated_blocks(&m, mpi, false);
        let primary = if rank == size - 1 { "nodes" } else { "cells" };
        let e = mpi
            .distribute_blocks(b, primary, &BlockPartitioner::FileOrder)
            .err()
            .expect("primary sets differ");
        assert!(
            e.to_string()
                .contains("sets, maps, primary set and partitioner differ from another rank's"),
            "rank {rank}: {e}"
        );
    }
    if size == 2 {
        // Rank 1 owns cell 1, which reads f0 (rank 0's) in its halo; f0's
        // row points into `t`, of which rank 1 reaches nothing.
        let mut b = BlockMesh::new(rank, size);
        let c = b.add_set("c", 2);
        let f = b.add_set("f", 1);
        let t = b.add_set("t", 1);
        let rows = |b: &BlockMesh, s| vec![0; b.rows(s).len()];
        let (c2f, f2t) = (rows(&b, c), rows(&b, f));
        b.add_map("c2f", c, f, 1, c2f);
        b.add_map("f2t", f, t, 1, f2t);
        let e = mpi
            .distribute_blocks(b, "c", &BlockPartitioner::FileOrder)
            .err()
            .expect("a rank holds no element of `t`");
        assert!(
            e.to_string().contains("map `f2t`: rank 1 holds 1 element of `f`")
                && e.to_string().contains("cannot be distributed yet"),
            "rank {rank}: {e}"
        );
    }
}

/// No rank allocates a table of a whole set while distributing from blocks.
///
/// The mesh: 90 000 points (the large set: a 4-byte Dat, a map of one
/// entry to its cell) in 1 009 cells on a ring. A table of every point takes
/// at least 4 × 90 000 bytes; on 3 or more ranks every table a rank needs
/// is smaller, even where a vector grew by doubling (a third of the points
/// at 8 bytes, rounded up to a power of two, is 262 144 bytes), so no Rust
/// allocation (MPI's and Scotch's C allocations are not seen) may reach
/// that size. On 2 ranks a rank holds half of the points, whose 8-byte
/// tables are as large as a whole set's 4-byte one: the size says nothing
/// there. The in-memory path, which holds whole sets, is caught by the same
/// check, so the check can fail.
pub fn no_rank_allocates_a_whole_set(mpi: &Mpi) {
    const POINTS: usize = 90_000;
    const CELLS: usize = 1_009;
    const WHOLE_TABLE: usize = 4 * POINTS;
    let (rank, size) = (mpi.rank() as u32, mpi.size() as u32);
    let cell_of = |p: usize| (p * CELLS / POINTS) as i32;
    let (sizes, d) = super::allocations::sizes_during(|| {
        let mut b = BlockMesh::new(rank, size);
        let cells = b.add_set("cells", CELLS);
        let points = b.add_set("points", POINTS);
        let ring = b
            .rows(cells)
            .flat_map(|c| [c as i32, ((c + 1) % CELLS) as i32])
            .collect();
        b.add_map("neighbour", cells, cells, 2, ring);
        b.add_map("cell", points, cells, 1, b.rows(points).map(cell_of).collect());
        b.add_dat("w", points, 1, b.rows(points).map(|p| p as i32).collect());
        mpi.distribute_blocks(b, "cells", &BlockPartitioner::default()).unwrap()
    });
    let largest = sizes.iter().copied().max().unwrap_or(0);
    if size > 2 {
        assert!(
            largest < WHOLE_TABLE,
            "rank {rank} of {size}: an allocation of {largest} bytes while distributing from blocks, as large as a \
             table of all {POINTS} points"
        );
    }
    // What it built is whole: every point owned once, with its value.
    let points = d.set("points").unwrap();
    let mut owned = [points.size() as u64];
    mpi.sum_u64(&mut owned);
    assert_eq!(owned[0], POINTS as u64);
    let w = d.dat::<i32>("w").unwrap().to_vec();
    for (l, &g) in points.global_ids().iter().enumerate() {
        assert_eq!(w[l], g as i32, "rank {rank}: point {g}'s value (local {l})");
    }
    // The in-memory path holds whole sets: the check sees it.
    let g_cells = Set::new("cells", CELLS).unwrap();
    let g_points = Set::new("points", POINTS).unwrap();
    let cell = Map::new("cell", &g_points, &g_cells, 1, (0..POINTS).map(cell_of).collect()).unwrap();
    let (sizes, _) =
        super::allocations::sizes_during(|| mpi.distribute(&[&g_cells, &g_points], &[&cell], &g_cells).unwrap());
    assert!(
        sizes.iter().any(|&s| s >= WHOLE_TABLE),
        "the in-memory path's whole-set tables are seen"
    );
}
