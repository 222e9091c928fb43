//! The halo layout (docs/ARCHITECTURE.md, Distributed runs): one rank's local
//! numbering of every set (core, owned, exec halo, non-exec halo), its local
//! map tables, and the halo exchange lists (what each neighbour sends and
//! receives). Every rank computes every rank's layout from the same replicated
//! input, so the export lists need no communication.

use std::ops::Range;

use op2_core::SetRegions;

use crate::MeshDesc;

/// One set's local elements on one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetLayout {
    /// Region sizes, in local order.
    pub regions: SetRegions,
    /// Global id of each local element.
    pub globals: Vec<u32>,
    /// Owner of each local element.
    pub owners: Vec<u32>,
}

impl SetLayout {
    /// Local index of each global element (`-1` when not local).
    pub fn global_to_local(&self, global_size: usize) -> Vec<i32> {
        let mut g2l = vec![-1; global_size];
        for (l, &g) in self.globals.iter().enumerate() {
            g2l[g as usize] = l as i32;
        }
        g2l
    }

    /// The local range of halo elements (exec then non-exec) owned by `rank`,
    /// as two ranges.
    pub fn imports_from(&self, rank: u32) -> (Range<usize>, Range<usize>) {
        let r = self.regions;
        let exec = r.owned_size()..r.owned_size() + r.exec_halo;
        let nonexec = exec.end..exec.end + r.nonexec_halo;
        (self.range_owned_by(exec, rank), self.range_owned_by(nonexec, rank))
    }

    /// The part of `within` (sorted by owner) that `rank` owns.
    fn range_owned_by(&self, within: Range<usize>, rank: u32) -> Range<usize> {
        let owners = &self.owners[within.clone()];
        let start = owners.partition_point(|&o| o < rank);
        let end = owners.partition_point(|&o| o <= rank);
        within.start + start..within.start + end
    }
}

/// Every set's layout on one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankLayout {
    /// The rank.
    pub rank: u32,
    /// Per set, in the mesh's set order.
    pub sets: Vec<SetLayout>,
}

/// Lays out every set on `rank`: owned elements (those whose targets are all
/// owned first: the core), then the exec halo (elements of other ranks that
/// reach owned elements through a map, so loops that write through maps
/// compute them redundantly), then the non-exec halo (elements the owned and
/// exec elements reach that this rank does not own). Halo regions are sorted
/// by owner, then global id, so that each neighbour's part is contiguous.
pub fn rank_layout(mesh: &MeshDesc<'_>, owners: &[Vec<u32>], rank: u32) -> RankLayout {
    let nsets = mesh.set_sizes.len();
    let mine = |s: usize, e: usize| owners[s][e] == rank;
    let mut exec: Vec<Vec<u32>> = vec![Vec::new(); nsets];
    for (s, exec_s) in exec.iter_mut().enumerate() {
        let out: Vec<_> = mesh.maps.iter().filter(|m| m.from == s).collect();
        if out.is_empty() {
            continue;
        }
        for f in 0..mesh.set_sizes[s] {
            if !mine(s, f) && out.iter().any(|m| m.row(f).iter().any(|&t| mine(m.to, t as usize))) {
                exec_s.push(f as u32);
            }
        }
    }
    let mut sets = Vec::with_capacity(nsets);
    for t in 0..nsets {
        let n = mesh.set_sizes[t];
        let mut in_exec = vec![false; n];
        for &e in &exec[t] {
            in_exec[e as usize] = true;
        }
        let mut reached = vec![false; n];
        for m in mesh.maps.iter().filter(|m| m.to == t) {
            let sources = (0..mesh.set_sizes[m.from])
                .filter(|&f| mine(m.from, f))
                .chain(exec[m.from].iter().map(|&f| f as usize));
            for f in sources {
                for &x in m.row(f) {
                    reached[x as usize] = true;
                }
            }
        }
        let out: Vec<_> = mesh.maps.iter().filter(|m| m.from == t).collect();
        let (mut core, mut owned) = (Vec::new(), Vec::new());
        for e in (0..n).filter(|&e| mine(t, e)) {
            let all_local = out.iter().all(|m| m.row(e).iter().all(|&x| mine(m.to, x as usize)));
            if all_local {
                core.push(e as u32);
            } else {
                owned.push(e as u32);
            }
        }
        let mut exec_t = exec[t].clone();
        let mut nonexec: Vec<u32> = (0..n)
            .filter(|&e| reached[e] && !mine(t, e) && !in_exec[e])
            .map(|e| e as u32)
            .collect();
        let by_owner = |v: &mut Vec<u32>| v.sort_by_key(|&e| (owners[t][e as usize], e));
        by_owner(&mut exec_t);
        by_owner(&mut nonexec);
        let regions = SetRegions {
            core: core.len(),
            owned: owned.len(),
            exec_halo: exec_t.len(),
            nonexec_halo: nonexec.len(),
        };
        let globals: Vec<u32> = core.into_iter().chain(owned).chain(exec_t).chain(nonexec).collect();
        let set_owners = globals.iter().map(|&g| owners[t][g as usize]).collect();
        sets.push(SetLayout {
            regions,
            globals,
            owners: set_owners,
        });
    }
    RankLayout { rank, sets }
}

