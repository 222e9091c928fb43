//! How moving agents are shared among ranks: each rank owns a box of whole
//! bins of a spatial message grid, cut by recursive coordinate bisection on
//! the agents' counts per bin so that the ranks hold about as many agents
//! each; and which of a rank's bins its neighbours read (the ring of bins
//! around theirs), computed once per decomposition.
//!
//! Ownership by bin is what makes results independent of the rank count: a
//! bin's messages all come from one rank, and a rank that reads the bin
//! receives all of them, in the canonical order (by sender id).

use op2_agents::{Boundary, SpatialGrid};

/// A box of bins `[lo, hi)` per axis (empty when some `hi <= lo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinBox {
    /// The first bin on each axis.
    pub lo: [usize; 3],
    /// One past the last bin on each axis.
    pub hi: [usize; 3],
}

impl BinBox {
    /// Bins in the box.
    pub fn volume(&self) -> usize {
        (0..3).map(|a| self.hi[a].saturating_sub(self.lo[a])).product()
    }

    fn empty() -> BinBox {
        BinBox { lo: [0; 3], hi: [0; 3] }
    }
}

/// The bins of a grid, each owned by one of `ranks` ranks (a box per rank),
/// and for one rank, the ranks that read each of its bins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinDecomposition {
    bins: [usize; 3],
    wrap: bool,
    boxes: Vec<BinBox>,
    owner: Vec<u32>,
}

impl BinDecomposition {
    /// Cuts `grid`'s bins among `ranks` ranks by recursive coordinate
    /// bisection: the box (at first the grid) is cut across its longest
    /// axis (in bins) at the plane that best splits `counts` (agents per
    /// bin) in proportion to the ranks on each side, down to one rank per
    /// box. A box too thin to cut leaves the remaining ranks empty boxes.
    /// The same counts give the same decomposition on every rank.
    ///
    /// # Panics
    /// If `counts` does not have one entry per bin or `ranks` is 0 (the
    /// callers' invariants).
    pub fn bisect(grid: &SpatialGrid, counts: &[u64], ranks: usize) -> BinDecomposition {
        let bins = grid.bins_per_axis();
        assert_eq!(counts.len(), grid.bin_count(), "one count per bin");
        assert!(ranks > 0, "at least one rank");
        let mut boxes = vec![BinBox::empty(); ranks];
        cut(counts, bins, BinBox { lo: [0; 3], hi: bins }, 0..ranks, &mut boxes);
        let mut owner = vec![0u32; grid.bin_count()];
        for (r, b) in boxes.iter().enumerate() {
            for z in b.lo[2]..b.hi[2] {
                for y in b.lo[1]..b.hi[1] {
                    for x in b.lo[0]..b.hi[0] {
                        owner[x + bins[0] * (y + bins[1] * z)] = r as u32;
                    }
                }
            }
        }
        BinDecomposition {
            bins,
            wrap: grid.boundary() == Boundary::Wrap,
            boxes,
            owner,
        }
    }

    /// The rank that owns bin `bin`.
    pub fn owner(&self, bin: usize) -> usize {
        self.owner[bin] as usize
    }

    /// Each rank's box.
    pub fn boxes(&self) -> &[BinBox] {
        &self.boxes
    }

    /// The ranks.
    pub fn ranks(&self) -> usize {
        self.boxes.len()
    }

    /// For `rank`, the other ranks that read each of its bins: those that
    /// own a bin next to it (the 3 x 3 (x 3) bins around, wrapped on a
    /// periodic grid), since a query from a bin visits its neighbours.
    ///
    /// # Panics
    /// If `rank` is not below [`BinDecomposition::ranks`].
    pub fn readers(&self, rank: usize) -> Readers {
        let empty = self.boxes[rank].volume() == 0;
        collect_readers(
            self.bins,
            self.wrap,
            rank,
            |bin| !empty && self.owner[bin] as usize == rank,
            |n| std::slice::from_ref(&self.owner[n]),
        )
    }

