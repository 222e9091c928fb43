//! Agents that move between sets of the same shape (between ranks, in a
//! distributed run): the set's layout (its Dats by name, so that two
//! processes agree on it without sharing pointers), packing agents into
//! portable records, and the exchange that removes the agents that left and
//! appends the ones that arrived, ids and all, in every Dat at once.

use super::{check_size, Member, Population};
use crate::device_pack::DevicePacker;
use crate::{DeviceWork, Error, Result, ScalarType};

/// What one agent of a dynamic set carries when it moves: its id, then its
/// element of each Dat on the set, the Dats in name order. Two sets with
/// the same layout (the same names, types and dims) can exchange agents; a
/// Dat named after its set (`<set>.fates`, as an `op2_agents::Lifecycle`
/// names its own) is matched by the rest of its name (`*.fates`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentLayout {
    /// Each Dat's name, element type and bytes per element, by name.
    dats: Vec<(String, ScalarType, usize)>,
    hash: u64,
}

impl AgentLayout {
    /// The Dats an agent carries: name, element type, bytes per element.
    pub fn dats(&self) -> impl Iterator<Item = (&str, ScalarType, usize)> {
        self.dats.iter().map(|(n, t, b)| (n.as_str(), *t, *b))
    }

    /// Bytes one packed agent takes: its id (8) and its elements.
    pub fn record_bytes(&self) -> usize {
        8 + self.dats.iter().map(|d| d.2).sum::<usize>()
    }

    /// A fingerprint of the layout (FNV-1a over the names, types and
    /// sizes): equal layouts have equal fingerprints on every machine.
    pub fn fingerprint(&self) -> u64 {
        self.hash
    }

    /// The layout in words, for messages.
    #[doc(hidden)]
    pub fn describe(&self) -> String {
        let dats: Vec<String> = self
            .dats
            .iter()
            .map(|(n, t, b)| format!("{}: {} x {}", explained(n), b / t.size(), t.c_name()))
            .collect();
        format!("[{}]", dats.join(", "))
    }
}

/// Agents packed for a move: one record per agent ([`AgentLayout`]), in
/// the order they were packed. The buffer is kept when cleared, so a pack
/// reused step after step stops allocating once it has held the most
/// agents it will hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentPack {
    /// The layout's fingerprint ([`AgentLayout::fingerprint`]).
    fingerprint: u64,
    /// Bytes per agent ([`AgentLayout::record_bytes`]).
    record: usize,
    /// The records, one after another: always whole records.
    bytes: Vec<u8>,
}

/// What the agent layer (message lists' ghosts) does with packs besides
/// the public API, keeping the bytes whole records of the pack's layout.
impl AgentPack {
    /// The fingerprint of the layout the pack was made for.
    #[doc(hidden)]
    pub fn layout_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Bytes per record.
    #[doc(hidden)]
    pub fn record_bytes(&self) -> usize {
        self.record
    }

    /// Appends `records` records of zeros and returns them to be filled.
    #[doc(hidden)]
    pub fn append_zeroed(&mut self, records: usize) -> &mut [u8] {
        let start = self.bytes.len();
        self.bytes.resize(start + records * self.record, 0);
        &mut self.bytes[start..]
    }

    /// Keeps the first `records` records.
    #[doc(hidden)]
    pub fn truncate_records(&mut self, records: usize) {
        self.bytes.truncate(records * self.record);
    }

    /// Appends `other`'s records.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] (naming `set`) if `other` was made for
    /// another layout.
    #[doc(hidden)]
    pub fn extend_from(&mut self, set: &str, other: &AgentPack) -> Result<()> {
        if (other.fingerprint, other.record) != (self.fingerprint, self.record) && !other.is_empty() {
            return Err(Error::InvalidMigration {
                set: set.to_string(),
                reason: "a pack of agents of another layout cannot join this one".to_string(),
            });
        }
        self.bytes.extend_from_slice(&other.bytes);
        Ok(())
    }
}

impl AgentPack {
    /// An empty pack for agents of `layout`.
    pub fn new(layout: &AgentLayout) -> AgentPack {
        AgentPack {
            fingerprint: layout.fingerprint(),
            record: layout.record_bytes(),
            bytes: Vec::new(),
        }
    }

