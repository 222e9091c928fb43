//! A message list: a Set whose size changes every step, with Dats as its
//! variables, built from what the senders wrote (FLAME GPU's messages).
//! This file holds the list itself, its constructors, `carry` and the build
//! entry points; the build runs on the host's threads in `host_build.rs` and
//! in device memory in `on_device.rs`; `carried.rs` holds the carried Dats,
//! `positions.rs` the senders' positions, `ghosts.rs`, `merge.rs` and
//! `routes.rs` messages from other ranks, `sorting.rs` the senders' sort by
//! bin, and `near.rs` what `list(NEAR)` passes.

mod carried;
mod ghosts;
mod host_build;
mod merge;
mod near;
mod on_device;
mod positions;
mod routes;
mod sorting;

use carried::{Carried, CarriedDat};
pub use ghosts::GhostExchange;
use ghosts::GhostField;
pub use near::NearArgs;
pub use positions::Coordinate;
use positions::Positions;
pub use routes::{BinTable, Routes};

use std::any::Any;
use std::sync::{Arc, Mutex};

use crate::messages::binning::{bin_senders, counting_sort, order_by_id, select_senders, SortBuffers};
use crate::messages::grid::{bin_of, SpatialGrid, GRID_PARAMS};
use crate::messages::query::SpatialView;
use op2_core::agent_support::{parts_for, piece, run_on_pieces};
use op2_core::agent_support::{stage, OVERWRITE, READ};
use op2_core::agent_support::{DevicePacker, ReadBorrow};
use op2_core::Dat;
use op2_core::{
    AgentPack, ArgData, DatHandle, DeviceBuffer, DeviceWork, Error, GatherJob, GatherTail, Global, Result, Scalar,
    ScalarType, ScopedThreads, Set, WholeCount, Workers,
};

/// How kernels find messages.
enum Search {
    /// Every message (`for j in 0..x.len()`).
    BruteForce,
    /// Messages binned on a uniform grid.
    Spatial(Box<Bins>),
}

/// The bins of a spatial list: the grid, the senders' positions, and the
/// first message of each bin (plus the end), a Dat kernels read whole.
struct Bins {
    grid: SpatialGrid,
    positions: Box<dyn Positions>,
    starts: Dat<i32>,
    starts_count: WholeCount,
    params: Global<f64>,
}

/// Scratch reused from build to build: no allocation once warm.
#[derive(Default)]
struct Scratch {
    sent: Vec<u32>,
    sort: SortBuffers,
    /// The senders' generation at the last build (`None` before it, or
    /// once the senders were sorted by it).
    built_at: Option<u64>,
    /// A permutation of the senders ([`MessageList::sort_senders`]).
    permutation: Vec<u32>,
    listed: Vec<bool>,
    /// A build's buffers on a device.
    device: on_device::DeviceScratch,
    /// The senders' ids, then the ghosts' (a build with ghosts).
    ids: Vec<u64>,
    /// The senders other processes read (a build that exchanges ghosts).
    routes: Routes,
    /// The ghost messages in the list as built (merged ones included).
    ghosts_built: usize,
    /// The Dats carried at the last build.
    carried_built: usize,
    /// A merge's scratch ([`MessageList::merge_ghosts_on`]).
    merge: merge::MergeScratch,
}

/// A message list (FLAME GPU's messages): a Set of messages whose size
/// changes every step, with Dats as its variables, each a copy of a Dat
/// of the senders' ([`MessageList::carry`]). Each step, loops over the
/// senders write those Dats (and, for optional output, a flag), then
/// [`MessageList::build`] gathers the sent messages, in the order of their
/// senders' ids, into
/// the list; loops over any set then read all of them through
/// `m(READ, list[..])` (a slice parameter), and for a spatial list find the
/// ones near a point through `list(NEAR)` (a [`Spatial2d`](super::Spatial2d)
/// or [`Spatial3d`](super::Spatial3d) parameter).
///
/// A spatial list sorts its messages by bin with a counting sort (histogram,
/// prefix sum, stable scatter), so the messages of a bin are consecutive
/// and ordered by their senders' ids (whatever the senders' order in
/// memory, e.g. after [`MessageList::sort_senders`]): a kernel sees them in
/// the same order on every backend and thread count, and its sums come out
/// bitwise the same.
///
/// A cheap cloneable handle. The message Set has one slot per sender; the
/// list's size is the number of messages sent in the last build.
#[derive(Clone)]
pub struct MessageList(Arc<ListInner>);

