//! A message list's build in device memory, for a runtime whose backend
//! lends a device ([`DeviceWork`]): the senders' Dats are read where the
//! loops left them, the bins' counting sort (spatial) or the selection of
//! senders (brute force) runs there, and the carried Dats are gathered
//! there, so the only value that comes back to the host is the number of
//! messages. Ghost messages (another process's) go up as one column per
//! carried Dat and are read past the senders' own elements, so a build
//! with ghosts stays on the device too.

use super::{Carried, MessageList, Scratch, Search};
use crate::messages::binning::order_by_id;
use op2_core::agent_support::identity_order;
use op2_core::agent_support::{stage, Staged, OVERWRITE, READ};
use op2_core::{
    scratch_buffer, AgentPack, ArgData, BinJob, Dat, DeviceBuffer, DeviceWork, GatherJob, GatherTail, Result,
    SelectJob, Workers,
};

/// A list's buffers on a device, kept from build to build.
#[derive(Default)]
pub(super) struct DeviceScratch {
    /// The senders in message order (`u32`).
    pub(super) order: Option<Box<dyn DeviceBuffer>>,
    /// The senders' ids (`i64`), when they do not ascend.
    pub(super) ids: Option<Box<dyn DeviceBuffer>>,
    /// The senders' generation and the device context the ids were
    /// uploaded for.
    pub(super) ids_for: Option<(u64, u64)>,
    ids_host: Vec<i64>,
    /// The messages of the last build, if it ran on a device (their
    /// order is then there, not in the host scratch).
    pub(super) built: Option<usize>,
    /// Ghost messages' values, one column per carried Dat (by carried
    /// index), and the senders' positions followed by the ghosts'.
    pub(super) ghost_columns: Vec<Option<Box<dyn DeviceBuffer>>>,
    pub(super) column_host: Vec<u8>,
    positions: Option<Box<dyn DeviceBuffer>>,
    identity: Option<Box<dyn DeviceBuffer>>,
    /// The senders' sent flags followed by the ghosts' (1: every ghost
    /// was sent), and the ghosts' alone.
    flags: Option<Box<dyn DeviceBuffer>>,
    ghost_flags: Option<Box<dyn DeviceBuffer>>,
    /// A sort's permutation made on the device (`sort_order`), and its
    /// steps: the senders listed, which entries of the order are senders,
    /// their places, and the senders not listed.
    sort: SortScratch,
}

/// The buffers of [`DeviceScratch::sort_order`].
#[derive(Default)]
struct SortScratch {
    permutation: Option<Box<dyn DeviceBuffer>>,
    listed: Option<Box<dyn DeviceBuffer>>,
    senders: Option<Box<dyn DeviceBuffer>>,
    picked: Option<Box<dyn DeviceBuffer>>,
    rest: Option<Box<dyn DeviceBuffer>>,
}

/// A build's ghost messages: their records, and where each carried Dat's
/// value lies in a record (by carried index).
pub(super) struct GhostRecords<'a> {
    pub pack: &'a AgentPack,
    pub offsets: &'a [usize],
    /// The carried Dat (its index) that is the positions, if any.
    pub positions: Option<usize>,
}

impl DeviceScratch {
    /// Brings the last device build's order to `listed` (the host's copy),
    /// for a sort of the senders; nothing if the build ran on the host.
    ///
    /// # Errors
    /// Transfer errors.
    pub(super) fn order_to_host(&mut self, listed: &mut Vec<u32>) -> Result<()> {
        let (Some(n), Some(order)) = (self.built, &self.order) else {
            return Ok(());
        };
        listed.resize(n, 0);
        order.download(bytemuck::cast_slice_mut(listed))?;
        self.built = None;
        Ok(())
    }
}