/// A ragged map's local CSR (offsets, targets) on a rank: rows of owned and
/// exec-halo elements hold their local targets; rows of non-exec-halo
/// elements are never executed and are empty.
pub fn local_ragged(map: &crate::MapDesc<'_>, from: &SetLayout, to_g2l: &[i32]) -> (Vec<usize>, Vec<i32>) {
    let executed = from.regions.owned_size() + from.regions.exec_halo;
    let mut offsets = Vec::with_capacity(from.globals.len() + 1);
    let mut targets = Vec::new();
    offsets.push(0);
    for (l, &g) in from.globals.iter().enumerate() {
        if l < executed {
            targets.extend(map.row(g as usize).iter().map(|&t| to_g2l[t as usize]));
        }
        offsets.push(targets.len());
    }
    (offsets, targets)
}

/// A map's local table on a rank: rows of owned and exec-halo elements point
/// to local targets; rows of non-exec-halo elements are never executed and
/// point to local element 0.
pub fn local_map(map: &crate::MapDesc<'_>, from: &SetLayout, to_g2l: &[i32]) -> Vec<i32> {
    let executed = from.regions.owned_size() + from.regions.exec_halo;
    let mut out = Vec::with_capacity(from.globals.len() * map.arity);
    for (l, &g) in from.globals.iter().enumerate() {
        for &t in map.row(g as usize) {
            out.push(if l < executed { to_g2l[t as usize] } else { 0 });
        }
    }
    out
}

/// That map `name` has no rows on rank `rank` into a set the rank holds
/// none of (`from` and `to`: the local layouts of the map's sets, and
/// their names). Its rows there are the non-exec halo's, which have no
/// local target to point at: the halos hold what executed elements reach,
/// not what halo elements do.
#[cfg(feature = "mpi")]
pub(crate) fn no_rows_into_nothing(
    name: &str,
    rank: u32,
    from: (&SetLayout, &str),
    to: (&SetLayout, &str),
) -> op2_core::Result<()> {
    if from.0.globals.is_empty() || !to.0.globals.is_empty() {
        return Ok(());
    }
    Err(op2_core::Error::Mpi {
        reason: format!(
            "map `{name}`: rank {rank} holds {} of `{}` (in its halo) whose rows point into `{}`, of which it holds none; a set that a rank reaches only through halo elements cannot be distributed yet: run on fewer ranks",
            op2_core::plural(from.0.globals.len(), "element", "elements"),
            from.1,
            to.1
        ),
    })
}

/// What rank `me` sends to and receives from one neighbour for one set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbour {
    /// The neighbour's rank.
    pub rank: u32,
    /// Local elements received into: its exec-halo part, then its non-exec part.
    pub import: (Range<usize>, Range<usize>),
    /// Local (owned) elements sent, in the order the neighbour stores them.
    pub export: Vec<u32>,
}