    /// The pack of `bytes` (as [`AgentPack::as_bytes`] gave them, e.g.
    /// received from another rank) for agents of `layout`.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] (naming `set`) if the bytes are not a
    /// whole number of records.
    pub fn from_bytes(set: &str, layout: &AgentLayout, bytes: Vec<u8>) -> Result<AgentPack> {
        let record = layout.record_bytes();
        if bytes.len() % record != 0 {
            return Err(Error::InvalidMigration {
                set: set.to_string(),
                reason: format!(
                    "{} bytes of packed agents are not a whole number of {record}-byte records",
                    bytes.len()
                ),
            });
        }
        Ok(AgentPack {
            fingerprint: layout.fingerprint(),
            record,
            bytes,
        })
    }

    /// Empties the pack and makes it one for agents of `layout`, keeping
    /// its buffer.
    pub fn reset(&mut self, layout: &AgentLayout) {
        self.fingerprint = layout.fingerprint();
        self.record = layout.record_bytes();
        self.bytes.clear();
    }

    /// Makes the pack `bytes` long and returns its records to be written
    /// (e.g. by a receive from another rank). The buffer grows by
    /// doubling and never shrinks.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] (naming `set`) if `bytes` is not a whole
    /// number of records, or the pack has no layout (`Default`);
    /// [`Error::HostOutOfMemory`] if the memory for them cannot be had. The
    /// pack is then empty.
    pub fn receive(&mut self, set: &str, bytes: usize) -> Result<&mut [u8]> {
        self.bytes.clear();
        if self.record == 0 && bytes > 0 {
            return Err(Error::InvalidMigration {
                set: set.to_string(),
                reason: "the pack has no layout (`AgentPack::new` or `reset` gives it one)".to_string(),
            });
        }
        if bytes % self.record.max(1) != 0 {
            return Err(Error::InvalidMigration {
                set: set.to_string(),
                reason: format!(
                    "{bytes} bytes of packed agents are not a whole number of {}-byte records",
                    self.record
                ),
            });
        }
        if bytes > self.bytes.capacity() {
            let want = bytes.max(2 * self.bytes.capacity());
            // Past the memory there is: an error every rank can agree on,
            // not an abort.
            self.bytes
                .try_reserve(want)
                .or_else(|_| self.bytes.try_reserve_exact(bytes))
                .map_err(|_| Error::HostOutOfMemory {
                    name: format!("the pack of `{set}`"),
                    bytes,
                })?;
        }
        self.bytes.resize(bytes, 0);
        Ok(&mut self.bytes)
    }

    /// Bytes the pack holds without growing.
    pub fn capacity_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Agents in the pack.
    pub fn len(&self) -> usize {
        self.bytes.len().checked_div(self.record).unwrap_or(0)
    }

    /// Whether the pack holds no agent.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The records, to send.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Empties the pack, keeping its buffer.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// The packed agents' ids, in pack order.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.bytes.chunks_exact(self.record.max(1)).map(|r| {
            let mut id = [0u8; 8];
            id.copy_from_slice(&r[..8]);
            u64::from_le_bytes(id)
        })
    }
}

/// The name a Dat moves under: its own, except that a Dat named after its
/// set (`<set>.fates`, as a lifecycle names its Dats) goes by the rest
/// (`*.fates`), so that sets of different names can exchange agents.
fn key(set: &str, dat: &str) -> String {
    match dat.strip_prefix(set).and_then(|rest| rest.strip_prefix('.')) {
        Some(rest) => format!("*.{rest}"),
        None => dat.to_string(),
    }
}

