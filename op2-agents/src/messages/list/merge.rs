//! Ghost messages merged into a list built without them, so that loops
//! can read the list while the ghosts travel: a distributed run builds
//! from its own senders, runs the loop over the agents that read no bin
//! another process sends to, and merges the ghosts once they came
//! ([`MessageList::merge_ghosts_on`]). The merged list is the one a build
//! with the ghosts makes: the same messages, bin by bin, in id order.

use super::ghosts::GhostField;
use super::on_device::upload_ghost_columns;
use super::{Carried, MessageList, Scratch, Search};
use op2_core::agent_support::identity_order;
use op2_core::agent_support::{stage, OVERWRITE, READ};
use op2_core::{
    scratch_buffer, AgentPack, ArgData, BinJob, DeviceBuffer, DeviceWork, GatherJob, GatherTail, Result, Workers,
};

/// A merge's buffers, kept from merge to merge.
#[derive(Default)]
pub(super) struct MergeScratch {
    /// Each ghost's bin, and the ghosts by bin, then id.
    bins: Vec<u32>,
    ids: Vec<u64>,
    sorted: Vec<u32>,
    /// The merged list, piece by piece.
    pieces: Vec<Piece>,
    /// The merged list's bins' starts.
    starts: Vec<i32>,
    /// On a device: the merged order, the ids and positions of messages
    /// then ghosts, the ghosts' indices past the senders, each carried
    /// Dat merged, and `0, 1, ...`.
    device_from: Option<Box<dyn DeviceBuffer>>,
    device_ids: Option<Box<dyn DeviceBuffer>>,
    ghost_ids: Option<Box<dyn DeviceBuffer>>,
    positions: Option<Box<dyn DeviceBuffer>>,
    ghost_indices: Option<Box<dyn DeviceBuffer>>,
    order_out: Option<Box<dyn DeviceBuffer>>,
    merged: Vec<Option<Box<dyn DeviceBuffer>>>,
    identity: Option<Box<dyn DeviceBuffer>>,
}

impl MessageList {
    /// Merges the ghost messages ([`MessageList::set_ghosts`]) into the
    /// list as its last build left it (a build without ghosts), so that it
    /// holds what a build with them would: the same messages, bin by bin,
    /// in the order of their senders' ids. Returns the number of messages.
    /// On the host only the ghosts are binned: the messages after the
    /// first of their bins move up. On a device runtime whose build ran
    /// there the merge runs there too, binning messages and ghosts again
    /// (cheap there). Timed as `merge LIST`.
    ///
    /// A distributed run's agent domain uses it to overlap the ghosts'
    /// journey with the loop over the agents that read none of them
    /// (op2-mpi's `AgentDomain::build_overlapped_on`).
    ///
    /// # Errors
    /// [`Error::InvalidMessages`](op2_core::Error::InvalidMessages) if the list is not spatial, was not
    /// built since its senders last changed (or since a Dat was carried),
    /// already holds ghosts, a ghost has the id of a message of its bin (on
    /// a device: of any sender), or the ghosts were packed for other Dats
    /// than the list carries (after an error the list needs a build before
    /// the next merge); [`Error::HostBorrow`](op2_core::Error::HostBorrow) if a
    /// message Dat is borrowed; the device's.
    pub fn merge_ghosts_on(&self, workers: &dyn Workers) -> Result<usize> {
        let start = std::time::Instant::now();
        let device_before = op2_core::device_counts::this_thread();
        let merged = self.merge_untimed(workers)?;
        if let Some(t) = workers.work_timings() {
            let device = op2_core::device_counts::this_thread().since(device_before);
            let (name, seconds) = (format!("merge {}", self.0.name), start.elapsed().as_secs_f64());
            t.record_loop(&name, seconds, 0, op2_core::HaloTraffic::default(), device);
        }
        Ok(merged)
    }