impl DeviceScratch {
    /// The permutation a sort of the `n` senders applies, made on the
    /// device from the last device build's order (`count` messages, the
    /// last build's ghosts among them): the senders that sent, in message
    /// order, then those that did not, ascending; ghosts left out. Without
    /// ghosts, when every sender sent, it is the order itself. `None` if
    /// the last build did not run on a device; `Err` (from `bad`) if the
    /// order is not one of the senders' (each listed at most once).
    ///
    /// # Errors
    /// As above; the device's.
    pub(super) fn sort_order(
        &mut self,
        work: &dyn DeviceWork,
        n: usize,
        ghosts: usize,
        bad: &dyn Fn(String) -> op2_core::Error,
    ) -> Result<Option<&dyn DeviceBuffer>> {
        let (Some(count), Some(order)) = (self.built, self.order.as_deref()) else {
            return Ok(None);
        };
        if order.context_id() != work.context_id() {
            return Ok(None);
        }
        self.built = None;
        if ghosts == 0 && count == n {
            return Ok(Some(order));
        }
        let SortScratch {
            permutation,
            listed,
            senders,
            picked,
            rest,
        } = &mut self.sort;
        // listed[e] = 1 for each sender in the order (ghosts are past `n`).
        let listed = scratch_buffer(work, listed, "sort: senders listed", 4 * n)?;
        work.fill_zero(listed, listed.bytes() / 4)?;
        work.mark(listed, n, order, count, 1)?;
        // senders[k] = 1 where entry k of the order is a sender.
        let senders = scratch_buffer(work, senders, "sort: senders in the order", 4 * count)?;
        work.fill_zero(senders, count)?;
        work.gather(&GatherJob {
            n: count,
            words: 1,
            order,
            src: listed,
            dst: senders,
            dst_first: 0,
            tail: None,
        })?;
        let picked = scratch_buffer(work, picked, "sort: senders' places", 4 * count)?;
        let sent = work.select(&SelectJob {
            n: count,
            flags: Some(senders),
            mask: 1,
            when_set: true,
            out: picked,
        })?;
        let permutation = scratch_buffer(work, permutation, "sort: permutation", 4 * n)?;
        work.gather(&GatherJob {
            n: sent,
            words: 1,
            order: picked,
            src: order,
            dst: permutation,
            dst_first: 0,
            tail: None,
        })?;
        let rest = scratch_buffer(work, rest, "sort: senders not listed", 4 * n)?;
        let unsent = work.select(&SelectJob {
            n,
            flags: Some(listed),
            mask: 1,
            when_set: false,
            out: rest,
        })?;
        if sent + unsent != n {
            return Err(bad(format!(
                "its build listed {sent} of its {n} senders and left out {unsent}: a sender was listed twice"
            )));
        }
        work.copy_words(rest, permutation, sent, unsent)?;
        Ok(Some(permutation))
    }
}

/// Uploads the ghosts' values, one column per carried Dat (by carried
/// index, `offsets` their places in a record), into `columns`; returns
/// the columns.
pub(super) fn upload_ghost_columns<'c>(
    work: &dyn DeviceWork,
    columns: &'c mut Vec<Option<Box<dyn DeviceBuffer>>>,
    host: &mut Vec<u8>,
    carried: &[Box<dyn Carried>],
    ghosts: &AgentPack,
    offsets: &[usize],
) -> Result<Vec<&'c dyn DeviceBuffer>> {
    columns.resize_with(carried.len(), || None);
    for ((c, column), &offset) in carried.iter().zip(columns.iter_mut()).zip(offsets) {
        let eb = c.element_bytes();
        host.clear();
        host.extend(
            ghosts
                .as_bytes()
                .chunks_exact(ghosts.record_bytes())
                .flat_map(|r| &r[offset..][..eb]),
        );
        scratch_buffer(work, column, "ghost messages", host.len())?.upload(host)?;
    }
    Ok(columns
        .iter()
        .map(|c| c.as_deref().unwrap_or_else(|| unreachable!("uploaded above")))
        .collect())
}

