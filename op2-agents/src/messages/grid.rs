//! The uniform grid of a spatial message list: its bins, the bin of a
//! position, and the runs of bins ("strips") a query visits.
//!
//! Kernels receive the grid as eight `f64`s ([`SpatialGrid::params`]) and
//! the translated code repeats these computations in C (`spatial_c.rs` in
//! op2-backends) operation for operation, so that a message is found by the
//! same bins on every backend.

pub use op2_core::{NearKind, GRID_PARAMS};

use op2_core::{Error, Result};

/// What happens to positions outside a spatial message list's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Positions outside the bounds fall into the edge bins (FLAME GPU's
    /// rule); neighbourhoods stop at the edges.
    Clamp,
    /// The domain is periodic: positions wrap around and the bins at one edge
    /// neighbour those at the other. Kernels measure distances the periodic
    /// way themselves.
    Wrap,
}

/// Most bins a grid may have (bin offsets are 32-bit).
pub const MAX_BINS: usize = (i32::MAX - 1) as usize;

/// A uniform grid of square (cubic) bins over a box, at least as wide as
/// the search radius, so that every message within the radius of a point
/// lies in the point's bin or a neighbouring one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialGrid {
    dims: usize,
    min: [f64; 3],
    max: [f64; 3],
    radius: f64,
    boundary: Boundary,
    bins: [usize; 3],
    inv_width: f64,
    /// A grid of unit cells over integer positions (read with `within`).
    discrete: bool,
    /// The most cells a discrete query reaches (`None`: any number).
    reach: Option<usize>,
}

impl SpatialGrid {
    /// A 2-D grid over `[min, max)` for a search radius `radius`. With
    /// [`Boundary::Clamp`] the bins are `radius` wide (`ceil((max - min) /
    /// radius)` per axis); with [`Boundary::Wrap`] the box is cut into
    /// `floor((max - min) / radius)` bins per axis (at least one), each at
    /// least `radius` wide.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the radius is not positive and finite,
    /// a bound is not finite, `max <= min` on an axis, or the grid would
    /// have more than [`MAX_BINS`] bins.
    pub fn new_2d(name: &str, min: [f64; 2], max: [f64; 2], radius: f64, boundary: Boundary) -> Result<SpatialGrid> {
        SpatialGrid::build(name, 2, [min[0], min[1], 0.0], [max[0], max[1], 1.0], radius, boundary)
    }

    /// A 3-D grid over `[min, max)`; as [`SpatialGrid::new_2d`].
    ///
    /// # Errors
    /// As [`SpatialGrid::new_2d`].
    pub fn new_3d(name: &str, min: [f64; 3], max: [f64; 3], radius: f64, boundary: Boundary) -> Result<SpatialGrid> {
        SpatialGrid::build(name, 3, min, max, radius, boundary)
    }

    /// A 2-D grid of `size[0] x size[1]` unit cells over integer positions
    /// (discrete messages): a message sent from `(x, y)` is in cell `(x,
    /// y)` (clamped to the edge cells, or wrapped), and kernels read the
    /// messages within a radius of cells through a
    /// [`Discrete2d`](super::Discrete2d) parameter. A cell may hold any
    /// number of messages, in sender id order.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if a side is 0 or the grid would have more
    /// than [`MAX_BINS`] cells.
    pub fn discrete_2d(name: &str, size: [usize; 2], boundary: Boundary) -> Result<SpatialGrid> {
        if size.contains(&0) {
            return Err(Error::InvalidMessages {
                list: name.to_string(),
                reason: format!(
                    "a discrete grid needs at least one cell per axis, not {} x {}",
                    size[0], size[1]
                ),
            });
        }
        let max = [size[0] as f64, size[1] as f64, 1.0];
        let grid = SpatialGrid::build(name, 2, [0.0; 3], max, 1.0, boundary)?;
        Ok(SpatialGrid { discrete: true, ..grid })
    }

    /// This discrete grid with its queries limited to `cells` cells
    /// around their own: `within(x, y, r)` reads the cells within
    /// `min(r, cells)`, on every backend. A distributed run needs the
    /// limit, to know how far from its own cells each rank's readers read.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the grid is not discrete, or `cells`
    /// is more than 2^31 - 1.
    pub fn with_reach(self, cells: usize) -> Result<SpatialGrid> {
        if !self.discrete || cells > i32::MAX as usize {
            return Err(Error::InvalidMessages {
                list: "(a grid)".to_string(),
                reason: format!(
                    "a reach of {cells} cells limits the queries of a discrete grid (at most 2^31 - 1 cells); \
                     this grid is {}",
                    if self.discrete {
                        "discrete"
                    } else {
                        "not discrete: its queries reach the neighbouring bins"
                    }
                ),
            });
        }
        Ok(SpatialGrid {
            reach: Some(cells),
            ..self
        })
    }

