//! Moving agents across ranks: dynamic sets of agents and the spatial
//! message lists they send to, shared among the ranks of a run by space
//! ([`BinDecomposition`] of one grid): the agents whose bin belongs to
//! another rank move there with every Dat and their ids, the messages of
//! the bins other ranks read go to them as ghosts before each build, and
//! children are numbered across ranks (`shared_births.rs`).
//!
//! Every exchange is collective. A rank that fails in one (a Dat borrowed,
//! a bad pack) tells the others at the next agreement point, and every
//! rank returns an error instead of waiting for it.

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::sync::Arc;
use std::time::Instant;

use op2_agents::{BinTable, GhostExchange, MessageList, Routes, SpatialGrid};
use op2_core::{AgentLayout, AgentPack, Dat, Error, Result, Set, Subset, Workers};

use crate::halo_exchange::Comm;
use crate::shared_births::SharedBirths;
use crate::{BinDecomposition, Mpi, Readers};

/// Message tags on the domain's own communicator.
const MIGRATION_TAG: i32 = 1;
const GHOST_TAG: i32 = 2;
/// Added to an exchange's tag for its headers (sizes and layouts) when
/// they go to neighbours only.
const HEADER_TAG: i32 = 16;

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
    /// Migrations run (one per [`AgentDomain::migrate_on`], each
    /// [`AgentDomain::exchange_on`] included).
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
    /// Bytes of agents sent at the last migration.
    pub last_migrated_bytes: u64,
    /// Bytes of ghost messages sent since the last migration.
    pub last_ghost_bytes: u64,
    /// Times a receive buffer grew (past its largest so far).
    pub buffer_growths: u64,
    /// Migrations of a set (one per set per [`AgentDomain::migrate_on`]) in
    /// which some rank sent agents past its neighbours (the ranks next to
    /// its box), as the first one after a cut often does: every rank then
    /// swapped headers with every rank, where the others' go to
    /// neighbours alone.
    pub migrations_beyond_neighbours: u64,
    /// Seconds of work that ran while ghost messages were in flight, over
    /// all exchanges: a build's own (gathering its senders' ids,
    /// [`AgentDomain::build_on`]), or the loop over the agents that read
    /// no ghost ([`AgentDomain::build_overlapped_on`]).
    pub overlapped_seconds: f64,
    /// Seconds spent waiting for ghost messages after that work, over all
    /// exchanges: what the overlap did not hide (a run with and one
    /// without [`AgentDomain::build_overlapped_on`] tell what it saves).
    pub ghost_wait_seconds: f64,
}

impl DomainStats {
    /// The stats, then the bytes migrated and of ghosts per step over
    /// `steps` steps: an example's closing line.
    pub fn per_step(&self, steps: u64) -> String {
        let per_step = |b: u64| b as f64 / steps.max(1) as f64 / 1e3;
        format!(
            "{self}; per step {:.1} kB migrated, {:.1} kB of ghosts",
            per_step(self.migrated_bytes),
            per_step(self.ghost_bytes)
        )
    }
}

impl std::fmt::Display for DomainStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} exchanges, {} rebalances, imbalance {:.3}; sent {} agents ({} B) and {} ghost messages ({} B); {} buffer growths; {:.1} ms of work while ghosts travelled, {:.1} ms waiting for them",
            self.exchanges,
            self.rebalances,
            self.imbalance,
            self.agents_sent,
            self.migrated_bytes,
            self.ghosts_sent,
            self.ghost_bytes,
            self.buffer_growths,
            1e3 * self.overlapped_seconds,
            1e3 * self.ghost_wait_seconds
        )
    }
}

/// Per other rank: the indices going there, and the packs sent and
/// received (kept from exchange to exchange: they only grow); and the
/// ranks this rank's exchanges go to and come from under the current cut.
struct Lanes {
    indices: Vec<Vec<u32>>,
    send: Vec<AgentPack>,
    recv: Vec<AgentPack>,
    peers: Peers,
}

impl Lanes {
    fn new(ranks: usize) -> Lanes {
        Lanes {
            indices: vec![Vec::new(); ranks],
            send: vec![AgentPack::default(); ranks],
            recv: vec![AgentPack::default(); ranks],
            peers: Peers::default(),
        }
    }
}

