//! Stencils: the neighbourhood of every site of a periodic 2-D lattice, as a
//! [`Map`] whose entries are computed instead of stored.
//!
//! Why a separate kind of map: a Moore neighbourhood kept as a table costs 32
//! bytes per cell, four times what a Life step must otherwise move, and the
//! native loops are bound by memory. A [`Stencil`] knows its rule, so the
//! loop body finds the neighbours of a run of interior cells at fixed offsets
//! (`e + dy * width + dx`, a loop the compiler vectorises) and wraps only at
//! the borders. Everything that needs a table (the planner, generated code,
//! devices, distribution) gets [`Stencil::map`], whose table is built on
//! first use.

use std::ops::Deref;

use crate::view::{IndirectArg, IndirectView};
use crate::{Dat, Error, Map, Result, Scalar, Set, Stage};

/// Most offsets a [`Stencil`] may have (a 7 x 7 neighbourhood has 49).
pub const MAX_STENCIL_OFFSETS: usize = 64;

/// A periodic `width x height` lattice numbered row by row (site `y * width +
/// x`) and the offsets of a neighbourhood: entry `k` of site `(x, y)` is
/// `((x + dx_k) mod width, (y + dy_k) mod height)`. With `rows`, the sites are
/// some whole rows of that lattice in another order (one rank's part of a
/// distributed lattice): site `r * width + x` is column `x` of local row `r`.
#[derive(Clone, Debug)]
pub(crate) struct LatticeRule {
    width: usize,
    height: usize,
    offsets: Vec<(isize, isize)>,
    rows: Option<LocalRows>,
}

/// A local row's neighbour row that is not local (only rows that loops never
/// execute have one; their entries point to site 0, as a distributed map's do).
const NOT_LOCAL: u32 = u32::MAX;

/// Some whole rows of a lattice, in local order.
#[derive(Clone, Debug)]
struct LocalRows {
    /// Per local row, per offset: the local row entry `k` lies in.
    neighbour: Vec<u32>,
    /// Per local row: whether every offset's row is this row plus `dy`, so
    /// that the interior's fixed index offsets hold in it.
    regular: Vec<bool>,
}

impl LatticeRule {
    /// Entries per site.
    pub(crate) fn arity(&self) -> usize {
        self.offsets.len()
    }

    /// Rows of sites.
    fn row_count(&self) -> usize {
        self.rows.as_ref().map_or(self.height, |r| r.regular.len())
    }

    /// Entry `k` of the site in column `x` of (local) row `y`.
    fn target(&self, x: usize, y: usize, k: usize) -> usize {
        let (dx, dy) = self.offsets[k];
        let nx = wrap(x, dx, self.width);
        let ny = match &self.rows {
            None => wrap(y, dy, self.height),
            Some(rows) => match rows.neighbour[y * self.arity() + k] {
                NOT_LOCAL => return 0,
                r => r as usize,
            },
        };
        ny * self.width + nx
    }

    /// The whole table, site-major (sizes are at most `i32::MAX` sites).
    pub(crate) fn table(&self) -> Vec<i32> {
        let mut table = Vec::with_capacity(self.width * self.row_count() * self.arity());
        for y in 0..self.row_count() {
            for x in 0..self.width {
                table.extend((0..self.arity()).map(|k| self.target(x, y, k) as i32));
            }
        }
        table
    }
}

/// `(i + d) mod n` for `i < n`, without overflow for any offset `d`: the
/// offset is reduced first (an offset near `isize::MAX` added to the index
/// would wrap around `isize`, and a wrapped sum is another residue).
fn wrap(i: usize, d: isize, n: usize) -> usize {
    // `n` is a lattice side, at most `i32::MAX` sites (`MAX_SET_SIZE`).
    let d = d.rem_euclid(n as isize) as usize;
    (i + d) % n
}

