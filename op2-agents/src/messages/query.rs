//! What a kernel's spatial message parameter is natively: `msgs:
//! &Spatial2d` or `&Spatial3d`, and `for j in msgs.near(x, y[, z])`, which
//! yields the indices of the messages in the bins around a point; or
//! `msgs: &Discrete2d`, and `for j in msgs.within(x, y, r)`, the messages
//! in the cells within `r` of a cell.
//!
//! The translated kernels do the same in C (the prelude's `op2_spatial`):
//! `#[op2::kernel]` lowers the parameter to the bins' offsets and the grid's
//! parameters, which `par_loop!` passes for `list(NEAR)`.

use super::grid::{axis_cell, cell_runs, strips, GRID_PARAMS, MAX_STRIPS};

/// The bins of a built spatial message list, as a loop sees them: the
/// first message of every bin (and one past the last) and the grid.
#[derive(Clone, Copy, Debug)]
pub struct SpatialView {
    starts: *const i32,
    grid: [f64; GRID_PARAMS],
}

// SAFETY: a loop reads the offsets only, and holds them borrowed.
unsafe impl Send for SpatialView {}
// SAFETY: as for Send, just above.
unsafe impl Sync for SpatialView {}

impl SpatialView {
    /// The view of bin offsets `starts` (one per bin, plus the end) under
    /// grid parameters `grid`.
    ///
    /// # Safety
    /// `starts` holds `bins + 1` ascending offsets for the grid's bins and
    /// outlives every query; nothing writes it meanwhile.
    pub unsafe fn new(starts: *const i32, grid: [f64; GRID_PARAMS]) -> SpatialView {
        SpatialView { starts, grid }
    }

    #[inline(always)]
    fn near(&self, p: [f64; 3]) -> Near {
        let mut it = Near {
            strips: [[0; 2]; MAX_STRIPS],
            count: 0,
            next_strip: 0,
            at: 0,
            end: 0,
        };
        // SAFETY: `new`'s contract: every bin and the end have an offset.
        it.count = strips(&self.grid, |b| unsafe { *self.starts.add(b) }, p, &mut it.strips) as u8;
        it
    }
}

/// A kernel parameter for a 2-D spatial message list (`list(NEAR)` in
/// `par_loop!`): `for j in msgs.near(x, y)` visits the messages in the bin
/// of `(x, y)` and its neighbours, each bin's in sender order. The kernel
/// filters by distance itself.
#[derive(Clone, Copy, Debug)]
pub struct Spatial2d {
    view: SpatialView,
}

/// A kernel parameter for a 3-D spatial message list: `for j in
/// msgs.near(x, y, z)`; as [`Spatial2d`], over 3 x 3 x 3 bins.
#[derive(Clone, Copy, Debug)]
pub struct Spatial3d {
    view: SpatialView,
}

impl Spatial2d {
    /// The indices of the messages in the bins around `(x, y)`.
    #[inline(always)]
    pub fn near(&self, x: impl Into<f64>, y: impl Into<f64>) -> Near {
        self.view.near([x.into(), y.into(), 0.0])
    }
}

impl Spatial3d {
    /// The indices of the messages in the bins around `(x, y, z)`.
    #[inline(always)]
    pub fn near(&self, x: impl Into<f64>, y: impl Into<f64>, z: impl Into<f64>) -> Near {
        self.view.near([x.into(), y.into(), z.into()])
    }
}

/// A kernel parameter for a discrete 2-D message list
/// ([`SpatialGrid::discrete_2d`](super::SpatialGrid::discrete_2d), passed
/// as `list(NEAR)`): `for j in msgs.within(x, y, r)` visits the messages in
/// the cells `(x + dx, y + dy)`, `|dx|, |dy| <= r` (the Moore
/// neighbourhood of radius `r`, the cell itself included), row by row from
/// `dy = -r`, each row from `dx = -r`, each cell's messages in sender id
/// order. Cells past an edge are skipped, or wrap around on a periodic
/// grid (each cell visited once, however large `r`). A grid with a reach
/// ([`SpatialGrid::with_reach`](super::SpatialGrid::with_reach)) reads no
/// further than it, whatever `r`.
#[derive(Clone, Copy, Debug)]
pub struct Discrete2d {
    view: SpatialView,
}

