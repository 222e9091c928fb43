//! Ghost messages: messages another process's senders sent (a distributed
//! run's neighbouring ranks), packed as records ([`AgentPack`]) and merged
//! into this list's builds as if their senders were here. Messages are
//! ordered by sender id inside each bin, so a bin holds the same messages
//! in the same order whichever process sent them: a kernel's sums come out
//! bitwise as on one process.

use std::sync::MutexGuard;

use super::routes::{BinTable, Routes};
use super::{Carried, MessageList, Search};
use crate::SpatialGrid;
use op2_core::agent_support::DevicePacker;
use op2_core::{AgentLayout, AgentPack, DeviceWork, Error, Result};

/// One carried Dat's elements in ghost records, as a build reads them:
/// ghost `k` is message source index `first + k`.
#[derive(Clone, Copy)]
pub(super) struct GhostField<'a> {
    pub bytes: &'a [u8],
    pub record: usize,
    pub offset: usize,
    /// The first index that is a ghost's (the number of senders).
    pub first: u32,
}

impl<'a> GhostField<'a> {
    /// The element (`bytes` long) of the ghost at source index `e`.
    #[inline(always)]
    pub fn element(&self, e: u32, bytes: usize) -> &'a [u8] {
        let at = (e - self.first) as usize * self.record + self.offset;
        &self.bytes[at..at + bytes]
    }
}

/// How a build gets the ghost messages of other processes
/// ([`MessageList::build_exchanging_on`]): a distributed run's exchange,
/// collective over its processes.
pub trait GhostExchange {
    /// The bins of the list's grid that other processes read: not 0 for
    /// those (a value the exchange gives meaning to, e.g. which processes).
    /// A brute-force list has no grid and reads no table: its senders are
    /// all routed with the value 1.
    fn read_bins(&self) -> &BinTable;

    /// Sends each process the messages of `list`'s senders in the bins it
    /// reads (`routes`: the senders in such bins, by [`GhostExchange::read_bins`],
    /// or this process's failure to route them, which the exchange tells
    /// the others), runs `meanwhile` (the build's own work) while they
    /// travel, and sets the messages received as `list`'s ghosts
    /// ([`MessageList::set_ghosts`]).
    ///
    /// # Errors
    /// This process's failure, or one naming the process that failed:
    /// every process of the exchange returns an error together.
    ///
    /// It runs inside `list`'s build: building or sorting `list` from
    /// here would wait on that build forever (packing its messages and
    /// setting its ghosts are what it is for).
    fn exchange(&mut self, list: &MessageList, routes: Result<&Routes>, meanwhile: &mut dyn FnMut()) -> Result<()>;
}

impl MessageList {
    /// The record a message moves between processes as: its sender's id,
    /// then the sender's element of each carried Dat, by name (as
    /// [`AgentLayout`] orders a set's Dats).
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if two carried Dats have one name.
    pub fn message_layout(&self) -> Result<AgentLayout> {
        let carried = self.0.carried.lock().unwrap_or_else(|e| e.into_inner());
        self.layout_of(&carried).map(|(_, layout)| layout)
    }

    /// The layout of `carried`, with each carried Dat's offset in a record
    /// (by carried index).
    pub(super) fn layout_of(&self, carried: &[Box<dyn Carried>]) -> Result<(Vec<usize>, AgentLayout)> {
        let dats: Vec<_> = carried
            .iter()
            .map(|c| (c.source_name(), c.scalar(), c.element_bytes()))
            .collect();
        let (order, layout) =
            AgentLayout::of_dats(self.0.senders.name(), &dats).map_err(|e| Error::InvalidMessages {
                list: self.0.name.clone(),
                reason: format!("its messages cannot move between processes: {e}"),
            })?;
        let mut offsets = vec![0; carried.len()];
        for (&c, at) in order.iter().zip(layout.offsets()) {
            offsets[c] = at;
        }
        Ok((offsets, layout))
    }