    /// The most cells a query of this discrete grid reaches
    /// ([`SpatialGrid::with_reach`]); `None` for a grid without a limit,
    /// or one that is not discrete.
    pub fn reach(&self) -> Option<usize> {
        self.reach
    }

    fn build(
        name: &str,
        dims: usize,
        min: [f64; 3],
        max: [f64; 3],
        radius: f64,
        boundary: Boundary,
    ) -> Result<SpatialGrid> {
        let bad = |reason: String| Error::InvalidMessages {
            list: name.to_string(),
            reason,
        };
        if !(radius.is_finite() && radius > 0.0) {
            return Err(bad(format!("the radius must be positive and finite, not {radius:?}")));
        }
        let mut bins = [1usize; 3];
        let mut total = 1usize;
        for a in 0..dims {
            let (lo, hi) = (min[a], max[a]);
            if !(lo.is_finite() && hi.is_finite() && hi > lo) {
                return Err(bad(format!(
                    "axis {a}: the bounds must be finite with min < max, not [{lo:?}, {hi:?})"
                )));
            }
            if !(hi - lo).is_finite() {
                return Err(bad(format!(
                    "axis {a}: the box [{lo:?}, {hi:?}) is wider than an f64 holds (max - min overflows); give \
                     bounds whose difference is finite"
                )));
            }
            let cells = (hi - lo) / radius;
            let n = match boundary {
                Boundary::Clamp => cells.ceil(),
                Boundary::Wrap => cells.floor().max(1.0),
            };
            // n is positive here, but may be infinite (a tiny radius).
            if n > MAX_BINS as f64 {
                return Err(bad(format!(
                    "axis {a}: [{lo:?}, {hi:?}) cut into bins of width {radius:?} needs more than {MAX_BINS} bins \
                     (the most a grid has); use a radius of at least {:.3e} on this box, or a smaller box",
                    (hi - lo) / MAX_BINS as f64
                )));
            }
            bins[a] = (n as usize).max(1);
            total = total.checked_mul(bins[a]).filter(|&t| t <= MAX_BINS).ok_or_else(|| {
                bad(format!(
                    "the axes together need more than {MAX_BINS} bins of width {radius:?} (the most a grid has); \
                         use a larger radius or a smaller box"
                ))
            })?;
        }
        // Wrapping cuts the box into whole bins: the width is box / bins.
        let inv_width = match boundary {
            Boundary::Clamp => 1.0 / radius,
            Boundary::Wrap => bins[0] as f64 / (max[0] - min[0]),
        };
        if boundary == Boundary::Wrap {
            for a in 1..dims {
                let w = (max[a] - min[a]) / bins[a] as f64;
                if (w * inv_width - 1.0).abs() > 1e-12 {
                    return Err(bad(format!(
                        "a periodic grid needs bins of one width on every axis: axis 0 gives {:?}, axis {a} gives {w:?} (make each side a multiple of one width)",
                        1.0 / inv_width
                    )));
                }
            }
        }
        Ok(SpatialGrid {
            dims,
            min,
            max,
            radius,
            boundary,
            bins,
            inv_width,
            discrete: false,
            reach: None,
        })
    }

    /// Whether the grid is one of unit cells over integer positions
    /// ([`SpatialGrid::discrete_2d`]).
    pub fn is_discrete(&self) -> bool {
        self.discrete
    }

    /// The kernel parameter that reads a list on this grid.
    pub fn near_kind(&self) -> NearKind {
        match (self.dims, self.discrete) {
            (2, true) => NearKind::Discrete2d,
            (2, false) => NearKind::Spatial2d,
            _ => NearKind::Spatial3d,
        }
    }

    /// 2 or 3.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The search radius.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// The boundary rule.
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }

    /// Bins per axis (1 on the third axis of a 2-D grid).
    pub fn bins_per_axis(&self) -> [usize; 3] {
        self.bins
    }

    /// Number of bins.
    pub fn bin_count(&self) -> usize {
        self.bins.iter().product()
    }

    /// The box `[min, max)` (the third axis of a 2-D grid is `[0, 1)`).
    pub fn bounds(&self) -> ([f64; 3], [f64; 3]) {
        (self.min, self.max)
    }

    /// The grid as kernels receive it: the lower corner, the inverse bin
    /// width, the bins per axis and whether it wraps. A 2-D grid has no
    /// third axis to start: a discrete one gives its reach in that place
    /// instead (-1 for none).
    pub fn params(&self) -> [f64; GRID_PARAMS] {
        let wrap = if self.boundary == Boundary::Wrap { 1.0 } else { 0.0 };
        let third = match self.discrete {
            true => self.reach.map_or(-1.0, |r| r as f64),
            false => self.min[2],
        };
        [
            self.min[0],
            self.min[1],
            third,
            self.inv_width,
            self.bins[0] as f64,
            self.bins[1] as f64,
            self.bins[2] as f64,
            wrap,
        ]
    }

    /// The bin of a position (the third coordinate is ignored in 2-D).
    pub fn bin_of(&self, p: [f64; 3]) -> usize {
        bin_of(&self.params(), p)
    }
}