    fn merge_untimed(&self, workers: &dyn Workers) -> Result<usize> {
        let inner = &*self.0;
        if matches!(inner.search, Search::BruteForce) {
            return Err(self.invalid("ghost messages go by bin: a brute-force list has none".into()));
        }
        let mut guard = inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *guard;
        // The messages too must be as the build left them: permuted or
        // resized since, they no longer match the bins the merge extends.
        if s.built_at != Some(inner.senders.generation())
            || !inner.count.is_current(&inner.set)
            || inner.count.get().is_none()
        {
            return Err(self.invalid(
                "merging ghosts needs a build since the senders or the messages last changed (`build_on`)".into(),
            ));
        }
        if s.ghosts_built > 0 {
            return Err(self.invalid(format!(
                "its build holds {} ghost messages already: build it without them to merge others",
                s.ghosts_built
            )));
        }
        let carried = inner.carried.lock().unwrap_or_else(|e| e.into_inner());
        if carried.len() != s.carried_built {
            return Err(self.invalid(format!(
                "it carries {} Dats, and its build carried {}: build it again before merging ghosts",
                carried.len(),
                s.carried_built
            )));
        }
        let ghosts = self.ghosts();
        let messages = inner.count.get().unwrap_or(0);
        if ghosts.is_empty() {
            return Ok(messages);
        }
        // Until it succeeds, the list counts as not built: a failure part
        // way leaves nothing to merge into again, or to sort by.
        let built_at = s.built_at.take();
        let order_here = |o: &dyn DeviceBuffer| workers.device_work().is_some_and(|w| w.context_id() == o.context_id());
        let merged = match (workers.device_work(), s.device.built) {
            (Some(work), Some(_)) if s.device.order.as_deref().is_some_and(order_here) => {
                self.merge_on_device(work, messages, &carried, &ghosts, s)
            }
            _ => self.merge_on_host(messages, &carried, &ghosts, s),
        }?;
        s.built_at = built_at;
        s.ghosts_built = ghosts.len();
        Ok(merged)
    }

    /// The merge on the host (the order of a device build brought back).
    fn merge_on_host(
        &self,
        messages: usize,
        carried: &[Box<dyn Carried>],
        ghosts: &AgentPack,
        s: &mut Scratch,
    ) -> Result<usize> {
        let inner = &*self.0;
        let Search::Spatial(b) = &inner.search else {
            unreachable!("checked by the caller")
        };
        // A device build left its order and starts there.
        s.device.order_to_host(&mut s.sort.order)?;
        s.sort.starts.clear();
        s.sort.starts.extend_from_slice(&b.starts.try_data_ro()?);
        let g = ghosts.len();
        let (offsets, positions) = self.ghost_offsets(carried, ghosts)?;
        let n = inner.senders.total_size();
        let m = &mut s.merge;
        let field = |offset: usize, first: usize| GhostField {
            bytes: ghosts.as_bytes(),
            record: ghosts.record_bytes(),
            offset,
            first: first as u32,
        };
        b.positions
            .ghost_bins(&b.grid.params(), field(offsets[positions], 0), g, &mut m.bins);
        m.ids.clear();
        m.ids.extend(ghosts.ids());
        m.sorted.clear();
        m.sorted.extend(0..g as u32);
        let (bins, ids) = (&m.bins, &m.ids);
        m.sorted.sort_unstable_by_key(|&k| (bins[k as usize], ids[k as usize]));
        let (starts, order) = (&s.sort.starts, &s.sort.order[..messages]);
        let merged = self.with_ids(|sender_ids| {
            merge_bins(
                Merging {
                    starts,
                    order,
                    sender_ids,
                    ghost_bins: bins,
                    ghost_ids: ids,
                    sorted: &m.sorted,
                },
                &mut m.pieces,
                &mut m.starts,
            )
        })?;
        if let Err(id) = merged {
            return Err(self.invalid(format!(
                "two of its messages come from sender id {id} (a ghost's id is a sender's, or two ghosts')"
            )));
        }
        if let Some(p) = inner.set.population() {
            // One slot per sender and per ghost, the first kept.
            p.resize(inner.set.name(), n + g)?;
        }
        for (c, &offset) in carried.iter().zip(&offsets) {
            c.merge_in_place(&m.pieces, messages + g, field(offset, 0))?;
        }
        b.starts.try_data_mut()?.copy_from_slice(&m.starts);
        b.starts_count.record_build(m.starts.len(), b.starts.set());
        // The senders in the merged order (ghost `k` as `n + k`), for a
        // sort of the senders.
        s.sort.order.resize(messages + g, 0);
        apply_pieces(bytemuck::cast_slice_mut(&mut s.sort.order), 4, &m.pieces, &|k, to| {
            to.copy_from_slice(&(n as u32 + k).to_ne_bytes())
        });
        std::mem::swap(&mut s.sort.starts, &mut m.starts);
        inner.count.record_build(messages + g, &inner.set);
        Ok(messages + g)
    }

