//! Halos (docs/ARCHITECTURE.md, Distributed runs): the state of a Dat's halo
//! ([`HaloState`]: are its copies of other ranks' elements stale, how often
//! were they refreshed) and what the runtime needs from a distributed set
//! ([`Distribution`]: start a halo exchange of a Dat on it, reduce Globals
//! across ranks). Sets of a single process have no [`Distribution`].
//!
//! The other two parts of the halo concept live elsewhere: the loop that
//! exchanges halos and overlaps them with the core elements in
//! `op2-backends/src/halo_loop.rs`; partitioning, the halo layout and the
//! exchange on MPI in `op2-mpi` (`partition.rs`, `halo_layout.rs`,
//! `halo_exchange.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::{Access, DatHandle, Result, ScalarType};

/// Combines values across the ranks of a run: what a Global shared by the
/// ranks ([`crate::Global::reduce_across`]) needs after each loop that
/// reduces into it.
pub trait AllReduce: Send + Sync {
    /// Combines `values` (of `scalar`s) across all ranks in place: sum for
    /// INC, minimum for MIN, maximum for MAX. Collective.
    fn all_reduce(&self, values: &mut [u8], scalar: ScalarType, op: Access) -> Result<()>;
}

/// A distributed set's communication.
pub trait Distribution: Send + Sync {
    /// Starts exchanging the halo of `dat` (a Dat on this set): owned values
    /// go to the ranks that hold them in their halo, halo values come in.
    fn start_exchange(&self, dat: &dyn DatHandle) -> Result<Box<dyn PendingExchange>>;

    /// Combines `values` (of `scalar`s) across all ranks in place: sum for
    /// INC, minimum for MIN, maximum for MAX.
    fn all_reduce(&self, values: &mut [u8], scalar: ScalarType, op: Access) -> Result<()>;

    /// This process's rank and the number of ranks.
    fn rank_and_size(&self) -> (usize, usize);

    /// Exchanges of records in device memory, where MPI can take it; `None`
    /// where this distribution has no such MPI.
    fn device_records(&self) -> Option<&dyn DeviceRecordExchange> {
        None
    }

    /// The exchange lists in one piece, for exchanges that pack and unpack
    /// the records elsewhere (in device memory: `device_halo.rs`); `None`
    /// where this distribution exchanges only through
    /// [`Distribution::start_exchange`].
    fn halo_lists(&self) -> Option<std::sync::Arc<HaloLists>> {
        None
    }

    /// Starts exchanging packed records of `record` bytes: `send` holds
    /// the records of [`HaloLists::exports`] in order; the pending exchange
    /// fills `receive` (room for every imported record, in the order
    /// [`HaloLists::imports`] reads them) and gives both buffers back.
    ///
    /// # Errors
    /// [`crate::Error::Mpi`] as for [`Distribution::start_exchange`]; a
    /// distribution without [`Distribution::halo_lists`] refuses.
    fn start_record_exchange(
        &self,
        send: RecordBuffer,
        receive: RecordBuffer,
        record: usize,
    ) -> Result<Box<dyn PendingRecords>> {
        let _ = (send, receive, record);
        Err(crate::Error::Mpi {
            reason: "this distribution exchanges halos only through start_exchange".to_string(),
        })
    }
}

/// The extra of a distribution whose MPI takes device memory (a CUDA-aware
/// MPI): exchanges of records that never visit the host.
pub trait DeviceRecordExchange {
    /// Whether MPI can read and write device memory (asked of MPI at run
    /// time: MPICH's `MPIX_Query_cuda_support`).
    fn takes_device_memory(&self) -> bool;

    /// Starts exchanging records of `record` bytes in device memory: the
    /// exports' records at device address `send`, the received ones to
    /// `receive` (as [`Distribution::start_record_exchange`] orders them).
    ///
    /// # Safety
    /// Both addresses are device allocations of this process's MPI device
    /// that hold the records (and room for them), whose writes have
    /// finished, and that stay allocated and untouched until the pending
    /// exchange is waited for or dropped.
    ///
    /// # Errors
    /// [`crate::Error::Mpi`].
    unsafe fn start_device_record_exchange(
        &self,
        send: u64,
        receive: u64,
        record: usize,
    ) -> Result<Box<dyn PendingExchange>>;
}

/// A halo exchange in flight.
pub trait PendingExchange {
    /// Waits for it and stores the received halo values.
    fn wait(self: Box<Self>) -> Result<()>;
}

/// An exchange of packed records in flight
/// ([`Distribution::start_record_exchange`]).
pub trait PendingRecords {
    /// Waits for it; returns the send buffer and the received records.
    ///
    /// # Errors
    /// [`crate::Error::Mpi`].
    fn wait(self: Box<Self>) -> Result<(RecordBuffer, RecordBuffer)>;
}

