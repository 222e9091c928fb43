//! Mesh renumbering for locality, as OP2's `op_renumber`: the primary set
//! (Airfoil's cells) in reverse Cuthill–McKee order of its dual graph
//! ([`dual_graph`]: elements that share a target of its first map), and
//! every other set carried after it through the maps. A set that a
//! renumbered set maps into takes the order in which its elements are
//! first reached (a cell's nodes after the cell's); a set that maps into a
//! renumbered set is sorted by the first place its targets take (an edge
//! beside its first cell). Neighbours then sit near each other in memory,
//! so the gathers and increments of indirect loops find their data in the
//! cache.
//!
//! A renumbered run adds its increments and reductions in another order,
//! so its results equal the unrenumbered run's to rounding, not bit for
//! bit.

use crate::{dual_graph, Error, MapDesc, MeshDesc, Result};

/// The reverse Cuthill–McKee order of the graph in CSR form (`xadj` of
/// `n + 1` offsets into `adjncy`): `order[new] = old`. Each connected
/// piece starts from a pseudo-peripheral element (the far end of
/// breadth-first searches from its element of lowest degree) and visits
/// neighbours by increasing degree; the whole order is then reversed.
/// Entries outside `0..n` are ignored. Errors where `xadj` does not
/// describe rows of `adjncy` (an offset below 0, one below the offset before
/// it, or the last beyond `adjncy`).
pub fn reverse_cuthill_mckee(xadj: &[i32], adjncy: &[i32]) -> Result<Vec<u32>> {
    check_csr(xadj, adjncy)?;
    let n = xadj.len().saturating_sub(1);
    let neighbours = |v: usize| {
        adjncy[xadj[v] as usize..xadj[v + 1] as usize]
            .iter()
            .filter_map(|&u| usize::try_from(u).ok().filter(|&u| u < n))
    };
    let degree = |v: usize| xadj[v + 1] - xadj[v];
    let mut by_degree: Vec<usize> = (0..n).collect();
    by_degree.sort_by_key(|&v| (degree(v), v));
    let mut placed = vec![false; n];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    // Breadth-first levels from `start` among the unplaced elements: the
    // elements in visiting order, the index where the last level begins and
    // the number of levels.
    let mut mark = vec![0u32; n];
    let mut round = 0u32;
    let mut levels = |start: usize, placed: &[bool]| -> (Vec<usize>, usize, usize) {
        round += 1;
        let (mut seen, mut last, mut head, mut depth) = (vec![start], 0, 0, 0);
        mark[start] = round;
        while head < seen.len() {
            last = head;
            depth += 1;
            let end = seen.len();
            while head < end {
                for u in neighbours(seen[head]) {
                    if mark[u] != round && !placed[u] {
                        mark[u] = round;
                        seen.push(u);
                    }
                }
                head += 1;
            }
        }
        (seen, last, depth)
    };
    for &s in &by_degree {
        if placed[s] {
            continue;
        }
        // A pseudo-peripheral start (George and Liu): move to the last
        // level's element of lowest degree while that gives more levels (a
        // few rounds).
        let mut start = s;
        let (mut seen, mut last, mut depth) = levels(start, &placed);
        for _ in 0..4 {
            let far = seen[last..]
                .iter()
                .copied()
                .min_by_key(|&v| (degree(v), v))
                .unwrap_or(start);
            let (far_seen, far_last, far_depth) = levels(far, &placed);
            if far == start || far_depth <= depth {
                break;
            }
            (start, seen, last, depth) = (far, far_seen, far_last, far_depth);
        }
        let first = order.len();
        order.push(start as u32);
        placed[start] = true;
        let mut head = first;
        let mut next = Vec::new();
        while head < order.len() {
            let v = order[head] as usize;
            head += 1;
            next.clear();
            next.extend(neighbours(v).filter(|&u| !placed[u]));
            next.sort_by_key(|&u| (degree(u), u));
            next.dedup();
            for &u in &next {
                placed[u] = true;
                order.push(u as u32);
            }
        }
    }
    order.reverse();
    Ok(order)
}

