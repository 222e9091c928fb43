//! Agents moving to the rank that owns their bin: the cut made again when
//! the ranks' loads drift apart, the leaving agents packed by their new
//! owner, and the swap that removes them here and appends the arrivals.

use super::*;

impl AgentDomain {
    /// Cuts the domain at the first migration and whenever the busiest
    /// rank holds more than the ratio times the mean.
    pub(super) fn rebalance_if_needed(&mut self, workers: &dyn Workers) -> Result<()> {
        let held: u64 = self.populations.iter().map(|p| p.agents.size() as u64).sum();
        let (mut total, mut most) = (0u64, 0u64);
        let comm = &self.ranks.comm;
        crate::waiting::all_reduce_into(comm, &held, &mut total, SystemOperation::sum());
        crate::waiting::all_reduce_into(comm, &held, &mut most, SystemOperation::max());
        let mean = total as f64 / self.ranks.size as f64;
        self.stats.imbalance = if total == 0 { 1.0 } else { most as f64 / mean };
        // A cut that could not reach the ratio (agents crowded into few
        // bins) is tried again only when things got worse than it, or after
        // a wait that doubles each time (up to 64 exchanges).
        let worse = self.stats.imbalance > self.cut_imbalance;
        let waited = self.stats.exchanges >= self.retry_at;
        if self.cut.is_some() && (self.stats.imbalance <= self.options.rebalance_above || !(worse || waited)) {
            return Ok(());
        }
        // Counted where the positions are: on a device only the counts
        // come back.
        let mut counts = vec![0u64; self.home.bin_count()];
        let mut binned = Ok(());
        for p in &self.populations {
            binned = binned.and_then(|()| p.list.count_senders_in_on(&self.home, &mut counts, workers));
        }
        self.ranks
            .agree(binned, "binning its agents", self.populations[0].agents.name())?;
        let mut global = vec![0u64; counts.len()];
        crate::waiting::all_reduce_into(&self.ranks.comm, &counts[..], &mut global[..], SystemOperation::sum());
        let cut = BinDecomposition::bisect(&self.home, &global, self.ranks.size);
        let mut held = vec![0u64; self.ranks.size];
        for (b, &c) in global.iter().enumerate() {
            held[cut.owner(b)] += c;
        }
        let most = held.iter().copied().max().unwrap_or(0);
        self.cut_imbalance = if total == 0 { 1.0 } else { most as f64 / mean };
        self.backoff = match self.cut_imbalance > self.options.rebalance_above {
            true => (2 * self.backoff).min(64),
            false => 1,
        };
        self.retry_at = self.stats.exchanges + self.backoff;
        let rank = self.ranks.rank;
        let others: Vec<u32> = (0..self.ranks.size as u32).filter(|&q| q != rank as u32).collect();
        for l in &mut self.lists {
            if l.everywhere {
                l.lanes.peers = Peers {
                    send: others.clone(),
                    recv: others.clone(),
                };
                // Its one bin, read by every other rank.
                l.read_table = BinTable::new(vec![1]);
                continue;
            }
            let readers = match (l.home, l.list.grid()) {
                // As far as its reach: on the domain's own cells, or on
                // cells of its own over the same box.
                (home, Some(grid)) if grid.is_discrete() => {
                    let reach = grid.reach().expect("`of_lists` refuses a lattice without a reach");
                    match home || grid.bins_per_axis() == self.home.bins_per_axis() {
                        true => cut.readers_within(rank, reach),
                        false => cut.readers_reaching(rank, &self.home, grid, reach),
                    }
                }
                (false, Some(grid)) => cut.readers_in(rank, &self.home, grid),
                _ => cut.readers(rank),
            };
            let bins = l.list.grid().map_or(0, SpatialGrid::bin_count);
            let read: Vec<i32> = (0..bins)
                .map(|b| if readers.of(b).is_empty() { 0 } else { b as i32 + 1 })
                .collect();
            l.read_table = BinTable::new(read);
            l.lanes.peers = self.ranks.peers(readers.neighbours());
            l.readers = Some(readers);
            if let Some(grid) = l.list.grid() {
                let near = cut.reads_others(rank, &self.home, grid);
                l.near_table = BinTable::new(near.into_iter().map(i32::from).collect());
            }
        }
        // Agents leave for the ranks next to this one's box (the readers
        // of its home bins) but after a jump.
        let near = self.ranks.peers(cut.readers(rank).neighbours());
        for p in &mut self.populations {
            p.lanes.peers = near.clone();
        }
        let leave: Vec<i32> = (0..self.home.bin_count())
            .map(|b| match cut.owner(b) {
                q if q == rank => 0,
                q => q as i32 + 1,
            })
            .collect();
        self.leave_table = BinTable::new(leave);
        self.cut = Some(cut);
        self.stats.rebalances += 1;
        Ok(())
    }