/// A Dat's name in errors, with what made it when op2 did: the Dats a
/// Lifecycle, its offspring and random streams add to a set move with its
/// agents like the user's own, so layouts list them.
fn explained(name: &str) -> String {
    // The names those Dats get (a Dat named after its set moves as `*.`).
    let made_by = if name == "*.fates" {
        "the fates of the set's Lifecycle".to_string()
    } else if name == "*.ids" {
        "the agents' ids the set's Lifecycle keeps".to_string()
    } else if let Some(dat) = name.strip_suffix(".child") {
        format!("the children's values of `{dat}`, from `Lifecycle::offspring`")
    } else if let Some(streams) = name.strip_suffix(".stream_ids") {
        format!("the ids random streams `{streams}` keep for the set, made by the first loop drawing from them")
    } else {
        return format!("`{name}`");
    };
    format!("`{name}` ({made_by})")
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: impl Iterator<Item = u8>, mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl AgentLayout {
    /// The layout of Dats (name, element type, bytes per element) on set
    /// `set`, in any order: sorted by the name they move under (`key`).
    /// Returns the order taken (indices into `dats`) with the layout.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if two Dats move under one name.
    #[doc(hidden)]
    pub fn of_dats(set: &str, dats: &[(&str, ScalarType, usize)]) -> Result<(Vec<usize>, AgentLayout)> {
        let mut order: Vec<usize> = (0..dats.len()).collect();
        order.sort_by_cached_key(|&i| key(set, dats[i].0));
        if let Some(w) = order
            .windows(2)
            .find(|w| key(set, dats[w[0]].0) == key(set, dats[w[1]].0))
        {
            return Err(Error::InvalidMigration {
                set: set.to_string(),
                reason: format!(
                    "two Dats on it are named {}: agents move by Dat name, so names must differ",
                    explained(&key(set, dats[w[0]].0))
                ),
            });
        }
        let dats_by_name: Vec<(String, ScalarType, usize)> = order
            .iter()
            .map(|&i| (key(set, dats[i].0), dats[i].1, dats[i].2))
            .collect();
        let mut hash = 0xcbf2_9ce4_8422_2325;
        for (name, t, bytes) in &dats_by_name {
            hash = fnv1a(name.bytes().chain([0]), hash);
            hash = fnv1a(t.c_name().bytes().chain((*bytes as u64).to_le_bytes()), hash);
        }
        Ok((
            order,
            AgentLayout {
                dats: dats_by_name,
                hash,
            },
        ))
    }

    /// Where each Dat's element starts in a record (after the id), in the
    /// layout's order.
    #[doc(hidden)]
    pub fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        self.dats.iter().scan(8, |at, d| {
            let here = *at;
            *at += d.2;
            Some(here)
        })
    }
}

impl Population {
    /// The members by name, with the layout they make.
    pub(super) fn layout_of(&self, set: &str) -> Result<(Vec<std::sync::Arc<dyn Member>>, AgentLayout)> {
        let members = self.members();
        let dats: Vec<(&str, ScalarType, usize)> = members
            .iter()
            .map(|m| (m.member_name(), m.member_scalar(), m.element_bytes()))
            .collect();
        let (order, layout) = AgentLayout::of_dats(set, &dats)?;
        let members = order.iter().map(|&i| members[i].clone()).collect();
        Ok((members, layout))
    }

    /// The layout of the agents of set `set`: its Dats by name.
    pub fn layout(&self, set: &str) -> Result<AgentLayout> {
        self.layout_of(set).map(|(_, l)| l)
    }