/// Checks that `xadj` gives rows of `adjncy`, as [`reverse_cuthill_mckee`]
/// reads them.
fn check_csr(xadj: &[i32], adjncy: &[i32]) -> Result<()> {
    let bad = |reason: String| {
        Err(Error::InvalidMeshDesc {
            reason: format!("a graph in CSR form: {reason}"),
        })
    };
    if xadj.len() > u32::MAX as usize {
        return bad(format!(
            "{} offsets; at most {} elements can be ordered",
            xadj.len(),
            u32::MAX
        ));
    }
    if let Some(&first) = xadj.first().filter(|&&x| x < 0) {
        return bad(format!("the first offset is {first}; offsets start at 0 or above"));
    }
    if let Some(v) = xadj.windows(2).position(|w| w[1] < w[0]) {
        return bad(format!(
            "the offsets fall at element {v} ({} then {}); each row must end where the next starts",
            xadj[v],
            xadj[v + 1]
        ));
    }
    if let Some(&last) = xadj.last().filter(|&&x| x as usize > adjncy.len()) {
        return bad(format!(
            "the last offset is {last}, beyond the {} neighbours given",
            adjncy.len()
        ));
    }
    Ok(())
}

/// A new numbering of every set of a mesh (see the module's header).
#[derive(Clone, Debug)]
pub struct Renumbering {
    /// Per set, `order[new] = old`.
    orders: Vec<Vec<u32>>,
    /// Per set, `place[old] = new`.
    places: Vec<Vec<u32>>,
}

impl Renumbering {
    /// Renumbers every set of `mesh` from its set `primary`. Where no map
    /// touches the primary set (nothing says which elements are
    /// neighbours) every set keeps its order; a set no map reaches from the
    /// primary one keeps its order too. Errors where the description does
    /// not hold together ([`MeshDesc::validate`]) or `primary` is not one
    /// of its sets.
    pub fn new(mesh: &MeshDesc<'_>, primary: usize) -> Result<Renumbering> {
        match dual_graph(mesh, primary)? {
            Some((xadj, adjncy)) => Renumbering::with_graph(mesh, primary, &xadj, &adjncy),
            None => Ok(Renumbering::identity(mesh)),
        }
    }

    /// The same, with the primary set's neighbours those joined by
    /// `mesh.maps[map]` alone: elements sharing one of its targets if it
    /// leaves the primary set, the targets of one of its elements if it
    /// enters it (cells joined by the edges between them, say, which is
    /// what a loop over edges reads). Errors as [`Renumbering::new`] does,
    /// and where that map is not one of the description's or does not
    /// touch the primary set.
    pub fn through(mesh: &MeshDesc<'_>, primary: usize, map: usize) -> Result<Renumbering> {
        mesh.validate()?;
        mesh.check_set(primary, "the primary set")?;
        let m = mesh.maps.get(map).ok_or_else(|| Error::InvalidMeshDesc {
            reason: format!(
                "renumbering through map {map}, but the mesh has {}",
                crate::plural(mesh.maps.len(), "map", "maps")
            ),
        })?;
        if m.from != primary && m.to != primary {
            return Err(Error::InvalidMeshDesc {
                reason: format!(
                    "renumbering set {primary} through map {map}, which joins sets {} and {}: name a map from or into the primary set",
                    m.from, m.to
                ),
            });
        }
        let alone = MeshDesc {
            set_sizes: mesh.set_sizes.clone(),
            maps: vec![*m],
        };
        match dual_graph(&alone, primary)? {
            Some((xadj, adjncy)) => Renumbering::with_graph(mesh, primary, &xadj, &adjncy),
            None => Ok(Renumbering::identity(mesh)),
        }
    }

    /// Every set in its own order.
    fn identity(mesh: &MeshDesc<'_>) -> Renumbering {
        let orders: Vec<Vec<u32>> = mesh.set_sizes.iter().map(|&n| (0..n as u32).collect()).collect();
        let places = orders.clone();
        Renumbering { orders, places }
    }