struct ListInner {
    name: String,
    senders: Set,
    set: Set,
    /// The ids of fixed senders, when they do not ascend with the index
    /// (dynamic senders' ids are read at each build).
    fixed_ids: Option<Vec<u64>>,
    search: Search,
    carried: Mutex<Vec<Box<dyn Carried>>>,
    /// Messages from other processes' senders ([`MessageList::set_ghosts`]).
    ghosts: Mutex<AgentPack>,
    count: WholeCount,
    scratch: Mutex<Scratch>,
    /// Routing and packing for exchanges between processes (apart from
    /// the build's scratch: a build's exchange packs while it builds).
    routing: Mutex<routes::RouteScratch>,
}

impl MessageList {
    /// A list read by brute force: every kernel visits every message.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if `senders` is distributed (messages
    /// across ranks are not supported yet).
    pub fn brute_force(name: impl Into<String>, senders: &Set) -> Result<MessageList> {
        MessageList::build_list(name.into(), senders, |_, _| Ok(Search::BruteForce))
    }

    /// A list binned on `grid`, each message at the position its sender has
    /// in `position` (dim 2 or 3, as the grid), which the list carries.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if `position`'s dim is not the grid's,
    /// or its set is distributed; [`Error::HostOutOfMemory`] if the bins
    /// cannot be allocated.
    pub fn spatial<T: Coordinate>(
        name: impl Into<String>,
        grid: SpatialGrid,
        position: &Dat<T>,
    ) -> Result<MessageList> {
        let name = name.into();
        if position.dim() != grid.dims() {
            return Err(Error::InvalidMessages {
                list: name,
                reason: format!(
                    "the position `{}` has dim {} but the grid is {}-D",
                    position.name(),
                    position.dim(),
                    grid.dims()
                ),
            });
        }
        let pos = position.clone();
        let list = MessageList::build_list(name, position.set(), move |name, _| {
            let bins = Set::new(format!("{name}.bins"), grid.bin_count() + 1)?;
            Ok(Search::Spatial(Box::new(Bins {
                grid,
                positions: Box::new(pos),
                starts: Dat::zeros(format!("{name}.bin_starts"), &bins, 1)?,
                starts_count: WholeCount::unbuilt(),
                params: Global::new(format!("{name}.grid"), grid.params().to_vec())?,
            })))
        })?;
        list.carry(position)?;
        Ok(list)
    }

    fn build_list(
        name: String,
        senders: &Set,
        search: impl FnOnce(&str, &Set) -> Result<Search>,
    ) -> Result<MessageList> {
        if senders.distribution().is_some() {
            return Err(Error::InvalidMessages {
                list: name,
                reason: format!(
                    "the senders `{}` are distributed: messages across ranks are not supported yet",
                    senders.name()
                ),
            });
        }
        // Dynamic senders: the message set follows their size (each build).
        let set = match senders.population() {
            Some(p) => Set::dynamic(name.clone(), senders.total_size(), p.capacity())?,
            None => Set::new(name.clone(), senders.total_size())?,
        };
        let fixed_ids = match senders.population() {
            Some(_) => None,
            None => {
                let ids = senders.try_global_ids()?;
                (!ids.windows(2).all(|w| w[0] < w[1])).then(|| ids.into_owned())
            }
        };
        let search = search(&name, senders)?;
        Ok(MessageList(Arc::new(ListInner {
            name,
            senders: senders.clone(),
            set,
            fixed_ids,
            search,
            carried: Mutex::new(Vec::new()),
            ghosts: Mutex::new(AgentPack::default()),
            count: WholeCount::unbuilt(),
            scratch: Mutex::new(Scratch::default()),
            routing: Mutex::new(routes::RouteScratch::default()),
        })))
    }

