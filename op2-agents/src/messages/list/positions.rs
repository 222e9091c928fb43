//! The senders' positions of a spatial list: the coordinate types
//! (`Coordinate`) and how a Dat of positions bins its senders (`Positions`),
//! on the host or in device memory.

use super::*;

/// A coordinate type positions may have (integers for discrete grids).
pub trait Coordinate: Scalar + Into<f64> {}
impl Coordinate for f32 {}
impl Coordinate for f64 {}
impl Coordinate for i32 {}

/// Bins the senders by their positions.
pub(super) trait Positions: Send + Sync {
    /// Sorts the senders `sent` into the grid's bins ([`counting_sort`]),
    /// an index past the senders being a ghost's.
    /// The bins of the first `binned` senders of `sent` are in `b.bins`
    /// already ([`Positions::bin_sent`]).
    #[allow(clippy::too_many_arguments)]
    fn sort(
        &self,
        grid: &[f64; GRID_PARAMS],
        nbins: usize,
        sent: &[u32],
        ghosts: Option<GhostField<'_>>,
        binned: usize,
        b: &mut SortBuffers,
        workers: &dyn Workers,
    ) -> Result<()>;
    /// The bins of the senders `sent` (no ghosts), in parallel, into `out`.
    fn bin_sent(
        &self,
        grid: &[f64; GRID_PARAMS],
        sent: &[u32],
        out: &mut Vec<u32>,
        workers: &dyn Workers,
    ) -> Result<()>;
    /// The bins of the `g` ghosts whose positions are `ghosts` (ghost
    /// `k` at index `ghosts.first + k`), into `out`.
    fn ghost_bins(&self, grid: &[f64; GRID_PARAMS], ghosts: GhostField<'_>, g: usize, out: &mut Vec<u32>);
    /// The bin of every sender, into `out`.
    fn bins(&self, grid: &[f64; GRID_PARAMS], out: &mut Vec<u32>) -> Result<()>;
    /// The Dat's identity (as `DatHandle::id`).
    fn source_id(&self) -> usize;
    /// The Dat's name.
    fn name(&self) -> &str;
    /// The Dat, as an argument (to stage it on a device).
    fn as_arg(&self) -> ArgData<'_>;
    /// The coordinates' type.
    fn scalar(&self) -> ScalarType;
}

impl<T: Coordinate> Positions for Dat<T> {
    fn as_arg(&self) -> ArgData<'_> {
        ArgData::Dat(self)
    }

    fn source_id(&self) -> usize {
        DatHandle::id(self)
    }

    fn name(&self) -> &str {
        Dat::name(self)
    }

    fn scalar(&self) -> ScalarType {
        T::TYPE
    }

    fn sort(
        &self,
        grid: &[f64; GRID_PARAMS],
        nbins: usize,
        sent: &[u32],
        ghosts: Option<GhostField<'_>>,
        binned: usize,
        b: &mut SortBuffers,
        workers: &dyn Workers,
    ) -> Result<()> {
        let p = self.try_data_ro()?;
        let (p, d) = (&*p, self.dim());
        let size = std::mem::size_of::<T>();
        // Senders past `first` are ghosts (none without them): the test
        // per sender is one compare of a constant.
        let first = ghosts.map_or(u32::MAX, |g| g.first);
        let coordinate = |e: u32, c: usize| -> f64 {
            match ghosts.filter(|_| e >= first) {
                Some(g) => bytemuck::pod_read_unaligned::<T>(&g.element(e, d * size)[c * size..(c + 1) * size]).into(),
                None => p[e as usize * d + c].into(),
            }
        };
        let bin_into = |senders: &[u32], out: &mut [u32]| {
            for (o, &e) in out.iter_mut().zip(senders) {
                let z = if d == 3 { coordinate(e, 2) } else { 0.0 };
                *o = bin_of(grid, [coordinate(e, 0), coordinate(e, 1), z]) as u32;
            }
        };
        counting_sort(sent, nbins, &bin_into, binned, b, workers)
    }

    fn bin_sent(
        &self,
        grid: &[f64; GRID_PARAMS],
        sent: &[u32],
        out: &mut Vec<u32>,
        workers: &dyn Workers,
    ) -> Result<()> {
        let p = self.try_data_ro()?;
        let (p, d) = (&*p, self.dim());
        let bin_into = |senders: &[u32], out: &mut [u32]| {
            for (o, &e) in out.iter_mut().zip(senders) {
                let at = &p[e as usize * d..(e as usize + 1) * d];
                let z = if d == 3 { at[2].into() } else { 0.0 };
                *o = bin_of(grid, [at[0].into(), at[1].into(), z]) as u32;
            }
        };
        out.clear();
        out.resize(sent.len(), 0);
        bin_senders(sent, &bin_into, out, workers);
        Ok(())
    }

    fn ghost_bins(&self, grid: &[f64; GRID_PARAMS], ghosts: GhostField<'_>, g: usize, out: &mut Vec<u32>) {
        let (d, size) = (self.dim(), std::mem::size_of::<T>());
        out.clear();
        out.extend((0..g as u32).map(|k| {
            let e = ghosts.element(ghosts.first + k, d * size);
            let c = |a: usize| -> f64 { bytemuck::pod_read_unaligned::<T>(&e[a * size..(a + 1) * size]).into() };
            let z = if d == 3 { c(2) } else { 0.0 };
            bin_of(grid, [c(0), c(1), z]) as u32
        }));
    }

    fn bins(&self, grid: &[f64; GRID_PARAMS], out: &mut Vec<u32>) -> Result<()> {
        let p = self.try_data_ro()?;
        let d = self.dim();
        out.clear();
        out.extend(p[..self.set().total_size() * d].chunks_exact(d).map(|e| {
            let z = if d == 3 { e[2].into() } else { 0.0 };
            bin_of(grid, [e[0].into(), e[1].into(), z]) as u32
        }));
        Ok(())
    }
}