impl Discrete2d {
    /// The indices of the messages in the cells within `r` of `(x, y)`.
    #[inline(always)]
    pub fn within(&self, x: impl Into<i64>, y: impl Into<i64>, r: impl Into<i64>) -> Within {
        let v = &self.view;
        let wrap = v.grid[7] != 0.0;
        let (nx, ny) = (v.grid[4] as i64, v.grid[5] as i64);
        let (cx, cy) = (axis_cell(x.into(), nx, wrap), axis_cell(y.into(), ny, wrap));
        // The grid's reach, if it has one, bounds every query.
        let reach = v.grid[2];
        let r = match r.into() {
            r if reach >= 0.0 && r as f64 > reach => reach as i64,
            r => r,
        };
        let mut it = Within {
            starts: v.starts,
            nx,
            xruns: [[0; 2]; 2],
            x_count: 0,
            yruns: [[0; 2]; 2],
            y_count: 0,
            y_run: 0,
            y: 0,
            x_next: 0,
            at: 0,
            end: 0,
        };
        it.x_count = cell_runs(cx, r, nx, wrap, &mut it.xruns) as u8;
        it.y_count = cell_runs(cy, r, ny, wrap, &mut it.yruns) as u8;
        // Before the first row: the first `next` moves onto it.
        it.y = it.yruns[0][0] - 1;
        it.x_next = it.x_count;
        it
    }
}

/// The message indices of a discrete query, row by row and run by run:
/// nothing is gathered per message or per cell.
#[derive(Clone, Debug)]
pub struct Within {
    starts: *const i32,
    nx: i64,
    xruns: [[i64; 2]; 2],
    x_count: u8,
    yruns: [[i64; 2]; 2],
    y_count: u8,
    y_run: u8,
    y: i64,
    x_next: u8,
    at: u32,
    end: u32,
}

impl Iterator for Within {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.at == self.end {
            if self.x_next == self.x_count {
                // The next row, if any.
                if self.y_run == self.y_count {
                    return None;
                }
                self.y += 1;
                if self.y > self.yruns[self.y_run as usize][1] {
                    self.y_run += 1;
                    if self.y_run == self.y_count {
                        return None;
                    }
                    self.y = self.yruns[self.y_run as usize][0];
                }
                self.x_next = 0;
                continue;
            }
            let [a, b] = self.xruns[self.x_next as usize];
            self.x_next += 1;
            let row = self.nx * self.y;
            // SAFETY: `SpatialView::new`'s contract: every cell of the grid
            // and the end have an offset; `row + a ..= row + b + 1` are.
            unsafe {
                self.at = *self.starts.add((row + a) as usize) as u32;
                self.end = *self.starts.add((row + b + 1) as usize) as u32;
            }
        }
        self.at += 1;
        Some(self.at as usize - 1)
    }
}

/// Made by `par_loop!` from a list's view: the kernel's parameter type
/// decides which.
#[doc(hidden)]
pub trait FromSpatialView {
    /// The parameter over `view`.
    fn from_view(view: SpatialView) -> Self;
}

impl FromSpatialView for Spatial2d {
    fn from_view(view: SpatialView) -> Self {
        Spatial2d { view }
    }
}

impl FromSpatialView for Spatial3d {
    fn from_view(view: SpatialView) -> Self {
        Spatial3d { view }
    }
}

impl FromSpatialView for Discrete2d {
    fn from_view(view: SpatialView) -> Self {
        Discrete2d { view }
    }
}

/// The message indices of a query, strip by strip: nothing is gathered per
/// message, only the (at most 18) runs of bins are kept.
#[derive(Clone, Debug)]
pub struct Near {
    strips: [[u32; 2]; MAX_STRIPS],
    count: u8,
    next_strip: u8,
    at: u32,
    end: u32,
}

impl Iterator for Near {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.at == self.end {
            if self.next_strip == self.count {
                return None;
            }
            [self.at, self.end] = self.strips[self.next_strip as usize];
            self.next_strip += 1;
        }
        self.at += 1;
        Some(self.at as usize - 1)
    }
}
