//! What `list(NEAR)` passes to a loop: the bins' offsets, the grid
//! parameters, and the native view of both (`NearArgs`).

use super::*;

impl MessageList {
    /// What `list(NEAR)` passes: the bins' offsets (read whole), the grid
    /// parameters, and the native view of both.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the list is not spatial.
    #[doc(hidden)]
    pub fn near_args(&self) -> Result<NearArgs<'_>> {
        match &self.0.search {
            Search::Spatial(b) => Ok(NearArgs {
                starts: &b.starts,
                starts_count: &b.starts_count,
                params: &b.params,
                grid: &b.grid,
                list: self,
            }),
            Search::BruteForce => Err(Error::InvalidMessages {
                list: self.0.name.clone(),
                reason: "`list(NEAR)` needs a spatial list; a brute-force list is read whole, `m(READ, list[..])`"
                    .to_string(),
            }),
        }
    }
}

/// The arguments of `list(NEAR)`.
#[doc(hidden)]
pub struct NearArgs<'a> {
    /// First message of each bin, and the end.
    pub starts: &'a Dat<i32>,
    /// The number of offsets (bins + 1; -1 before the first build).
    pub starts_count: &'a WholeCount,
    /// The grid's parameters.
    pub params: &'a Global<f64>,
    /// The grid.
    pub grid: &'a SpatialGrid,
    /// The list.
    pub list: &'a MessageList,
}

impl NearArgs<'_> {
    /// The native view of the bins.
    pub fn view(&self) -> SpatialView {
        // SAFETY: the loop borrows `starts` (a READ argument) while it runs,
        // and a built list's offsets cover every bin.
        unsafe { SpatialView::new(self.starts.host_ptr(), self.grid.params()) }
    }
}
