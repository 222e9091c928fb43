//! A dynamic set's changes made in device memory, for a runtime whose
//! backend lends a device ([`DeviceWork`]): every Dat of the set gathered
//! into its new order there, so that the Dats never visit the host. The
//! ids stay on the host, renumbered from the index lists, except in a sort
//! by an order made on the device, which moves them there too.

use std::collections::HashMap;
use std::sync::{Arc, MutexGuard};

use super::{check_permutation, check_size, Member, Population};
use crate::device_work::READ;
use crate::{scratch_buffer, DeviceBuffer, DeviceSlot, DeviceState, DeviceWork, GatherJob, Result};

/// Device buffers a population keeps between changes on the device.
#[derive(Default)]
pub struct DeviceScratch {
    /// A permutation's order, uploaded.
    order: Option<Box<dyn DeviceBuffer>>,
    /// `0, 1, 2, ...`: the order that copies survivors that stay in place
    /// into a larger buffer.
    identity: Option<Box<dyn DeviceBuffer>>,
    /// Each member's other buffer (by member id): a change gathers into
    /// it and keeps the old one for the next change.
    spares: HashMap<usize, Box<dyn DeviceBuffer>>,
    /// Agents packed to move, from device copies.
    pub packer: crate::device_pack::DevicePacker,
    /// A migration's flags (1: leaving) and the indices of the leaving.
    flags: Option<Box<dyn DeviceBuffer>>,
    leaving: Option<Box<dyn DeviceBuffer>>,
    /// Arriving agents: `0, 1, 2, ...`, and one column per member.
    arrival_order: Option<Box<dyn DeviceBuffer>>,
    arrivals: Vec<Option<Box<dyn DeviceBuffer>>>,
    arrivals_host: Vec<u8>,
    /// Zeros: the values of children of another set for members their
    /// parents give nothing.
    zeros: Option<Box<dyn DeviceBuffer>>,
}

/// Children of another set's agents, appended to this set in device
/// memory ([`Population::adopt_on_device`]).
pub struct DeviceAdoption<'a> {
    /// The parents' indices in their set (`u32`, the first `births`).
    pub parents: &'a dyn DeviceBuffer,
    /// Children.
    pub births: usize,
    /// Elements of the parents' set (the length of every column).
    pub source_len: usize,
    /// By member name, the Dat of the parents' set whose element at a
    /// parent is its child's value of the member (as wide as the member);
    /// a member not named here starts at zero.
    pub columns: &'a [(&'a str, &'a dyn DeviceBuffer)],
    /// The children's ids (as [`Reorder::ids`](super::Reorder)).
    pub ids: super::NewIds<'a>,
    /// As [`Reorder::generation`](super::Reorder).
    pub generation: u64,
}

/// How a dynamic set changes, with the index lists on the device (as
/// [`Reorder`](super::Reorder)'s).
pub struct DeviceReorder<'a> {
    /// Elements that stay, ascending (`u32`, the first `kept`).
    pub survivors: &'a dyn DeviceBuffer,
    /// How many stay.
    pub kept: usize,
    /// The survivors on the host, for the ids; `None` when all stay.
    pub survivors_host: Option<&'a [u32]>,
    /// The parents of the children (`u32`, the first `births`).
    pub parents: &'a dyn DeviceBuffer,
    /// Children.
    pub births: usize,
    /// Their ids (as [`Reorder::ids`](super::Reorder)).
    pub ids: super::NewIds<'a>,
    /// The member a child's value of a member comes from (as
    /// [`Reorder::source_of`](super::Reorder)).
    pub source_of: &'a dyn Fn(usize) -> Option<usize>,
    /// As [`Reorder::generation`](super::Reorder).
    pub generation: u64,
}

/// Where every member's new elements come from.
struct Moves<'a> {
    /// Element `k < kept` afterwards is element `from[k]`; `None`: the first
    /// `kept` elements stay where they are.
    from: Option<&'a dyn DeviceBuffer>,
    kept: usize,
    /// Then the children, if any.
    children: Option<Children<'a>>,
    /// Or agents that arrived, if any.
    appended: Option<Appended<'a>>,
}

