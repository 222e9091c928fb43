//! Output for people: the elements of a Set (agents, cells, nodes) and the
//! values of its Dats, written as
//!
//! - a CSV table ([`CsvTable`]): one row per element in global-id order, an
//!   `id` column and one column per component of each Dat (the tables of
//!   several processes merge into one with [`merge_by_id`]);
//! - VTK XML PolyData (`.vtp`, [`write_vtp`]): the elements as points at a
//!   position Dat (2-D or 3-D), every Dat as point data, for ParaView or
//!   VisIt; [`VtkSeries`] writes one file per step and keeps a `.pvd`
//!   collection of them, so that ParaView opens the run as a time series
//!   (a distributed run as a piece per process and a `.pvtp` index per
//!   step, [`VtkSeries::in_pieces`]);
//! - VTK XML UnstructuredGrid (`.vtu`, [`write_vtu`]): a mesh's triangles or
//!   quadrilaterals (a Map from cells to nodes) at the nodes' coordinates,
//!   Dats of the cells as cell data and of the nodes as point data; a
//!   distributed mesh as one piece per process and their `.pvtu` index
//!   ([`write_pvtu`]).
//!
//! VTK data arrays are binary (base64, exact), every array of a kind with
//! its own name: the global ids are `global_id`, and Dats named alike are
//! refused. Only the elements this process owns are written (halos are
//! not): on a distributed set, gather the Dats to rank 0 first
//! (`Distributed::gather`) or write one file per rank.
#![deny(missing_docs)]

mod csv;
mod field;
mod file;
mod vtk;
mod vtu;
mod xml;

pub use csv::{merge_by_id, CsvTable};
pub use field::{Field, Values};
pub use vtk::{write_pvtp, write_vtp, VtkSeries};
pub use vtu::{write_pvtu, write_vtu};
