//! What a dynamic set's agents do as agents, beyond the storage core keeps:
//! move between sets of one layout (another rank's: pack, exchange, move),
//! and have their births numbered across processes. An extension trait on
//! `op2_core::Set` (in `op2::prelude`), over the population core lends
//! (`op2_core::agent_support`).

use std::sync::Arc;

use op2_core::agent_support::Population;
use op2_core::{AgentLayout, AgentPack, BirthNumbering, Error, Result, Set, Workers};

/// The agent operations of a dynamic [`Set`].
pub trait AgentSet {
    /// What an agent of this dynamic set carries when it moves to another
    /// set of the same shape (another rank's): its id and its element of
    /// every Dat on the set, the Dats by name ([`AgentLayout`]).
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if the set is not dynamic, or two of its
    /// Dats have one name.
    fn agent_layout(&self) -> Result<AgentLayout>;

    /// Appends the agents at `indices` (ids and every Dat's values) to
    /// `pack`, e.g. to send them to another rank; the set does not change
    /// ([`AgentSet::exchange_agents`] removes them).
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if the set is not dynamic, an index is
    /// past it, or `pack` was made for another layout; [`Error::SetInUse`]
    /// if a loop over it is running; [`Error::HostBorrow`] naming a
    /// borrowed Dat; [`Error::Transfer`].
    fn pack_agents(&self, indices: &[u32], pack: &mut AgentPack) -> Result<()>;

    /// As [`AgentSet::pack_agents`], for a runtime's work (`&rt`): on a device
    /// runtime, a Dat whose valid copy is on the device only has the
    /// packed agents' elements gathered there and brought back, not the
    /// whole Dat.
    ///
    /// # Errors
    /// As [`AgentSet::pack_agents`]; the device's.
    fn pack_agents_on(&self, indices: &[u32], pack: &mut AgentPack, workers: &dyn Workers) -> Result<()>;

    /// Keeps the agents `keep` (ascending indices) in their order and
    /// appends the agents of `arrivals` after them, pack after pack, with
    /// the ids they had, in every Dat on the set at once: a migration's
    /// last step. All or nothing. Like births and deaths, it renumbers the
    /// set (maps into it become stale) and bumps its generation.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if the set is not dynamic, `keep` does
    /// not ascend inside the set, a pack was made for another layout, or
    /// an id would be in the set twice; otherwise as [`AgentSet::pack_agents`],
    /// and [`Error::SetTooLarge`], [`Error::HostOutOfMemory`].
    fn exchange_agents(&self, keep: &[u32], arrivals: &[&AgentPack]) -> Result<()>;

    /// As [`AgentSet::exchange_agents`], for a runtime's work (`&rt`). On the
    /// host the kept agents move in place, run by run, on the calling
    /// thread (a migration keeps most of them where they are); on a device
    /// runtime the Dats change in device memory (`keep` and the arrivals'
    /// values go up, nothing comes back).
    ///
    /// # Errors
    /// As [`AgentSet::exchange_agents`]; the device's.
    fn exchange_agents_on(&self, keep: &[u32], arrivals: &[&AgentPack], workers: &dyn Workers) -> Result<()>;

    /// Removes the agents `leaving` (ascending indices) and appends the
    /// agents of `arrivals` after the others, as [`AgentSet::exchange_agents_on`]
    /// keeping all but `leaving`: a migration's last step when few agents
    /// leave. On a device runtime only the leaving indices and the
    /// arrivals' values go up; the kept are found and moved there.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if `leaving` does not ascend inside the
    /// set; as [`AgentSet::exchange_agents_on`].
    fn move_agents_on(&self, leaving: &[u32], arrivals: &[&AgentPack], workers: &dyn Workers) -> Result<()>;