    /// As [`BinDecomposition::readers`], for queries that reach `reach`
    /// bins away on each axis (a discrete list's range on the grid this
    /// decomposition cut): the other ranks whose boxes meet the bins
    /// within `reach` of each of `rank`'s bins (wrapped on a periodic
    /// grid). Costs a test per bin and rank, whatever the reach.
    ///
    /// # Panics
    /// If `rank` is not below [`BinDecomposition::ranks`].
    pub fn readers_within(&self, rank: usize, reach: usize) -> Readers {
        let empty = self.boxes[rank].volume() == 0;
        Readers::collect(self.bins.iter().product(), rank, |bin, found| {
            if empty || self.owner[bin] as usize != rank {
                return;
            }
            let c = coordinates(self.bins, bin);
            for (q, b) in self.boxes.iter().enumerate() {
                let meets = |a: usize| axis_within(c[a], reach, b.lo[a], b.hi[a], self.bins[a], self.wrap);
                if b.volume() > 0 && (0..3).all(meets) {
                    found.add(q as u32);
                }
            }
        })
    }

    /// As [`BinDecomposition::readers_within`], for the cells of another
    /// grid `grid` (a discrete lattice) over the same box as `home`, the
    /// grid this decomposition cut, whose queries reach `reach` cells: a
    /// cell holds `rank`'s messages where its `home` bins meet `rank`'s
    /// box, and its readers are the other ranks whose boxes meet the
    /// `home` bins under the cells within the reach (one `home` bin more
    /// on each side, against rounding; wrapped on a periodic grid).
    ///
    /// # Panics
    /// If `rank` is not below [`BinDecomposition::ranks`] or `home` is not
    /// the grid this decomposition cut.
    pub fn readers_reaching(&self, rank: usize, home: &SpatialGrid, grid: &SpatialGrid, reach: usize) -> Readers {
        assert_eq!(home.bins_per_axis(), self.bins, "the decomposition's own grid");
        let (g, h) = (grid.params(), home.params());
        let (g_min, h_min) = (grid.bounds().0, home.bounds().0);
        let cells = grid.bins_per_axis();
        // Per axis and cell, the `home` coordinates under the cells `c -
        // reach ..= c + reach` (`reach` 0: under the cell itself), as an
        // inclusive range that may pass the ends of the axis.
        let under = |a: usize, c: usize, reach: usize| -> (i64, i64) {
            let (from, to) = (c as f64 - reach as f64, c as f64 + reach as f64 + 1.0);
            let at = |cell: f64| ((g_min[a] + cell / g[3] - h_min[a]) * h[3]).floor() as i64;
            (at(from) - 1, at(to) + 1)
        };
        let b = &self.boxes[rank];
        Readers::collect(grid.bin_count(), rank, |bin, found| {
            let c = coordinates(cells, bin);
            let span = |a: usize, r: usize| self.clamped(a, under(a, c[a], r));
            if b.volume() == 0 || !(0..3).all(|a| self.span_meets(a, span(a, 0), b)) {
                return;
            }
            for (q, other) in self.boxes.iter().enumerate() {
                if other.volume() > 0 && (0..3).all(|a| self.span_meets(a, span(a, reach), other)) {
                    found.add(q as u32);
                }
            }
        })
    }

    /// A span of `home` coordinates on axis `a` cut at the ends of a
    /// clamped axis (wrapped ones wrap in [`BinDecomposition::span_meets`]).
    fn clamped(&self, a: usize, (lo, hi): (i64, i64)) -> (i64, i64) {
        let n = self.bins[a] as i64;
        match self.wrap {
            true => (lo, hi),
            false => (lo.clamp(0, n - 1), hi.clamp(0, n - 1)),
        }
    }

    /// Whether coordinates `lo ..= hi` of axis `a` (around it, if it
    /// wraps) meet box `b`'s.
    fn span_meets(&self, a: usize, (lo, hi): (i64, i64), b: &BinBox) -> bool {
        let n = self.bins[a] as i64;
        let (blo, bhi) = (b.lo[a] as i64, b.hi[a] as i64);
        if self.wrap && hi - lo + 1 >= n {
            return blo < bhi;
        }
        let shifts: &[i64] = if self.wrap { &[-n, 0, n] } else { &[0] };
        shifts.iter().any(|&s| lo <= bhi - 1 + s && blo + s <= hi)
    }