    /// Appends the agents at `indices` to `pack`: a Dat whose valid copy
    /// is on `work`'s device only has those agents' elements gathered and
    /// brought from there ([`DevicePacker`]), any other is read on the host.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if an index is past the set or `pack`
    /// was made for another layout; [`Error::SetInUse`] if the set is
    /// changing; [`Error::HostBorrow`] if a Dat is borrowed for writing;
    /// the device's.
    pub fn pack(&self, set: &str, indices: &[u32], pack: &mut AgentPack, work: Option<&dyn DeviceWork>) -> Result<()> {
        // Held for reading from before the members are listed: the set
        // cannot change, nor gain a Dat, from here on, and device copies
        // stay valid.
        let _set = self.take_set(set, false)?;
        let (members, layout) = self.layout_of(set)?;
        let bad = |reason: String| Error::InvalidMigration {
            set: set.to_string(),
            reason,
        };
        if pack.fingerprint != layout.fingerprint() || pack.record != layout.record_bytes() {
            return Err(bad(format!(
                "the pack was made for other Dats than this set's {}",
                layout.describe()
            )));
        }
        let _held = self.take(&members, false)?;
        let len = self.len();
        if let Some(&e) = indices.iter().find(|&&e| e as usize >= len) {
            return Err(bad(format!("agent {e} is past the set's {len} agents")));
        }
        // Locked in the order every change locks them.
        let mut scratch = self.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let ids = self.host_ids()?;
        let record = layout.record_bytes();
        let start = pack.bytes.len();
        pack.bytes.resize(start + indices.len() * record, 0);
        let packer = &mut scratch.packer;
        packer.begin();
        let records = &mut pack.bytes[start..];
        let mut packed = Ok(());
        for (m, offset) in members.iter().zip(layout.offsets()) {
            let eb = m.element_bytes();
            let slot = m.member_device().lock();
            if let (Some(work), Some(src)) = (work, DevicePacker::on_device(work, &slot, eb)) {
                packed = packer.column(work, (src, &slot.counter), eb, indices, records, record, offset);
            } else {
                drop(slot);
                packed = m.sync_host_read();
                if packed.is_ok() {
                    // SAFETY: the member is held, with `len` elements on
                    // the host (brought there just now).
                    let data = unsafe { std::slice::from_raw_parts(m.host_bytes(), len * eb) };
                    for (r, &e) in records.chunks_exact_mut(record).zip(indices) {
                        let e = e as usize;
                        r[offset..offset + eb].copy_from_slice(&data[e * eb..(e + 1) * eb]);
                    }
                }
            }
            if packed.is_err() {
                break;
            }
        }
        if let Err(e) = packed {
            pack.bytes.truncate(start);
            return Err(e);
        }
        for (r, &e) in pack.bytes[start..].chunks_exact_mut(record).zip(indices) {
            r[..8].copy_from_slice(&ids.ids[e as usize].to_le_bytes());
        }
        Ok(())
    }

    /// Keeps the agents `keep` (ascending) in order and appends the agents
    /// of `arrivals`, pack after pack, with their ids, in every Dat at once.
    /// All or nothing: everything is checked and every Dat given room before
    /// anything moves.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if `keep` does not ascend inside the
    /// set, a pack was made for another layout, or an arriving id is one
    /// the set keeps or another arrival has; as [`Population::reorder`].
    pub fn exchange(&self, set: &str, keep: &[u32], arrivals: &[&AgentPack]) -> Result<()> {
        // Held from here on: the checks below stay true until the change.
        let _set = self.take_set(set, true)?;
        let (members, layout) = self.layout_of(set)?;
        let _held = self.hold(&members)?;
        let new_len = self.check_exchange(set, &layout, keep, arrivals)?;
        let len = self.len();
        for m in &members {
            m.reserve_elements(new_len)?;
        }
        let record = layout.record_bytes();
        for (m, offset) in members.iter().zip(layout.offsets()) {
            let eb = m.element_bytes();
            // SAFETY: the member is held exclusively, with `len` elements on
            // the host, and room for `new_len` (reserved above).
            let data = unsafe { std::slice::from_raw_parts_mut(m.host_bytes(), len * eb) };
            compact_in_place(data, eb, keep);
            m.set_elements(new_len);
            // SAFETY: as above; `set_elements` kept the buffer and its
            // first `keep.len()` elements.
            let data = unsafe { std::slice::from_raw_parts_mut(m.host_bytes(), new_len * eb) };
            let arrived = data[keep.len() * eb..].chunks_exact_mut(eb);
            for (to, r) in arrived.zip(arrivals.iter().flat_map(|p| p.bytes.chunks_exact(record))) {
                to.copy_from_slice(&r[offset..offset + eb]);
            }
        }
        self.renumber(Some(keep), keep.len(), arrival_ids(arrivals).as_new_ids());
        Ok(())
    }

