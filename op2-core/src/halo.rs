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
}

/// A halo exchange in flight.
pub trait PendingExchange {
    /// Waits for it and stores the received halo values.
    fn wait(self: Box<Self>) -> Result<()>;
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
