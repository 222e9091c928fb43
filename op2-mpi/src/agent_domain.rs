//! Moving agents across ranks: a dynamic set of agents and the spatial
//! message list they send to, shared among the ranks of a run by space
//! ([`BinDecomposition`]): before each build of the list, the agents whose
//! bin belongs to another rank move there with every Dat and their ids,
//! and the messages of the bins other ranks read go to them as ghosts.
//!
//! Every exchange is collective. A rank that fails in one (a Dat borrowed,
//! a bad pack) tells the others at the next agreement point, and every
//! rank returns an error instead of waiting for it.

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use op2_core::{AgentPack, Error, MessageList, Result, Set, Workers};

use crate::{BinDecomposition, Mpi, Readers};

/// Message tags on the domain's own communicator.
const MIGRATION_TAG: i32 = 1;
const GHOST_TAG: i32 = 2;

/// How an [`AgentDomain`] shares its agents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DomainOptions {
    rebalance_above: f64,
}

impl Default for DomainOptions {
    /// Rebalances when the busiest rank holds 1.25 x the mean.
    fn default() -> DomainOptions {
        DomainOptions { rebalance_above: 1.25 }
    }
}

impl DomainOptions {
    /// Cut the domain again when the busiest rank holds more than `ratio`
    /// times the mean number of agents (at least 1; `f64::INFINITY`: never
    /// after the first cut). When a cut cannot reach the ratio (agents
    /// crowded into a few bins), the next try waits until the imbalance
    /// is worse than that cut's, or for 2, 4, ... 64 exchanges.
    pub fn rebalance_above(self, ratio: f64) -> DomainOptions {
        DomainOptions { rebalance_above: ratio }
    }
}

/// What an [`AgentDomain`] has done on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DomainStats {
    /// Exchanges run.
    pub exchanges: u64,
    /// Decompositions made (the first included).
    pub rebalances: u64,
    /// The busiest rank's agents over the mean, at the last exchange
    /// (before it moved agents).
    pub imbalance: f64,
    /// Agents this rank sent to others, over all exchanges.
    pub agents_sent: u64,
    /// Bytes of agents this rank sent, over all exchanges.
    pub migrated_bytes: u64,
    /// Ghost messages this rank sent, over all exchanges.
    pub ghosts_sent: u64,
    /// Bytes of ghost messages this rank sent, over all exchanges.
    pub ghost_bytes: u64,
    /// Bytes of agents sent at the last exchange.
    pub last_migrated_bytes: u64,
    /// Bytes of ghost messages sent at the last exchange.
    pub last_ghost_bytes: u64,
    /// Times a receive buffer grew (past its largest so far).
    pub buffer_growths: u64,
}

impl std::fmt::Display for DomainStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} exchanges, {} rebalances, imbalance {:.3}; sent {} agents ({} B) and {} ghost messages ({} B); {} buffer growths",
            self.exchanges,
            self.rebalances,
            self.imbalance,
            self.agents_sent,
            self.migrated_bytes,
            self.ghosts_sent,
            self.ghost_bytes,
            self.buffer_growths
        )
    }
}

/// Per other rank: the indices going there, and the packs sent and
/// received (kept from exchange to exchange: they only grow).
struct Lanes {
    indices: Vec<Vec<u32>>,
    send: Vec<AgentPack>,
    recv: Vec<AgentPack>,
}

impl Lanes {
    fn new(ranks: usize) -> Lanes {
        Lanes {
            indices: vec![Vec::new(); ranks],
            send: vec![AgentPack::default(); ranks],
            recv: vec![AgentPack::default(); ranks],
        }
    }
}

/// A dynamic set of agents shared among the ranks of a run by space: each
/// rank owns a box of bins of the agents' spatial message list, and
/// [`AgentDomain::exchange_on`], called before each build of the list,
/// moves the agents that left a rank's box to their new owner and gives
/// each rank the messages it reads from its neighbours' bins as ghosts.
/// Messages are ordered by sender id inside each bin, and every bin a
/// rank's agents read holds all its messages: results are bitwise the same
/// for any number of ranks, provided the agents are numbered alike
/// ([`Set::dynamic_with_ids`]).
pub struct AgentDomain {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    agents: Set,
    list: MessageList,
    options: DomainOptions,
    cut: Option<(BinDecomposition, Readers)>,
    /// The imbalance the current cut gave when it was made.
    cut_imbalance: f64,
    /// Exchanges to wait before cutting again when a cut could not reach
    /// the ratio, and the exchange when that wait ends.
    backoff: u64,
    retry_at: u64,
    bins: Vec<u32>,
    keep: Vec<u32>,
    migration: Lanes,
    ghosts: Lanes,
    stats: DomainStats,
}