/// Agents arrived from elsewhere, appended after the kept: element
/// `kept + k` of member `i` is element `k` of `columns[i]`.
struct Appended<'a> {
    n: usize,
    /// `0..n`.
    order: &'a dyn DeviceBuffer,
    columns: Vec<&'a dyn DeviceBuffer>,
}

/// Children appended: element `kept + k` comes from `parents[k]` of the
/// member `source_of` names (or of the member itself).
struct Children<'a> {
    parents: &'a dyn DeviceBuffer,
    births: usize,
    source_of: &'a dyn Fn(usize) -> Option<usize>,
}

impl Population {
    /// [`Population::reorder`] in device memory. All or nothing: if a step
    /// fails, the set and its Dats are as they were (values past the old
    /// end of a device buffer may have changed, which nothing reads).
    ///
    /// # Errors
    /// As [`Population::reorder`]; the device's.
    pub fn reorder_on_device(&self, set: &str, order: &DeviceReorder<'_>, work: &dyn DeviceWork) -> Result<()> {
        let new_len = order.kept + order.births;
        check_size(set, new_len)?;
        let _set = self.take_set(set, true)?;
        super::check_unchanged(self, set, order.generation)?;
        let members = self.members();
        let _held = self.hold_unsynced(&members)?;
        self.take_ids_home()?;
        let moves = Moves {
            from: order.survivors_host.map(|_| order.survivors),
            kept: order.kept,
            children: Some(Children {
                parents: order.parents,
                births: order.births,
                source_of: order.source_of,
            }),
            appended: None,
        };
        let mut scratch = self.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let DeviceScratch { identity, spares, .. } = &mut *scratch;
        self.move_on_device(&members, work, new_len, &moves, spares, identity)?;
        self.renumber(order.survivors_host, order.kept, order.ids);
        Ok(())
    }

    /// Appends the children of another set's agents in device memory:
    /// each member's new elements gathered at the parents from its column
    /// ([`DeviceAdoption`]), so that nothing but the ids goes through the
    /// host. All or nothing, as [`Population::reorder_on_device`]. The
    /// parents' indices must be below `source_len` (they index the
    /// columns on the device, unchecked).
    ///
    /// # Errors
    /// As [`Population::reorder`]; [`crate::Error::InvalidMigration`] if a
    /// column is shorter than `source_len` elements of its member; the
    /// device's.
    pub fn adopt_on_device(&self, set: &str, adoption: &DeviceAdoption<'_>, work: &dyn DeviceWork) -> Result<()> {
        let old_len = self.len();
        let new_len = old_len.saturating_add(adoption.births);
        check_size(set, new_len)?;
        let _set = self.take_set(set, true)?;
        super::check_unchanged(self, set, adoption.generation)?;
        let members = self.members();
        let bad = |reason: String| crate::Error::InvalidMigration {
            set: set.to_string(),
            reason,
        };
        if adoption.parents.bytes() < 4 * adoption.births {
            return Err(bad(format!(
                "{} children need as many parents' indices, and the list holds {} bytes",
                adoption.births,
                adoption.parents.bytes()
            )));
        }
        for (name, column) in adoption.columns {
            let Some(m) = members.iter().find(|m| m.member_name() == *name) else {
                return Err(bad(format!(
                    "children's values are given for `{name}`, which is no Dat of the set"
                )));
            };
            let need = adoption.source_len * m.element_bytes();
            if column.bytes() < need {
                return Err(bad(format!(
                    "children's values of `{name}` come from a column of {} bytes, and {need} are needed \
                     (a Dat as wide, over the parents' set)",
                    column.bytes()
                )));
            }
        }
        let _held = self.hold_unsynced(&members)?;
        self.take_ids_home()?;
        let mut scratch = self.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let DeviceScratch {
            identity,
            spares,
            zeros,
            ..
        } = &mut *scratch;
        let widest = members.iter().map(|m| m.element_bytes()).max().unwrap_or(4);
        let zero_bytes = (widest * adoption.source_len).max(8);
        let zero = scratch_buffer(work, zeros, "zeros", zero_bytes)?;
        work.fill_zero(zero, zero_bytes / 4)?;
        let zero: &dyn DeviceBuffer = zero;
        let columns = (members.iter())
            .map(|m| {
                let named = adoption.columns.iter().find(|(n, _)| *n == m.member_name());
                named.map_or(zero, |(_, c)| *c)
            })
            .collect();
        let moves = Moves {
            from: None,
            kept: old_len,
            children: None,
            appended: Some(Appended {
                n: adoption.births,
                order: adoption.parents,
                columns,
            }),
        };
        self.move_on_device(&members, work, new_len, &moves, spares, identity)?;
        self.renumber(None, old_len, adoption.ids);
        Ok(())
    }