/// The neighbourhood of every site of a periodic 2-D lattice (a torus): a
/// [`Map`] from a Set of `width * height` sites to itself, numbered row by
/// row (site `y * width + x`; x the column, y the row), whose entry `k` of
/// site `(x, y)` is the site `((x + dx_k) mod width, (y + dy_k) mod height)`.
///
/// Use it in `par_loop!` wherever a Map goes (`d(READ, s)`, `d(INC, s[k])`):
/// native loops compute the neighbours instead of reading a table, which for
/// a Moore neighbourhood cuts a step's memory traffic by four fifths. It
/// dereferences to the equivalent [`Map`] (for `Distributed::map`, or any
/// API that takes one); generated code and devices read that map's table,
/// built on first use.
///
/// ```
/// use op2_core::{Set, Stencil};
/// let cells = Set::new("cells", 4 * 3).unwrap();
/// let moore = Stencil::torus("moore", &cells, (4, 3), &Stencil::MOORE).unwrap();
/// assert_eq!(moore.arity(), 8);
/// // Site (0, 0)'s neighbour up and to the left wraps to (3, 2) = site 11.
/// assert_eq!(moore.values()[0], 11);
/// ```
#[derive(Clone, Debug)]
pub struct Stencil {
    map: Map,
}

impl Stencil {
    /// The Moore neighbourhood (the 8 sites around), row by row:
    /// (-1,-1) (0,-1) (1,-1) (-1,0) (1,0) (-1,1) (0,1) (1,1).
    pub const MOORE: [(isize, isize); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];
    /// The von Neumann neighbourhood (the 4 sites sharing an edge): up,
    /// left, right, down.
    pub const VON_NEUMANN: [(isize, isize); 4] = [(0, -1), (-1, 0), (1, 0), (0, 1)];

    /// The stencil `offsets` (dx, dy) on `cells`, a periodic `width x height`
    /// lattice.
    ///
    /// # Errors
    /// [`Error::InvalidStencil`] if `cells` is distributed (distribute the
    /// stencil's map instead), does not hold exactly `width * height`
    /// elements, or `offsets` is empty or longer than
    /// [`MAX_STENCIL_OFFSETS`].
    pub fn torus(
        name: impl Into<String>,
        cells: &Set,
        (width, height): (usize, usize),
        offsets: &[(isize, isize)],
    ) -> Result<Stencil> {
        let name = name.into();
        let invalid = |reason: String| Error::InvalidStencil {
            stencil: name.clone(),
            reason,
        };
        cells.check_narrow("a stencil")?;
        if cells.distribution().is_some() {
            return Err(invalid(format!(
                "set `{}` is distributed; build the stencil on one process and distribute its map",
                cells.name()
            )));
        }
        if width == 0 || height == 0 {
            return Err(invalid(format!(
                "a {width}x{height} lattice has no sites; a torus needs at least one column and one row"
            )));
        }
        if width.checked_mul(height) != Some(cells.total_size()) {
            return Err(invalid(format!(
                "a {width}x{height} lattice has {} sites, but set `{}` has {} elements",
                width
                    .checked_mul(height)
                    .map_or_else(|| "too many".to_string(), |n| n.to_string()),
                cells.name(),
                cells.total_size()
            )));
        }
        check_offsets(offsets).map_err(invalid)?;
        let rule = LatticeRule {
            width,
            height,
            offsets: offsets.to_vec(),
            rows: None,
        };
        Ok(Stencil {
            map: Map::computed(name, cells, rule),
        })
    }