/// The bin coordinate of `x` on an axis starting at `min` with `n` bins of
/// width `1 / inv`: clamped to the edge bins, or wrapped. NaN goes to bin 0.
/// The C prelude computes the same in the same order.
#[inline(always)]
pub fn axis_bin(x: f64, min: f64, inv: f64, n: f64, wrap: bool) -> i64 {
    let mut c = floor((x - min) * inv);
    if wrap {
        c -= floor(c / n) * n;
    }
    // Also catches NaN and the rounding of huge wrapped values (the C
    // prelude writes `!(c >= 0.0)`, the same test).
    if c.is_nan() || c < 0.0 {
        c = 0.0;
    }
    if c > n - 1.0 {
        c = n - 1.0;
    }
    c as i64
}

/// `v.floor()`, bit for bit, without a call into libm where the value
/// converts to an integer exactly (x86-64 without SSE4.1 has no floor
/// instruction, and binning floors three times per message): the integer
/// part, one less below zero when it rounded up. Elsewhere (beyond 2^52,
/// NaN) every f64 is its own floor or NaN, and `floor` itself answers.
#[inline(always)]
fn floor(v: f64) -> f64 {
    if v.abs() < 4_503_599_627_370_496.0 {
        let t = v as i64 as f64;
        let t = if t > v { t - 1.0 } else { t };
        // Zero only for v in [0, 1) or -0.0: keep the sign, as `floor`.
        if t == 0.0 {
            return 0.0f64.copysign(v);
        }
        t
    } else {
        v.floor()
    }
}

/// The bin of a position under grid parameters `g` ([`SpatialGrid::params`]).
#[inline(always)]
pub fn bin_of(g: &[f64; GRID_PARAMS], p: [f64; 3]) -> usize {
    let wrap = g[7] != 0.0;
    let x = axis_bin(p[0], g[0], g[3], g[4], wrap);
    let y = axis_bin(p[1], g[1], g[3], g[5], wrap);
    let z = if g[6] > 1.0 {
        axis_bin(p[2], g[2], g[3], g[6], wrap)
    } else {
        0
    };
    (x + g[4] as i64 * (y + g[5] as i64 * z)) as usize
}

/// The distinct neighbouring coordinates of bin `b` on an axis of `n` bins,
/// in the order of the offsets -1, 0, +1 (those past an edge skipped, or
/// wrapped; repeats skipped). Returns how many.
#[inline(always)]
fn neighbours(b: i64, n: i64, wrap: bool, out: &mut [i64; 3]) -> usize {
    let mut count = 0;
    for d in -1..=1 {
        let mut c = b + d;
        if wrap {
            c = c.rem_euclid(n);
        } else if c < 0 || c >= n {
            continue;
        }
        if !out[..count].contains(&c) {
            out[count] = c;
            count += 1;
        }
    }
    count
}

/// Most strips a query visits: 9 rows of bins, each at most two runs.
pub const MAX_STRIPS: usize = 18;

/// The runs of messages a query at `p` visits, as `[start, end)` message
/// indices: for each row of neighbouring bins (z, then y, in offset
/// order), the row's neighbouring bins in offset order, consecutive bins
/// merged into one run (the messages of consecutive bins are consecutive).
/// `starts[b]` is the first message of bin `b`. Returns how many.
#[inline(always)]
pub fn strips(
    g: &[f64; GRID_PARAMS],
    starts: impl Fn(usize) -> i32,
    p: [f64; 3],
    out: &mut [[u32; 2]; MAX_STRIPS],
) -> usize {
    let wrap = g[7] != 0.0;
    let (nx, ny, nz) = (g[4] as i64, g[5] as i64, g[6] as i64);
    let bx = axis_bin(p[0], g[0], g[3], g[4], wrap);
    let by = axis_bin(p[1], g[1], g[3], g[5], wrap);
    let bz = if nz > 1 {
        axis_bin(p[2], g[2], g[3], g[6], wrap)
    } else {
        0
    };
    let (mut xs, mut ys, mut zs) = ([0i64; 3], [0i64; 3], [0i64; 3]);
    let cx = neighbours(bx, nx, wrap, &mut xs);
    let cy = neighbours(by, ny, wrap, &mut ys);
    let cz = neighbours(bz, nz, wrap, &mut zs);
    let mut count = 0;
    for &z in &zs[..cz] {
        for &y in &ys[..cy] {
            let row = nx * (y + ny * z);
            let mut i = 0;
            while i < cx {
                // Merge the run of consecutive bins starting at xs[i].
                let first = xs[i];
                let mut last = first;
                while i + 1 < cx && xs[i + 1] == last + 1 {
                    i += 1;
                    last = xs[i];
                }
                i += 1;
                let (a, b) = (starts((row + first) as usize), starts((row + last + 1) as usize));
                out[count] = [a as u32, b as u32];
                count += 1;
            }
        }
    }
    count
}

