//! Which rank owns each element of each set: the primary set by its
//! partition, the others through the maps, consistently on every rank.

use crate::MeshDesc;

/// Owner of every element of every set. A set reached from an owned set
/// through a map `S -> T` gives each target the smallest rank among the
/// elements referencing it; a set that maps into an owned set takes the owner
/// of its first target (by blocks when it has none); repeated until nothing changes. Sets no map connects
/// to the primary one are cut into `nranks` contiguous blocks.
pub fn derive_owners(mesh: &MeshDesc<'_>, primary: usize, primary_owner: Vec<u32>, nranks: u32) -> Vec<Vec<u32>> {
    let nsets = mesh.set_sizes.len();
    let mut owners: Vec<Option<Vec<u32>>> = vec![None; nsets];
    owners[primary] = Some(primary_owner);
    loop {
        let mut changed = false;
        for m in &mesh.maps {
            match (owners[m.from].is_some(), owners[m.to].is_some()) {
                (false, true) => {
                    let to = owners[m.to].as_ref().expect("checked");
                    let n = mesh.set_sizes[m.from];
                    // A ragged row may be empty: such elements go by blocks.
                    let own = (0..n)
                        .map(|f| m.row(f).first().map_or(block_owner(f, n, nranks), |&t| to[t as usize]))
                        .collect();
                    owners[m.from] = Some(own);
                    changed = true;
                }
                (true, false) => {
                    let from = owners[m.from].as_ref().expect("checked");
                    let n = mesh.set_sizes[m.to];
                    let mut own = vec![u32::MAX; n];
                    for (f, &r) in from.iter().enumerate() {
                        for &t in m.row(f) {
                            let o = &mut own[t as usize];
                            *o = (*o).min(r);
                        }
                    }
                    // Elements no map reaches: contiguous blocks.
                    for (t, o) in own.iter_mut().enumerate() {
                        if *o == u32::MAX {
                            *o = block_owner(t, n, nranks);
                        }
                    }
                    owners[m.to] = Some(own);
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    owners
        .into_iter()
        .enumerate()
        .map(|(s, o)| {
            o.unwrap_or_else(|| {
                (0..mesh.set_sizes[s])
                    .map(|e| block_owner(e, mesh.set_sizes[s], nranks))
                    .collect()
            })
        })
        .collect()
}

/// Rank of element `e` of `n` cut into `nranks` contiguous blocks.
pub fn block_owner(e: usize, n: usize, nranks: u32) -> u32 {
    ((e as u64 * nranks as u64) / n.max(1) as u64) as u32
}

/// The elements of `n` that [`block_owner`] gives rank `rank` of `nranks`:
/// the contiguous block that rank reads of a distributed file.
pub fn block_rows(n: usize, rank: u32, nranks: u32) -> std::ops::Range<usize> {
    // block_owner(e) = floor(e p / n) = r  <=>  ceil(r n / p) <= e < ceil((r + 1) n / p).
    let start = |r: u64| (r * n as u64).div_ceil(u64::from(nranks.max(1))) as usize;
    start(u64::from(rank)).min(n)..start(u64::from(rank) + 1).min(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_rows_are_what_block_owner_gives_each_rank() {
        for n in [0, 1, 2, 5, 7, 100, 101, 11250] {
            for nranks in 1..=7u32 {
                let mut next = 0;
                for r in 0..nranks {
                    let rows = block_rows(n, r, nranks);
                    assert_eq!(rows.start, next, "n {n}, {nranks} ranks: blocks tile");
                    assert!(
                        rows.clone().all(|e| block_owner(e, n, nranks) == r),
                        "n {n}, rank {r} of {nranks}"
                    );
                    next = rows.end;
                }
                assert_eq!(next, n, "n {n}, {nranks} ranks: every element");
            }
        }
    }
    use crate::MapDesc;

    #[test]
    fn owners_follow_the_maps() {
        // cells 0..4, nodes 0..5 (a strip), edges between cells.
        let c2n = [0, 1, 1, 2, 2, 3, 3, 4];
        let e2c = [0, 1, 1, 2, 2, 3];
        let mesh = MeshDesc {
            set_sizes: vec![4, 5, 3, 2],
            maps: vec![
                MapDesc {
                    from: 0,
                    to: 1,
                    arity: 2,
                    values: &c2n,
                    offsets: None,
                },
                MapDesc {
                    from: 2,
                    to: 0,
                    arity: 2,
                    values: &e2c,
                    offsets: None,
                },
            ],
        };
        let owners = derive_owners(&mesh, 0, vec![0, 0, 1, 1], 2);
        assert_eq!(owners[0], vec![0, 0, 1, 1]);
        // Node 2 is shared by cells 1 (rank 0) and 2 (rank 1): the smaller rank.
        assert_eq!(owners[1], vec![0, 0, 0, 1, 1]);
        // Edges take their first cell's owner.
        assert_eq!(owners[2], vec![0, 0, 1]);
        // An unconnected set is cut in blocks.
        assert_eq!(owners[3], vec![0, 1]);
    }
}
