//! What a kernel's spatial message parameter is natively: `msgs:
//! &Spatial2d` or `&Spatial3d`, and `for j in msgs.near(x, y[, z])`, which
//! yields the indices of the messages in the bins around a point.
//!
//! The translated kernels do the same in C (the prelude's `op2_spatial`):
//! `#[op2::kernel]` lowers the parameter to the bins' offsets and the grid's
//! parameters, which `par_loop!` passes for `list(NEAR)`.

use super::grid::{strips, GRID_PARAMS, MAX_STRIPS};

/// The bins of a built spatial message list, as a loop sees them: the
/// first message of every bin (and one past the last) and the grid.
#[derive(Clone, Copy, Debug)]
pub struct SpatialView {
    starts: *const i32,
    grid: [f64; GRID_PARAMS],
}

// SAFETY: a loop reads the offsets only, and holds them borrowed.
unsafe impl Send for SpatialView {}
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