impl AgentDomain {
    /// The domain of `list`'s senders (a dynamic set) on `mpi`'s ranks.
    /// Collective: every rank makes its domain, in the same order.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if the list is not spatial, its senders
    /// are not dynamic, or the rebalance ratio is below 1 or NaN.
    pub fn new(mpi: &Mpi, list: &MessageList, options: DomainOptions) -> Result<AgentDomain> {
        let agents = list.senders().clone();
        let bad = |reason: String| Error::InvalidMigration {
            set: agents.name().to_string(),
            reason,
        };
        match list.grid() {
            None => {
                return Err(bad(format!(
                    "agents are shared by space, and `{}` is not a spatial list",
                    list.name()
                )))
            }
            // Its queries reach any number of cells away: the one-bin ring
            // of ghosts would not cover them.
            Some(g) if g.is_discrete() => {
                return Err(bad(format!(
                    "`{}` is a discrete list, whose queries reach past the neighbouring cells; agents are shared along spatial lists only",
                    list.name()
                )))
            }
            Some(_) => {}
        }
        if !agents.is_dynamic() {
            return Err(bad(
                "agents that move between ranks must be a dynamic set (`Set::dynamic`)".into(),
            ));
        }
        if options.rebalance_above.is_nan() || options.rebalance_above < 1.0 {
            return Err(bad(format!(
                "the rebalance ratio must be at least 1, not {}",
                options.rebalance_above
            )));
        }
        let (rank, size) = (mpi.rank(), mpi.size());
        Ok(AgentDomain {
            comm: mpi.comm.0.duplicate(),
            rank,
            size,
            agents,
            list: list.clone(),
            options,
            cut: None,
            cut_imbalance: 1.0,
            backoff: 1,
            retry_at: 0,
            bins: Vec::new(),
            keep: Vec::new(),
            migration: Lanes::new(size),
            ghosts: Lanes::new(size),
            stats: DomainStats::default(),
        })
    }

    /// The agents.
    pub fn agents(&self) -> &Set {
        &self.agents
    }

    /// The current decomposition (`None` before the first exchange).
    pub fn decomposition(&self) -> Option<&BinDecomposition> {
        self.cut.as_ref().map(|c| &c.0)
    }

    /// What the domain has done on this rank.
    pub fn stats(&self) -> DomainStats {
        self.stats
    }

    /// Moves every agent to the rank that owns its bin (cutting the domain
    /// again first when it is out of balance, and at the first exchange),
    /// then sends each rank the messages of this rank's bins it reads, as
    /// ghosts of the list ([`MessageList::set_ghosts`]). Call it after the
    /// agents moved and the Dats the list carries were written (the ghosts
    /// are copies of them), and before the list's build; build it whole
    /// (`build_on`: ghosts carry no sent flags). Collective.
    ///
    /// # Errors
    /// The error of this rank's failure ([`Error::HostBorrow`] if an
    /// agent Dat is borrowed, ...), or [`Error::Mpi`] naming the rank that
    /// failed: every rank returns an error, and the agents stay where they
    /// were if the failure came before they moved (every local check,
    /// borrows included, comes before).
    pub fn exchange_on(&mut self, workers: &dyn Workers) -> Result<()> {
        self.stats.exchanges += 1;
        // No build may merge ghosts of an earlier step if this one fails.
        self.list.clear_ghosts();
        self.rebalance_if_needed()?;
        self.migrate(workers)?;
        self.send_ghosts()
    }