    /// Where each carried Dat's value lies in the ghosts' records (by
    /// carried index), and which carried Dat is the positions.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the ghosts were packed for other Dats
    /// than `carried`, or the positions are not carried.
    pub(super) fn ghost_offsets(
        &self,
        carried: &[Box<dyn Carried>],
        ghosts: &AgentPack,
    ) -> Result<(Vec<usize>, usize)> {
        let (offsets, layout) = self.layout_of(carried)?;
        if ghosts.layout_fingerprint() != layout.fingerprint() {
            return Err(self.invalid(format!(
                "its {} ghost messages were packed for other Dats than its messages' {} (a Dat was carried since)",
                ghosts.len(),
                layout.describe()
            )));
        }
        let positions = match &self.0.search {
            Search::Spatial(b) => carried.iter().position(|c| c.source_id() == b.positions.source_id()),
            Search::BruteForce => None,
        };
        match positions {
            Some(p) => Ok((offsets, p)),
            None => Err(self.unplaced_ghosts(ghosts.len())),
        }
    }

    /// Appends the messages of the senders at `senders` (ids and carried
    /// values, as [`MessageList::message_layout`] says) to `pack`, e.g. to
    /// send them to a process whose agents read them.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if an index is past the senders or
    /// `pack` was made for another layout; [`Error::HostBorrow`] if a
    /// carried Dat is borrowed for writing.
    pub fn pack_messages(&self, senders: &[u32], pack: &mut AgentPack) -> Result<()> {
        let mut scratch = self.0.routing.lock().unwrap_or_else(|e| e.into_inner());
        self.pack_with(senders, pack, None, &mut scratch.packer)
    }

    /// Packs the messages of `senders` into `pack`, carried Dats the device
    /// of `work` alone holds through `packer`.
    pub(super) fn pack_with(
        &self,
        senders: &[u32],
        pack: &mut AgentPack,
        work: Option<&dyn DeviceWork>,
        packer: &mut DevicePacker,
    ) -> Result<()> {
        let inner = &*self.0;
        let carried = inner.carried.lock().unwrap_or_else(|e| e.into_inner());
        let (offsets, layout) = self.layout_of(&carried)?;
        self.check_pack(pack, &layout, "the pack")?;
        let n = inner.senders.total_size();
        if let Some(&e) = senders.iter().find(|&&e| e as usize >= n) {
            return Err(self.invalid(format!("sender {e} is past the {n} senders")));
        }
        let record = layout.record_bytes();
        let start = pack.len();
        let records = pack.append_zeroed(senders.len());
        packer.begin();
        for (c, &offset) in carried.iter().zip(&offsets) {
            if let Err(e) = c.pack_on(work, packer, senders, records, record, offset) {
                pack.truncate_records(start);
                return Err(e);
            }
        }
        let mut write_ids = |ids: &[u64]| {
            for (r, &e) in records.chunks_exact_mut(record).zip(senders) {
                r[..8].copy_from_slice(&ids[e as usize].to_le_bytes());
            }
        };
        match inner.senders.population() {
            Some(p) => p.with_ids(|ids, _| write_ids(ids))?,
            None => write_ids(&inner.senders.try_global_ids()?),
        }
        Ok(())
    }

    /// Sets the ghost messages every build from now on merges with the
    /// senders' own: the records of `packs` (as [`MessageList::pack_messages`]
    /// made them on another process), until the next call replaces them.
    /// The senders' ids and the ghosts' must differ (a build refuses a bin
    /// that would hold one id twice).
    ///
    /// A device runtime's build of a spatial list takes the ghosts to the
    /// device (one column per carried Dat) and builds there. Every ghost counts
    /// as sent: [`MessageList::build_sent`] refuses a list with ghosts.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the senders are not dynamic (the
    /// message set must grow past them), or a pack was made for another
    /// layout.
    pub fn set_ghosts(&self, packs: &[&AgentPack]) -> Result<()> {
        let inner = &*self.0;
        if inner.set.population().is_none() && packs.iter().any(|p| !p.is_empty()) {
            return Err(self.invalid(format!(
                "ghost messages need dynamic senders (`Set::dynamic`), and `{}` is fixed",
                inner.senders.name()
            )));
        }
        let layout = self.message_layout()?;
        for p in packs {
            self.check_pack(p, &layout, "ghost messages")?;
            // Ids are i64s where kernels and devices read them: one past
            // i64::MAX would sort last on the host and first on a device.
            if let Some(id) = p.ids().find(|&id| id > i64::MAX as u64) {
                return Err(self.invalid(format!(
                    "a ghost message's sender id {id} is past the largest agent id, {}",
                    i64::MAX
                )));
            }
        }
        let mut ghosts = self.ghosts();
        ghosts.reset(&layout);
        for p in packs {
            ghosts.extend_from(&self.0.name, p)?;
        }
        Ok(())
    }

