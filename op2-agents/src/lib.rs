//! op2's agent layer, on the dynamic sets of op2-core: message lists
//! (FLAME GPU's messages: brute force, and spatial over a uniform grid in 2-D
//! and 3-D or a discrete 2-D one), built each step from what the senders
//! wrote and read by kernels; and births and deaths ([`Lifecycle`]: a kernel
//! given `life(FATE)` may kill its agent and have one child).
//!
//! Core keeps what every loop needs: the carriers, the loop (arguments,
//! validation, plans, views), the dynamic sets' storage (ids, resizing,
//! reordering, packing agents for migration) and the device layer. This
//! crate builds on its public API; the `op2` crate re-exports both.
#![deny(missing_docs)]

mod agent_set;
mod lifecycle;
mod messages;

pub use agent_set::AgentSet;

pub use lifecycle::{Census, Fate, Lifecycle};
/// Items `par_loop!`'s expansion, the code generators' tests and the
/// distributed layer use. Not a public API.
#[doc(hidden)]
pub use messages::{
    axis_bin, axis_cell, bin_of, cell_runs, near_bins_spec, strips, FromSpatialView, MessageView, NearArgs,
    SpatialView, MAX_BINS, MAX_STRIPS,
};
pub use messages::{
    BinTable, Boundary, Coordinate, Discrete2d, GhostExchange, MessageList, Near, Routes, Spatial2d, Spatial3d,
    SpatialGrid, Within,
};
pub use op2_core::{NearKind, FATE_DIES, FATE_SPAWNS, GRID_PARAMS};
