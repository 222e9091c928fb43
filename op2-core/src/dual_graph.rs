//! The graph METIS partitions and renumbering orders: elements of the
//! primary set are neighbours when a map from the primary set to itself
//! joins them (a graph's edges), else when they share a target of its first
//! map (cells sharing a node), or, if it has none, when one element of
//! another set maps to both (cells sharing an edge).
//!
//! Elements sharing a target form a group, joined all to all. A group of
//! more than [`CLIQUE_LIMIT`] (a hub: every agent mapped to one region, say)
//! is joined as a chain instead, each element to the next: all to all would
//! take memory growing with the square of the group, enough to end the
//! process for one target shared by a million elements.

use crate::{Error, MeshDesc, Result};

/// The largest group of elements sharing a target that is joined all to
/// all; larger ones are chains. Cells around a node of a 3-D tetrahedral
/// mesh number a few tens, so meshes keep their full graph.
pub const CLIQUE_LIMIT: usize = 64;

/// The primary set's dual graph in CSR form (`xadj`, `adjncy`), or `None`
/// when no map touches the primary set. Errors where the description does
/// not hold together ([`MeshDesc::validate`]), `primary` is not one of its
/// sets, or the graph has more than `i32::MAX` entries.
pub fn dual_graph(mesh: &MeshDesc<'_>, primary: usize) -> Result<Option<(Vec<i32>, Vec<i32>)>> {
    mesh.validate()?;
    mesh.check_set(primary, "the primary set")?;
    let n = mesh.set_sizes[primary];
    if let Some(m) = mesh.maps.iter().find(|m| m.from == primary && m.to == primary) {
        return self_graph(m, n).map(Some);
    }
    // Groups of mutually adjacent primary elements.
    let groups: Vec<Vec<u32>> = if let Some(m) = mesh.maps.iter().find(|m| m.from == primary) {
        let mut groups = vec![Vec::new(); mesh.set_sizes[m.to]];
        for p in 0..n {
            for &t in m.row(p) {
                groups[t as usize].push(p as u32);
            }
        }
        groups
    } else if let Some(m) = mesh.maps.iter().find(|m| m.to == primary) {
        (0..mesh.set_sizes[m.from])
            .map(|s| m.row(s).iter().map(|&p| p as u32).collect())
            .collect()
    } else {
        return Ok(None);
    };
    let mut adjacent: Vec<Vec<u32>> = vec![Vec::new(); n];
    for g in &groups {
        join_group(g, |a, b| adjacent[a as usize].push(b));
    }
    csr(adjacent).map(Some)
}

/// Joins a group of elements that share a target: `join(a, b)` for every
/// ordered pair of neighbours, both ways round, never an element with
/// itself. All to all up to [`CLIQUE_LIMIT`] members, else each member
/// with the next (the order given), so the pairs grow with the group, not
/// its square. The distributed graph (PT-Scotch's, in op2-mpi) joins
/// groups here too, so both graphs agree.
pub fn join_group(group: &[u32], mut join: impl FnMut(u32, u32)) {
    if group.len() > CLIQUE_LIMIT {
        for w in group.windows(2) {
            if w[0] != w[1] {
                join(w[0], w[1]);
                join(w[1], w[0]);
            }
        }
        return;
    }
    for &a in group {
        for &b in group {
            if a != b {
                join(a, b);
            }
        }
    }
}

/// The graph a map from a set to itself describes, symmetric and without
/// self loops (METIS wants both).
fn self_graph(m: &crate::MapDesc<'_>, n: usize) -> Result<(Vec<i32>, Vec<i32>)> {
    let mut adjacent: Vec<Vec<u32>> = vec![Vec::new(); n];
    for a in 0..n {
        for &b in m.row(a) {
            let b = b as usize;
            if a != b {
                adjacent[a].push(b as u32);
                adjacent[b].push(a as u32);
            }
        }
    }
    csr(adjacent)
}