    /// As [`BinDecomposition::readers`], for the bins of another grid
    /// `grid` over the same box (same bounds, boundary and dimensions) as
    /// `home`, the grid this decomposition cut: a message in a bin of
    /// `grid` is read from the bins around it, so its readers are the
    /// ranks owning any `home` bin under those (one `home` bin more on
    /// each side, against rounding). Only the bins of `grid` that reach
    /// into `rank`'s box have readers.
    ///
    /// # Panics
    /// If `rank` is not below [`BinDecomposition::ranks`] or `home` is not
    /// the grid this decomposition cut.
    pub fn readers_in(&self, rank: usize, home: &SpatialGrid, grid: &SpatialGrid) -> Readers {
        let bins = grid.bins_per_axis();
        let under = self.under_per_axis(home, grid, false);
        let around = self.around_per_axis(bins, &under);
        // The bins of `grid` over a `home` bin of `rank`: per axis, whether
        // the coordinate's `home` coordinates meet the box's.
        let b = &self.boxes[rank];
        let meets: [Vec<bool>; 3] = std::array::from_fn(|a| {
            let inside = |h: &u32| (b.lo[a]..b.hi[a]).contains(&(*h as usize));
            under[a].iter().map(|u| u.iter().any(inside)).collect()
        });
        Readers::collect(grid.bin_count(), rank, |bin, found| {
            let c = coordinates(bins, bin);
            if !(0..3).all(|a| meets[a][c[a]]) {
                return;
            }
            // The owners of the `home` bins under the bins around: per axis
            // the union of the coordinates under each neighbour.
            for &z in &around[2][c[2]] {
                for &y in &around[1][c[1]] {
                    for &x in &around[0][c[0]] {
                        found.add(self.owner[x as usize + self.bins[0] * (y as usize + self.bins[1] * z as usize)]);
                    }
                }
            }
        })
    }

    /// For each bin of `grid` (over the same box as `home`, the grid this
    /// decomposition cut; `home` itself included), whether a query from
    /// it can read a message of a rank other than `rank`: whether another
    /// rank owns a `home` bin under the bins around it (one `home` bin
    /// more on each side for another grid, against rounding). An agent of
    /// `rank` in a bin without reads none of the ghosts: a loop can run
    /// over it before they arrive.
    ///
    /// # Panics
    /// As [`BinDecomposition::readers_in`].
    pub fn reads_others(&self, rank: usize, home: &SpatialGrid, grid: &SpatialGrid) -> Vec<bool> {
        let bins = grid.bins_per_axis();
        let under = self.under_per_axis(home, grid, grid.params() == home.params());
        let around = self.around_per_axis(bins, &under);
        // Ranks own boxes: a query reads `rank`'s messages alone where, on
        // every axis, the `home` coordinates around lie in its box's.
        let b = &self.boxes[rank];
        let inside: [Vec<bool>; 3] = std::array::from_fn(|a| {
            let inside = |h: &u32| (b.lo[a]..b.hi[a]).contains(&(*h as usize));
            around[a].iter().map(|u| u.iter().all(inside)).collect()
        });
        (0..grid.bin_count())
            .map(|bin| {
                let c = coordinates(bins, bin);
                !(0..3).all(|a| inside[a][c[a]])
            })
            .collect()
    }