    /// The stencil `offsets` of a periodic `width x height` lattice on
    /// `cells`, which hold some of the lattice's rows, whole, in another
    /// order: element `r * width + x` of `cells` is site `(x, rows[r])`. This
    /// is one rank's part of a distributed lattice (`Distributed::stencil`
    /// in `op2::mpi` builds it from the partition): the rows of owned and
    /// exec-halo elements must have all their neighbours among `rows`; the
    /// entries of the other rows (halo rows no loop executes) point to
    /// element 0, as a distributed map's do.
    ///
    /// # Errors
    /// [`Error::InvalidStencil`] if `cells` does not hold `rows.len() *
    /// width` elements (halos included), or its executed elements are not
    /// whole rows, a row lies outside the lattice or is given twice, an
    /// executed row has a neighbour outside `rows`, or the offsets are as
    /// [`Stencil::torus`] refuses.
    pub fn torus_rows(
        name: impl Into<String>,
        cells: &Set,
        (width, height): (usize, usize),
        offsets: &[(isize, isize)],
        rows: &[usize],
    ) -> Result<Stencil> {
        let name = name.into();
        let invalid = |reason: String| Error::InvalidStencil {
            stencil: name.clone(),
            reason,
        };
        cells.check_narrow("a stencil")?;
        if width == 0 || height == 0 {
            return Err(invalid(format!(
                "a {width}x{height} lattice has no sites; a torus needs at least one column and one row"
            )));
        }
        if rows.len().checked_mul(width) != Some(cells.total_size()) {
            return Err(invalid(format!(
                "{} rows of {width} sites, but set `{}` has {} elements",
                rows.len(),
                cells.name(),
                cells.total_size()
            )));
        }
        check_offsets(offsets).map_err(invalid)?;
        let regions = cells.regions();
        let executed = regions.owned_size() + regions.exec_halo;
        if executed % width != 0 {
            return Err(invalid(format!(
                "the {executed} elements of `{}` that loops execute are not whole rows of {width}",
                cells.name()
            )));
        }
        let mut local_of = std::collections::HashMap::with_capacity(rows.len());
        for (r, &row) in rows.iter().enumerate() {
            if row >= height {
                return Err(invalid(format!("row {row} lies outside the lattice's {height} rows")));
            }
            if local_of.insert(row, r as u32).is_some() {
                return Err(invalid(format!("row {row} is given twice")));
            }
        }
        let arity = offsets.len();
        let mut neighbour = Vec::with_capacity(rows.len() * arity);
        let mut regular = Vec::with_capacity(rows.len());
        for (r, &row) in rows.iter().enumerate() {
            let mut plain = true;
            for &(_, dy) in offsets {
                let global = wrap(row, dy, height);
                let local = match local_of.get(&global) {
                    Some(&l) => l,
                    None if r * width < executed => {
                        return Err(invalid(format!(
                            "row {row} is executed, but its neighbour row {global} is not among the rows given"
                        )))
                    }
                    None => NOT_LOCAL,
                };
                plain &= local != NOT_LOCAL && (r as isize).checked_add(dy) == Some(local as isize);
                neighbour.push(local);
            }
            regular.push(plain);
        }
        let rule = LatticeRule {
            width,
            height,
            offsets: offsets.to_vec(),
            rows: Some(LocalRows { neighbour, regular }),
        };
        Ok(Stencil {
            map: Map::computed(name, cells, rule),
        })
    }

    /// The equivalent map (the same identity: plans and device copies are
    /// shared).
    pub fn map(&self) -> &Map {
        &self.map
    }

    /// The lattice's width and height (the whole lattice's, for a stencil on
    /// some of its rows).
    pub fn size(&self) -> (usize, usize) {
        let rule = self.rule();
        (rule.width, rule.height)
    }

    /// The offsets (dx, dy), in entry order.
    pub fn offsets(&self) -> &[(isize, isize)] {
        &self.rule().offsets
    }

    fn rule(&self) -> &LatticeRule {
        // A Stencil's map is always made with its rule.
        self.map.rule().expect("a stencil's map has a lattice rule")
    }
}

/// `Err` with the reason unless a stencil may have `offsets`.
fn check_offsets(offsets: &[(isize, isize)]) -> std::result::Result<(), String> {
    if offsets.is_empty() || offsets.len() > MAX_STENCIL_OFFSETS {
        return Err(format!(
            "{} offsets given; a stencil has 1 to {MAX_STENCIL_OFFSETS}",
            offsets.len()
        ));
    }
    Ok(())
}

impl Deref for Stencil {
    type Target = Map;
    fn deref(&self) -> &Map {
        &self.map
    }
}