    /// The merge in `work`'s device memory, after a build there: the
    /// messages' positions and ids followed by the ghosts' are binned
    /// again there (the counting sort is cheap on a device), and every
    /// carried Dat is gathered into the new order from its messages and
    /// the ghosts' column.
    fn merge_on_device(
        &self,
        work: &dyn DeviceWork,
        messages: usize,
        carried: &[Box<dyn Carried>],
        ghosts: &AgentPack,
        s: &mut Scratch,
    ) -> Result<usize> {
        let inner = &*self.0;
        let Search::Spatial(b) = &inner.search else {
            unreachable!("checked by the caller")
        };
        let n = inner.senders.total_size();
        let g = ghosts.len();
        let total = messages + g;
        self.sender_ids(&mut s.ids)?;
        self.check_ghost_ids(&s.ids[..n], ghosts)?;
        let (offsets, positions) = self.ghost_offsets(carried, ghosts)?;
        let columns = upload_ghost_columns(
            work,
            &mut s.device.ghost_columns,
            &mut s.device.column_host,
            carried,
            ghosts,
            &offsets,
        )?;
        let m = &mut s.merge;
        let Some(order) = s.device.order.as_deref() else {
            unreachable!("a device build leaves its order")
        };
        // The ids of the messages (their senders') and of the ghosts.
        let ids_host: Vec<i64> = s.ids[..n].iter().map(|&id| id as i64).collect();
        let sender_ids = scratch_buffer(work, &mut s.device.ids, "sender ids", 8 * n)?;
        sender_ids.upload(bytemuck::cast_slice(&ids_host))?;
        s.device.ids_for = None;
        let ghost_ids: Vec<i64> = ghosts.ids().map(|id| id as i64).collect();
        let ghost_ids_buffer = scratch_buffer(work, &mut m.ghost_ids, "ghost ids", 8 * g)?;
        ghost_ids_buffer.upload(bytemuck::cast_slice(&ghost_ids))?;
        let ids = scratch_buffer(work, &mut m.device_ids, "message ids", 8 * total)?;
        let identity = identity_order(work, &mut m.identity, total)?;
        work.gather(&GatherJob {
            n: messages,
            words: 2,
            order,
            src: sender_ids,
            dst: ids,
            dst_first: 0,
            tail: None,
        })?;
        work.gather(&GatherJob {
            n: g,
            words: 2,
            order: identity,
            src: ghost_ids_buffer,
            dst: ids,
            dst_first: messages,
            tail: None,
        })?;
        let column = |c: usize| columns[c];
        let from = scratch_buffer(work, &mut m.device_from, "merge order", 4 * total)?;
        {
            let dims = b.grid.dims();
            let words = dims * b.positions.scalar().size() / 4;
            let message_positions = stage(work, carried[positions].message_arg(), READ, 0)?;
            let joined = scratch_buffer(work, &mut m.positions, "positions and ghosts", 4 * words * total)?;
            work.gather(&GatherJob {
                n: total,
                words,
                order: identity,
                src: message_positions.buffer(),
                dst: joined,
                dst_first: 0,
                tail: Some(GatherTail {
                    first: messages,
                    src: column(positions),
                }),
            })?;
            drop(message_positions);
            let grid = stage(work, ArgData::Global(&b.params), READ, 0)?;
            let starts = stage(work, ArgData::Dat(&b.starts), OVERWRITE, 0)?;
            work.bin(&BinJob {
                position: b.positions.scalar(),
                dims,
                senders: total,
                bins: b.grid.bin_count(),
                flags: None,
                positions: joined,
                grid: grid.buffer(),
                ids: Some(ids),
                starts: starts.buffer(),
                order: from,
            })?;
        }
        m.merged.resize_with(carried.len(), || None);
        for (k, c) in carried.iter().enumerate() {
            let tail = GatherTail {
                first: messages,
                src: column(k),
            };
            c.merge_on_device(work, from, total, tail, &mut m.merged[k])?;
        }
        if let Some(p) = inner.set.population() {
            // One slot per sender and ghost; written from the merged copies.
            p.resize_for_overwrite(inner.set.name(), n + g)?;
        }
        for (k, c) in carried.iter().enumerate() {
            let Some(merged) = m.merged[k].as_deref() else {
                unreachable!("merged above")
            };
            c.take_merged(work, identity, total, merged)?;
        }
        // The senders in the merged order (ghosts past them), for a sort of
        // the senders.
        let indices: Vec<u32> = (n as u32..(n + g) as u32).collect();
        let ghost_indices = scratch_buffer(work, &mut m.ghost_indices, "ghost indices", 4 * g)?;
        ghost_indices.upload(bytemuck::cast_slice(&indices))?;
        let out = scratch_buffer(work, &mut m.order_out, "message order", 4 * total)?;
        work.gather(&GatherJob {
            n: total,
            words: 1,
            order: from,
            src: order,
            dst: out,
            dst_first: 0,
            tail: Some(GatherTail {
                first: messages,
                src: ghost_indices,
            }),
        })?;
        std::mem::swap(&mut s.device.order, &mut m.order_out);
        b.starts_count.record_build(b.grid.bin_count() + 1, b.starts.set());
        inner.count.record_build(total, &inner.set);
        s.device.built = Some(total);
        Ok(total)
    }
}