    /// Cuts the domain at the first exchange and whenever the busiest rank
    /// holds more than the ratio times the mean.
    fn rebalance_if_needed(&mut self) -> Result<()> {
        let held = self.agents.size() as u64;
        let (mut total, mut most) = (0u64, 0u64);
        self.comm.all_reduce_into(&held, &mut total, SystemOperation::sum());
        self.comm.all_reduce_into(&held, &mut most, SystemOperation::max());
        let mean = total as f64 / self.size as f64;
        self.stats.imbalance = if total == 0 { 1.0 } else { most as f64 / mean };
        // A cut that could not reach the ratio (agents crowded into few
        // bins) is tried again only when things got worse than it, or after
        // a wait that doubles each time (up to 64 exchanges).
        let worse = self.stats.imbalance > self.cut_imbalance;
        let waited = self.stats.exchanges >= self.retry_at;
        if self.cut.is_some() && (self.stats.imbalance <= self.options.rebalance_above || !(worse || waited)) {
            return Ok(());
        }
        let grid = *self.list.grid().expect("checked spatial at construction");
        let binned = self.list.sender_bins(&mut self.bins);
        self.agree(binned, "binning its agents")?;
        let mut counts = vec![0u64; grid.bin_count()];
        for &b in &self.bins {
            counts[b as usize] += 1;
        }
        let mut global = vec![0u64; counts.len()];
        self.comm
            .all_reduce_into(&counts[..], &mut global[..], SystemOperation::sum());
        let cut = BinDecomposition::bisect(&grid, &global, self.size);
        let mut held = vec![0u64; self.size];
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
        let readers = cut.readers(self.rank);
        self.cut = Some((cut, readers));
        self.stats.rebalances += 1;
        Ok(())
    }

    /// Sends the agents outside this rank's box to their owners and takes
    /// in the agents that arrive.
    fn migrate(&mut self, workers: &dyn Workers) -> Result<()> {
        let set = self.agents.name().to_string();
        let packed = self.pack_leaving();
        self.agree(packed, "packing the agents that leave")?;
        let sent = self.swap(MIGRATION_TAG, true, &set)?;
        self.stats.last_migrated_bytes = sent.1;
        self.stats.agents_sent += sent.0;
        self.stats.migrated_bytes += sent.1;
        let arrivals: Vec<&AgentPack> = self.migration.recv.iter().filter(|p| !p.is_empty()).collect();
        // Nobody left or came: the set stays as it is (no copy, no new
        // generation).
        let moved = match arrivals.is_empty() && self.keep.len() == self.agents.size() {
            true => Ok(()),
            false => self.agents.exchange_agents_on(&self.keep, &arrivals, workers),
        };
        self.agree(moved, "taking in the agents that arrived")
    }

    fn pack_leaving(&mut self) -> Result<()> {
        let (cut, _) = self.cut.as_ref().expect("cut before migrating");
        self.list.sender_bins(&mut self.bins)?;
        let layout = self.agents.agent_layout()?;
        self.keep.clear();
        for v in &mut self.migration.indices {
            v.clear();
        }
        for (i, &b) in self.bins.iter().enumerate() {
            match cut.owner(b as usize) {
                q if q == self.rank => self.keep.push(i as u32),
                q => self.migration.indices[q].push(i as u32),
            }
        }
        for (indices, pack) in self.migration.indices.iter().zip(&mut self.migration.send) {
            pack.reset(&layout);
            if !indices.is_empty() {
                self.agents.pack_agents(indices, pack)?;
            }
        }
        // Once agents leave, taking in the arrivals must not fail: a Dat
        // borrowed here would lose the leavers and keep the arrivals out.
        self.agents.check_changeable()
    }

    /// Sends each neighbour the messages of the bins it reads, and sets
    /// the messages received as the list's ghosts.
    fn send_ghosts(&mut self) -> Result<()> {
        let packed = self.pack_ghosts();
        self.agree(packed, "packing ghost messages")?;
        let set = self.list.name().to_string();
        let sent = self.swap(GHOST_TAG, false, &set)?;
        self.stats.last_ghost_bytes = sent.1;
        self.stats.ghosts_sent += sent.0;
        self.stats.ghost_bytes += sent.1;
        let received: Vec<&AgentPack> = self.ghosts.recv.iter().filter(|p| !p.is_empty()).collect();
        let set = self.list.set_ghosts(&received);
        self.agree(set, "setting its ghost messages")
    }