impl MessageList {
    /// [`MessageList::build_on`] in `work`'s device memory (the host's
    /// `workers` only sort a brute-force list by id, when its senders' ids
    /// do not ascend).
    pub(super) fn build_on_device(
        &self,
        work: &dyn DeviceWork,
        sent: Option<&Dat<i32>>,
        ghosts: Option<GhostRecords<'_>>,
        s: &mut Scratch,
        workers: &dyn Workers,
    ) -> Result<usize> {
        let inner = &*self.0;
        let n = inner.senders.total_size();
        let g = ghosts.as_ref().map_or(0, |x| x.pack.len());
        if let Some(p) = inner.set.population() {
            // One slot per sender and ghost; the build writes them all anew.
            p.resize_for_overwrite(inner.set.name(), n + g)?;
        }
        let DeviceScratch {
            order,
            ids,
            ids_for,
            ids_host,
            built,
            ghost_columns,
            column_host,
            positions: joined,
            identity,
            flags: joined_flags,
            ghost_flags,
            sort: _,
        } = &mut s.device;
        let ids = match &ghosts {
            None => self.ids_on_device(work, ids, ids_for, ids_host)?,
            Some(x) => {
                // The senders' ids (gathered by the build) and the ghosts'.
                *ids_for = None;
                ids_host.clear();
                ids_host.extend(s.ids[..n].iter().map(|&id| id as i64));
                ids_host.extend(x.pack.ids().map(|id| id as i64));
                let buffer = scratch_buffer(work, ids, "sender ids", 8 * (n + g))?;
                buffer.upload(bytemuck::cast_slice(ids_host))?;
                Some(buffer)
            }
        };
        if let Some(x) = &ghosts {
            let carried = self.0.carried.lock().unwrap_or_else(|e| e.into_inner());
            if carried.len() != x.offsets.len() {
                return Err(self.carried_meanwhile(g));
            }
            upload_ghost_columns(work, ghost_columns, column_host, &carried, x.pack, x.offsets)?;
        }
        let column = |c: usize| ghost_columns.get(c).and_then(|b| b.as_deref());
        let order = scratch_buffer(work, order, "message order", 4 * (n + g))?;
        let count = {
            let staged = sent.map(|f| stage(work, ArgData::Dat(f), READ, 0)).transpose()?;
            let flags: Option<&dyn DeviceBuffer> = match staged.as_ref() {
                Some(f) if g > 0 => {
                    // Ghosts are messages their process sent: flagged 1,
                    // after the senders' flags.
                    let ones = scratch_buffer(work, ghost_flags, "ghost flags", 4 * g)?;
                    ones.upload(bytemuck::cast_slice(&vec![1i32; g]))?;
                    let out = scratch_buffer(work, joined_flags, "sent flags and ghosts", 4 * (n + g))?;
                    work.gather(&GatherJob {
                        n: n + g,
                        words: 1,
                        order: identity_order(work, identity, n + g)?,
                        src: f.buffer(),
                        dst: out,
                        dst_first: 0,
                        tail: Some(GatherTail { first: n, src: ones }),
                    })?;
                    Some(out)
                }
                f => f.map(Staged::buffer),
            };
            match &inner.search {
                Search::Spatial(b) => {
                    let positions = stage(work, b.positions.as_arg(), READ, 0)?;
                    let grid = stage(work, ArgData::Global(&b.params), READ, 0)?;
                    let starts = stage(work, ArgData::Dat(&b.starts), OVERWRITE, 0)?;
                    let dims = b.grid.dims();
                    let words = dims * b.positions.scalar().size() / 4;
                    // With ghosts: the senders' positions, then the ghosts'.
                    let binned: &dyn DeviceBuffer = match ghosts.as_ref().filter(|_| g > 0) {
                        None => positions.buffer(),
                        Some(x) => {
                            let Some(tail) = x.positions.and_then(column) else {
                                return Err(self.unplaced_ghosts(g));
                            };
                            let out = scratch_buffer(work, joined, "positions and ghosts", 4 * words * (n + g))?;
                            work.gather(&GatherJob {
                                n: n + g,
                                words,
                                order: identity_order(work, identity, n + g)?,
                                src: positions.buffer(),
                                dst: out,
                                dst_first: 0,
                                tail: Some(GatherTail { first: n, src: tail }),
                            })?;
                            out
                        }
                    };
                    work.bin(&BinJob {
                        position: b.positions.scalar(),
                        dims,
                        senders: n + g,
                        bins: b.grid.bin_count(),
                        flags,
                        positions: binned,
                        grid: grid.buffer(),
                        ids,
                        starts: starts.buffer(),
                        order,
                    })?
                }
                Search::BruteForce => {
                    let count = work.select(&SelectJob {
                        n,
                        flags,
                        mask: -1,
                        when_set: true,
                        out: order,
                    })?;
                    if ids.is_some() {
                        // Rare (senders sorted by a brute-force list keep
                        // their order): sorted by id on the host.
                        s.sent.resize(count, 0);
                        order.download(bytemuck::cast_slice_mut(&mut s.sent))?;
                        self.with_ids(|ids| order_by_id(&mut s.sent, None, ids, workers))?;
                        order.upload(bytemuck::cast_slice(&s.sent))?;
                    }
                    count
                }
            }
        };
        // Gathered after the sources' and flags' stages are released: a
        // carried Dat may be the positions themselves.
        let carried = inner.carried.lock().unwrap_or_else(|e| e.into_inner());
        if g > 0 && carried.len() != ghost_columns.len() {
            return Err(self.carried_meanwhile(g));
        }
        for (k, c) in carried.iter().enumerate() {
            let tail = column(k).filter(|_| g > 0).map(|src| GatherTail { first: n, src });
            c.gather_on_device(work, order, count, tail)?;
        }
        if let Search::Spatial(b) = &inner.search {
            b.starts_count.record_build(b.grid.bin_count() + 1, b.starts.set());
        }
        inner.count.record_build(count, &inner.set);
        s.built_at = Some(inner.senders.generation());
        s.ghosts_built = g;
        *built = Some(count);
        Ok(count)
    }

