//! Moving agents across ranks: dynamic sets of agents and the spatial
//! message lists they send to, shared among the ranks of a run by space
//! ([`BinDecomposition`] of one grid): the agents whose bin belongs to
//! another rank move there with every Dat and their ids, the messages of
//! the bins other ranks read go to them as ghosts before each build (every
//! message of a brute-force list to every rank), and children are
//! numbered across ranks (`shared_births.rs`).
//!
//! Every exchange is collective. A rank that fails in one (a Dat borrowed,
//! a bad pack) tells the others at the next agreement point, and every
//! rank returns an error instead of waiting for it.
//!
//! This file holds the domain, its sets and lists and its public API;
//! `migration.rs` moves agents, `ghosts.rs` sends ghost messages, both over
//! `transport.rs`; `options.rs` and `stats.rs` are what users set and read.

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::sync::Arc;
use std::time::Instant;

use op2_agents::{AgentSet, BinTable, GhostExchange, MessageList, Routes, SpatialGrid};
use op2_core::{AgentLayout, AgentPack, Dat, Error, Result, Set, Subset, Workers};

use crate::halo_exchange::Comm;
use crate::shared_births::SharedBirths;
use crate::{BinDecomposition, Mpi, Readers};

mod ghosts;
mod migration;
mod options;
mod stats;
mod transport;

pub use options::DomainOptions;
pub use stats::DomainStats;
use transport::{Lanes, Peers, Ranks};

/// Message tags on the domain's own communicator.
const MIGRATION_TAG: i32 = 1;
const GHOST_TAG: i32 = 2;
/// Added to an exchange's tag for its headers (sizes and layouts) when
/// they go to neighbours only.
const HEADER_TAG: i32 = 16;

/// One dynamic set of agents in the domain: where its positions come from
/// (its first list), and its migration's scratch.
struct DomainSet {
    agents: Set,
    /// The list whose positions place its agents.
    list: MessageList,
    /// The agents leaving, with the rank each goes to (plus one).
    leaving: Routes,
    lanes: Lanes,
}

/// One message list in the domain: who reads its bins, and its ghosts'
/// scratch.
struct DomainList {
    list: MessageList,
    /// Its grid is the domain's: the decomposition's own readers serve.
    home: bool,
    /// A brute-force list: every rank reads every message, so each goes
    /// to every other rank.
    everywhere: bool,
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
    populations: Vec<DomainSet>,
    lists: Vec<DomainList>,
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
    /// positions Dat. Discrete lists (each with a reach,
    /// [`SpatialGrid::with_reach`]) send their ghosts as far as their
    /// reach. A brute-force list may come after the first: its
    /// senders must be placed by a spatial or discrete list of the
    /// domain, and each
    /// of its builds gives every rank every message (an all-to-all of
    /// ghosts, ordered by sender id as on one rank). Installs the numbering of births
    /// across ranks on every set ([`AgentSet::number_births_with`](op2_agents::AgentSet::number_births_with)): from now
    /// on every rank must apply each set's births and deaths in the same
    /// order. Collective: every rank makes its domain, in the same order.
    ///
    /// # Errors
    /// [`Error::InvalidMigration`] if there is no list, the first is not
    /// spatial or discrete, a discrete list has no reach, a brute-force
    /// list's senders send no
    /// spatial or discrete list of the domain, senders are not dynamic, grids differ
    /// in their box, boundary or dimensions, two lists of one set bin
    /// different positions, or the rebalance ratio is below 1 or NaN.
    pub fn of_lists(mpi: &Mpi, lists: &[&MessageList], options: DomainOptions) -> Result<AgentDomain> {
        let (rank, size) = (mpi.rank(), mpi.size());
        // Agreed before the first collective: a rank refused alone would
        // leave the others in it, and options or lists that differ would
        // send ranks into different exchanges later (a rebalance on some).
        let planned = AgentDomain::plan(lists, &options, size);
        let lists_shape: Vec<_> = lists
            .iter()
            .map(|l| {
                (
                    l.name().to_string(),
                    l.senders().name().to_string(),
                    l.grid().map(|g| g.params()),
                )
            })
            .collect();
        let shape = format!("{options:?}, lists {lists_shape:?}");
        // A refused rank keeps its own error, typed as it was.
        let shaped = Some(("agent domains (options and lists)", shape.as_str()));
        let (home, populations) = crate::all_to_all::agreed(&mpi.comm.0, planned, shaped)?;
        AgentDomain::make(mpi, lists, options, home, populations, (rank, size))
    }