/// The view `par_loop!` bodies use for a Dat through a [`Stencil`]. Sites
/// whose whole neighbourhood lies inside the lattice without wrapping (the
/// interior) reach entry `k` at `e + delta[k]`; the others wrap.
#[derive(Clone, Copy)]
pub struct StencilView<T> {
    ptr: *mut T,
    width: usize,
    height: usize,
    /// The interior: `x` in `lo_x..hi_x`, `y` in `lo_y..hi_y` (empty if the
    /// offsets reach across the whole lattice); on some rows, `y` such that
    /// `regular[y]`.
    lo_x: usize,
    hi_x: usize,
    lo_y: usize,
    hi_y: usize,
    /// Per entry: the index offset inside the interior.
    delta: [isize; MAX_STENCIL_OFFSETS],
    /// Per entry: the offsets reduced into `0..width` and `0..height`.
    dx: [usize; MAX_STENCIL_OFFSETS],
    dy: [usize; MAX_STENCIL_OFFSETS],
    /// On some rows (null on the whole torus): the rule's `neighbour` and
    /// `regular`, which live as long as the stencil the loop borrows.
    neighbour: *const u32,
    regular: *const bool,
    arity: usize,
    /// The rule the offsets come from: views of one rule share entries.
    rule: *const LatticeRule,
}

// SAFETY: as for the other views (view.rs): the runtime serialises conflicting
// access and the plan keeps concurrent writes disjoint.
unsafe impl<T: Send> Send for StencilView<T> {}
// SAFETY: as for Send, just above.
unsafe impl<T: Sync> Sync for StencilView<T> {}

impl<T: Scalar> StencilView<T> {
    fn new(dat: &Dat<T>, rule: &LatticeRule) -> StencilView<T> {
        let (w, h) = (rule.width as isize, rule.height as isize);
        let (mut lo_x, mut hi_x, mut lo_y, mut hi_y) = (0isize, w, 0isize, h);
        for &(dx, dy) in &rule.offsets {
            lo_x = lo_x.max(dx.saturating_neg());
            hi_x = hi_x.min(w.saturating_sub(dx));
            lo_y = lo_y.max(dy.saturating_neg());
            hi_y = hi_y.min(h.saturating_sub(dy));
        }
        // On some rows, the rows decide which are inside (`regular`).
        let interior = lo_x < hi_x && (lo_y < hi_y || rule.rows.is_some());
        let mut view = StencilView {
            ptr: dat.host_ptr(),
            width: rule.width,
            height: rule.height,
            lo_x: lo_x.max(0) as usize,
            hi_x: if interior { hi_x as usize } else { 0 },
            lo_y: lo_y.max(0) as usize,
            hi_y: if interior { hi_y as usize } else { 0 },
            delta: [0; MAX_STENCIL_OFFSETS],
            dx: [0; MAX_STENCIL_OFFSETS],
            dy: [0; MAX_STENCIL_OFFSETS],
            neighbour: std::ptr::null(),
            regular: std::ptr::null(),
            arity: rule.arity(),
            rule,
        };
        if let Some(rows) = &rule.rows {
            view.neighbour = rows.neighbour.as_ptr();
            view.regular = rows.regular.as_ptr();
        }
        for (k, &(dx, dy)) in rule.offsets.iter().enumerate() {
            // With an interior, |dx| < width and |dy| < height (or, on some
            // rows, a regular row r + dy exists): no overflow.
            if interior {
                // Wrapping: on some rows a huge `dy` leaves every row
                // irregular, and the delta is never used.
                view.delta[k] = dy.wrapping_mul(w).wrapping_add(dx);
            }
            view.dx[k] = dx.rem_euclid(w) as usize;
            view.dy[k] = dy.rem_euclid(h) as usize;
        }
        view
    }

    /// Element `e`'s column and row (one division: once per run or border site).
    #[inline(always)]
    fn site(self, e: usize) -> (usize, usize) {
        let y = e / self.width;
        (e - y * self.width, y)
    }

    /// Whether row `y`'s neighbours lie at fixed offsets.
    #[inline(always)]
    fn regular_row(self, y: usize) -> bool {
        if self.regular.is_null() {
            (self.lo_y..self.hi_y).contains(&y)
        } else {
            // SAFETY: `y` is a local row: the loop runs over the rule's sites.
            unsafe { *self.regular.add(y) }
        }
    }
}