    /// Drops the ghost messages (keeping their buffer): builds merge none
    /// until the next [`MessageList::set_ghosts`].
    pub fn clear_ghosts(&self) {
        self.ghosts().clear();
    }

    /// The ghost messages set by [`MessageList::set_ghosts`].
    pub fn ghost_count(&self) -> usize {
        self.ghosts().len()
    }

    /// The bin of every sender (index order) at its position now, into
    /// `out`: e.g. to find the senders whose messages other processes read.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the list is not spatial;
    /// [`Error::HostBorrow`] if the positions are borrowed for writing.
    pub fn sender_bins(&self, out: &mut Vec<u32>) -> Result<()> {
        match &self.0.search {
            Search::Spatial(b) => b.positions.bins(&b.grid.params(), out),
            Search::BruteForce => Err(self.invalid("a brute-force list has no bins".to_string())),
        }
    }

    /// As [`MessageList::sender_bins`], the bins of another grid `grid`
    /// of as many dimensions: e.g. to share several lists' senders among
    /// processes by one grid.
    ///
    /// # Errors
    /// As [`MessageList::sender_bins`]; [`Error::InvalidMessages`] if
    /// `grid` has another number of dimensions.
    pub fn sender_bins_in(&self, grid: &SpatialGrid, out: &mut Vec<u32>) -> Result<()> {
        match &self.0.search {
            Search::Spatial(b) if b.grid.dims() == grid.dims() => b.positions.bins(&grid.params(), out),
            Search::Spatial(b) => Err(self.invalid(format!(
                "its positions have {} coordinates, and the grid asked for bins {}",
                b.grid.dims(),
                grid.dims()
            ))),
            Search::BruteForce => Err(self.invalid("a brute-force list has no bins".to_string())),
        }
    }

    /// Whether `other` bins its senders by the same positions Dat (both
    /// spatial): e.g. to check that two lists of one set place its agents
    /// alike.
    pub fn same_positions(&self, other: &MessageList) -> bool {
        match (&self.0.search, &other.0.search) {
            (Search::Spatial(a), Search::Spatial(b)) => a.positions.source_id() == b.positions.source_id(),
            _ => false,
        }
    }

    pub(super) fn ghosts(&self) -> MutexGuard<'_, AgentPack> {
        self.0.ghosts.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn check_pack(&self, pack: &AgentPack, layout: &AgentLayout, what: &str) -> Result<()> {
        if pack.layout_fingerprint() == layout.fingerprint() && pack.record_bytes() == layout.record_bytes() {
            return Ok(());
        }
        Err(self.invalid(format!(
            "{what} ({} records) were packed for other Dats than its messages' {}",
            pack.len(),
            layout.describe()
        )))
    }

    /// A spatial list's ghosts without positions (its positions Dat not
    /// carried: never, as a spatial list carries them from the start).
    pub(super) fn unplaced_ghosts(&self, g: usize) -> Error {
        let positions = match &self.0.search {
            Search::Spatial(b) => b.positions.name().to_string(),
            Search::BruteForce => String::new(),
        };
        self.invalid(format!(
            "its {g} ghost messages have no positions: carry the positions `{positions}` (`MessageList::carry`)"
        ))
    }

    /// Refuses ghosts of which one has a sender's id (`senders`: the
    /// senders' ids), or two one id: a build with them would hold one
    /// agent's message twice.
    pub(super) fn check_ghost_ids(&self, senders: &[u64], ghosts: &AgentPack) -> Result<()> {
        let arriving = ghosts.ids().collect();
        match op2_core::agent_support::repeated_id(senders.iter().copied(), arriving) {
            Some(id) => Err(self.invalid(format!(
                "two of its messages come from sender id {id} (a ghost's id is a sender's, or two ghosts')"
            ))),
            None => Ok(()),
        }
    }

    pub(super) fn invalid(&self, reason: String) -> Error {
        Error::InvalidMessages {
            list: self.0.name.clone(),
            reason,
        }
    }
}