/// The ranks an exchange sends to and receives from (ascending), found
/// once per cut: only they swap headers, so an exchange costs messages
/// per neighbour, not per rank.
#[derive(Clone, Default)]
struct Peers {
    send: Vec<u32>,
    recv: Vec<u32>,
}

/// One dynamic set of agents in the domain: where its positions come from
/// (its first list), and its migration's scratch.
struct Population {
    agents: Set,
    /// The list whose positions place its agents.
    list: MessageList,
    /// The agents leaving, with the rank each goes to (plus one).
    leaving: Routes,
    lanes: Lanes,
}

/// One message list in the domain: who reads its bins, and its ghosts'
/// scratch.
struct Shared {
    list: MessageList,
    /// Its grid is the domain's: the decomposition's own readers serve.
    home: bool,
    readers: Option<Readers>,
    /// The bins other ranks read: `b + 1` for bin `b`, 0 for the others.
    read_table: BinTable,
    /// The senders in those bins.
    routes: Routes,
    /// The bins from which a query can read another rank's message: 1
    /// for those, 0 for the others (agents there read no ghost).
    near_table: BinTable,
    /// The readers in those bins ([`AgentDomain::build_overlapped_on`]).
    near_routes: Routes,
    lanes: Lanes,
}

/// The communicator and this rank's place in it.
struct Ranks {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
}

/// Dynamic sets of agents shared among the ranks of a run by space: each
/// rank owns a box of bins of one spatial grid (the first list's), and
/// every agent lives on the rank that owns the bin of its position. Before
/// the lists are built, [`AgentDomain::migrate_on`] moves the agents that
/// left a rank's box to their new owner and
/// [`AgentDomain::send_ghosts_on`] gives each rank the messages it reads
/// from its neighbours' bins, as ghosts of the list
/// ([`AgentDomain::exchange_on`] does both, for every list);
/// [`AgentDomain::build_on`] sends a list's ghosts while building it, so
/// the senders are binned once and the build gathers its ids while the
/// ghosts travel. The domain's exchanges are timed in the runtime's timing
/// summary, with its balance. Messages are
/// ordered by sender id inside each bin, every bin a rank's agents read
/// holds all its messages, and children are numbered across ranks by
/// their parents' ids: results are bitwise the same for any number of
/// ranks, provided the agents are numbered alike at the start
/// ([`Set::dynamic_with_ids`]).
pub struct AgentDomain {
    ranks: Ranks,
    options: DomainOptions,
    /// The grid whose bins the ranks own.
    home: SpatialGrid,
    populations: Vec<Population>,
    lists: Vec<Shared>,
    cut: Option<BinDecomposition>,
    /// The rank (plus one) each bin's agents go to, 0 for this rank's.
    leave_table: BinTable,
    /// The imbalance the current cut gave when it was made.
    cut_imbalance: f64,
    /// Exchanges to wait before cutting again when a cut could not reach
    /// the ratio, and the exchange when that wait ends.
    backoff: u64,
    retry_at: u64,
    stats: DomainStats,
}

impl AgentDomain {
    /// The domain of `list`'s senders (a dynamic set) on `mpi`'s ranks:
    /// [`AgentDomain::of_lists`] with one list.
    ///
    /// # Errors
    /// As [`AgentDomain::of_lists`].
    pub fn new(mpi: &Mpi, list: &MessageList, options: DomainOptions) -> Result<AgentDomain> {
        AgentDomain::of_lists(mpi, &[list], options)
    }