    /// Sends population `k`'s agents outside this rank's box to their
    /// owners and takes in the agents that arrive.
    pub(super) fn migrate(&mut self, k: usize, workers: &dyn Workers) -> Result<()> {
        let start = Instant::now();
        let (ranks, home, p) = (&self.ranks, &self.home, &mut self.populations[k]);
        let set = p.agents.name().to_string();
        let packed = pack_leaving(p, &self.leave_table, home, workers);
        let lanes = &p.lanes;
        let beyond = (lanes.send.iter().enumerate())
            .any(|(q, pack)| !pack.is_empty() && lanes.peers.send.binary_search(&(q as u32)).is_err());
        // An agent that jumped past the neighbours: every rank swaps
        // headers with every rank this time.
        let beyond = ranks.agree_or_flag(packed, beyond, "packing the agents that leave", &set)?;
        self.stats.migrations_beyond_neighbours += u64::from(beyond);
        let layout = p.agents.agent_layout()?;
        let sent = ranks.swap(
            MIGRATION_TAG,
            &mut p.lanes,
            !beyond,
            &layout,
            &set,
            &mut self.stats.buffer_growths,
            &mut || {},
        )?;
        self.stats.last_migrated_bytes += sent.1;
        self.stats.agents_sent += sent.0;
        self.stats.migrated_bytes += sent.1;
        let arrivals: Vec<&AgentPack> = p.lanes.recv.iter().filter(|p| !p.is_empty()).collect();
        // Nobody left or came: the set stays as it is (no copy, no new
        // generation).
        let moved = match arrivals.is_empty() && p.leaving.is_empty() {
            true => Ok(()),
            false => p.agents.move_agents_on(p.leaving.senders(), &arrivals, workers),
        };
        ranks.agree(moved, "taking in the agents that arrived", &set)?;
        if let Some(t) = workers.work_timings() {
            t.record_exchange(&format!("migrate {set}"), start.elapsed().as_secs_f64(), sent.0, sent.1);
        }
        Ok(())
    }
}

/// Packs, per destination, `p`'s agents whose bin another rank owns
/// (`table`: the owner plus one of each bin of `home`, 0 for this rank's),
/// listing them in `p.leaving`.
fn pack_leaving(p: &mut DomainSet, table: &BinTable, home: &SpatialGrid, workers: &dyn Workers) -> Result<()> {
    p.list.route_senders_on(Some(home), table, &mut p.leaving, workers)?;
    let layout = p.agents.agent_layout()?;
    for v in &mut p.lanes.indices {
        v.clear();
    }
    for (&e, &v) in p.leaving.senders().iter().zip(p.leaving.values()) {
        let q = routed_index(v, p.lanes.indices.len(), p.agents.name())?;
        p.lanes.indices[q].push(e);
    }
    for (indices, pack) in p.lanes.indices.iter().zip(&mut p.lanes.send) {
        pack.reset(&layout);
        if !indices.is_empty() {
            p.agents.pack_agents_on(indices, pack, workers)?;
        }
    }
    // Once agents leave, taking in the arrivals must not fail: a Dat
    // borrowed here would lose the leavers and keep the arrivals out.
    p.agents.check_changeable()
}

/// The index a routing value (`index + 1`) stands for, below `len`.
pub(super) fn routed_index(v: i32, len: usize, set: &str) -> Result<usize> {
    match usize::try_from(i64::from(v) - 1) {
        Ok(q) if q < len => Ok(q),
        _ => Err(Error::InvalidMigration {
            set: set.to_string(),
            reason: format!("an agent's position is in no bin of the domain's grid (routed to {v})"),
        }),
    }
}