    /// Per axis, for each coordinate of `grid`, the `home` coordinates
    /// under it (wrapped, ascending, once each): one `home` bin more on
    /// each side against rounding, or the coordinate itself if `exact`
    /// (`grid` is `home`). A bin of `grid` lies over the product of its
    /// coordinates' sets.
    fn under_per_axis(&self, home: &SpatialGrid, grid: &SpatialGrid, exact: bool) -> [Vec<Vec<u32>>; 3] {
        assert_eq!(home.bins_per_axis(), self.bins, "the decomposition's own grid");
        let bins = grid.bins_per_axis();
        let ratio = home.params()[3] / grid.params()[3];
        std::array::from_fn(|a| {
            let n = self.bins[a] as i64;
            (0..bins[a])
                .map(|c| {
                    if exact {
                        return vec![c as u32];
                    }
                    let lo = (c as f64 * ratio).floor() as i64 - 1;
                    let hi = ((c + 1) as f64 * ratio).floor() as i64 + 1;
                    let (lo, hi) = match self.wrap {
                        // All of them once the range covers the axis.
                        true if hi - lo + 1 >= n => (0, n - 1),
                        true => (lo, hi),
                        // Clamped: edge bins hold everything past the edges.
                        false => {
                            let lo = if c == 0 { 0 } else { lo.max(0) };
                            let hi = if c + 1 == bins[a] { n - 1 } else { hi.min(n - 1) };
                            (lo, hi)
                        }
                    };
                    let mut v: Vec<u32> = (lo..=hi).map(|h| h.rem_euclid(n) as u32).collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect()
        })
    }

    /// Per axis, for each coordinate of a grid of `bins` bins per axis, the
    /// union of `under` over it and its neighbours (wrapped on a periodic
    /// grid, cut at the edges of a clamped one): a query from a bin visits
    /// the bins around it, and those lie over the product of these sets.
    fn around_per_axis(&self, bins: [usize; 3], under: &[Vec<Vec<u32>>; 3]) -> [Vec<Vec<u32>>; 3] {
        std::array::from_fn(|a| {
            let n = bins[a] as i64;
            (0..n)
                .map(|c| {
                    let mut v = Vec::new();
                    for d in -1..=1 {
                        let x = match self.wrap {
                            true => (c + d).rem_euclid(n),
                            false if (0..n).contains(&(c + d)) => c + d,
                            false => continue,
                        };
                        v.extend_from_slice(&under[a][x as usize]);
                    }
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect()
        })
    }
}

/// Whether the coordinates `[lo, hi)` of an axis of `n` bins come within
/// `reach` of coordinate `c` (around the axis, if it wraps).
fn axis_within(c: usize, reach: usize, lo: usize, hi: usize, n: usize, wrap: bool) -> bool {
    if lo >= hi {
        return false;
    }
    if (lo..hi).contains(&c) {
        return true;
    }
    let (below, above) = match wrap {
        // The steps from the range's end up to `c`, and from `c` up to
        // its start, around the axis.
        true => ((c + n - (hi - 1)) % n, (lo + n - c) % n),
        false if c < lo => (usize::MAX, lo - c),
        false => (c - (hi - 1), usize::MAX),
    };
    below.min(above) <= reach
}

/// The coordinates of bin `bin` of a grid of `bins` bins per axis.
fn coordinates(bins: [usize; 3], bin: usize) -> [usize; 3] {
    [bin % bins[0], (bin / bins[0]) % bins[1], bin / (bins[0] * bins[1])]
}

/// The readers of one rank's bins of a grid of `bins` bins per axis: for
/// each bin this rank `holds` (has messages of), the other ranks
/// among the `owners` of the bins around it, ascending.
fn collect_readers<'o>(
    bins: [usize; 3],
    wrap: bool,
    rank: usize,
    holds: impl Fn(usize) -> bool,
    owners: impl Fn(usize) -> &'o [u32],
) -> Readers {
    Readers::collect(bins.iter().product(), rank, |bin, found| {
        if !holds(bin) {
            return;
        }
        let c = coordinates(bins, bin);
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if let Some(n) = neighbour(bins, wrap, c, [dx, dy, dz]) {
                        owners(n).iter().for_each(|&q| found.add(q));
                    }
                }
            }
        }
    })
}

/// The ranks found reading one bin: each once, but the rank whose bin it is.
struct Found {
    rank: u32,
    ranks: Vec<u32>,
}

impl Found {
    fn add(&mut self, q: u32) {
        if q != self.rank && !self.ranks.contains(&q) {
            self.ranks.push(q);
        }
    }
}

/// The bin at offset `d` from bin coordinates `c` of a grid of `bins` bins
/// per axis: wrapped, or `None` past an edge.
fn neighbour(bins: [usize; 3], wrap: bool, c: [usize; 3], d: [i64; 3]) -> Option<usize> {
    let mut at = [0usize; 3];
    for a in 0..3 {
        let n = bins[a] as i64;
        let mut x = c[a] as i64 + d[a];
        if wrap {
            x = x.rem_euclid(n);
        } else if x < 0 || x >= n {
            return None;
        }
        at[a] = x as usize;
    }
    Some(at[0] + bins[0] * (at[1] + bins[1] * at[2]))
}

/// The ranks that read each bin of one rank (compressed rows), and all of
/// them: the rank's neighbours, to which it sends ghost messages and from
/// which it receives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Readers {
    start: Vec<u32>,
    ranks: Vec<u32>,
    neighbours: Vec<u32>,
}