    /// The list's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Whether `other` is this list (a clone of the same handle).
    pub fn same(&self, other: &MessageList) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The set of senders.
    pub fn senders(&self) -> &Set {
        &self.0.senders
    }

    /// The message Set: one slot per sender; the messages of the last build
    /// are the first [`MessageList::len`].
    pub fn set(&self) -> &Set {
        &self.0.set
    }

    /// Messages in the list (0 before the first build).
    pub fn len(&self) -> usize {
        self.0.count.get().unwrap_or(0)
    }

    /// Whether the list holds no messages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the list has been built.
    pub fn is_built(&self) -> bool {
        self.0.count.get().is_some()
    }

    /// The grid of a spatial list.
    pub fn grid(&self) -> Option<&SpatialGrid> {
        match &self.0.search {
            Search::Spatial(b) => Some(&b.grid),
            Search::BruteForce => None,
        }
    }

    /// The message Dat that carries `source` (a Dat of the senders): each
    /// build copies the senders' values there, in message order. Carrying a
    /// Dat twice returns the same message Dat. A Dat carried after a build
    /// holds no messages until the next: loops reading it are refused
    /// until then.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if `source` is not on the senders' set.
    pub fn carry<T: Scalar>(&self, source: &Dat<T>) -> Result<Dat<T>> {
        if !source.set().same(&self.0.senders) {
            return Err(Error::InvalidMessages {
                list: self.0.name.clone(),
                reason: format!(
                    "`{}` is on set `{}`, not on the senders `{}`",
                    source.name(),
                    source.set().name(),
                    self.0.senders.name()
                ),
            });
        }
        let mut carried = self.0.carried.lock().unwrap_or_else(|e| e.into_inner());
        let id = DatHandle::id(source);
        if let Some(c) = carried.iter().find(|c| c.source_id() == id) {
            if let Some(m) = c.message().downcast_ref::<Dat<T>>() {
                return Ok(m.clone());
            }
        }
        let message = Dat::zeros(format!("{}.{}", self.0.name, source.name()), &self.0.set, source.dim())?;
        if self.0.count.get().is_some() {
            // Built before: the messages are not in it until the next build.
            self.0.count.mark_unfilled(DatHandle::id(&message));
        }
        carried.push(Box::new(CarriedDat {
            source: source.clone(),
            message: message.clone(),
        }));
        Ok(message)
    }

    /// Builds the list from every sender; returns the number of messages.
    /// Runs on every core of the machine ([`ScopedThreads::available`]);
    /// [`MessageList::build_on`] runs on a runtime's threads instead. The
    /// result does not depend on the thread count.
    ///
    /// # Errors
    /// [`Error::HostBorrow`] if a carried Dat is borrowed (a guard alive);
    /// [`Error::Transfer`] if a device copy cannot be brought back.
    pub fn build(&self) -> Result<usize> {
        self.build_from(None, None, &ScopedThreads::available())
    }

    /// As [`MessageList::build`], on `workers`: a runtime (`&rt`) lends
    /// its backend's threads (one thread on `seq`).
    ///
    /// # Errors
    /// As [`MessageList::build`].
    pub fn build_on(&self, workers: &dyn Workers) -> Result<usize> {
        self.build_from(None, None, workers)
    }

    /// Builds the list from the senders whose `sent` flag is not 0 (optional
    /// output: a loop over the senders sets the flag); returns the number of
    /// messages.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if `sent` is not a dim-1 Dat of the
    /// senders, or the list has ghost messages
    /// ([`MessageList::set_ghosts`]); as [`MessageList::build`].
    pub fn build_sent(&self, sent: &Dat<i32>) -> Result<usize> {
        self.build_sent_on(sent, &ScopedThreads::available())
    }