/// The halo exchange lists of one set on `me`, from every rank's layout.
pub fn neighbours(layouts: &[RankLayout], set: usize, me: u32) -> Vec<Neighbour> {
    let mine = &layouts[me as usize].sets[set];
    let g2l = mine.global_to_local(
        layouts
            .iter()
            .flat_map(|l| l.sets[set].globals.iter())
            .map(|&g| g as usize + 1)
            .max()
            .unwrap_or(0),
    );
    let mut out = Vec::new();
    for other in layouts.iter().filter(|l| l.rank != me) {
        let theirs = &other.sets[set];
        let (ex, nx) = theirs.imports_from(me);
        let export: Vec<u32> = ex.chain(nx).map(|l| g2l[theirs.globals[l] as usize] as u32).collect();
        let import = mine.imports_from(other.rank);
        if !export.is_empty() || !import.0.is_empty() || !import.1.is_empty() {
            out.push(Neighbour {
                rank: other.rank,
                import,
                export,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{derive_owners, MapDesc};

    /// A strip of 6 cells with 7 nodes and 5 interior edges between cells.
    fn strip() -> (Vec<i32>, Vec<i32>) {
        let c2n: Vec<i32> = (0..6).flat_map(|c| [c, c + 1]).collect();
        let e2c: Vec<i32> = (0..5).flat_map(|e| [e, e + 1]).collect();
        (c2n, e2c)
    }

    fn layouts(nranks: u32, part: Vec<u32>) -> (Vec<RankLayout>, Vec<Vec<u32>>) {
        let (c2n, e2c) = strip();
        let mesh = MeshDesc {
            set_sizes: vec![6, 7, 5],
            maps: vec![
                MapDesc {
                    from: 0,
                    to: 1,
                    arity: 2,
                    values: Box::leak(c2n.into_boxed_slice()),
                    offsets: None,
                },
                MapDesc {
                    from: 2,
                    to: 0,
                    arity: 2,
                    values: Box::leak(e2c.into_boxed_slice()),
                    offsets: None,
                },
            ],
        };
        let owners = derive_owners(&mesh, 0, part, nranks);
        ((0..nranks).map(|r| rank_layout(&mesh, &owners, r)).collect(), owners)
    }

    #[test]
    fn every_element_is_owned_on_exactly_one_rank() {
        let (ls, owners) = layouts(3, vec![0, 0, 1, 1, 2, 2]);
        for (s, size) in [6usize, 7, 5].into_iter().enumerate() {
            let mut count = vec![0; size];
            for l in &ls {
                let set = &l.sets[s];
                for &g in &set.globals[..set.regions.owned_size()] {
                    count[g as usize] += 1;
                    assert_eq!(owners[s][g as usize], l.rank);
                }
            }
            assert!(count.iter().all(|&c| c == 1), "set {s}: {count:?}");
        }
    }

    #[test]
    fn regions_are_ordered_and_complete() {
        let (ls, owners) = layouts(2, vec![0, 0, 0, 1, 1, 1]);
        let r0 = &ls[0];
        // Local cells of rank 0 are owned first, then halo cells of rank 1.
        let cells = &r0.sets[0];
        assert_eq!(cells.regions.total(), cells.globals.len());
        for (l, &g) in cells.globals.iter().enumerate() {
            let owned = l < cells.regions.owned_size();
            assert_eq!(owners[0][g as usize] == 0, owned, "local {l} (global {g})");
        }
        // Edges: edge 2 joins cell 2 (rank 0) and 3 (rank 1): owned by rank 0
        // (its first cell), not core (touches cell 3). Edge 3 (cells 3, 4) is
        // rank 1's and reaches no rank-0 cell: not local at all.
        let edges = &r0.sets[2];
        assert_eq!(edges.globals, vec![0, 1, 2]);
        assert_eq!((edges.regions.core, edges.regions.owned), (2, 1));
        // Rank 1's edges: 3, 4 owned; edge 2 reaches cell 3 (owned by 1): exec halo.
        let e1 = &ls[1].sets[2];
        assert_eq!(e1.globals, vec![3, 4, 2]);
        assert_eq!(e1.regions.exec_halo, 1);
        // Rank 1's cells: 3, 4, 5 owned; cell 2 reached by exec edge 2: non-exec.
        let c1 = &ls[1].sets[0];
        assert_eq!(&c1.globals[c1.regions.owned_size()..], &[2]);
    }

    #[test]
    fn the_halo_holds_exactly_what_local_elements_reach() {
        let (ls, _) = layouts(3, vec![0, 1, 2, 0, 1, 2]);
        let (c2n, e2c) = strip();
        for l in &ls {
            let cells = &l.sets[0];
            let nodes = &l.sets[1];
            let edges = &l.sets[2];
            let executed = |s: &SetLayout| s.globals[..s.regions.owned_size() + s.regions.exec_halo].to_vec();
            // Every target of an executed element is local.
            for &c in &executed(cells) {
                for &n in &c2n[2 * c as usize..2 * c as usize + 2] {
                    assert!(nodes.globals.contains(&(n as u32)));
                }
            }
            for &e in &executed(edges) {
                for &c in &e2c[2 * e as usize..2 * e as usize + 2] {
                    assert!(cells.globals.contains(&(c as u32)));
                }
            }
            // And every non-exec element is such a target.
            let n0 = nodes.regions.owned_size() + nodes.regions.exec_halo;
            for &n in &nodes.globals[n0..] {
                let reached = executed(cells)
                    .iter()
                    .any(|&c| c2n[2 * c as usize..2 * c as usize + 2].contains(&(n as i32)));
                assert!(reached, "rank {}: node {n} is in the halo for nothing", l.rank);
            }
        }
    }

    #[test]
    fn exports_match_imports() {
        let (ls, _) = layouts(3, vec![0, 1, 2, 0, 1, 2]);
        for set in 0..3 {
            for me in 0..3u32 {
                for nb in neighbours(&ls, set, me) {
                    // What `me` exports to nb equals what nb imports from me, element by element.
                    let theirs = &ls[nb.rank as usize].sets[set];
                    let (ex, nx) = theirs.imports_from(me);
                    let wanted: Vec<u32> = ex.chain(nx).map(|l| theirs.globals[l]).collect();
                    let sent: Vec<u32> = nb
                        .export
                        .iter()
                        .map(|&l| ls[me as usize].sets[set].globals[l as usize])
                        .collect();
                    assert_eq!(sent, wanted);
                    for &l in &nb.export {
                        assert!(
                            (l as usize) < ls[me as usize].sets[set].regions.owned_size(),
                            "exports are owned"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn local_maps_point_to_local_elements() {
        let (ls, _) = layouts(2, vec![0, 0, 0, 1, 1, 1]);
        let (c2n, _) = strip();
        let m = MapDesc {
            from: 0,
            to: 1,
            arity: 2,
            values: &c2n,
            offsets: None,
        };
        for l in &ls {
            let g2l = l.sets[1].global_to_local(7);
            let local = local_map(&m, &l.sets[0], &g2l);
            let executed = l.sets[0].regions.owned_size() + l.sets[0].regions.exec_halo;
            for (i, &c) in l.sets[0].globals[..executed].iter().enumerate() {
                for j in 0..2 {
                    let t = local[2 * i + j];
                    assert!(t >= 0);
                    assert_eq!(l.sets[1].globals[t as usize] as i32, c2n[2 * c as usize + j]);
                }
            }
        }
    }

    #[test]
    fn local_ragged_rows_point_to_local_elements_and_unexecuted_rows_are_empty() {
        let (ls, _) = layouts(2, vec![0, 0, 0, 1, 1, 1]);
        let (c2n, _) = strip();
        // The strip's cells to their nodes, each row cut to a varying length.
        let mut offsets = vec![0i32];
        let mut targets = Vec::new();
        for c in 0..c2n.len() / 2 {
            targets.extend_from_slice(&c2n[2 * c..2 * c + (c % 3).min(2)]);
            offsets.push(targets.len() as i32);
        }
        let m = MapDesc {
            from: 0,
            to: 1,
            arity: 0,
            values: &targets,
            offsets: Some(&offsets),
        };
        for l in &ls {
            let g2l = l.sets[1].global_to_local(7);
            let (local_offsets, local_targets) = local_ragged(&m, &l.sets[0], &g2l);
            let from = &l.sets[0];
            assert_eq!(local_offsets.len(), from.globals.len() + 1);
            let executed = from.regions.owned_size() + from.regions.exec_halo;
            for (i, &c) in from.globals.iter().enumerate() {
                let row = &local_targets[local_offsets[i]..local_offsets[i + 1]];
                if i >= executed {
                    assert!(row.is_empty(), "non-exec row {i} must be empty");
                    continue;
                }
                let want = m.row(c as usize);
                assert_eq!(row.len(), want.len());
                for (&t, &g) in row.iter().zip(want) {
                    assert!(t >= 0);
                    assert_eq!(l.sets[1].globals[t as usize] as i32, g);
                }
            }
        }
    }
}
