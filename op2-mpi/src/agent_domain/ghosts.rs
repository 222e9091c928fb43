//! Ghost messages: each neighbour gets the messages of the bins it reads,
//! packed here and set as ghosts of the list there, before or while the
//! list is built (`Ghosts`, the list's `GhostExchange`); every rank gets
//! every message of a brute-force list (`pack_for_everyone`).

use super::migration::routed_index;
use super::*;

impl AgentDomain {
    /// Sends each neighbour the messages of list `k`'s bins it reads, and
    /// sets the messages received as the list's ghosts.
    pub(super) fn ghosts_of(&mut self, k: usize, workers: &dyn Workers) -> Result<()> {
        if self.lists[k].everywhere {
            let l = &mut self.lists[k];
            let every: Vec<u32> = (0..l.list.senders().size() as u32).collect();
            let packed = pack_for_everyone(l, &every, workers);
            return self.ghosts(k, workers).send_packed(packed, &mut || {});
        }
        let l = &mut self.lists[k];
        let mut routes = std::mem::take(&mut l.routes);
        let routed = l.list.route_senders_on(None, &l.read_table, &mut routes, workers);
        let list = l.list.clone();
        let mut ghosts = self.ghosts(k, workers);
        let sent = ghosts.exchange(&list, routed.map(|()| &routes), &mut || {});
        self.lists[k].routes = routes;
        sent
    }

    /// The ghost exchange of list `k` (one use).
    pub(super) fn ghosts<'a>(&'a mut self, k: usize, workers: &'a dyn Workers) -> Ghosts<'a> {
        Ghosts {
            ranks: &self.ranks,
            shared: &mut self.lists[k],
            stats: &mut self.stats,
            workers,
        }
    }
}

/// One list's ghost exchange: a [`GhostExchange`] for its build.
pub(super) struct Ghosts<'a> {
    ranks: &'a Ranks,
    shared: &'a mut DomainList,
    stats: &'a mut DomainStats,
    workers: &'a dyn Workers,
}

impl GhostExchange for Ghosts<'_> {
    fn read_bins(&self) -> &BinTable {
        &self.shared.read_table
    }

    fn exchange(&mut self, list: &MessageList, routes: Result<&Routes>, meanwhile: &mut dyn FnMut()) -> Result<()> {
        let routes = match list.same(&self.shared.list) {
            true => routes,
            false => Err(Error::InvalidMigration {
                set: list.senders().name().to_string(),
                reason: format!(
                    "`{}`'s ghosts were asked for `{}`'s build",
                    self.shared.list.name(),
                    list.name()
                ),
            }),
        };
        self.send_and_receive(routes, meanwhile)
    }
}

impl Ghosts<'_> {
    /// Packs the messages of the senders routed (`routes`, or this rank's
    /// failure to route them) for the ranks that read their bins, sends
    /// them, runs `meanwhile` while they travel, and sets those received
    /// as the list's ghosts.
    pub(super) fn send_and_receive(&mut self, routes: Result<&Routes>, meanwhile: &mut dyn FnMut()) -> Result<()> {
        let packed = routes.and_then(|routes| pack_ghosts(self.shared, routes, self.workers));
        self.send_packed(packed, meanwhile)
    }

    /// Sends the packs of the lanes (`packed`: this rank's failure to
    /// pack them, if it failed), runs `meanwhile` while they travel, and
    /// sets those received as the list's ghosts.
    fn send_packed(&mut self, packed: Result<()>, meanwhile: &mut dyn FnMut()) -> Result<()> {
        let start = Instant::now();
        let (ranks, l) = (self.ranks, &mut *self.shared);
        l.list.clear_ghosts();
        let name = l.list.name().to_string();
        ranks.agree(packed, "packing ghost messages", &name)?;
        let layout = l.list.message_layout()?;
        let mut busy = 0.0;
        let mut timed = || {
            let t = Instant::now();
            meanwhile();
            busy += t.elapsed().as_secs_f64();
        };
        // Ghosts go to the readers of this rank's bins alone.
        let sent = ranks.swap(
            GHOST_TAG,
            &mut l.lanes,
            true,
            &layout,
            &name,
            &mut self.stats.buffer_growths,
            &mut timed,
        )?;
        self.stats.last_ghost_bytes += sent.1;
        self.stats.ghosts_sent += sent.0;
        self.stats.ghost_bytes += sent.1;
        self.stats.overlapped_seconds += busy;
        self.stats.ghost_wait_seconds += sent.2;
        let received: Vec<&AgentPack> = l.lanes.recv.iter().filter(|p| !p.is_empty()).collect();
        let set = l.list.set_ghosts(&received);
        ranks.agree(set, "setting its ghost messages", &name)?;
        if let Some(t) = self.workers.work_timings() {
            // The build's own work is timed as the build's (which leaves
            // the rest of this exchange out of its row).
            let seconds = start.elapsed().as_secs_f64() - busy;
            t.record_exchange(&format!("ghosts {name}"), seconds, sent.0, sent.1);
        }
        Ok(())
    }
}

/// Packs, per reading rank, the messages of `l`'s senders in bins other
/// ranks read (`routes`: each such sender with its bin plus one).
fn pack_ghosts(l: &mut DomainList, routes: &Routes, workers: &dyn Workers) -> Result<()> {
    if l.everywhere {
        return pack_for_everyone(l, routes.senders(), workers);
    }
    let readers = l.readers.as_ref().expect("cut before sending ghosts");
    let layout = l.list.message_layout()?;
    for v in &mut l.lanes.indices {
        v.clear();
    }
    let bins = l.list.grid().map_or(0, SpatialGrid::bin_count);
    for (&e, &v) in routes.senders().iter().zip(routes.values()) {
        let b = routed_index(v, bins, l.list.senders().name())?;
        for &q in readers.of(b) {
            l.lanes.indices[q as usize].push(e);
        }
    }
    for (indices, pack) in l.lanes.indices.iter().zip(&mut l.lanes.send) {
        pack.reset(&layout);
        if !indices.is_empty() {
            l.list.pack_messages_on(indices, pack, workers)?;
        }
    }
    Ok(())
}

/// Packs the messages of `senders` of `l` (a brute-force list) for every
/// other rank.
fn pack_for_everyone(l: &mut DomainList, senders: &[u32], workers: &dyn Workers) -> Result<()> {
    let layout = l.list.message_layout()?;
    for pack in &mut l.lanes.send {
        pack.reset(&layout);
    }
    let Some((&first, rest)) = l.lanes.peers.send.split_first() else {
        return Ok(());
    };
    let first = first as usize;
    if senders.is_empty() {
        return Ok(());
    }
    l.list.pack_messages_on(senders, &mut l.lanes.send[first], workers)?;
    // Every other rank gets the same records.
    let packed = l.lanes.send[first].clone();
    for &q in rest {
        l.lanes.send[q as usize].extend_from(l.list.name(), &packed)?;
    }
    Ok(())
}