/// A stretch of the merged list: consecutive messages of the list as
/// built, or one ghost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Piece {
    /// Messages `from..from + len` as built.
    Messages { from: u32, len: u32 },
    /// Ghost `k`.
    Ghost(u32),
}

/// Lays the merged list out in `data` (elements of `eb` bytes, the list
/// as built at its start, room for the whole merged list): from the end
/// down, so every run of messages moves up before anything overwrites it;
/// `ghost(k, element)` writes ghost `k`.
pub(super) fn apply_pieces(data: &mut [u8], eb: usize, pieces: &[Piece], ghost: &dyn Fn(u32, &mut [u8])) {
    let mut end = data.len() / eb;
    for piece in pieces.iter().rev() {
        match *piece {
            Piece::Messages { from, len } => {
                let (from, len) = (from as usize, len as usize);
                end -= len;
                if end != from {
                    data.copy_within(from * eb..(from + len) * eb, end * eb);
                }
            }
            Piece::Ghost(k) => {
                end -= 1;
                ghost(k, &mut data[end * eb..(end + 1) * eb]);
            }
        }
    }
    debug_assert_eq!(end, 0, "the pieces fill the merged list");
}

/// What a merge on the host reads.
struct Merging<'a> {
    /// The list's bins as built: first message of each, and the end.
    starts: &'a [i32],
    /// Its messages' senders.
    order: &'a [u32],
    sender_ids: &'a [u64],
    ghost_bins: &'a [u32],
    ghost_ids: &'a [u64],
    /// The ghosts by bin, then id.
    sorted: &'a [u32],
}

/// Merges the ghosts into the bins: the merged list as `pieces`, and its
/// bins' `starts`. Inside a bin, messages and ghosts interleave by id; the
/// bins without ghosts between two with are one piece. `Err` with an id
/// two of a bin's messages share.
fn merge_bins(x: Merging<'_>, pieces: &mut Vec<Piece>, starts: &mut Vec<i32>) -> Result<(), u64> {
    let messages = x.order.len() as u32;
    let bin_of = |q: usize| x.ghost_bins[x.sorted[q] as usize] as usize;
    // Each bin moves up by the ghosts of the bins before it.
    starts.clear();
    let mut q = 0;
    for (bin, &start) in x.starts.iter().enumerate() {
        while q < x.sorted.len() && bin_of(q) < bin {
            q += 1;
        }
        starts.push(start + q as i32);
    }
    pieces.clear();
    // Messages `i..i + n`, joined to a run they continue.
    let push_messages = |pieces: &mut Vec<Piece>, i: u32, n: u32| match pieces.last_mut() {
        Some(Piece::Messages { from, len }) if *from + *len == i => *len += n,
        _ => pieces.push(Piece::Messages { from: i, len: n }),
    };
    let (mut at, mut q) = (0u32, 0);
    while q < x.sorted.len() {
        let bin = bin_of(q);
        let first = q;
        while q < x.sorted.len() && bin_of(q) == bin {
            q += 1;
        }
        let (lo, hi) = (x.starts[bin] as u32, x.starts[bin + 1] as u32);
        if lo > at {
            push_messages(pieces, at, lo - at);
        }
        let ghosts = &x.sorted[first..q];
        let (mut i, mut k) = (lo, 0);
        let mut last: Option<u64> = None;
        while i < hi || k < ghosts.len() {
            let local = (i < hi).then(|| x.sender_ids[x.order[i as usize] as usize]);
            let ghost = ghosts.get(k).map(|&gk| x.ghost_ids[gk as usize]);
            let take_local = match (local, ghost) {
                (Some(a), Some(b)) => a < b,
                (Some(_), None) => true,
                _ => false,
            };
            let id = if take_local {
                push_messages(pieces, i, 1);
                i += 1;
                local
            } else {
                pieces.push(Piece::Ghost(ghosts[k]));
                k += 1;
                ghost
            };
            if id.is_some() && id == last {
                return Err(id.unwrap_or_default());
            }
            last = id;
        }
        at = hi;
    }
    if messages > at {
        push_messages(pieces, at, messages - at);
    }
    Ok(())
}