// SAFETY: every target is a site of the lattice the Dat covers: off the
// runs, offsets wrap around the grid (or go through the rows' neighbour
// table); inside a run `run_end` returned, the interior bounds keep every
// fixed offset on the grid.
unsafe impl<T: Scalar> IndirectView<T> for StencilView<T> {
    #[inline(always)]
    fn has_runs(self) -> bool {
        true
    }

    #[inline(always)]
    fn run_end(self, e: usize, end: usize) -> usize {
        let (x, y) = self.site(e);
        if (self.lo_x..self.hi_x).contains(&x) && self.regular_row(y) {
            end.min(e + (self.hi_x - x))
        } else {
            e
        }
    }

    #[inline(always)]
    unsafe fn row<S: Stage<T>>(self, t: usize) -> *mut T {
        self.ptr.add(t * S::DIM)
    }

    #[inline(always)]
    fn entry_source(self) -> (usize, usize) {
        // The rule lives as long as the stencil the loop borrows.
        (self.rule as usize, self.arity)
    }

    #[inline(always)]
    unsafe fn entry(self, e: usize, k: usize, interior: bool) -> usize {
        if interior {
            e.wrapping_add_signed(self.delta[k])
        } else {
            let (x, y) = self.site(e);
            let mut nx = x + self.dx[k];
            if nx >= self.width {
                nx -= self.width;
            }
            let ny = if self.neighbour.is_null() {
                let mut ny = y + self.dy[k];
                if ny >= self.height {
                    ny -= self.height;
                }
                ny
            } else {
                match *self.neighbour.add(y * self.arity + k) {
                    NOT_LOCAL => return 0,
                    r => r as usize,
                }
            };
            ny * self.width + nx
        }
    }
}