    /// The renumbering from the primary set's graph in CSR form, on a
    /// description [`MeshDesc::validate`] has passed.
    fn with_graph(mesh: &MeshDesc<'_>, primary: usize, xadj: &[i32], adjncy: &[i32]) -> Result<Renumbering> {
        let sets = mesh.set_sizes.len();
        let mut orders: Vec<Option<Vec<u32>>> = vec![None; sets];
        orders[primary] = Some(reverse_cuthill_mckee(xadj, adjncy)?);
        // Maps beside the primary set first: an edge is placed by its
        // cells rather than by its nodes.
        let mut maps: Vec<&MapDesc<'_>> = mesh.maps.iter().collect();
        maps.sort_by_key(|m| m.from != primary && m.to != primary);
        loop {
            let next = maps.iter().find_map(|m| match (&orders[m.from], &orders[m.to]) {
                (Some(from), None) => Some((m.to, first_reached(m, from, mesh.set_sizes[m.to]))),
                (None, Some(to)) => Some((m.from, by_first_target(m, &inverse(to), mesh.set_sizes[m.from]))),
                _ => None,
            });
            match next {
                Some((set, order)) => orders[set] = Some(order),
                None => break,
            }
        }
        let orders: Vec<Vec<u32>> = (orders.into_iter().enumerate())
            .map(|(s, o)| o.unwrap_or_else(|| (0..mesh.set_sizes[s] as u32).collect()))
            .collect();
        let places = orders.iter().map(|o| inverse(o)).collect();
        Ok(Renumbering { orders, places })
    }

    /// Set `set`'s new order: `order[new] = old`. Errors where the mesh
    /// had no set `set`.
    pub fn order(&self, set: usize) -> Result<&[u32]> {
        self.check_set(set)?;
        Ok(&self.orders[set])
    }

    /// Set `set`'s new numbers: `place[old] = new`. Errors where the mesh
    /// had no set `set`.
    pub fn place(&self, set: usize) -> Result<&[u32]> {
        self.check_set(set)?;
        Ok(&self.places[set])
    }

    /// A Dat's values on set `set` (`dim` a row) in the new order. Errors
    /// where the mesh had no set `set` or `values` is not a row of `dim`
    /// per element.
    pub fn rows<T: Copy>(&self, set: usize, values: &[T], dim: usize) -> Result<Vec<T>> {
        self.check_set(set)?;
        let n = self.orders[set].len();
        let bad = |reason: String| {
            Err(Error::InvalidMeshDesc {
                reason: format!("renumbering the rows of set {set}: {reason}"),
            })
        };
        if dim == 0 {
            return bad("dim must be at least 1".into());
        }
        if n.checked_mul(dim) != Some(values.len()) {
            return bad(format!(
                "{} x dim {dim} need {} values, got {}",
                crate::plural(n, "element", "elements"),
                n.saturating_mul(dim),
                values.len()
            ));
        }
        Ok(self.orders[set]
            .iter()
            .flat_map(|&old| values[old as usize * dim..(old as usize + 1) * dim].iter().copied())
            .collect())
    }

    /// A map's table (of fixed arity) in the new numbering: its rows in
    /// its source set's new order, each entry its target's new number.
    /// Errors where the map does not fit the renumbered mesh's sets
    /// ([`MapDesc::validate`]) or is ragged.
    pub fn map_values(&self, map: &MapDesc<'_>) -> Result<Vec<i32>> {
        let sizes: Vec<usize> = self.orders.iter().map(Vec::len).collect();
        map.validate(&sizes, "renumbering a map")?;
        if map.offsets.is_some() {
            return Err(Error::InvalidMeshDesc {
                reason: "renumbering a map: only maps of fixed arity can be renumbered here; a ragged map's rows move with its source set's `order`".into(),
            });
        }
        let place = &self.places[map.to];
        Ok(self.orders[map.from]
            .iter()
            .flat_map(|&old| map.row(old as usize).iter().map(|&t| place[t as usize] as i32))
            .collect())
    }

    fn check_set(&self, set: usize) -> Result<()> {
        if set < self.orders.len() {
            return Ok(());
        }
        Err(Error::InvalidMeshDesc {
            reason: format!(
                "the renumbered mesh has no set {set} ({})",
                crate::plural(self.orders.len(), "set", "sets")
            ),
        })
    }
}