    /// A Dat carried (by another thread) while a build with `g` ghosts
    /// ran: the ghosts' records have no value for it.
    fn carried_meanwhile(&self, g: usize) -> op2_core::Error {
        self.invalid(format!(
            "a Dat was carried during its build: its {g} ghost messages have no value for it"
        ))
    }

    /// The senders' ids on the device when they do not ascend with the
    /// index (uploaded once per generation of the senders), else `None`.
    fn ids_on_device<'c>(
        &self,
        work: &dyn DeviceWork,
        cell: &'c mut Option<Box<dyn DeviceBuffer>>,
        uploaded_for: &mut Option<(u64, u64)>,
        host: &mut Vec<i64>,
    ) -> Result<Option<&'c dyn DeviceBuffer>> {
        let inner = &*self.0;
        let ascending = match (inner.senders.population(), &inner.fixed_ids) {
            (Some(p), _) => p.ids_ascend(),
            (None, fixed) => fixed.is_none(),
        };
        if ascending {
            return Ok(None);
        }
        let n = inner.senders.total_size();
        let key = (inner.senders.generation(), work.context_id());
        let stale = *uploaded_for != Some(key);
        let buffer = scratch_buffer(work, cell, "sender ids", 8 * n)?;
        if stale {
            *uploaded_for = None;
            // After a sort on this device the ids are there already.
            let copied = match inner.senders.population() {
                Some(p) => p.ids_to_device(work, buffer)?,
                None => false,
            };
            if !copied {
                host.clear();
                self.with_ids(|ids| host.extend(ids.iter().map(|&id| id as i64)))?;
                buffer.upload(bytemuck::cast_slice(host))?;
            }
            *uploaded_for = Some(key);
        }
        Ok(Some(buffer))
    }

    /// Calls `f` with the senders' ids (one per sender).
    ///
    /// # Errors
    /// As [`op2_core::Set::try_global_ids`].
    pub(super) fn with_ids<R>(&self, f: impl FnOnce(&[u64]) -> R) -> Result<R> {
        let inner = &*self.0;
        match (inner.senders.population(), &inner.fixed_ids) {
            (Some(p), _) => p.with_ids(|ids, _| f(ids)),
            (None, Some(ids)) => Ok(f(ids)),
            (None, None) => Ok(f(&(0..inner.senders.total_size() as u64).collect::<Vec<_>>())),
        }
    }
}