    /// Checks that the agents could change now (as
    /// [`AgentSet::exchange_agents`] would): no loop over the set running and no
    /// Dat on it borrowed. Nothing is held afterwards; a distributed
    /// exchange checks this before agents leave for other ranks, so that
    /// taking in the arrivals cannot fail for a borrow.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if the set is not dynamic;
    /// [`Error::SetInUse`]; [`Error::HostBorrow`] naming the borrowed Dat.
    fn check_changeable(&self) -> Result<()>;

    /// Numbers this dynamic set's children with `numbering` from now on
    /// (a distributed run's agent domain installs one, so that a child gets
    /// the same id on any number of processes). Without one, children are
    /// numbered by their parents' ids on this process alone.
    ///
    /// # Errors
    /// [`Error::InvalidLifecycle`] if the set is not dynamic.
    fn number_births_with(&self, numbering: Arc<dyn BirthNumbering>) -> Result<()>;
}

impl AgentSet for Set {
    fn agent_layout(&self) -> Result<AgentLayout> {
        migrating(self)?.layout(self.name())
    }

    fn pack_agents(&self, indices: &[u32], pack: &mut AgentPack) -> Result<()> {
        migrating(self)?.pack(self.name(), indices, pack, None)
    }

    fn pack_agents_on(&self, indices: &[u32], pack: &mut AgentPack, workers: &dyn Workers) -> Result<()> {
        migrating(self)?.pack(self.name(), indices, pack, workers.device_work())
    }

    fn exchange_agents(&self, keep: &[u32], arrivals: &[&AgentPack]) -> Result<()> {
        migrating(self)?.exchange(self.name(), keep, arrivals)
    }

    fn exchange_agents_on(&self, keep: &[u32], arrivals: &[&AgentPack], workers: &dyn Workers) -> Result<()> {
        let population = migrating(self)?;
        match workers.device_work() {
            Some(work) => population.exchange_on_device(self.name(), keep, None, arrivals, work),
            None => population.exchange(self.name(), keep, arrivals),
        }
    }

    fn move_agents_on(&self, leaving: &[u32], arrivals: &[&AgentPack], workers: &dyn Workers) -> Result<()> {
        let population = migrating(self)?;
        let len = population.len();
        if let Some(w) = leaving.windows(2).find(|w| w[0] >= w[1]) {
            return Err(Error::InvalidMigration {
                set: self.name().to_string(),
                reason: format!("the agents leaving must ascend, and {} comes after {}", w[1], w[0]),
            });
        }
        if let Some(&e) = leaving.last().filter(|&&e| e as usize >= len) {
            return Err(Error::InvalidMigration {
                set: self.name().to_string(),
                reason: format!("agent {e} is past the set's {len} agents"),
            });
        }
        let mut keep = Vec::with_capacity(len - leaving.len());
        let mut next = leaving.iter().peekable();
        for e in 0..len as u32 {
            match next.peek() {
                Some(&&l) if l == e => {
                    next.next();
                }
                _ => keep.push(e),
            }
        }
        match workers.device_work() {
            Some(work) => population.exchange_on_device(self.name(), &keep, Some(leaving), arrivals, work),
            None => population.exchange(self.name(), &keep, arrivals),
        }
    }

    fn check_changeable(&self) -> Result<()> {
        migrating(self)?.check_changeable(self.name())
    }

    fn number_births_with(&self, numbering: Arc<dyn BirthNumbering>) -> Result<()> {
        let population = self.population().ok_or_else(|| Error::InvalidLifecycle {
            set: self.name().to_string(),
            reason: "only a dynamic set (`Set::dynamic`) has births".to_string(),
        })?;
        population.number_births_with(numbering);
        Ok(())
    }
}

/// The set's population, or the error a fixed set's migration gets.
fn migrating(set: &Set) -> Result<&Population> {
    set.population().ok_or_else(|| Error::InvalidMigration {
        set: set.name().to_string(),
        reason: "only a dynamic set (`Set::dynamic`) has agents that move".to_string(),
    })
}