    /// The domain of the senders of `lists` (dynamic sets; several lists
    /// may share one) on `mpi`'s ranks, cut along the first list's grid.
    /// Every list's grid must cover the same box with the same boundary;
    /// their cell widths may differ; the lists of one set bin the same
    /// positions Dat. Installs the numbering of births
    /// across ranks on every set ([`Set::number_births_with`]): from now
    /// on every rank must apply each set's births and deaths in the same
    /// order. Collective: every rank makes its domain, in the same order.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if there is no list, a list is not
    /// spatial (or is discrete), its senders are not dynamic, grids differ
    /// in their box, boundary or dimensions, two lists of one set bin
    /// different positions, or the rebalance ratio is below 1 or NaN.
    pub fn of_lists(mpi: &Mpi, lists: &[&MessageList], options: DomainOptions) -> Result<AgentDomain> {
        let Some(first) = lists.first() else {
            return Err(Error::InvalidMigration {
                set: "(none)".into(),
                reason: "an agent domain needs at least one message list".into(),
            });
        };
        let home = *check_list(first)?;
        for list in &lists[1..] {
            let grid = check_list(list)?;
            let same_box =
                grid.dims() == home.dims() && grid.bounds() == home.bounds() && grid.boundary() == home.boundary();
            if !same_box {
                return Err(Error::InvalidMigration {
                    set: list.senders().name().to_string(),
                    reason: format!(
                        "`{}`'s grid covers another box (or boundary, or dimensions) than `{}`'s: the lists of one domain share their box",
                        list.name(),
                        first.name()
                    ),
                });
            }
        }
        if options.rebalance_above.is_nan() || options.rebalance_above < 1.0 {
            return Err(Error::InvalidMigration {
                set: first.senders().name().to_string(),
                reason: format!(
                    "the rebalance ratio must be at least 1, not {}",
                    options.rebalance_above
                ),
            });
        }
        let (rank, size) = (mpi.rank(), mpi.size());
        let mut populations: Vec<Population> = Vec::new();
        for list in lists {
            if let Some(p) = populations.iter().find(|p| p.agents.same(list.senders())) {
                // The set's agents are placed by its first list's positions,
                // and its other lists' readers are found from them.
                if !p.list.same_positions(list) {
                    return Err(Error::InvalidMigration {
                        set: list.senders().name().to_string(),
                        reason: format!(
                            "`{}` and `{}` bin this set's agents by different positions: the lists of one set in a domain share their positions Dat",
                            p.list.name(),
                            list.name()
                        ),
                    });
                }
                continue;
            }
            {
                populations.push(Population {
                    agents: list.senders().clone(),
                    list: (*list).clone(),
                    leaving: Routes::default(),
                    lanes: Lanes::new(size),
                });
            }
        }
        for p in &populations {
            let numbering = SharedBirths {
                comm: Comm(mpi.comm.0.duplicate()),
            };
            p.agents.number_births_with(Arc::new(numbering))?;
        }
        let home_params = home.params();
        let lists = lists
            .iter()
            .map(|l| Shared {
                list: (*l).clone(),
                home: l.grid().is_some_and(|g| g.params() == home_params),
                readers: None,
                read_table: BinTable::new(Vec::new()),
                routes: Routes::default(),
                near_table: BinTable::new(Vec::new()),
                near_routes: Routes::default(),
                lanes: Lanes::new(size),
            })
            .collect();
        Ok(AgentDomain {
            ranks: Ranks {
                comm: mpi.comm.0.duplicate(),
                rank,
                size,
            },
            options,
            home,
            populations,
            lists,
            cut: None,
            leave_table: BinTable::new(Vec::new()),
            cut_imbalance: 1.0,
            backoff: 1,
            retry_at: 0,
            stats: DomainStats::default(),
        })
    }

    /// The agents of the first list.
    pub fn agents(&self) -> &Set {
        &self.populations[0].agents
    }

    /// The current decomposition (`None` before the first migration).
    pub fn decomposition(&self) -> Option<&BinDecomposition> {
        self.cut.as_ref()
    }

    /// What the domain has done on this rank.
    pub fn stats(&self) -> DomainStats {
        self.stats
    }

    /// Moves every agent to the rank that owns its bin, then sends every
    /// list's ghosts ([`AgentDomain::migrate_on`], then
    /// [`AgentDomain::send_ghosts_on`] for each list). Call it after the
    /// agents moved and the Dats the lists carry were written, and before
    /// the lists' builds. Collective.
    ///
    /// # Errors
    /// As [`AgentDomain::migrate_on`] and [`AgentDomain::send_ghosts_on`].
    pub fn exchange_on(&mut self, workers: &dyn Workers) -> Result<()> {
        self.migrate_on(workers)?;
        for k in 0..self.lists.len() {
            self.ghosts_of(k, workers)?;
        }
        Ok(())
    }