    /// As [`MessageList::build_sent`], on `workers` (as
    /// [`MessageList::build_on`]).
    ///
    /// # Errors
    /// As [`MessageList::build_sent`].
    pub fn build_sent_on(&self, sent: &Dat<i32>, workers: &dyn Workers) -> Result<usize> {
        self.check_sent(sent)?;
        let ghosts = self.ghost_count();
        if ghosts > 0 {
            return Err(self.invalid(format!(
                "it has {ghosts} ghost messages, which carry no sent flags: build it whole (`build_on`), clear the ghosts, or let the exchange send only the messages sent (`build_sent_exchanging_on`)"
            )));
        }
        self.build_from(Some(sent), None, workers)
    }

    /// Refuses sent flags that are not a dim-1 Dat of the senders.
    fn check_sent(&self, sent: &Dat<i32>) -> Result<()> {
        if !sent.set().same(&self.0.senders) || sent.dim() != 1 {
            return Err(Error::InvalidMessages {
                list: self.0.name.clone(),
                reason: format!(
                    "the sent flags `{}` must be a dim-1 Dat of the senders `{}` (it is dim {} on `{}`)",
                    sent.name(),
                    self.0.senders.name(),
                    sent.dim(),
                    sent.set().name()
                ),
            });
        }
        Ok(())
    }

    /// Builds the list from every sender and the ghost messages
    /// `exchange` brings from other processes, binning the senders once:
    /// their bins go to `exchange` (which sends each process the messages
    /// it reads and sets those received as ghosts,
    /// [`MessageList::set_ghosts`]); the build gathers its senders' ids
    /// while the ghosts travel. Returns the number of messages. A
    /// distributed run's agent domain calls it (op2-mpi's
    /// `AgentDomain::build_on`). The time spent in `exchange` (but the
    /// ids' gathering) is not the build's: its timing row leaves it out.
    ///
    /// A brute-force list gives `exchange` every sender, routed with the
    /// value 1 (its one bin): every process reads every message.
    ///
    /// # Errors
    /// The error of `exchange`; as [`MessageList::build`].
    pub fn build_exchanging_on(&self, exchange: &mut dyn GhostExchange, workers: &dyn Workers) -> Result<usize> {
        self.build_from(None, Some(exchange), workers)
    }

    /// As [`MessageList::build_exchanging_on`], of the senders whose
    /// `sent` flag is not 0 (as [`MessageList::build_sent`]): only their
    /// messages go to `exchange`, so every ghost it brings back was sent
    /// by its process, and the list holds them all. op2-mpi's
    /// `AgentDomain::build_sent_on` calls it.
    ///
    /// # Errors
    /// As [`MessageList::build_exchanging_on`]; [`Error::InvalidMessages`]
    /// if `sent` is not a dim-1 Dat of the senders.
    pub fn build_sent_exchanging_on(
        &self,
        sent: &Dat<i32>,
        exchange: &mut dyn GhostExchange,
        workers: &dyn Workers,
    ) -> Result<usize> {
        // A bad flag Dat fails in the exchange, which tells the others.
        self.build_from(Some(sent), Some(exchange), workers)
    }

    /// Builds the list, timed in the workers' timings (as `build NAME`).
    fn build_from(
        &self,
        sent: Option<&Dat<i32>>,
        exchange: Option<&mut dyn GhostExchange>,
        workers: &dyn Workers,
    ) -> Result<usize> {
        let start = std::time::Instant::now();
        let device_before = op2_core::device_counts::this_thread();
        let (built, exchanging) = match self.build_untimed(sent, exchange, workers) {
            Ok(built) => built,
            Err(e) => {
                // A build that failed part way may have reordered some
                // carried Dats and not others: no loop may read the list
                // until a build succeeds.
                self.0.count.invalidate();
                if let Search::Spatial(b) = &self.0.search {
                    b.starts_count.invalidate();
                }
                return Err(e);
            }
        };
        if let Some(t) = workers.work_timings() {
            let seconds = start.elapsed().as_secs_f64() - exchanging;
            let device = op2_core::device_counts::this_thread().since(device_before);
            let name = format!("build {}", self.0.name);
            t.record_loop(&name, seconds, 0, op2_core::HaloTraffic::default(), device);
        }
        Ok(built)
    }