impl Readers {
    /// The readers of `nbins` bins of `rank`: `find(bin, found)` adds the
    /// ranks that read each.
    fn collect(nbins: usize, rank: usize, mut find: impl FnMut(usize, &mut Found)) -> Readers {
        let mut readers = Readers {
            start: vec![0; nbins + 1],
            ranks: Vec::new(),
            neighbours: Vec::new(),
        };
        let mut found = Found {
            rank: rank as u32,
            ranks: Vec::with_capacity(8),
        };
        for bin in 0..nbins {
            readers.start[bin] = readers.ranks.len() as u32;
            found.ranks.clear();
            find(bin, &mut found);
            found.ranks.sort_unstable();
            readers.ranks.extend_from_slice(&found.ranks);
        }
        readers.start[nbins] = readers.ranks.len() as u32;
        let mut all = readers.ranks.clone();
        all.sort_unstable();
        all.dedup();
        readers.neighbours = all;
        readers
    }

    /// The other ranks that read bin `bin` (none for another rank's bin).
    pub fn of(&self, bin: usize) -> &[u32] {
        &self.ranks[self.start[bin] as usize..self.start[bin + 1] as usize]
    }

    /// The ranks that read some bin of this rank, ascending.
    pub fn neighbours(&self) -> &[u32] {
        &self.neighbours
    }
}