    /// [`Population::permute`] in device memory (the order uploaded).
    ///
    /// # Errors
    /// As [`Population::permute`]; the device's.
    pub fn permute_on_device(&self, set: &str, order: &[u32], work: &dyn DeviceWork) -> Result<()> {
        let _set = self.take_set(set, true)?;
        let members = self.members();
        let _held = self.hold_unsynced(&members)?;
        check_permutation(set, order, self.len())?;
        self.take_ids_home()?;
        if order.iter().enumerate().all(|(k, &o)| k == o as usize) {
            return Ok(());
        }
        let mut scratch = self.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let DeviceScratch {
            order: order_cell,
            identity,
            spares,
            ..
        } = &mut *scratch;
        let from = scratch_buffer(work, order_cell, "permutation", 4 * order.len())?;
        from.upload(bytemuck::cast_slice(order))?;
        let moves = Moves {
            from: Some(from),
            kept: order.len(),
            children: None,
            appended: None,
        };
        self.move_on_device(&members, work, order.len(), &moves, spares, identity)?;
        let mut guard = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        guard.device = None;
        let permuted: Vec<u64> = order.iter().map(|&o| guard.ids[o as usize]).collect();
        guard.ids = permuted;
        guard.changed();
        self.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    /// [`Population::permute`] with the order already on `work`'s device
    /// (`u32`, the first [`Population::len`] entries): made there by op2's
    /// own device work (a message list's build), which guarantees it is a
    /// permutation, so it is not brought to the host to be checked. The
    /// ids move on the device too: nothing
    /// crosses to the host.
    ///
    /// # Errors
    /// As [`Population::permute`], and [`crate::Error::InvalidPermutation`]
    /// if `order` holds fewer entries than the set has agents; the
    /// device's. On error nothing has moved.
    pub fn permute_by_device_order(&self, set: &str, order: &dyn DeviceBuffer, work: &dyn DeviceWork) -> Result<()> {
        let _set = self.take_set(set, true)?;
        let members = self.members();
        let _held = self.hold_unsynced(&members)?;
        let len = self.len();
        if order.bytes() < 4 * len {
            return Err(crate::Error::InvalidPermutation {
                set: set.to_string(),
                reason: format!("the order on the device holds {} bytes for {len} agents", order.bytes()),
            });
        }
        let mut scratch = self.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let DeviceScratch { identity, spares, .. } = &mut *scratch;
        // The ids first, into a spare buffer: if anything fails before the
        // swaps below, nothing has moved.
        self.gather_device_ids(work, order)?;
        let moves = Moves {
            from: Some(order),
            kept: len,
            children: None,
            appended: None,
        };
        self.move_on_device(&members, work, len, &moves, spares, identity)?;
        self.swap_device_ids();
        self.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    /// [`Population::exchange`] in device memory: the kept agents are
    /// gathered there (found from `leaving`, ascending, when given: marked
    /// and selected on the device, so only the leaving indices go up; or
    /// `keep` uploaded), and only the arrivals' values go up, one column
    /// per Dat. `keep` (on the host) renumbers the ids.
    ///
    /// # Errors
    /// As [`Population::exchange`]; the device's.
    pub fn exchange_on_device(
        &self,
        set: &str,
        keep: &[u32],
        leaving: Option<&[u32]>,
        arrivals: &[&super::AgentPack],
        work: &dyn DeviceWork,
    ) -> Result<()> {
        let _set = self.take_set(set, true)?;
        let (members, layout) = self.layout_of(set)?;
        let _held = self.hold_unsynced(&members)?;
        let new_len = self.check_exchange(set, &layout, keep, arrivals)?;
        let len = self.len();
        let mut scratch = self.device_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let DeviceScratch {
            order: order_cell,
            identity,
            spares,
            flags,
            leaving: leaving_cell,
            arrival_order,
            arrivals: columns,
            arrivals_host,
            ..
        } = &mut *scratch;
        // Nobody leaves: the kept stay in place.
        let from = match leaving {
            _ if keep.len() == len => None,
            Some(leaving) => {
                let flags = scratch_buffer(work, flags, "leaving flags", 4 * len)?;
                let at = scratch_buffer(work, leaving_cell, "leaving", 4 * leaving.len())?;
                at.upload(bytemuck::cast_slice(leaving))?;
                work.fill_zero(flags, len)?;
                work.mark(flags, len, at, leaving.len(), 1)?;
                let out = scratch_buffer(work, order_cell, "kept", 4 * len)?;
                let kept = work.select(&crate::SelectJob {
                    n: len,
                    flags: Some(flags),
                    mask: -1,
                    when_set: false,
                    out,
                })?;
                if kept != keep.len() {
                    return Err(crate::Error::InvalidMigration {
                        set: set.to_string(),
                        reason: format!(
                            "{} agents leave and {} stay of {len}: the leaving must be distinct agents of the set",
                            leaving.len(),
                            keep.len()
                        ),
                    });
                }
                Some(out)
            }
            None => {
                let out = scratch_buffer(work, order_cell, "kept", 4 * keep.len())?;
                out.upload(bytemuck::cast_slice(keep))?;
                Some(out)
            }
        };
        let arriving = new_len - keep.len();
        columns.resize_with(members.len(), || None);
        let record = layout.record_bytes();
        for ((m, offset), column) in members.iter().zip(layout.offsets()).zip(columns.iter_mut()) {
            let eb = m.element_bytes();
            arrivals_host.clear();
            for p in arrivals {
                arrivals_host.extend(p.as_bytes().chunks_exact(record).flat_map(|r| &r[offset..offset + eb]));
            }
            scratch_buffer(work, column, "arrivals", arrivals_host.len())?.upload(arrivals_host)?;
            if !arrivals_host.is_empty() {
                // The Dat's values that went up: counted as its own.
                m.member_device().lock().counter.count_upload(arrivals_host.len());
            }
        }
        let appended = Appended {
            n: arriving,
            order: identity_order(work, arrival_order, arriving)?,
            columns: columns.iter().filter_map(|c| c.as_deref()).collect(),
        };
        let moves = Moves {
            from,
            kept: keep.len(),
            children: None,
            appended: Some(appended),
        };
        self.move_on_device(&members, work, new_len, &moves, spares, identity)?;
        let ids = super::migration::arrival_ids(arrivals);
        self.renumber(from.map(|_| keep), keep.len(), ids.as_new_ids());
        Ok(())
    }

    /// Gathers every member into its new order on the device: first all
    /// members' current data is brought there, then each gathers into its
    /// spare buffer (or appends in place when nothing before the old end
    /// moves), and only when every launch was accepted do the buffers
    /// change places and the host copies become stale. The caller holds
    /// every member exclusively.
    fn move_on_device(
        &self,
        members: &[Arc<dyn Member>],
        work: &dyn DeviceWork,
        new_len: usize,
        moves: &Moves<'_>,
        spares: &mut HashMap<usize, Box<dyn DeviceBuffer>>,
        identity: &mut Option<Box<dyn DeviceBuffer>>,
    ) -> Result<()> {
        let old_len = self.len();
        for m in members {
            m.reserve_elements(new_len)?;
        }
        let mut slots: Vec<MutexGuard<'_, DeviceSlot>> = members.iter().map(|m| m.member_device().lock()).collect();
        for (m, slot) in members.iter().zip(slots.iter_mut()) {
            // SAFETY: the caller holds the member exclusively; it has the
            // set's `old_len` elements on the host.
            let host = unsafe { std::slice::from_raw_parts_mut(m.host_bytes(), old_len * m.element_bytes()) };
            let name = m.member_name();
            slot.rows_needed = true;
            slot.prepare(work.context_id(), host.len(), host, READ, None, &|b| {
                work.new_buffer(name, b)
            })?;
        }
        let current = |i: usize| -> &dyn DeviceBuffer {
            match slots[i].buffer.as_deref() {
                Some(b) => b,
                None => unreachable!("adopted above"),
            }
        };
        spares.retain(|id, _| members.iter().any(|m| m.member_id() == *id));
        // The destination of each member: `None` appends in place.
        let mut fresh: Vec<Option<Box<dyn DeviceBuffer>>> = Vec::with_capacity(members.len());
        for (i, m) in members.iter().enumerate() {
            let need = new_len * m.element_bytes();
            let cur = current(i);
            if moves.from.is_none() && cur.bytes() >= need {
                fresh.push(None);
                continue;
            }
            let spare = spares
                .remove(&m.member_id())
                .filter(|b| b.context_id() == work.context_id() && b.bytes() >= need);
            // The size of the current buffer, or double it when the set
            // outgrows it, so that a growing set reallocates O(log n) times.
            let size = if cur.bytes() >= need {
                cur.bytes()
            } else {
                need.max(cur.bytes().saturating_mul(2))
            };
            let buffer = match spare {
                Some(b) => b,
                None => work.new_buffer(m.member_name(), size.max(8))?,
            };
            fresh.push(Some(buffer));
        }
        // A new buffer needs the elements that stay: from their list, or
        // (all staying in place) in order.
        let from = match moves.from {
            Some(from) => Some(from),
            None if fresh.iter().any(Option::is_some) => Some(identity_order(work, identity, moves.kept)?),
            None => None,
        };
        for (i, m) in members.iter().enumerate() {
            let words = m.element_bytes() / 4;
            let dst = fresh[i].as_deref().unwrap_or_else(|| current(i));
            if let (Some(from), Some(_)) = (from, &fresh[i]) {
                work.gather(&GatherJob {
                    n: moves.kept,
                    words,
                    order: from,
                    src: current(i),
                    dst,
                    dst_first: 0,
                    tail: None,
                })?;
            }
            if let Some(a) = &moves.appended {
                work.gather(&GatherJob {
                    n: a.n,
                    words,
                    order: a.order,
                    src: a.columns[i],
                    dst,
                    dst_first: moves.kept,
                    tail: None,
                })?;
            }
            if let Some(c) = &moves.children {
                let source = (c.source_of)(m.member_id())
                    .and_then(|id| members.iter().position(|s| s.member_id() == id))
                    .unwrap_or(i);
                work.gather(&GatherJob {
                    n: c.births,
                    words,
                    order: c.parents,
                    src: current(source),
                    dst,
                    dst_first: moves.kept,
                    tail: None,
                })?;
            }
        }
        // Every launch is queued: the new buffers take over.
        for ((m, slot), buffer) in members.iter().zip(slots.iter_mut()).zip(fresh) {
            if let Some(b) = buffer {
                if let Some(old) = slot.buffer.replace(b) {
                    spares.insert(m.member_id(), old);
                }
            }
            if slot.state != DeviceState::HostUnallocated {
                slot.state = DeviceState::Device;
            }
            m.set_host_elements(new_len);
        }
        Ok(())
    }
}

/// The indices `0..n` on the device, in `cell` (queued: the host waits
/// for nothing).
pub fn identity_order<'c>(
    work: &dyn DeviceWork,
    cell: &'c mut Option<Box<dyn DeviceBuffer>>,
    n: usize,
) -> Result<&'c dyn DeviceBuffer> {
    let out = scratch_buffer(work, cell, "identity", 4 * n)?;
    work.fill_iota(out, n)?;
    Ok(out)
}