// Hidden: for generated code only.
#[doc(hidden)]
impl IndirectArg for Stencil {
    type View<T: Scalar> = StencilView<T>;
    fn map(&self) -> &Map {
        &self.map
    }
    fn view<T: Scalar>(&self, dat: &Dat<T>) -> StencilView<T> {
        StencilView::new(dat, self.rule())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of every site of a torus through the view's two paths,
    /// against the rule's table; and the interior found.
    fn check_view(w: usize, h: usize, offsets: &[(isize, isize)]) {
        let cells = Set::new("cells", w * h).unwrap();
        let s = Stencil::torus("s", &cells, (w, h), offsets).unwrap();
        let interior_seen = check_paths(&s, w * h);
        // The interior: every site whose offsets stay on the lattice unwrapped.
        let inside = |size: usize, d: &dyn Fn(&(isize, isize)) -> isize| {
            let lo = offsets.iter().map(|o| -d(o)).max().unwrap().max(0);
            let hi = offsets
                .iter()
                .map(|o| size as isize - d(o))
                .min()
                .unwrap()
                .min(size as isize);
            (hi - lo).max(0) as usize
        };
        let want = inside(w, &|o| o.0) * inside(h, &|o| o.1);
        assert_eq!(interior_seen, want, "{w}x{h} {offsets:?}: the interior is found");
    }

    #[test]
    fn both_paths_agree_with_the_table_on_every_lattice() {
        for (w, h) in [(1, 1), (1, 5), (5, 1), (2, 2), (3, 3), (7, 2), (17, 11)] {
            check_view(w, h, &Stencil::MOORE);
            check_view(w, h, &Stencil::VON_NEUMANN);
            check_view(w, h, &[(0, 0)]);
            // Offsets reaching across the whole lattice, and beyond.
            check_view(w, h, &[(-2, 3), (5, -7), (-40, 0), (0, 23)]);
        }
    }

    /// Both paths of the view of `s` (on `n` sites) against its table.
    fn check_paths(s: &Stencil, n: usize) -> usize {
        let dat = Dat::<i32>::zeros("d", s.from_set(), 1).unwrap();
        let v = s.view(&dat);
        let base = dat.host_ptr();
        let table = s.values();
        let a = s.arity();
        let mut runs = 0;
        for e in 0..n {
            let run = v.run_end(e, n);
            assert!((e..=n).contains(&run), "run_end stays between e and the end");
            for k in 0..a {
                let want = table[e * a + k] as usize;
                // SAFETY: only pointer arithmetic inside the Dat.
                let wrapped = unsafe { v.target::<i32>(e, k, false).offset_from(base) } as usize;
                assert_eq!(
                    wrapped,
                    want,
                    "{:?} {:?}: site {e} entry {k} (wrapping)",
                    s.size(),
                    s.offsets()
                );
                if run > e {
                    // SAFETY: `e` lies inside a run `run_end` returned, where the fast path holds.
                    let fast = unsafe { v.target::<i32>(e, k, true).offset_from(base) } as usize;
                    assert_eq!(
                        fast,
                        want,
                        "{:?} {:?}: site {e} entry {k} (interior)",
                        s.size(),
                        s.offsets()
                    );
                }
            }
            runs += usize::from(run > e);
        }
        runs
    }

    #[test]
    fn a_stencil_on_some_rows_is_the_torus_renumbered() {
        let (w, h) = (7, 6);
        for offsets in [&Stencil::MOORE[..], &Stencil::VON_NEUMANN, &[(-2, 3), (5, -7), (0, 0)]] {
            // Every row, in an order where rows 2 and 3 (and only they, for
            // offsets within one row) keep their neighbours at +-1.
            let rows = [5, 1, 2, 3, 4, 0];
            let cells = Set::new("cells", w * h).unwrap();
            let torus = Stencil::torus("t", &cells, (w, h), offsets).unwrap();
            let local = Stencil::torus_rows("l", &cells, (w, h), offsets, &rows).unwrap();
            let local_of = |g: usize| rows.iter().position(|&r| r == g / w).unwrap() * w + g % w;
            let a = offsets.len();
            for (r, &row) in rows.iter().enumerate() {
                for x in 0..w {
                    let (l, g) = (r * w + x, row * w + x);
                    for k in 0..a {
                        let want = local_of(torus.values()[g * a + k] as usize);
                        assert_eq!(
                            local.values()[l * a + k] as usize,
                            want,
                            "{offsets:?} local site {l} entry {k}"
                        );
                    }
                }
            }
            let runs = check_paths(&local, w * h);
            if offsets == Stencil::MOORE {
                // Rows 2 and 3 (local 2 and 3), columns 1 to 5.
                assert_eq!(runs, 2 * 5);
            }
            assert_eq!(local.size(), (w, h));
        }
    }

    #[test]
    fn bad_row_stencils_are_errors() {
        let cells = Set::new("cells", 12).unwrap();
        let e = Stencil::torus_rows("s", &cells, (4, 5), &Stencil::MOORE, &[0, 1]).unwrap_err();
        assert!(
            e.to_string().contains("2 rows of 4 sites, but set `cells` has 12"),
            "{e}"
        );
        let e = Stencil::torus_rows("s", &cells, (4, 5), &Stencil::MOORE, &[0, 1, 7]).unwrap_err();
        assert!(e.to_string().contains("row 7 lies outside the lattice's 5 rows"), "{e}");
        let e = Stencil::torus_rows("s", &cells, (4, 5), &Stencil::MOORE, &[0, 1, 0]).unwrap_err();
        assert!(e.to_string().contains("row 0 is given twice"), "{e}");
        let e = Stencil::torus_rows("s", &cells, (4, 5), &Stencil::MOORE, &[0, 1, 2]).unwrap_err();
        assert!(
            e.to_string()
                .contains("row 0 is executed, but its neighbour row 4 is not among the rows given"),
            "{e}"
        );
        let e = Stencil::torus_rows("s", &cells, (4, 3), &[], &[0, 1, 2]).unwrap_err();
        assert!(e.to_string().contains("0 offsets given"), "{e}");
        let e = Stencil::torus_rows("s", &cells, (0, 3), &Stencil::MOORE, &[]).unwrap_err();
        assert!(e.to_string().contains("a 0x3 lattice has no sites"), "{e}");
        let e = Stencil::torus_rows("s", &cells, (4, 0), &Stencil::MOORE, &[0, 1, 2]).unwrap_err();
        assert!(e.to_string().contains("a 4x0 lattice has no sites"), "{e}");
    }

    #[test]
    fn a_lattice_without_sites_is_refused() {
        let none = Set::new("none", 0).unwrap();
        for size in [(0, 0), (0, 4), (4, 0)] {
            let e = Stencil::torus("m", &none, size, &Stencil::MOORE).unwrap_err();
            assert!(e.to_string().contains("needs at least one column and one row"), "{e}");
        }
    }

    #[test]
    fn offsets_near_the_ends_of_isize_wrap_as_residues() {
        let (w, h) = (5, 3);
        let offsets = [
            (isize::MAX, 0),
            (isize::MIN, 1),
            (0, isize::MAX),
            (isize::MIN + 1, isize::MIN),
            (isize::MAX - 1, isize::MAX - 2),
        ];
        let cells = Set::new("cells", w * h).unwrap();
        let want = |x: usize, y: usize, (dx, dy): (isize, isize)| {
            let nx = (x as i128 + dx as i128).rem_euclid(w as i128);
            let ny = (y as i128 + dy as i128).rem_euclid(h as i128);
            (ny * w as i128 + nx) as usize
        };
        let s = Stencil::torus("s", &cells, (w, h), &offsets).unwrap();
        for e in 0..w * h {
            for (k, &o) in offsets.iter().enumerate() {
                assert_eq!(
                    s.values()[e * offsets.len() + k] as usize,
                    want(e % w, e / w, o),
                    "site {e} entry {k}"
                );
            }
        }
        check_paths(&s, w * h);
        // The same lattice on its rows in another order.
        let rows = [2, 0, 1];
        let local = Stencil::torus_rows("l", &cells, (w, h), &offsets, &rows).unwrap();
        let local_of = |g: usize| rows.iter().position(|&r| r == g / w).unwrap() * w + g % w;
        for (r, &row) in rows.iter().enumerate() {
            for x in 0..w {
                for (k, &o) in offsets.iter().enumerate() {
                    let got = local.values()[(r * w + x) * offsets.len() + k] as usize;
                    assert_eq!(got, local_of(want(x, row, o)), "row {row} column {x} entry {k}");
                }
            }
        }
        check_paths(&local, w * h);
    }

    #[test]
    fn the_table_wraps_around_the_torus() {
        let cells = Set::new("cells", 12).unwrap();
        let s = Stencil::torus("moore", &cells, (4, 3), &Stencil::MOORE).unwrap();
        // Site (3, 2) = 11: its neighbours wrap right to column 0, down to row 0.
        assert_eq!(&s.values()[11 * 8..12 * 8], &[6, 7, 4, 10, 8, 2, 3, 0]);
        assert_eq!(s.size(), (4, 3));
        assert_eq!(s.offsets(), &Stencil::MOORE);
        assert!(s.map().from_set().same(&cells) && s.map().to_set().same(&cells));
    }

    #[test]
    fn bad_stencils_are_errors() {
        let cells = Set::new("cells", 12).unwrap();
        let e = Stencil::torus("s", &cells, (5, 3), &Stencil::MOORE).unwrap_err();
        assert!(
            e.to_string()
                .contains("a 5x3 lattice has 15 sites, but set `cells` has 12"),
            "{e}"
        );
        let e = Stencil::torus("s", &cells, (4, 3), &[]).unwrap_err();
        assert!(e.to_string().contains("0 offsets given"), "{e}");
        let many = vec![(0, 0); MAX_STENCIL_OFFSETS + 1];
        assert!(Stencil::torus("s", &cells, (4, 3), &many).is_err());
        let e = Stencil::torus("s", &cells, (usize::MAX, 2), &Stencil::MOORE).unwrap_err();
        assert!(e.to_string().contains("too many"), "{e}");
    }
}