    /// Checks an exchange that keeps the agents `keep` and takes in
    /// `arrivals` (as [`Population::exchange`] says); returns the set's
    /// length afterwards. The caller holds the set.
    pub(super) fn check_exchange(
        &self,
        set: &str,
        layout: &AgentLayout,
        keep: &[u32],
        arrivals: &[&AgentPack],
    ) -> Result<usize> {
        let bad = |reason: String| Error::InvalidMigration {
            set: set.to_string(),
            reason,
        };
        let len = self.len();
        if let Some(w) = keep.windows(2).find(|w| w[0] >= w[1]) {
            return Err(bad(format!(
                "the agents kept must ascend, and {} comes after {}",
                w[1], w[0]
            )));
        }
        if let Some(&e) = keep.last().filter(|&&e| e as usize >= len) {
            return Err(bad(format!("agent {e} is past the set's {len} agents")));
        }
        // A pack never packed (`AgentPack::default()`) has no layout and no
        // agent: zero arrivals, like an empty pack of this layout.
        let laid_out = |p: &AgentPack| !(p.record == 0 && p.bytes.is_empty());
        if let Some((k, p)) = arrivals
            .iter()
            .enumerate()
            .find(|(_, p)| laid_out(p) && p.fingerprint != layout.fingerprint())
        {
            return Err(bad(format!(
                "arrival {k}: its {} agents were packed from a set with other Dats (names, types or dims) than this \
                 set's {}; both ends must have the same Dats",
                p.len(),
                layout.describe()
            )));
        }
        let arriving: usize = arrivals.iter().map(|p| p.len()).sum();
        let new_len = keep.len() + arriving;
        check_size(set, new_len)?;
        let ids = self.host_ids()?;
        let kept = keep.iter().map(|&e| ids.ids[e as usize]);
        if let Some(id) = repeated_id(kept, arrivals.iter().flat_map(|p| p.ids()).collect()) {
            return Err(bad(format!("agent id {id} would be in the set twice")));
        }
        // Ids are `i64`s in Dats (a lifecycle's `ids`), and the next ids
        // must not overflow.
        let largest = i64::MAX as u64;
        if let Some(id) = arrivals.iter().flat_map(|p| p.ids()).find(|&id| id > largest) {
            return Err(bad(format!("agent id {id} is past the largest id, {largest}")));
        }
        Ok(new_len)
    }
}

/// The ids of agents arriving in `packs`, in pack order.
pub(super) fn arrival_ids(packs: &[&AgentPack]) -> ArrivalIds {
    let ids: Vec<u64> = packs.iter().flat_map(|p| p.ids()).collect();
    // New agents here get ids above every id this set has seen (ids past
    // i64::MAX are refused before, so this does not overflow).
    let next = ids.iter().max().map_or(0, |&m| m + 1);
    ArrivalIds { ids, next }
}

/// Arriving agents' ids, and the next id they call for.
pub(super) struct ArrivalIds {
    ids: Vec<u64>,
    next: u64,
}

impl ArrivalIds {
    pub(super) fn as_new_ids(&self) -> super::NewIds<'_> {
        super::NewIds::Given {
            ids: &self.ids,
            next: self.next,
        }
    }
}

/// Moves the elements `keep` (ascending indices; elements of `bytes` bytes)
/// of `data` to its front, in order and in place: a migration keeps most
/// agents, so the prefix kept whole is not touched and each run of
/// consecutive elements after it moves with one `copy_within` (its
/// destination is never past its source).
fn compact_in_place(data: &mut [u8], bytes: usize, keep: &[u32]) {
    let unmoved = keep.iter().enumerate().take_while(|&(i, &e)| i == e as usize).count();
    let mut to = unmoved;
    let mut i = unmoved;
    while i < keep.len() {
        let first = keep[i] as usize;
        let mut run = 1;
        while i + run < keep.len() && keep[i + run] as usize == first + run {
            run += 1;
        }
        data.copy_within(first * bytes..(first + run) * bytes, to * bytes);
        to += run;
        i += run;
    }
}