    fn pack_ghosts(&mut self) -> Result<()> {
        let (_, readers) = self.cut.as_ref().expect("cut before sending ghosts");
        self.list.sender_bins(&mut self.bins)?;
        let layout = self.list.message_layout()?;
        for v in &mut self.ghosts.indices {
            v.clear();
        }
        for (i, &b) in self.bins.iter().enumerate() {
            for &q in readers.of(b as usize) {
                self.ghosts.indices[q as usize].push(i as u32);
            }
        }
        for (indices, pack) in self.ghosts.indices.iter().zip(&mut self.ghosts.send) {
            pack.reset(&layout);
            if !indices.is_empty() {
                self.list.pack_messages(indices, pack)?;
            }
        }
        Ok(())
    }

    /// Sends every rank its pack of `lanes` (sizes and layout fingerprints
    /// first, all to all, then the payloads that are not empty) and
    /// receives theirs; returns the records and bytes sent.
    fn swap(&mut self, tag: i32, agents: bool, set: &str) -> Result<(u64, u64)> {
        let layout = if agents {
            self.agents.agent_layout()?
        } else {
            self.list.message_layout()?
        };
        let lanes = if agents { &mut self.migration } else { &mut self.ghosts };
        let header: Vec<u64> = lanes
            .send
            .iter()
            .flat_map(|p| [p.as_bytes().len() as u64, layout.fingerprint()])
            .collect();
        let mut incoming = vec![0u64; 2 * self.size];
        self.comm.all_to_all_into(&header[..], &mut incoming[..]);
        // Ranks whose Dats differ would exchange records that mean other
        // things: refused by every rank before any payload moves.
        let mismatch = incoming.chunks_exact(2).position(|h| h[1] != layout.fingerprint());
        let checked = match mismatch {
            Some(q) => Err(Error::InvalidMigration {
                set: set.to_string(),
                reason: format!(
                    "rank {q} packs other Dats than this rank's {}: every rank must make the same Dats and carry the same ones",
                    if agents { "agents" } else { "messages" }
                ),
            }),
            None => Ok(()),
        };
        self.agree(checked, "comparing the ranks' Dats")?;
        let lanes = if agents { &mut self.migration } else { &mut self.ghosts };
        let (comm, rank) = (&self.comm, self.rank);
        let mut grew = 0;
        let received = mpi::request::scope(|scope| -> Result<()> {
            let mut requests = Vec::new();
            for (q, (pack, h)) in lanes.recv.iter_mut().zip(incoming.chunks_exact(2)).enumerate() {
                pack.reset(&layout);
                // `receive` grows the buffer only past its capacity.
                grew += u64::from(h[0] as usize > pack.capacity_bytes());
                let buf = pack.receive(set, h[0] as usize)?;
                if q != rank && !buf.is_empty() {
                    requests.push(
                        comm.process_at_rank(q as i32)
                            .immediate_receive_into_with_tag(scope, buf, tag),
                    );
                }
            }
            for (q, pack) in lanes.send.iter().enumerate() {
                if q != rank && !pack.is_empty() {
                    requests.push(
                        comm.process_at_rank(q as i32)
                            .immediate_send_with_tag(scope, pack.as_bytes(), tag),
                    );
                }
            }
            for r in requests {
                r.wait();
            }
            Ok(())
        });
        // The sizes are whole records of one layout (checked above): no
        // receive fails once the first did not.
        received?;
        self.stats.buffer_growths += grew;
        let records: u64 = lanes.send.iter().map(|p| p.len() as u64).sum();
        let bytes: u64 = lanes.send.iter().map(|p| p.as_bytes().len() as u64).sum();
        Ok((records, bytes))
    }

    /// Tells every rank whether this one failed; returns this rank's error,
    /// or an [`Error::Mpi`] naming the first rank that failed.
    fn agree(&self, local: Result<()>, what: &str) -> Result<()> {
        let mine: i64 = if local.is_err() { self.rank as i64 } else { i64::MAX };
        let mut first = i64::MAX;
        self.comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
        local?;
        if first != i64::MAX {
            return Err(Error::Mpi {
                reason: format!(
                    "rank {first} failed while {what} for `{}`; every rank stops the exchange",
                    self.agents.name()
                ),
            });
        }
        Ok(())
    }
}
