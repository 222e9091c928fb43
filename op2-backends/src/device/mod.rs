//! What the device backends share: one executor ([`DeviceExecutor`]) over a
//! small per-API trait ([`DeviceApi`]: dialect, compile, buffers, launch).
//! The shared part brings a loop's Dats, Maps and Globals to the device by
//! the state machine of `op2-core`, keeps the plan's block lists and element
//! colours on the device, plans the launches of one loop, and folds the
//! reduction partials into the Globals on the device (`partials.rs`); loops
//! return once launched. Dats of several values per element lie on the
//! device in columns (struct of arrays) where `layouts.rs` chooses so, and
//! the generated code indexes them so. `work.rs` does the work around loops
//! in device memory for the core ([`op2_core::DeviceWork`]: message builds,
//! births and deaths, permutations), `binning.rs` a spatial build's
//! counting sort.
//!
//! Adding a device API: implement [`DeviceApi`] (and [`RawMemory`] for its
//! buffers), give its dialect a source generator in `codegen`, and name the
//! executor `DeviceExecutor<YourApi>`.

mod api;
mod args;
mod binning;
mod check_report;
mod executor;
mod launches;
mod layouts;
mod memory;
mod partials;
mod plan_buffers;
mod prepared;
mod tuning;
mod tuning_records;
mod work;

pub use api::{Built, DeviceApi, DeviceInfo, LaunchArgs, UtilityArg};
pub use binning::BinBuffers;
pub(crate) use check_report::CheckReport;
pub use executor::{next_context_id, DeviceExecutor};
pub(crate) use layouts::column_shapes;
pub use memory::{Memory, Pinned, PinnedAllocation, RawMemory};
pub(crate) use partials::PartialsPool;
pub(crate) use plan_buffers::PlanBuffersCache;
pub(crate) use prepared::{prepare_loop, LoopCaches};
pub use work::WorkScratch;