    /// Whether [`AgentDomain::of_lists`] would accept `lists` and
    /// `options`: every refusal it makes, checked on this rank alone (no
    /// collective call), e.g. before other collective steps that should
    /// not happen if the domain cannot be made.
    ///
    /// # Errors
    /// As [`AgentDomain::of_lists`].
    pub fn check_lists(lists: &[&MessageList], options: &DomainOptions) -> Result<()> {
        AgentDomain::plan(lists, options, 1).map(drop)
    }

    /// The domain's grid and sets from `lists`, checked (for `size` ranks);
    /// local.
    fn plan(lists: &[&MessageList], options: &DomainOptions, size: usize) -> Result<(SpatialGrid, Vec<DomainSet>)> {
        let Some(first) = lists.first() else {
            return Err(Error::InvalidMigration {
                set: "(none)".into(),
                reason: "an agent domain needs at least one message list".into(),
            });
        };
        let home = *check_list(first)?;
        // Brute-force lists are placed by their senders' spatial lists.
        for list in lists[1..].iter().filter(|l| l.grid().is_some()) {
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
        let mut populations: Vec<DomainSet> = Vec::new();
        for list in lists.iter().filter(|l| l.grid().is_some()) {
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
                populations.push(DomainSet {
                    agents: list.senders().clone(),
                    list: (*list).clone(),
                    leaving: Routes::default(),
                    lanes: Lanes::new(size),
                });
            }
        }
        if let Some(l) = (lists.iter()).find(|l| !populations.iter().any(|p| p.agents.same(l.senders()))) {
            return Err(Error::InvalidMigration {
                set: l.senders().name().to_string(),
                reason: format!(
                    "brute-force list `{}` is sent by agents no spatial or discrete list of the domain places: \
                     its senders move between ranks by the bins of such a list they send too",
                    l.name()
                ),
            });
        }
        Ok((home, populations))
    }

    /// The domain of the checked `populations` (collective).
    fn make(
        mpi: &Mpi,
        lists: &[&MessageList],
        options: DomainOptions,
        home: SpatialGrid,
        populations: Vec<DomainSet>,
        (rank, size): (usize, usize),
    ) -> Result<AgentDomain> {
        for p in &populations {
            let numbering = SharedBirths {
                comm: Comm(mpi.comm.0.duplicate()),
            };
            p.agents.number_births_with(Arc::new(numbering))?;
        }
        let home_params = home.params();
        let lists = lists
            .iter()
            .map(|l| DomainList {
                list: (*l).clone(),
                home: l.grid().is_some_and(|g| g.params() == home_params),
                everywhere: l.grid().is_none(),
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
        let reason = match self.lists[k].list.grid() {
            None => Some("a brute-force list: every reader reads the other ranks' messages"),
            Some(g) if g.is_discrete() => Some("a discrete list, whose readers are not split by reach"),
            Some(_) => None,
        };
        if let Some(reason) = reason {
            return Err(Error::InvalidMigration {
                set: readers.name().to_string(),
                reason: format!(
                    "`{}` is {reason}, so no part of the loop runs while the ghosts travel (build it with \
                     `build_on`, then loop)",
                    list.name()
                ),
            });
        }
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
        // Its queries could reach any number of cells away: the ring of
        // ghosts could not cover them.
        Some(g) if g.is_discrete() && g.reach().is_none() => {
            return Err(bad(format!(
                "`{}` is a discrete list whose queries reach any number of cells: give its grid a reach \
                 (`SpatialGrid::with_reach`), so the ranks know which of their cells others read",
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
