//! The core of op2: data carriers ([`Set`], [`Map`], [`Dat`], [`Global`]), loop
//! descriptions, the [`Executor`] trait that backends implement, errors and loop
//! timing. Access modes, kernel metadata and the kernel language's tables of
//! types and math functions come from op2-kernel-abi, which the translating macro
//! and the code generators share, and are re-exported here ([`kernel_language`]
//! is that whole crate).
//!
//! Nothing here knows a particular backend. The `op2` facade crate re-exports what
//! users need; see docs/ARCHITECTURE.md for how the pieces fit.
//!
//! # Constructors and errors
//!
//! One rule: a constructor that checks its input returns [`Result`], under its
//! plain name, and bad input is an [`Error`] that names what was wrong, never a
//! panic. These are [`Set::new`], [`Set::with_regions`], [`Set::distributed`],
//! [`Map::new`], [`Dat::from_vec`], [`Dat::zeros`], [`Dat::filled`],
//! [`Global::new`], [`Global::zeros`] and [`Subset::new`]; each lists its errors under "Errors".
//! A constructor with nothing to check returns the value itself:
//! [`Global::scalar`] and [`Map::identity`] (every set's size already fits a
//! map entry). There are no panicking twins of the constructors.
//!
//! Host access is different: [`Dat::data_ro`] and [`Dat::data_mut`] (and
//! [`Global`]'s) follow `RefCell`'s `borrow`/`try_borrow` convention. The plain
//! name panics if the data is already borrowed in a conflicting way (a bug in
//! the calling code, like a double `borrow_mut`), and
//! [`Dat::try_data_ro`]/[`Dat::try_data_mut`] return the error instead.
#![deny(missing_docs)]

/// The kernel language's tables and the C interface of translated kernels
/// (the op2-kernel-abi crate).
pub use op2_kernel_abi as kernel_language;

mod arg;
mod birth_numbering;
mod borrow;
mod dat;
mod device;
pub mod device_counts;
pub mod device_halo;
mod device_pack;
mod device_state;
mod device_work;
mod dual_graph;
mod error;
mod executor;
mod global;
mod halo;
mod host_memory;
mod host_sync;
mod id;
mod long_map;
mod map;
mod mesh_desc;
mod node_rank;
mod partials;
mod philox;
mod plan;
mod plan_cache;
mod plural;
mod population;
pub mod portable_math;
mod ragged_map;
mod random_streams;
mod renumber;
mod row;
mod scalar;
mod schedule;
mod set;
mod stage;
mod stencil;
mod storage;
mod subset;
mod timing;
mod validate;
mod workers;
// For the code `par_loop!` generates (through `op2::__private`), not for
// direct use: hidden from the docs.
#[doc(hidden)]
pub mod lane;
#[doc(hidden)]
pub mod view;

pub use arg::{ArgData, ArgRoute, ArgSpec, DatHandle, GlobalHandle, MapArg, MapIndex, WholeArg, WholeCount};
pub use birth_numbering::{number_by_parent_id, BirthNumbering};
pub use borrow::BorrowFlag;
pub use dat::{Dat, HostMut, HostRef};
pub use device::{
    BufferLayout, ColumnShape, DeviceBuffer, DeviceCell, DeviceLayout, DeviceSlot, TransferCounter, TransferStats,
};
pub use device_state::{
    before_loop, host_overwrite, host_read, host_write, DeviceState, HostTransition, LoopTransition, LoopUse,
};
pub use device_work::{scratch_buffer, BinJob, DeviceWork, GatherJob, GatherTail, HaloJob, LookupJob, SelectJob};
pub use dual_graph::{dual_graph, join_group, CLIQUE_LIMIT};
pub use error::{ArgRef, Error, FatesLeft, Result};
pub use executor::{CodeCacheCounters, CodeCacheStats, Executor, LoopBody, ParLoop};
pub use global::Global;
pub use halo::{
    AllReduce, DeviceRecordExchange, Distribution, HaloLists, HaloState, HostMemory, PendingExchange, PendingRecords,
    RecordBuffer,
};
pub use host_sync::{sync_args_to_host, sync_to_host};
pub use long_map::LongMap;
pub use map::{Map, MapTable};
pub use mesh_desc::{MapDesc, MeshDesc};
pub use node_rank::{default_device_index, node_rank, set_node_rank, NodeRank};
pub use op2_kernel_abi::Access;
pub use op2_kernel_abi::ScalarType;
pub use op2_kernel_abi::{ArgForm, Kernel, KernelInfo, KernelUses, ParamForm, ParamInfo};
pub use op2_kernel_abi::{NearKind, GRID_PARAMS};
pub use op2_kernel_abi::{FATE_DIES, FATE_SPAWNS};
pub use partials::{Partials, ReductionLayout};
pub use philox::{philox4x32_10, portable_cos_2pi, portable_ln, Philox};
pub use plan::{conflicts, Conflict, Plan, Reach};
pub use plan_cache::PlanCache;
pub use plural::plural;
pub use population::{AgentLayout, AgentPack, SetsInUse};
pub use ragged_map::{Duplicates, EdgeRules, RaggedMap, SelfLoops};
pub use random_streams::RandomStreams;
pub use renumber::{reverse_cuthill_mckee, Renumbering};
#[doc(hidden)]
pub use row::{Row, RowIter};
pub use scalar::Scalar;
pub use schedule::{HostSchedule, LoopSchedule, Schedule};
pub use set::{Set, SetRegions};
#[doc(hidden)]
pub use stage::Stage;
pub use stencil::{Stencil, MAX_STENCIL_OFFSETS};
#[doc(hidden)]
pub use subset::IterationSpace;
pub use subset::Subset;
pub use timing::{estimate_bytes, DeviceCounts, ExchangeTiming, HaloTraffic, LoopTiming, TimingSummary, Timings};
pub use validate::{validate_loop, LoopBorrows};
pub use workers::{ScopedThreads, Workers};

/// What the agent layer (the op2-agents crate) builds on beyond the public
/// API: the dynamic sets' storage (reordering, renumbering, packing), the
/// device layer's staging of arguments, and the host threads' work
/// splitting. Not a public API: it changes with the agent layer.
#[doc(hidden)]
pub mod agent_support {
    pub use crate::device_pack::{DevicePacker, ReadBorrow};
    pub use crate::device_work::{stage, Staged, OVERWRITE, READ, UPDATE};
    pub use crate::population::{
        check_unchanged, identity_order, repeated_id, DeviceAdoption, DeviceReorder, NewIds, Population, Reorder,
    };
    pub use crate::workers::{
        as_atomic, parts_for, piece, run_on_parts, run_on_pieces, select_indices, MAX_PARTS, PARALLEL_MIN,
    };
}