/// Gives `ranks` the bins of `b`: one rank the whole box, else a cut and
/// each side to its share of the ranks.
fn cut(counts: &[u64], bins: [usize; 3], b: BinBox, ranks: std::ops::Range<usize>, boxes: &mut [BinBox]) {
    if ranks.len() == 1 {
        boxes[ranks.start] = b;
        return;
    }
    let extent = |a: usize| b.hi[a] - b.lo[a];
    // The longest axis that can be cut (lowest on ties).
    let Some(axis) = (0..3)
        .filter(|&a| extent(a) >= 2)
        .max_by_key(|&a| (extent(a), std::cmp::Reverse(a)))
    else {
        // One bin: the first rank takes it, the others stay empty.
        boxes[ranks.start] = b;
        return;
    };
    let mut slabs = vec![0u64; extent(axis)];
    for z in b.lo[2]..b.hi[2] {
        for y in b.lo[1]..b.hi[1] {
            for x in b.lo[0]..b.hi[0] {
                let c = [x, y, z][axis] - b.lo[axis];
                slabs[c] += counts[x + bins[0] * (y + bins[1] * z)];
            }
        }
    }
    let left = ranks.len() / 2;
    let total: u64 = slabs.iter().sum();
    // The cut whose lower side holds closest to `left / ranks` of the
    // agents (in exact integers: |below * ranks - total * left|).
    let (n, l) = (ranks.len() as u128, left as u128);
    let mut below = 0u128;
    let mut best = (u128::MAX, 1);
    for (c, &s) in slabs.iter().enumerate().take(slabs.len() - 1) {
        below += u128::from(s);
        let miss = (below * n).abs_diff(u128::from(total) * l);
        if miss < best.0 {
            best = (miss, c + 1);
        }
    }
    let at = b.lo[axis] + best.1;
    let (mut lower, mut upper) = (b, b);
    lower.hi[axis] = at;
    upper.lo[axis] = at;
    cut(counts, bins, lower, ranks.start..ranks.start + left, boxes);
    cut(counts, bins, upper, ranks.start + left..ranks.end, boxes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(side: f64, boundary: Boundary) -> SpatialGrid {
        SpatialGrid::new_3d("g", [0.0; 3], [side; 3], 1.0, boundary).unwrap()
    }

    #[test]
    fn bisection_balances_counts_and_covers_every_bin_once() {
        let g = grid(8.0, Boundary::Clamp);
        // Agents crowd the low x half: the cuts follow them.
        let counts: Vec<u64> = (0..g.bin_count()).map(|b| if b % 8 < 4 { 10 } else { 1 }).collect();
        for ranks in 1..=5 {
            let d = BinDecomposition::bisect(&g, &counts, ranks);
            let volume: usize = d.boxes().iter().map(BinBox::volume).sum();
            assert_eq!(volume, g.bin_count(), "{ranks} ranks");
            let mut held = vec![0u64; ranks];
            for (b, &c) in counts.iter().enumerate() {
                held[d.owner(b)] += c;
            }
            let mean = counts.iter().sum::<u64>() as f64 / ranks as f64;
            let worst = *held.iter().max().unwrap() as f64 / mean;
            assert!(worst < 1.3, "{ranks} ranks: {held:?}");
        }
        // Two ranks: the cut is across x, inside the crowded half (1280 of
        // 2816 agents below x = 2, 1920 below x = 3).
        let d = BinDecomposition::bisect(&g, &counts, 2);
        assert_eq!(d.boxes()[0].hi, [2, 8, 8]);
    }

    #[test]
    fn a_grid_too_small_to_cut_leaves_ranks_empty() {
        let g = SpatialGrid::new_3d("g", [0.0; 3], [2.0, 1.0, 1.0], 1.0, Boundary::Clamp).unwrap();
        let d = BinDecomposition::bisect(&g, &[5, 5], 4);
        let volumes: Vec<usize> = d.boxes().iter().map(BinBox::volume).collect();
        assert_eq!(volumes.iter().sum::<usize>(), 2);
        assert_eq!(volumes.iter().filter(|&&v| v == 0).count(), 2, "{volumes:?}");
        // An empty rank reads nothing and is read by nobody.
        let empty = volumes.iter().position(|&v| v == 0).unwrap();
        assert!(d.readers(empty).neighbours().is_empty());
    }

    #[test]
    fn readers_are_the_owners_of_neighbouring_bins_wrapped_on_periodic_grids() {
        for boundary in [Boundary::Clamp, Boundary::Wrap] {
            let g = grid(6.0, boundary);
            let d = BinDecomposition::bisect(&g, &vec![1; g.bin_count()], 2);
            // Cut across x at 3: bins x = 0..3 on rank 0.
            assert_eq!(d.boxes()[0].hi[0], 3);
            let r = d.readers(0);
            assert_eq!(r.neighbours(), &[1]);
            for bin in 0..g.bin_count() {
                let x = bin % 6;
                let read = match (x, boundary) {
                    (2, _) | (0, Boundary::Wrap) => vec![1u32],
                    _ => vec![],
                };
                assert_eq!(r.of(bin), &read[..], "{boundary:?} bin {bin} (x = {x})");
            }
            // Rank 0's agents read rank 1's messages from the same bins.
            let reads = d.reads_others(0, &g, &g);
            for bin in (0..g.bin_count()).filter(|b| b % 6 < 3) {
                assert_eq!(reads[bin], !r.of(bin).is_empty(), "{boundary:?} bin {bin}");
            }
        }
    }

    #[test]
    fn readers_within_a_reach_are_the_owners_of_the_bins_that_far() {
        for boundary in [Boundary::Clamp, Boundary::Wrap] {
            let g = SpatialGrid::discrete_2d("cells", [11, 7], boundary).unwrap();
            let counts: Vec<u64> = (0..g.bin_count() as u64).map(|b| 1 + (b * 7) % 5).collect();
            for ranks in 2..=5 {
                let d = BinDecomposition::bisect(&g, &counts, ranks);
                for rank in 0..ranks {
                    assert_eq!(
                        d.readers_within(rank, 1),
                        d.readers(rank),
                        "{boundary:?}, {ranks} ranks"
                    );
                    for reach in [0, 2, 3, 9] {
                        // Every bin within the reach, one by one.
                        let r = reach as i64;
                        let want = Readers::collect(g.bin_count(), rank, |bin, found| {
                            if d.owner(bin) != rank {
                                return;
                            }
                            let c = coordinates(g.bins_per_axis(), bin);
                            for dy in -r..=r {
                                for dx in -r..=r {
                                    if let Some(n) = neighbour(g.bins_per_axis(), d.wrap, c, [dx, dy, 0]) {
                                        found.add(d.owner(n) as u32);
                                    }
                                }
                            }
                        });
                        let what = format!("{boundary:?}, {ranks} ranks, rank {rank}, reach {reach}");
                        assert_eq!(d.readers_within(rank, reach), want, "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn readers_reaching_from_a_lattice_cover_every_rank_within_the_reach() {
        // Home bins narrower than a cell, as wide, and wider, over a
        // 10 x 10 lattice.
        for (boundary, width) in [Boundary::Clamp, Boundary::Wrap]
            .into_iter()
            .flat_map(|b| [0.5, 1.0, 2.5].map(|w| (b, w)))
        {
            let home = SpatialGrid::new_2d("home", [0.0; 2], [10.0; 2], width, boundary).unwrap();
            let lattice = SpatialGrid::discrete_2d("cells", [10, 10], boundary).unwrap();
            let counts: Vec<u64> = (0..home.bin_count() as u64).map(|b| 1 + b % 4).collect();
            for ranks in [2, 3, 5, 8] {
                let d = BinDecomposition::bisect(&home, &counts, ranks);
                for rank in 0..ranks {
                    for reach in [0usize, 1, 3, 6] {
                        let readers = d.readers_reaching(rank, &home, &lattice, reach);
                        let r = reach as i64;
                        for cell in 0..lattice.bin_count() {
                            let [x, y, _] = coordinates(lattice.bins_per_axis(), cell);
                            // Only the cells whose agents live on `rank`.
                            let centre = |v: usize| v as f64 + 0.5;
                            if d.owner(home.bin_of([centre(x), centre(y), 0.0])) != rank {
                                continue;
                            }
                            for dy in -r..=r {
                                for dx in -r..=r {
                                    let at = |v: usize, dv: i64| match boundary {
                                        Boundary::Wrap => Some((v as i64 + dv).rem_euclid(10)),
                                        Boundary::Clamp => Some(v as i64 + dv).filter(|c| (0..10).contains(c)),
                                    };
                                    let (Some(rx), Some(ry)) = (at(x, dx), at(y, dy)) else {
                                        continue;
                                    };
                                    let q = d.owner(home.bin_of([rx as f64 + 0.5, ry as f64 + 0.5, 0.0]));
                                    let what =
                                        format!("{boundary:?} {ranks} ranks, rank {rank}, reach {reach}, cell {cell}");
                                    assert!(q == rank || readers.of(cell).contains(&(q as u32)), "{what}: rank {q}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn readers_in_another_grid_cover_every_reader_near_a_message() {
        for boundary in [Boundary::Clamp, Boundary::Wrap] {
            let home = SpatialGrid::new_2d("home", [0.0; 2], [12.0; 2], 3.0, boundary).unwrap();
            let counts: Vec<u64> = (0..home.bin_count() as u64).map(|b| 1 + b % 3).collect();
            for fine in [0.75, 1.1, 5.0] {
                let grid = SpatialGrid::new_2d("fine", [0.0; 2], [12.0; 2], fine, boundary).unwrap();
                let d = BinDecomposition::bisect(&home, &counts, 3);
                let readers: Vec<Readers> = (0..3).map(|r| d.readers_in(r, &home, &grid)).collect();
                let reads: Vec<Vec<bool>> = (0..3).map(|r| d.reads_others(r, &home, &grid)).collect();
                // Points on a lattice finer than both grids (edges included).
                let points: Vec<[f64; 3]> = (0..=48)
                    .flat_map(|i| (0..=48).map(move |j| [i as f64 * 0.25, j as f64 * 0.25, 0.0]))
                    .collect();
                let near = |a: usize, b: usize| {
                    let n = grid.bins_per_axis();
                    let (ax, ay, bx, by) = (a % n[0], a / n[0], b % n[0], b / n[0]);
                    let close = |u: usize, v: usize, n: usize| {
                        let d = u.abs_diff(v);
                        d <= 1 || (boundary == Boundary::Wrap && d + 1 == n)
                    };
                    close(ax, bx, n[0]) && close(ay, by, n[1])
                };
                for s in points.iter().step_by(7) {
                    let (sb, sr) = (grid.bin_of(*s), d.owner(home.bin_of(*s)));
                    for p in &points {
                        let pr = d.owner(home.bin_of(*p));
                        if pr != sr && near(grid.bin_of(*p), sb) {
                            assert!(
                                readers[sr].of(sb).contains(&(pr as u32)),
                                "{boundary:?} width {fine}: a message at {s:?} (rank {sr}) is read from {p:?} (rank {pr})"
                            );
                            assert!(
                                reads[pr][grid.bin_of(*p)],
                                "{boundary:?} width {fine}: {p:?} (rank {pr}) reads a message of rank {sr} at {s:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn agents_away_from_other_ranks_read_none_of_their_messages() {
        for boundary in [Boundary::Clamp, Boundary::Wrap] {
            let home = SpatialGrid::new_2d("home", [0.0; 2], [24.0; 2], 3.0, boundary).unwrap();
            let d = BinDecomposition::bisect(&home, &vec![1; home.bin_count()], 2);
            for width in [0.75, 3.0] {
                let grid = SpatialGrid::new_2d("g", [0.0; 2], [24.0; 2], width, boundary).unwrap();
                for rank in 0..2 {
                    let reads = d.reads_others(rank, &home, &grid);
                    // The bins at the middle of the rank's half read only it.
                    let middle = [6.0 + 12.0 * rank as f64, 12.0, 0.0];
                    assert!(!reads[grid.bin_of(middle)], "{boundary:?} width {width} rank {rank}");
                    let edge = [11.9 + 0.2 * rank as f64, 12.0, 0.0];
                    assert!(reads[grid.bin_of(edge)], "{boundary:?} width {width} rank {rank}");
                }
            }
        }
    }

    /// The owners of the `home` bins under each bin of `grid`, bin by bin
    /// (one `home` bin more on each side, or exactly its own bin): the
    /// plain definition the per-axis sets compute faster.
    fn owners_under(d: &BinDecomposition, home: &SpatialGrid, grid: &SpatialGrid, exact: bool) -> Vec<Vec<u32>> {
        let bins = grid.bins_per_axis();
        let ratio = home.params()[3] / grid.params()[3];
        let under = |a: usize, c: usize| -> Vec<usize> {
            let n = d.bins[a] as i64;
            if exact {
                return vec![c];
            }
            let lo = (c as f64 * ratio).floor() as i64 - 1;
            let hi = ((c + 1) as f64 * ratio).floor() as i64 + 1;
            let (lo, hi) = match d.wrap {
                true if hi - lo + 1 >= n => (0, n - 1),
                true => (lo, hi),
                false => (
                    if c == 0 { 0 } else { lo.max(0) },
                    if c + 1 == bins[a] { n - 1 } else { hi.min(n - 1) },
                ),
            };
            (lo..=hi).map(|h| h.rem_euclid(n) as usize).collect()
        };
        (0..grid.bin_count())
            .map(|bin| {
                let c = coordinates(bins, bin);
                let mut o = Vec::new();
                for z in under(2, c[2]) {
                    for y in under(1, c[1]) {
                        for x in under(0, c[0]) {
                            let q = d.owner[x + d.bins[0] * (y + d.bins[1] * z)];
                            if !o.contains(&q) {
                                o.push(q);
                            }
                        }
                    }
                }
                o
            })
            .collect()
    }

    #[test]
    fn readers_and_reads_by_axis_match_them_bin_by_bin() {
        for boundary in [Boundary::Clamp, Boundary::Wrap] {
            for dims in [2, 3] {
                // A smaller box in 3-D: the plain definition is slow.
                let side = if dims == 2 { 13.0 } else { 7.0 };
                // Home grids of several bins per axis, of 2 and of 1.
                for home_width in [2.0, side / 2.0, side] {
                    let home = match dims {
                        2 => SpatialGrid::new_2d("home", [0.0; 2], [side; 2], home_width, boundary).unwrap(),
                        _ => SpatialGrid::new_3d("home", [0.0; 3], [side; 3], home_width, boundary).unwrap(),
                    };
                    let counts: Vec<u64> = (0..home.bin_count() as u64).map(|b| 1 + (b * 7) % 5).collect();
                    for width in [0.3, 0.75, 1.1, 2.0, 2.5, 5.0, 13.0] {
                        let grid = match dims {
                            2 => SpatialGrid::new_2d("g", [0.0; 2], [side; 2], width, boundary).unwrap(),
                            _ => SpatialGrid::new_3d("g", [0.0; 3], [side; 3], width, boundary).unwrap(),
                        };
                        let exact = grid.params() == home.params();
                        for ranks in 1..=5 {
                            let d = BinDecomposition::bisect(&home, &counts, ranks);
                            let (wrap, bins) = (d.wrap, grid.bins_per_axis());
                            let with_margin = owners_under(&d, &home, &grid, false);
                            let plain = owners_under(&d, &home, &grid, exact);
                            for rank in 0..ranks {
                                let what = format!(
                                    "{boundary:?} {dims}-D home {home_width} width {width}, rank {rank} of {ranks}"
                                );
                                let held = |bin: usize| with_margin[bin].contains(&(rank as u32));
                                let want = collect_readers(bins, wrap, rank, held, |n| &with_margin[n]);
                                assert_eq!(d.readers_in(rank, &home, &grid), want, "{what}");
                                let all = collect_readers(bins, wrap, rank, |_| true, |n| &plain[n]);
                                let want: Vec<bool> = (0..grid.bin_count()).map(|b| !all.of(b).is_empty()).collect();
                                assert_eq!(d.reads_others(rank, &home, &grid), want, "{what}");
                            }
                        }
                    }
                }
            }
        }
    }
}