/// Host memory that records pass through between a device and MPI:
/// page-locked (pinned) where the device backend can allocate it, so that
/// copies run at the bus's full speed without a staging copy, else
/// ordinary memory.
pub trait HostMemory: Send {
    /// All of it.
    fn bytes(&self) -> &[u8];
    /// All of it, to write.
    fn bytes_mut(&mut self) -> &mut [u8];
    /// Whether it is page-locked.
    fn pinned(&self) -> bool;
}

impl HostMemory for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }

    fn pinned(&self) -> bool {
        false
    }
}

/// One exchange's records on the host: the first `len` bytes of a pooled
/// [`HostMemory`].
pub struct RecordBuffer {
    memory: Box<dyn HostMemory>,
    len: usize,
}

impl RecordBuffer {
    /// The first `len` bytes of `memory` (all of it if shorter).
    pub fn new(memory: Box<dyn HostMemory>, len: usize) -> RecordBuffer {
        let len = len.min(memory.bytes().len());
        RecordBuffer { memory, len }
    }

    /// The records.
    pub fn as_slice(&self) -> &[u8] {
        &self.memory.bytes()[..self.len]
    }

    /// The records, to write.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.memory.bytes_mut()[..self.len]
    }

    /// Bytes of records.
    #[allow(clippy::len_without_is_empty)] // a size, as Vec's
    pub fn len(&self) -> usize {
        self.len
    }

    /// The memory, for the next exchange.
    pub fn into_memory(self) -> Box<dyn HostMemory> {
        self.memory
    }
}

/// One distributed set's exchange lists in one piece: what every exchange
/// sends (owned elements, neighbour after neighbour) and where what it
/// receives goes (halo elements `first..first + imports.len()`), plus the
/// buffers exchanges on a device keep between calls (`device_halo.rs`).
pub struct HaloLists {
    /// Owned elements sent, neighbour after neighbour, each neighbour's in
    /// the order it stores them.
    pub exports: Vec<u32>,
    /// The first halo element received into.
    pub first: usize,
    /// Halo element `first + i` takes received record `imports[i]`.
    pub imports: Vec<u32>,
    /// Elements a Dat must hold for an exchange along these lists: past
    /// the last export and the last halo element.
    pub reach: usize,
    /// Device copies of the lists and buffers, kept from exchange to exchange.
    pub(crate) device: std::sync::Mutex<crate::device_halo::HaloBuffers>,
}

impl HaloLists {
    /// The lists of an exchange that sends `exports` and receives, in
    /// order, into the halo element ranges `receives` (each neighbour's).
    /// `None` unless the ranges cover one contiguous run of elements once
    /// each (then exchanges keep to [`Distribution::start_exchange`]).
    pub fn new(exports: Vec<u32>, receives: &[std::ops::Range<usize>]) -> Option<HaloLists> {
        let first = receives
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| r.start)
            .min()
            .unwrap_or(0);
        let count: usize = receives.iter().map(|r| r.len()).sum();
        let mut imports = vec![u32::MAX; count];
        let mut record = 0u32;
        for r in receives {
            for e in r.clone() {
                let slot = imports.get_mut(e.checked_sub(first)?)?;
                if *slot != u32::MAX {
                    return None;
                }
                *slot = record;
                record += 1;
            }
        }
        let last_export = exports.iter().max().map_or(0, |&e| e as usize + 1);
        Some(HaloLists {
            reach: last_export.max(first + count),
            exports,
            first,
            imports,
            device: std::sync::Mutex::default(),
        })
    }
}

/// A Dat's halo: whether its halo copies are stale, and how often they were
/// refreshed.
#[derive(Debug, Default)]
pub struct HaloState {
    stale: AtomicBool,
    exchanges: AtomicU64,
}

impl HaloState {
    /// Whether the halo copies are out of date.
    pub fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Acquire)
    }

    /// Marks the halo copies out of date (after a loop wrote the Dat).
    pub fn mark_stale(&self) {
        self.stale.store(true, Ordering::Release);
    }

    /// Marks the halo copies current (after an exchange).
    pub fn mark_fresh(&self) {
        self.stale.store(false, Ordering::Release);
        self.exchanges.fetch_add(1, Ordering::Relaxed);
    }

    /// Exchanges done so far.
    pub fn exchanges(&self) -> u64 {
        self.exchanges.load(Ordering::Relaxed)
    }

    /// Exchanges whether the halo copies are stale with `other` (when two Dats
    /// swap their values, the halo's state goes with them; the exchange
    /// counts stay with each Dat).
    pub fn swap_staleness(&self, other: &HaloState) {
        let mine = self.stale.load(Ordering::Acquire);
        let theirs = other.stale.swap(mine, Ordering::AcqRel);
        self.stale.store(theirs, Ordering::Release);
    }
}