    /// Routes every sender by the bins `exchange` says other processes
    /// read (on the host binning them into `s.sort.bins` for the build's
    /// sort too; on a device there), gives the routes to `exchange` and
    /// gathers the senders' ids while the ghosts travel; returns how many
    /// senders were binned on the host, and the seconds spent in
    /// `exchange` but gathering the ids. Every failure goes through
    /// `exchange`, which tells the other processes.
    fn exchange_ghosts(
        &self,
        exchange: &mut dyn GhostExchange,
        sent: Option<&Dat<i32>>,
        s: &mut Scratch,
        workers: &dyn Workers,
    ) -> Result<(usize, f64)> {
        let inner = &*self.0;
        let n = inner.senders.total_size();
        let table = exchange.read_bins();
        let checked = sent.map_or(Ok(()), |f| self.check_sent(f));
        let (routed, binned) = match (&inner.search, workers.device_work()) {
            (_, _) if checked.is_err() => (checked, 0),
            // Every process reads every message: each sender that sends
            // is routed, as if from the one bin (value 1).
            (Search::BruteForce, _) => {
                let selected = sent
                    .map(Dat::try_data_ro)
                    .transpose()
                    .map(|flags| select_senders(n, flags.as_deref(), &mut s.sent, workers));
                if selected.is_ok() {
                    s.routes.fill_all(&s.sent, 1);
                }
                (selected, 0)
            }
            (Search::Spatial(_), Some(work)) => {
                let mut routing = inner.routing.lock().unwrap_or_else(|e| e.into_inner());
                (
                    self.route_on_device(work, None, sent, table, &mut s.routes, &mut routing),
                    0,
                )
            }
            (Search::Spatial(b), None) => {
                // The senders that send, binned for the routes and the sort.
                let binned = sent
                    .map(Dat::try_data_ro)
                    .transpose()
                    .map(|flags| select_senders(n, flags.as_deref(), &mut s.sent, workers))
                    .and_then(|()| {
                        b.positions
                            .bin_sent(&b.grid.params(), &s.sent, &mut s.sort.bins, workers)
                    })
                    .and_then(|()| self.check_table(None, table));
                if binned.is_ok() {
                    let selected = sent.map(|_| &s.sent[..]);
                    s.routes.fill_from_bins(selected, &s.sort.bins[..s.sent.len()], table);
                }
                (binned, s.sent.len())
            }
        };
        let (mut gathered, mut gathering) = (None, 0.0);
        let (routes, ids) = (&s.routes, &mut s.ids);
        let start = std::time::Instant::now();
        let routing_failed = routed.as_ref().err().map(ToString::to_string);
        exchange.exchange(self, routed.map(|()| routes), &mut || {
            let t = std::time::Instant::now();
            (gathered, gathering) = (Some(self.sender_ids(ids)), t.elapsed().as_secs_f64());
        })?;
        // An exchange is to fail where routing did; one that did not cannot
        // take the build on past a failure (flags of another set, say).
        if let Some(reason) = routing_failed {
            return Err(self.invalid(format!("routing the senders failed and the exchange went on: {reason}")));
        }
        let exchanging = start.elapsed().as_secs_f64() - gathering;
        match gathered {
            Some(done) => done?,
            None => self.sender_ids(&mut s.ids)?,
        }
        Ok((binned, exchanging))
    }

    /// The message count that whole-Dat arguments of this list read.
    #[doc(hidden)]
    pub fn whole_count(&self) -> &WholeCount {
        &self.0.count
    }
}