/// Sorted, repeat-free adjacency lists in CSR form; an error where the
/// entries outgrow `i32` offsets.
fn csr(mut adjacent: Vec<Vec<u32>>) -> Result<(Vec<i32>, Vec<i32>)> {
    let n = adjacent.len();
    let mut xadj = Vec::with_capacity(n + 1);
    let mut adjncy = Vec::new();
    xadj.push(0);
    for list in &mut adjacent {
        list.sort_unstable();
        list.dedup();
        adjncy.extend(list.iter().map(|&x| x as i32));
        let end = i32::try_from(adjncy.len()).map_err(|_| Error::InvalidMeshDesc {
            reason: format!(
                "the primary set's graph has more than {} entries (i32::MAX), more than METIS and the orders can index",
                i32::MAX
            ),
        })?;
        xadj.push(end);
    }
    Ok((xadj, adjncy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapDesc;

    #[test]
    fn a_ragged_map_from_the_primary_set_to_itself_is_the_graph() {
        // 0 -> {1, 1, 0}, 1 -> {}, 2 -> {0}, 3 -> {}: repeats, a self loop and
        // one-way edges give the symmetric graph 0-1, 0-2; node 3 alone.
        let offsets = [0, 3, 3, 4, 4];
        let targets = [1, 1, 0, 0];
        let mesh = MeshDesc {
            set_sizes: vec![4],
            maps: vec![MapDesc {
                from: 0,
                to: 0,
                arity: 0,
                values: &targets,
                offsets: Some(&offsets),
            }],
        };
        let (xadj, adjncy) = dual_graph(&mesh, 0).unwrap().unwrap();
        assert_eq!(xadj, [0, 2, 3, 4, 4]);
        assert_eq!(adjncy, [1, 2, 0, 0]);
    }

    #[test]
    fn cells_sharing_a_node_are_neighbours() {
        // Three cells in a strip over four nodes.
        let c2n = [0, 1, 1, 2, 2, 3];
        let mesh = MeshDesc {
            set_sizes: vec![3, 4],
            maps: vec![MapDesc {
                from: 0,
                to: 1,
                arity: 2,
                values: &c2n,
                offsets: None,
            }],
        };
        let (xadj, adjncy) = dual_graph(&mesh, 0).unwrap().unwrap();
        assert_eq!(xadj, vec![0, 1, 3, 4]);
        assert_eq!(adjncy, vec![1, 0, 2, 1]);
        // Through a map into the primary set: edges joining cells.
        let e2c = [0, 1, 1, 2];
        let mesh = MeshDesc {
            set_sizes: vec![3, 2],
            maps: vec![MapDesc {
                from: 1,
                to: 0,
                arity: 2,
                values: &e2c,
                offsets: None,
            }],
        };
        assert_eq!(
            dual_graph(&mesh, 0).unwrap().unwrap(),
            (vec![0, 1, 3, 4], vec![1, 0, 2, 1])
        );
    }
    #[test]
    fn a_hub_is_joined_as_a_chain_and_small_groups_all_to_all() {
        // 5000 agents in one region, plus two agents sharing a second one.
        let n = 5000;
        let mut a2r = vec![0i32; n + 2];
        a2r[n] = 1;
        a2r[n + 1] = 1;
        let mesh = MeshDesc {
            set_sizes: vec![n + 2, 2],
            maps: vec![MapDesc {
                from: 0,
                to: 1,
                arity: 1,
                values: &a2r,
                offsets: None,
            }],
        };
        let (xadj, adjncy) = dual_graph(&mesh, 0).unwrap().unwrap();
        // All to all, the hub alone would take n * (n - 1) entries.
        assert_eq!(adjncy.len(), 2 * (n - 1) + 2);
        assert_eq!(&adjncy[xadj[1] as usize..xadj[2] as usize], [0, 2]);
        assert_eq!(&adjncy[xadj[n] as usize..xadj[n + 1] as usize], [n as i32 + 1]);
        // A group at the limit is still joined all to all.
        let at_limit = vec![0i32; CLIQUE_LIMIT];
        let mesh = MeshDesc {
            set_sizes: vec![CLIQUE_LIMIT, 1],
            maps: vec![MapDesc {
                from: 0,
                to: 1,
                arity: 1,
                values: &at_limit,
                offsets: None,
            }],
        };
        let (_, adjncy) = dual_graph(&mesh, 0).unwrap().unwrap();
        assert_eq!(adjncy.len(), CLIQUE_LIMIT * (CLIQUE_LIMIT - 1));
    }

    #[test]
    fn a_description_that_does_not_hold_together_is_an_error() {
        let table: &'static [i32] = &[0, 1, 1, 7];
        let map = |from, to, values: &'static [i32]| MapDesc {
            from,
            to,
            arity: 2,
            values,
            offsets: None,
        };
        let cases: [(MeshDesc<'static>, usize, &str); 5] = [
            (
                MeshDesc {
                    set_sizes: vec![2, 4],
                    maps: vec![map(0, 1, table)],
                },
                0,
                "map 0: entry 3 is 7, outside its target set of 4 elements",
            ),
            (
                MeshDesc {
                    set_sizes: vec![3, 8],
                    maps: vec![map(0, 1, table)],
                },
                0,
                "map 0: 3 source elements x arity 2 need 6 entries, got 4",
            ),
            (
                MeshDesc {
                    set_sizes: vec![2, 8],
                    maps: vec![map(0, 5, table)],
                },
                0,
                "map 0: its target set is 5, but the mesh has 2 sets",
            ),
            (
                MeshDesc {
                    set_sizes: vec![2, 8],
                    maps: vec![map(0, 1, table)],
                },
                2,
                "the primary set is set 2, but the mesh has 2 sets",
            ),
            (
                MeshDesc {
                    set_sizes: vec![2, 8],
                    maps: vec![MapDesc {
                        from: 0,
                        to: 1,
                        arity: 0,
                        values: table,
                        offsets: Some(&[0, 3, 2]),
                    }],
                },
                0,
                "map 0: offsets fall at element 1 (3 then 2)",
            ),
        ];
        for (mesh, primary, want) in cases {
            let err = dual_graph(&mesh, primary).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
    }
}