/// The cell of integer coordinate `x` on an axis of `n` cells: clamped to
/// the edge cells, or wrapped.
#[inline(always)]
pub fn axis_cell(x: i64, n: i64, wrap: bool) -> i64 {
    if wrap {
        x.rem_euclid(n)
    } else {
        x.clamp(0, n - 1)
    }
}

/// The runs of cells `[first, last]` within `r` of cell `b` on an axis of
/// `n` cells, in offset order (from `-r`): one run when clamped (cut at the
/// edges), or when the runs wrap around the whole axis; two when a wrapped
/// neighbourhood crosses an edge. Returns how many (0 for `r < 0`).
#[inline(always)]
pub fn cell_runs(b: i64, r: i64, n: i64, wrap: bool, out: &mut [[i64; 2]; 2]) -> usize {
    if r < 0 {
        return 0;
    }
    // Past `n` every radius covers the axis: no overflow below.
    let r = r.min(n);
    let (lo, hi) = (b - r, b + r);
    if !wrap {
        out[0] = [lo.max(0), hi.min(n - 1)];
        return 1;
    }
    // 2r + 1 >= n: the whole axis.
    if r >= n / 2 {
        out[0] = [0, n - 1];
        return 1;
    }
    if lo < 0 {
        out[0] = [lo + n, n - 1];
        out[1] = [0, hi];
        2
    } else if hi >= n {
        out[0] = [lo, n - 1];
        out[1] = [0, hi - n];
        2
    } else {
        out[0] = [lo, hi];
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_floor_is_floor_bit_for_bit() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            -1.0 + f64::EPSILON,
            1.0 - f64::EPSILON / 2.0,
            -f64::MIN_POSITIVE,
            f64::MIN_POSITIVE,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9.3e18,
            -9.3e18,
            1e300,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        // A spread of magnitudes and fractions, both signs.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let m = (x >> 11) as f64 / (1u64 << 53) as f64;
            let e = ((x & 63) as i32) - 20;
            values.push(m * 2f64.powi(e));
            values.push(-m * 2f64.powi(e));
        }
        for v in values {
            assert_eq!(floor(v).to_bits(), v.floor().to_bits(), "floor({v:e})");
        }
        assert!(floor(f64::NAN).is_nan());
    }

    #[test]
    fn a_reach_is_for_discrete_grids_and_sits_in_the_third_parameter() {
        let lattice = SpatialGrid::discrete_2d("l", [4, 3], Boundary::Clamp).unwrap();
        assert_eq!((lattice.reach(), lattice.params()[2]), (None, -1.0));
        let reached = lattice.with_reach(2).unwrap();
        assert_eq!((reached.reach(), reached.params()[2]), (Some(2), 2.0));
        assert_eq!(reached.bin_count(), lattice.bin_count());
        let e = lattice.with_reach(i32::MAX as usize + 1).unwrap_err().to_string();
        assert!(e.contains("at most 2^31 - 1 cells"), "{e}");
        let spatial = SpatialGrid::new_2d("s", [0.0; 2], [4.0; 2], 1.0, Boundary::Clamp).unwrap();
        let e = spatial.with_reach(1).unwrap_err().to_string();
        assert!(e.contains("not discrete"), "{e}");
    }

    #[test]
    fn bins_clamp_and_wrap_as_before() {
        for (x, wrap, want) in [
            (-0.5, false, 0),
            (9.99, false, 4),
            (1e20, false, 4),
            (f64::NAN, false, 0),
            (-0.5, true, 4),
            (10.5, true, 0),
            (-1e20, true, 0),
        ] {
            assert_eq!(axis_bin(x, 0.0, 0.5, 5.0, wrap), want, "{x} wrap {wrap}");
        }
    }
}