/// `place[old] = new` of `order[new] = old`.
fn inverse(order: &[u32]) -> Vec<u32> {
    let mut place = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        place[old as usize] = new as u32;
    }
    place
}

/// The target set's elements in the order the source set, in its new
/// `order`, first reaches them; those it never reaches after, as they were.
fn first_reached(m: &MapDesc<'_>, order: &[u32], n: usize) -> Vec<u32> {
    let mut seen = vec![false; n];
    let mut out = Vec::with_capacity(n);
    for &e in order {
        for &t in m.row(e as usize) {
            if let Some(s) = seen.get_mut(t as usize).filter(|s| !**s) {
                *s = true;
                out.push(t as u32);
            }
        }
    }
    out.extend((0..n as u32).filter(|&t| !seen[t as usize]));
    out
}

/// The source set's elements sorted by the first new place among their
/// targets (`place`), ties in their old order, elements without targets
/// last.
fn by_first_target(m: &MapDesc<'_>, place: &[u32], n: usize) -> Vec<u32> {
    let key = |e: usize| m.row(e).iter().filter_map(|&t| place.get(t as usize)).min().copied();
    let mut out: Vec<u32> = (0..n as u32).collect();
    out.sort_by_key(|&e| (key(e as usize).unwrap_or(u32::MAX), e));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest distance in the new order between neighbours.
    fn bandwidth(xadj: &[i32], adjncy: &[i32], place: &[u32]) -> u32 {
        (0..xadj.len() - 1)
            .flat_map(|v| {
                adjncy[xadj[v] as usize..xadj[v + 1] as usize]
                    .iter()
                    .map(move |&u| place[v].abs_diff(place[u as usize]))
            })
            .max()
            .unwrap_or(0)
    }

    /// A `w` x `h` grid of cells, each cell's four corner nodes, with
    /// cell `c` of the grid's order at place `scramble(c)` of the table.
    fn grid(w: usize, h: usize, scramble: impl Fn(usize) -> usize) -> Vec<i32> {
        let mut table = vec![0i32; 4 * w * h];
        for c in 0..w * h {
            let s = scramble(c);
            let (i, j) = (c % w, c / w);
            let node = |i: usize, j: usize| (j * (w + 1) + i) as i32;
            table[4 * s..4 * s + 4].copy_from_slice(&[node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]);
        }
        table
    }

    #[test]
    fn a_scrambled_grid_gets_a_narrow_band_and_every_set_a_permutation() {
        let (w, h) = (30, 20);
        // A permutation of the cells far from any grid order.
        let cells = w * h;
        let table = grid(w, h, |c| (c * 7919) % cells);
        let mesh = MeshDesc {
            set_sizes: vec![(w + 1) * (h + 1), cells],
            maps: vec![MapDesc {
                from: 1,
                to: 0,
                arity: 4,
                values: &table,
                offsets: None,
            }],
        };
        let (xadj, adjncy) = dual_graph(&mesh, 1).unwrap().unwrap();
        let identity: Vec<u32> = (0..cells as u32).collect();
        let before = bandwidth(&xadj, &adjncy, &identity);
        let r = Renumbering::new(&mesh, 1).unwrap();
        let after = bandwidth(&xadj, &adjncy, r.place(1).unwrap());
        // A grid w cells wide has an order of band about w + 1.
        assert!(after <= 2 * w as u32 + 2, "band {after} after, {before} before");
        assert!(before > 10 * after, "band {after} after, {before} before");
        for set in 0..2 {
            let mut sorted = r.order(set).unwrap().to_vec();
            sorted.sort_unstable();
            assert!(
                sorted.iter().enumerate().all(|(k, &v)| k as u32 == v),
                "set {set}: a permutation"
            );
            assert!((0..sorted.len()).all(|k| r.order(set).unwrap()[r.place(set).unwrap()[k] as usize] == k as u32));
        }
        // The map in the new numbering names the same corners.
        let renumbered = r.map_values(&mesh.maps[0]).unwrap();
        for new in 0..cells {
            let old = r.order(1).unwrap()[new] as usize;
            let want: Vec<u32> = table[4 * old..4 * old + 4]
                .iter()
                .map(|&t| r.place(0).unwrap()[t as usize])
                .collect();
            let got: Vec<u32> = renumbered[4 * new..4 * new + 4].iter().map(|&t| t as u32).collect();
            assert_eq!(got, want, "cell {new}");
        }
        // Nodes come in the order their first cell reaches them.
        assert_eq!(
            r.order(0).unwrap()[0] as i32,
            table[4 * r.order(1).unwrap()[0] as usize]
        );
        assert_eq!(renumbered[0], 0, "the first cell's first corner is node 0");
        // Dat rows follow their set's order.
        let x: Vec<f64> = (0..2 * cells).map(|k| k as f64).collect();
        let moved = r.rows(1, &x, 2).unwrap();
        assert_eq!(
            moved[2..4],
            x[2 * r.order(1).unwrap()[1] as usize..2 * r.order(1).unwrap()[1] as usize + 2]
        );
    }

    #[test]
    fn pieces_that_do_not_touch_are_each_ordered_and_nothing_is_lost() {
        // Two paths, 0-2-4 and 1-3, and a lone element 5.
        let xadj = [0, 1, 2, 4, 5, 6, 6];
        let adjncy = [2, 3, 0, 4, 1, 2];
        let order = reverse_cuthill_mckee(&xadj, &adjncy).unwrap();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3, 4, 5]);
        let place = inverse(&order);
        assert_eq!(bandwidth(&xadj, &adjncy, &place), 1, "{order:?}");
        assert!(reverse_cuthill_mckee(&[0], &[]).unwrap().is_empty());
    }
    #[test]
    fn bad_graphs_and_requests_are_errors_not_panics() {
        let graph_err = |xadj: &[i32], adjncy: &[i32]| reverse_cuthill_mckee(xadj, adjncy).unwrap_err().to_string();
        assert!(graph_err(&[0, 5], &[1]).contains("the last offset is 5, beyond the 1 neighbours"));
        assert!(graph_err(&[0, 2, 1], &[1, 0]).contains("the offsets fall at element 1 (2 then 1)"));
        assert!(graph_err(&[-1, 0], &[]).contains("the first offset is -1"));
        let table = [0, 1, 1, 2];
        let mesh = MeshDesc {
            set_sizes: vec![3, 2],
            maps: vec![MapDesc {
                from: 1,
                to: 0,
                arity: 2,
                values: &table,
                offsets: None,
            }],
        };
        let err = |r: Result<Renumbering>| r.unwrap_err().to_string();
        assert!(err(Renumbering::through(&mesh, 0, 1)).contains("renumbering through map 1, but the mesh has 1 map"));
        assert!(err(Renumbering::through(&mesh, 2, 0)).contains("the primary set is set 2, but the mesh has 2 sets"));
        let r = Renumbering::through(&mesh, 0, 0).unwrap();
        assert!(r.order(2).unwrap_err().to_string().contains("no set 2 (2 sets)"));
        assert!(r.place(7).is_err());
        assert!(r
            .rows(0, &[1.0; 5], 2)
            .unwrap_err()
            .to_string()
            .contains("3 elements x dim 2 need 6 values, got 5"));
        assert!(r
            .rows(0, &[1.0; 3], 0)
            .unwrap_err()
            .to_string()
            .contains("dim must be at least 1"));
        let stray = MapDesc { to: 1, ..mesh.maps[0] };
        assert!(r
            .map_values(&stray)
            .unwrap_err()
            .to_string()
            .contains("entry 3 is 2, outside its target set of 2 elements"));
        // A map into the primary set from a set no map joins: nothing to
        // order by, and every set keeps its order.
        let lone = MeshDesc {
            set_sizes: vec![3, 2],
            maps: vec![],
        };
        let r = Renumbering::new(&lone, 0).unwrap();
        assert_eq!(r.order(0).unwrap(), [0, 1, 2]);
        assert_eq!(r.order(1).unwrap(), [0, 1]);
    }
}