/// An id that a set would hold twice: one repeated among the `arriving`,
/// or one of them already among the `kept`. Arrivals are few and the kept
/// many: the arrivals are sorted, and each kept id first meets a filter of
/// bits that most ids miss.
pub fn repeated_id(kept: impl Iterator<Item = u64>, mut arriving: Vec<u64>) -> Option<u64> {
    if arriving.is_empty() {
        return None;
    }
    arriving.sort_unstable();
    if let Some(w) = arriving.windows(2).find(|w| w[0] == w[1]) {
        return Some(w[0]);
    }
    // About 16 bits per arrival (a power of two).
    let bits = (arriving.len() * 16).next_power_of_two().max(64);
    let slot = |id: u64| (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits.trailing_zeros())) as usize;
    let mut filter = vec![0u64; bits / 64];
    for &id in &arriving {
        let s = slot(id);
        filter[s / 64] |= 1 << (s % 64);
    }
    let mut kept = kept;
    kept.find(|&id| {
        let s = slot(id);
        filter[s / 64] & (1 << (s % 64)) != 0 && arriving.binary_search(&id).is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept elements, gathered the plain way.
    fn gathered(data: &[u8], bytes: usize, keep: &[u32]) -> Vec<u8> {
        keep.iter()
            .flat_map(|&e| data[e as usize * bytes..(e as usize + 1) * bytes].iter().copied())
            .collect()
    }

    #[test]
    fn compacting_in_place_keeps_what_a_gather_keeps() {
        let bytes = 3;
        let data: Vec<u8> = (0..60u8).collect();
        for keep in [
            vec![],
            (0..20).collect(),
            vec![0, 1, 2, 5, 6, 7, 19],
            vec![3, 4, 5, 10, 12, 13, 14, 18],
            vec![19],
            (0..20).filter(|e| e % 3 != 1).collect::<Vec<u32>>(),
        ] {
            let mut moved = data.clone();
            compact_in_place(&mut moved, bytes, &keep);
            let n = keep.len() * bytes;
            assert_eq!(moved[..n], gathered(&data, bytes, &keep)[..], "keep {keep:?}");
        }
    }

    /// A pack of bare ids (a layout of no Dats).
    fn pack_of(ids: &[u64]) -> AgentPack {
        AgentPack {
            fingerprint: 0,
            record: 8,
            bytes: ids.iter().flat_map(|id| id.to_le_bytes()).collect(),
        }
    }

    /// The agent layer's pack edits keep whole records of one layout.
    #[test]
    fn pack_edits_keep_whole_records_of_one_layout() {
        let mut pack = pack_of(&[1, 2]);
        pack.append_zeroed(2)
            .copy_from_slice(&[3u64.to_le_bytes(), 4u64.to_le_bytes()].concat());
        assert_eq!(pack.ids().collect::<Vec<_>>(), [1, 2, 3, 4]);
        pack.truncate_records(3);
        assert_eq!(pack.ids().collect::<Vec<_>>(), [1, 2, 3]);
        pack.extend_from("agents", &pack_of(&[9])).unwrap();
        assert_eq!(pack.ids().collect::<Vec<_>>(), [1, 2, 3, 9]);
        let other = AgentPack {
            fingerprint: 7,
            record: 16,
            bytes: vec![0; 16],
        };
        let e = pack.extend_from("agents", &other).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidMigration { set, .. } if set == "agents"),
            "{e}"
        );
        assert_eq!(pack.len(), 4, "nothing appended");
    }

    /// The id repeated when the agents `keep` (ids `ids`) take in `packs`.
    fn repeated(keep: &[u32], ids: &[u64], packs: &[&AgentPack]) -> Option<u64> {
        repeated_id(
            keep.iter().map(|&e| ids[e as usize]),
            packs.iter().flat_map(|p| p.ids()).collect(),
        )
    }

    #[test]
    fn a_repeated_id_is_found_among_arrivals_and_against_the_kept() {
        let ids: Vec<u64> = (0..10_000u64).map(|i| i * 7 + 3).collect();
        let keep: Vec<u32> = (0..10_000u32).filter(|e| e % 2 == 0).collect();
        let (fresh, again) = (pack_of(&[1, 2, 4, 100_000]), pack_of(&[5]));
        assert_eq!(repeated(&keep, &ids, &[]), None);
        assert_eq!(repeated(&keep, &ids, &[&fresh]), None);
        assert_eq!(repeated(&keep, &ids, &[&fresh, &again]), None);
        // Agent 1's id (10) left: it may come back; agent 2's (17) stayed.
        assert_eq!(repeated(&keep, &ids, &[&pack_of(&[10])]), None);
        assert_eq!(repeated(&keep, &ids, &[&fresh, &pack_of(&[17])]), Some(17));
        assert_eq!(repeated(&keep, &ids, &[&fresh, &pack_of(&[4])]), Some(4));
        // Every kept id is found, whatever the filter's hash does with it.
        for &e in keep.iter().step_by(97) {
            let id = ids[e as usize];
            assert_eq!(repeated(&keep, &ids, &[&pack_of(&[id])]), Some(id));
        }
    }
}