    /// Moves every agent of every set to the rank that owns its bin
    /// (cutting the domain again first when it is out of balance, and at
    /// the first migration), and forgets every list's ghosts. Call it after
    /// the agents moved and before anything reads their neighbours.
    /// Collective.
    ///
    /// # Errors
    /// The error of this rank's failure ([`Error::HostBorrow`] if an
    /// agent Dat is borrowed, ...), or [`Error::Mpi`] naming the rank that
    /// failed: every rank returns an error, and the agents stay where they
    /// were if the failure came before they moved (every local check,
    /// borrows included, comes before).
    pub fn migrate_on(&mut self, workers: &dyn Workers) -> Result<()> {
        self.stats.exchanges += 1;
        self.stats.last_ghost_bytes = 0;
        // No build may merge ghosts of an earlier step if this one fails.
        for l in &self.lists {
            l.list.clear_ghosts();
        }
        let start = Instant::now();
        self.rebalance_if_needed(workers)?;
        if let Some(t) = workers.work_timings() {
            t.set_note(&self.note_key(), self.balance_note());
            t.record_exchange(
                &format!("balance {}", self.populations[0].agents.name()),
                start.elapsed().as_secs_f64(),
                0,
                0,
            );
        }
        self.stats.last_migrated_bytes = 0;
        for k in 0..self.populations.len() {
            self.migrate(k, workers)?;
        }
        Ok(())
    }

    /// The key of the domain's line in a timing summary.
    fn note_key(&self) -> String {
        format!("agent domain of `{}`", self.populations[0].agents.name())
    }

    /// The domain's balance, for a timing summary.
    fn balance_note(&self) -> String {
        let s = &self.stats;
        format!(
            "{} on {} ranks: {} cuts in {} migrations, imbalance {:.3} at the last (cut again above {})",
            self.note_key(),
            self.ranks.size,
            s.rebalances,
            s.exchanges,
            s.imbalance,
            self.options.rebalance_above
        )
    }

    /// Sends each rank the messages of this rank's bins of `list` that it
    /// reads, as ghosts of the list ([`MessageList::set_ghosts`]). Call it
    /// after [`AgentDomain::migrate_on`] and once the Dats the list
    /// carries were written (the ghosts are copies of them), before the
    /// list's build; build it whole (`build_on`: ghosts carry no sent
    /// flags). Timed in `workers`' timings (a runtime's summary).
    /// Collective.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if `list` is not one of the domain's or
    /// no migration came first; as [`AgentDomain::migrate_on`].
    pub fn send_ghosts_on(&mut self, list: &MessageList, workers: &dyn Workers) -> Result<()> {
        let k = self.list_index(list)?;
        self.ghosts_of(k, workers)
    }

