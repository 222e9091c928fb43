//! Messages between agents (FLAME GPU's): lists built each step from what
//! senders wrote, read by brute force or through a uniform spatial grid.
//!
//! - `list/`: [`MessageList`], its carried Dats and its build;
//! - `binning.rs`: the build's parallel steps on the host (the counting
//!   sort, the order by id inside bins);
//! - `grid.rs`: [`SpatialGrid`], the bins and the strips a query visits;
//! - `query.rs`: the kernel parameters [`Spatial2d`], [`Spatial3d`] and
//!   [`Discrete2d`], and their iterators [`Near`] and [`Within`];
//! - `views.rs`: how loops read a list (`MessageView`, `near_bins_spec`).

mod binning;
mod grid;
mod list;
mod query;
mod views;

pub use grid::{axis_bin, axis_cell, bin_of, cell_runs, strips, Boundary, SpatialGrid, MAX_BINS, MAX_STRIPS};
pub use list::{BinTable, Coordinate, GhostExchange, MessageList, NearArgs, Routes};
pub use query::{Discrete2d, FromSpatialView, Near, Spatial2d, Spatial3d, SpatialView, Within};
pub use views::{near_bins_spec, MessageView};