    /// Cuts the domain at the first migration and whenever the busiest
    /// rank holds more than the ratio times the mean.
    fn rebalance_if_needed(&mut self, workers: &dyn Workers) -> Result<()> {
        let held: u64 = self.populations.iter().map(|p| p.agents.size() as u64).sum();
        let (mut total, mut most) = (0u64, 0u64);
        let comm = &self.ranks.comm;
        comm.all_reduce_into(&held, &mut total, SystemOperation::sum());
        comm.all_reduce_into(&held, &mut most, SystemOperation::max());
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
        self.ranks
            .comm
            .all_reduce_into(&counts[..], &mut global[..], SystemOperation::sum());
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
        for l in &mut self.lists {
            let readers = match (l.home, l.list.grid()) {
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
    fn migrate(&mut self, k: usize, workers: &dyn Workers) -> Result<()> {
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

    /// Sends each neighbour the messages of list `k`'s bins it reads, and
    /// sets the messages received as the list's ghosts.
    fn ghosts_of(&mut self, k: usize, workers: &dyn Workers) -> Result<()> {
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
    fn ghosts<'a>(&'a mut self, k: usize, workers: &'a dyn Workers) -> Ghosts<'a> {
        Ghosts {
            ranks: &self.ranks,
            shared: &mut self.lists[k],
            stats: &mut self.stats,
            workers,
        }
    }

    /// Sends every rank the messages of `list`'s bins it reads while
    /// building `list` ([`MessageList::build_exchanging_on`]): the senders
    /// are binned once, for the ghosts and the build, and the build gathers
    /// its senders' ids while the ghosts travel (`overlapped_seconds` in
    /// [`AgentDomain::stats`]). Use it in place of
    /// [`AgentDomain::send_ghosts_on`] and `list.build_on`, after
    /// [`AgentDomain::migrate_on`] and once the Dats the list carries were
    /// written; returns the number of messages, ghosts included.
    /// Collective.
    ///
    /// # Errors
    /// As [`AgentDomain::send_ghosts_on`] and `MessageList::build_on`.
    pub fn build_on(&mut self, list: &MessageList, workers: &dyn Workers) -> Result<usize> {
        let k = self.list_index(list)?;
        let list = self.lists[k].list.clone();
        let mut ghosts = self.ghosts(k, workers);
        list.build_exchanging_on(&mut ghosts, workers)
    }

    /// As [`AgentDomain::build_on`], of the senders whose `sent` flag is
    /// not 0 ([`MessageList::build_sent`]): only their messages go to the
    /// other ranks as ghosts, so the list on every rank holds what one
    /// rank's `build_sent` gives in the bins its agents read. Collective.
    ///
    /// # Errors
    /// As [`AgentDomain::build_on`]; [`Error::InvalidMessages`] (on the
    /// rank whose flags they are, the others an [`Error::Mpi`] naming it)
    /// if `sent` is not a dim-1 Dat of the senders.
    pub fn build_sent_on(&mut self, list: &MessageList, sent: &Dat<i32>, workers: &dyn Workers) -> Result<usize> {
        let k = self.list_index(list)?;
        let list = self.lists[k].list.clone();
        let mut ghosts = self.ghosts(k, workers);
        list.build_sent_exchanging_on(sent, &mut ghosts, workers)
    }

    /// Builds `list` and runs `body` over the agents of `readers` (one of
    /// the domain's sets) in two parts, so that the ghost messages travel
    /// while the first runs: the list is built from this rank's senders,
    /// the messages other ranks read are sent, `body` runs over the
    /// readers whose queries reach no bin another rank sends to (a
    /// [`Subset`] of `readers`), the ghosts arrive and are merged into the
    /// list ([`MessageList::merge_ghosts_on`]), and `body` runs over the
    /// other readers. Every reader sees what a build with the ghosts
    /// gives, so each agent's results are bitwise those of
    /// [`AgentDomain::build_on`] followed by one loop over `readers`
    /// (a reduction into a Global excepted: it adds in two parts). It
    /// pays where the exchange waits longer than the merge takes (slow
    /// links, short device steps); two CPU ranks on one node wait less.
    /// Returns the number of messages, ghosts included. Collective.
    ///
    /// `body` is one loop (or several) over the subset it is given that
    /// reads `list` with queries centred on the readers' positions (the
    /// positions their list bins by), and writes nothing the other part
    /// reads: e.g. each agent's own Dats (`d(RW)`), not `list`'s. The time `body`
    /// ran while the ghosts travelled is in [`DomainStats::overlapped_seconds`].
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if `list` is not one of the domain's
    /// lists, `readers` not one of its sets, or no migration came first;
    /// the error of `body` on any rank (every rank returns one: those
    /// whose `body` succeeded an [`Error::Mpi`] naming the rank that
    /// failed); as [`AgentDomain::build_on`].
    pub fn build_overlapped_on(
        &mut self,
        list: &MessageList,
        readers: &Set,
        workers: &dyn Workers,
        body: &mut dyn FnMut(&Subset) -> Result<()>,
    ) -> Result<usize> {
        let k = self.list_index(list)?;
        let Some(p) = self.populations.iter().position(|p| p.agents.same(readers)) else {
            return Err(Error::InvalidMigration {
                set: readers.name().to_string(),
                reason: format!("`{}` is not one of this domain's sets", readers.name()),
            });
        };
        let (l, reading) = (&mut self.lists[k], &self.populations[p]);
        l.list.clear_ghosts();
        let name = l.list.name().to_string();
        let mut routes = std::mem::take(&mut l.routes);
        let mut near = std::mem::take(&mut l.near_routes);
        // The build and the readers' split, before anything travels.
        let local = (|| -> Result<(usize, Subset, Subset)> {
            let built = match reading.agents.same(l.list.senders()) {
                true => l
                    .list
                    .build_routing_on(&mut [(&l.read_table, &mut routes), (&l.near_table, &mut near)], workers)?,
                false => {
                    let built = l.list.build_routing_on(&mut [(&l.read_table, &mut routes)], workers)?;
                    reading
                        .list
                        .route_senders_on(l.list.grid(), &l.near_table, &mut near, workers)?;
                    built
                }
            };
            let (interior, boundary) = split_readers(readers, &near)?;
            Ok((built, interior, boundary))
        })();
        let (routed, parts) = match local {
            Ok(x) => (Ok(&routes), Some(x)),
            Err(e) => (Err(e), None),
        };
        let mut interior_ran = Ok(());
        let mut ghosts = self.ghosts(k, workers);
        let exchanged = ghosts.send_and_receive(routed, &mut || {
            if let Some((_, interior, _)) = &parts {
                interior_ran = body(interior);
            }
        });
        self.lists[k].routes = routes;
        self.lists[k].near_routes = near;
        exchanged?;
        let Some((built, _, boundary)) = parts else {
            unreachable!("a local failure fails the exchange")
        };
        self.ranks
            .agree(interior_ran, "running the loop over its interior agents", &name)?;
        let merged = self.lists[k].list.merge_ghosts_on(workers);
        let count = *merged.as_ref().unwrap_or(&built);
        self.ranks
            .agree(merged.map(drop), "merging its ghost messages", &name)?;
        let ran = body(&boundary);
        self.ranks
            .agree(ran, "running the loop over its boundary agents", &name)?;
        Ok(count)
    }

    /// Where `list` is among the domain's lists, once the agents were
    /// shared out.
    fn list_index(&self, list: &MessageList) -> Result<usize> {
        let Some(k) = self.lists.iter().position(|l| l.list.same(list)) else {
            return Err(Error::InvalidMigration {
                set: list.senders().name().to_string(),
                reason: format!("`{}` is not one of this domain's lists", list.name()),
            });
        };
        if self.cut.is_none() {
            return Err(Error::InvalidMigration {
                set: list.senders().name().to_string(),
                reason:
                    "ghosts go to the ranks that own the neighbouring bins: migrate the agents first (`migrate_on`)"
                        .into(),
            });
        }
        Ok(k)
    }
}

/// One list's ghost exchange: a [`GhostExchange`] for its build.
struct Ghosts<'a> {
    ranks: &'a Ranks,
    shared: &'a mut Shared,
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
    fn send_and_receive(&mut self, routes: Result<&Routes>, meanwhile: &mut dyn FnMut()) -> Result<()> {
        let start = Instant::now();
        let (ranks, l) = (self.ranks, &mut *self.shared);
        l.list.clear_ghosts();
        let name = l.list.name().to_string();
        let packed = routes.and_then(|routes| pack_ghosts(l, routes, self.workers));
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

/// The agents of `readers` in bins from which no query reaches another
/// rank's message (`near`: the others, ascending), and those others.
fn split_readers(readers: &Set, near: &Routes) -> Result<(Subset, Subset)> {
    let mut reads_ghosts = vec![false; readers.size()];
    for &e in near.senders() {
        // Routes index the readers' elements (checked by the set's size).
        if let Some(flag) = reads_ghosts.get_mut(e as usize) {
            *flag = true;
        }
    }
    let name = readers.name();
    Ok((
        Subset::filter(format!("{name} reading no ghost"), readers, |e| !reads_ghosts[e])?,
        Subset::filter(format!("{name} reading ghosts"), readers, |e| reads_ghosts[e])?,
    ))
}

/// Checks that `list` can share its senders by space; returns its grid.
fn check_list(list: &MessageList) -> Result<&SpatialGrid> {
    let agents = list.senders();
    let bad = |reason: String| Error::InvalidMigration {
        set: agents.name().to_string(),
        reason,
    };
    let grid = match list.grid() {
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
        Some(g) => g,
    };
    if !agents.is_dynamic() {
        return Err(bad(
            "agents that move between ranks must be a dynamic set (`Set::dynamic`)".into(),
        ));
    }
    Ok(grid)
}

/// Packs, per destination, `p`'s agents whose bin another rank owns
/// (`table`: the owner plus one of each bin of `home`, 0 for this rank's),
/// listing them in `p.leaving`.
fn pack_leaving(p: &mut Population, table: &BinTable, home: &SpatialGrid, workers: &dyn Workers) -> Result<()> {
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
fn routed_index(v: i32, len: usize, set: &str) -> Result<usize> {
    match usize::try_from(i64::from(v) - 1) {
        Ok(q) if q < len => Ok(q),
        _ => Err(Error::InvalidMigration {
            set: set.to_string(),
            reason: format!("an agent's position is in no bin of the domain's grid (routed to {v})"),
        }),
    }
}

/// Packs, per reading rank, the messages of `l`'s senders in bins other
/// ranks read (`routes`: each such sender with its bin plus one).
fn pack_ghosts(l: &mut Shared, routes: &Routes, workers: &dyn Workers) -> Result<()> {
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

impl Ranks {
    /// Sends every rank its pack of `lanes` (sizes and layout fingerprints
    /// first, then the payloads that are not empty) and receives theirs;
    /// returns the records and bytes sent and the seconds waited for the
    /// payloads after `meanwhile`, and counts the receive buffers that grew
    /// into `growths`. The headers go to and come from the lanes' peers
    /// alone if `among_peers` (every rank's packs for ranks other than its
    /// peers are then empty), else all to all.
    #[allow(clippy::too_many_arguments)]
    fn swap(
        &self,
        tag: i32,
        lanes: &mut Lanes,
        among_peers: bool,
        layout: &AgentLayout,
        name: &str,
        growths: &mut u64,
        meanwhile: &mut dyn FnMut(),
    ) -> Result<(u64, u64, f64)> {
        let header: Vec<u64> = lanes
            .send
            .iter()
            .flat_map(|p| [p.as_bytes().len() as u64, layout.fingerprint()])
            .collect();
        // A pack for a rank that is not a peer would never be received.
        debug_assert!(
            !among_peers
                || (lanes.send.iter().enumerate())
                    .all(|(q, p)| p.is_empty() || lanes.peers.send.binary_search(&(q as u32)).is_ok()),
            "a pack for a rank that is not a peer"
        );
        let incoming = match among_peers {
            true => self.swap_headers(tag, &header, &lanes.peers, layout),
            false => {
                let mut incoming = vec![0u64; 2 * self.size];
                self.comm.all_to_all_into(&header[..], &mut incoming[..]);
                incoming
            }
        };
        // Ranks whose Dats differ would exchange records that mean other
        // things: refused by every rank before any payload moves.
        let mismatch = incoming.chunks_exact(2).position(|h| h[1] != layout.fingerprint());
        let checked = match mismatch {
            Some(q) => Err(Error::InvalidMigration {
                set: name.to_string(),
                reason: format!(
                    "rank {q} packs other Dats than this rank's {}: every rank must make the same Dats and carry the same ones",
                    if tag == MIGRATION_TAG { "agents" } else { "messages" }
                ),
            }),
            None => Ok(()),
        };
        self.agree(checked, "comparing the ranks' Dats", name)?;
        let (comm, rank) = (&self.comm, self.rank);
        // Every receive buffer is made before any payload is posted, and
        // every rank learns whether one could not be: no request is left
        // behind by an error.
        let mut grew = 0;
        let mut sized = Ok(());
        for (pack, h) in lanes.recv.iter_mut().zip(incoming.chunks_exact(2)) {
            pack.reset(layout);
            // `receive` grows the buffer only past its capacity.
            grew += u64::from(h[0] as usize > pack.capacity_bytes());
            if let Err(e) = pack.receive(name, h[0] as usize) {
                sized = sized.and(Err(e));
            }
        }
        self.agree(sized, "making room for what arrives", name)?;
        let mut waited = 0.0;
        let received = mpi::request::scope(|scope| -> Result<()> {
            let mut requests = Vec::new();
            for (q, (pack, h)) in lanes.recv.iter_mut().zip(incoming.chunks_exact(2)).enumerate() {
                // Made above: the same size again, no growth, no error.
                let buf = pack.receive(name, h[0] as usize)?;
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
            // The payloads travel while the caller works.
            meanwhile();
            let waiting = Instant::now();
            for r in requests {
                r.wait();
            }
            waited = waiting.elapsed().as_secs_f64();
            Ok(())
        });
        received?;
        *growths += grew;
        let records: u64 = lanes.send.iter().map(|p| p.len() as u64).sum();
        let bytes: u64 = lanes.send.iter().map(|p| p.as_bytes().len() as u64).sum();
        Ok((records, bytes, waited))
    }

    /// The headers of [`Ranks::swap`] sent to `peers.send` and received
    /// from `peers.recv`; the other ranks send nothing, in this layout.
    fn swap_headers(&self, tag: i32, header: &[u64], peers: &Peers, layout: &AgentLayout) -> Vec<u64> {
        let mut incoming: Vec<u64> = (0..self.size).flat_map(|_| [0, layout.fingerprint()]).collect();
        mpi::request::scope(|scope| {
            let mut requests = Vec::new();
            for (q, h) in incoming.chunks_exact_mut(2).enumerate() {
                if peers.recv.binary_search(&(q as u32)).is_ok() {
                    requests.push(self.comm.process_at_rank(q as i32).immediate_receive_into_with_tag(
                        scope,
                        h,
                        tag + HEADER_TAG,
                    ));
                }
            }
            for &q in &peers.send {
                let h = &header[2 * q as usize..2 * q as usize + 2];
                requests.push(
                    self.comm
                        .process_at_rank(q as i32)
                        .immediate_send_with_tag(scope, h, tag + HEADER_TAG),
                );
            }
            for r in requests {
                r.wait();
            }
        });
        incoming
    }

    /// The peers of a rank that sends to `send` (ascending): the ranks
    /// that send to it are learnt from all of them (once per cut).
    /// Collective.
    fn peers(&self, send: &[u32]) -> Peers {
        let mut to = vec![0i32; self.size];
        for &q in send {
            to[q as usize] = 1;
        }
        let mut from = vec![0i32; self.size];
        self.comm.all_to_all_into(&to[..], &mut from[..]);
        Peers {
            send: send.to_vec(),
            recv: (0..self.size as u32).filter(|&q| from[q as usize] != 0).collect(),
        }
    }

    /// As [`Ranks::agree`], and whether `flag` is set on some rank (in the
    /// same collective call).
    fn agree_or_flag(&self, local: Result<()>, flag: bool, what: &str, name: &str) -> Result<bool> {
        let mine: [i64; 2] = [
            if local.is_err() { self.rank as i64 } else { i64::MAX },
            i64::from(!flag),
        ];
        let mut first = [i64::MAX; 2];
        self.comm
            .all_reduce_into(&mine[..], &mut first[..], SystemOperation::min());
        self.failed_at(local, first[0], what, name)?;
        Ok(first[1] == 0)
    }

    /// Tells every rank whether this one failed; returns this rank's error,
    /// or an [`Error::Mpi`] naming the first rank that failed.
    fn agree(&self, local: Result<()>, what: &str, name: &str) -> Result<()> {
        let mine: i64 = if local.is_err() { self.rank as i64 } else { i64::MAX };
        let mut first = i64::MAX;
        self.comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
        self.failed_at(local, first, what, name)
    }

    /// This rank's error, or an [`Error::Mpi`] naming `first`, the first
    /// rank that failed (`i64::MAX`: none).
    fn failed_at(&self, local: Result<()>, first: i64, what: &str, name: &str) -> Result<()> {
        local?;
        if first != i64::MAX {
            return Err(Error::Mpi {
                reason: format!("rank {first} failed while {what} for `{name}`; every rank stops the exchange"),
            });
        }
        Ok(())
    }
}
