//! A message list: a Set whose size changes every step, with Dats as its
//! variables, built from what the senders wrote (FLAME GPU's messages):
//! on the host's threads here, in device memory in `on_device.rs`.

mod ghosts;
mod merge;
mod on_device;
mod routes;

pub use ghosts::GhostExchange;
use ghosts::GhostField;
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

/// A sender Dat and the message Dat its values are copied to.
trait Carried: Send + Sync {
    fn source_id(&self) -> usize;
    fn source_name(&self) -> &str;
    fn scalar(&self) -> ScalarType;
    /// Bytes per element.
    fn element_bytes(&self) -> usize;
    fn message(&self) -> &dyn Any;
    /// The message Dat, as an argument (to stage it on a device).
    fn message_arg(&self) -> ArgData<'_>;
    /// Message `i` gets the value of sender `order[i]` (of a ghost, for an
    /// index past the senders).
    fn gather(&self, order: &[u32], ghosts: Option<GhostField<'_>>, workers: &dyn Workers) -> Result<()>;
    /// As [`Carried::gather`], in `work`'s device memory, for the first
    /// `n` entries of `order` there (the ghosts' values in `tail`).
    fn gather_on_device(
        &self,
        work: &dyn DeviceWork,
        order: &dyn DeviceBuffer,
        n: usize,
        tail: Option<GatherTail<'_>>,
    ) -> Result<()>;
    /// Merges ghosts into the messages in place (the merged list, `total`
    /// long, as `pieces`; ghost `k` at index `ghosts.first + k`).
    fn merge_in_place(&self, pieces: &[merge::Piece], total: usize, ghosts: GhostField<'_>) -> Result<()>;
    /// As [`Carried::merge_in_place`] in `work`'s device memory, into
    /// `out` (a scratch buffer); [`Carried::take_merged`] then copies it
    /// into the messages.
    fn merge_on_device(
        &self,
        work: &dyn DeviceWork,
        from: &dyn DeviceBuffer,
        n: usize,
        tail: GatherTail<'_>,
        out: &mut Option<Box<dyn DeviceBuffer>>,
    ) -> Result<()>;
    /// The first `n` elements of `merged` become the messages.
    fn take_merged(
        &self,
        work: &dyn DeviceWork,
        identity: &dyn DeviceBuffer,
        n: usize,
        merged: &dyn DeviceBuffer,
    ) -> Result<()>;
    /// Copies the senders' elements into records: sender `senders[k]`'s
    /// to `records[k * record + offset..]`; from `work`'s device through
    /// `packer` when the device alone holds the source's valid copy.
    fn pack_on(
        &self,
        work: Option<&dyn DeviceWork>,
        packer: &mut DevicePacker,
        senders: &[u32],
        records: &mut [u8],
        record: usize,
        offset: usize,
    ) -> Result<()>;
}

struct CarriedDat<T: Scalar> {
    source: Dat<T>,
    message: Dat<T>,
}

impl<T: Scalar> Carried for CarriedDat<T> {
    fn source_id(&self) -> usize {
        DatHandle::id(&self.source)
    }

    fn source_name(&self) -> &str {
        self.source.name()
    }

    fn scalar(&self) -> ScalarType {
        T::TYPE
    }

    fn element_bytes(&self) -> usize {
        self.source.dim() * std::mem::size_of::<T>()
    }

    fn message(&self) -> &dyn Any {
        &self.message
    }

    fn message_arg(&self) -> ArgData<'_> {
        ArgData::Dat(&self.message)
    }

    fn gather(&self, order: &[u32], ghosts: Option<GhostField<'_>>, workers: &dyn Workers) -> Result<()> {
        let src = self.source.try_data_ro()?;
        let mut dst = self.message.try_data_mut()?;
        let n = order.len();
        let parts = parts_for(workers, n);
        let Some(g) = ghosts else {
            // Every step's build: typed copies, no ghost test per message.
            let (src, d) = (&*src, self.source.dim());
            run_on_pieces(workers, &mut dst[..n * d], d, parts, &|i, part| {
                for (to, &from) in part.chunks_exact_mut(d).zip(&order[piece(n, parts, i)]) {
                    let from = from as usize * d;
                    to.copy_from_slice(&src[from..from + d]);
                }
            });
            return Ok(());
        };
        let eb = self.element_bytes();
        let src: &[u8] = bytemuck::cast_slice(&src);
        let dst: &mut [u8] = bytemuck::cast_slice_mut(&mut dst);
        run_on_pieces(workers, &mut dst[..n * eb], eb, parts, &|i, part| {
            for (to, &from) in part.chunks_exact_mut(eb).zip(&order[piece(n, parts, i)]) {
                if from >= g.first {
                    to.copy_from_slice(g.element(from, eb));
                } else {
                    let from = from as usize * eb;
                    to.copy_from_slice(&src[from..from + eb]);
                }
            }
        });
        Ok(())
    }

    fn gather_on_device(
        &self,
        work: &dyn DeviceWork,
        order: &dyn DeviceBuffer,
        n: usize,
        tail: Option<GatherTail<'_>>,
    ) -> Result<()> {
        let src = stage(work, ArgData::Dat(&self.source), READ, 0)?;
        let dst = stage(work, ArgData::Dat(&self.message), OVERWRITE, 0)?;
        work.gather(&GatherJob {
            n,
            words: self.source.dim() * std::mem::size_of::<T>() / 4,
            order,
            src: src.buffer(),
            dst: dst.buffer(),
            dst_first: 0,
            tail,
        })
    }

    fn merge_in_place(&self, pieces: &[merge::Piece], total: usize, ghosts: GhostField<'_>) -> Result<()> {
        let mut data = self.message.try_data_mut()?;
        let eb = self.element_bytes();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut data);
        merge::apply_pieces(&mut bytes[..total * eb], eb, pieces, &|k, to| {
            to.copy_from_slice(ghosts.element(ghosts.first + k, eb))
        });
        Ok(())
    }

    fn merge_on_device(
        &self,
        work: &dyn DeviceWork,
        from: &dyn DeviceBuffer,
        n: usize,
        tail: GatherTail<'_>,
        out: &mut Option<Box<dyn DeviceBuffer>>,
    ) -> Result<()> {
        let eb = self.element_bytes();
        let src = stage(work, ArgData::Dat(&self.message), READ, 0)?;
        let dst = op2_core::scratch_buffer(work, out, "merged messages", n * eb)?;
        work.gather(&GatherJob {
            n,
            words: eb / 4,
            order: from,
            src: src.buffer(),
            dst,
            dst_first: 0,
            tail: Some(tail),
        })
    }

    fn take_merged(
        &self,
        work: &dyn DeviceWork,
        identity: &dyn DeviceBuffer,
        n: usize,
        merged: &dyn DeviceBuffer,
    ) -> Result<()> {
        let dst = stage(work, ArgData::Dat(&self.message), OVERWRITE, 0)?;
        work.gather(&GatherJob {
            n,
            words: self.element_bytes() / 4,
            order: identity,
            src: merged,
            dst: dst.buffer(),
            dst_first: 0,
            tail: None,
        })
    }

    fn pack_on(
        &self,
        work: Option<&dyn DeviceWork>,
        packer: &mut DevicePacker,
        senders: &[u32],
        records: &mut [u8],
        record: usize,
        offset: usize,
    ) -> Result<()> {
        let eb = self.element_bytes();
        if let Some(work) = work {
            let _read = ReadBorrow::take(self.source.borrow_flag(), self.source.name())?;
            let slot = self.source.device().lock();
            if let Some(src) = DevicePacker::on_device(Some(work), &slot, eb) {
                return packer.column(work, (src, &slot.counter), eb, senders, records, record, offset);
            }
        }
        let src = self.source.try_data_ro()?;
        let src: &[u8] = bytemuck::cast_slice(&src);
        for (r, &e) in records.chunks_exact_mut(record).zip(senders) {
            let e = e as usize * eb;
            r[offset..offset + eb].copy_from_slice(&src[e..e + eb]);
        }
        Ok(())
    }
}

/// A coordinate type positions may have (integers for discrete grids).
pub trait Coordinate: Scalar + Into<f64> {}
impl Coordinate for f32 {}
impl Coordinate for f64 {}
impl Coordinate for i32 {}

/// Bins the senders by their positions.
trait Positions: Send + Sync {
    /// Sorts the senders `sent` into the grid's bins ([`counting_sort`]),
    /// an index past the senders being a ghost's.
    /// The bins of the first `binned` senders of `sent` are in `b.bins`
    /// already ([`Positions::bin_sent`]).
    #[allow(clippy::too_many_arguments)]
    fn sort(
        &self,
        grid: &[f64; GRID_PARAMS],
        nbins: usize,
        sent: &[u32],
        ghosts: Option<GhostField<'_>>,
        binned: usize,
        b: &mut SortBuffers,
        workers: &dyn Workers,
    ) -> Result<()>;
    /// The bins of the senders `sent` (no ghosts), in parallel, into `out`.
    fn bin_sent(
        &self,
        grid: &[f64; GRID_PARAMS],
        sent: &[u32],
        out: &mut Vec<u32>,
        workers: &dyn Workers,
    ) -> Result<()>;
    /// The bins of the `g` ghosts whose positions are `ghosts` (ghost
    /// `k` at index `ghosts.first + k`), into `out`.
    fn ghost_bins(&self, grid: &[f64; GRID_PARAMS], ghosts: GhostField<'_>, g: usize, out: &mut Vec<u32>);
    /// The bin of every sender, into `out`.
    fn bins(&self, grid: &[f64; GRID_PARAMS], out: &mut Vec<u32>) -> Result<()>;
    /// The Dat's identity (as `DatHandle::id`).
    fn source_id(&self) -> usize;
    /// The Dat's name.
    fn name(&self) -> &str;
    /// The Dat, as an argument (to stage it on a device).
    fn as_arg(&self) -> ArgData<'_>;
    /// The coordinates' type.
    fn scalar(&self) -> ScalarType;
}

impl<T: Coordinate> Positions for Dat<T> {
    fn as_arg(&self) -> ArgData<'_> {
        ArgData::Dat(self)
    }

    fn source_id(&self) -> usize {
        DatHandle::id(self)
    }

    fn name(&self) -> &str {
        Dat::name(self)
    }

    fn scalar(&self) -> ScalarType {
        T::TYPE
    }

    fn sort(
        &self,
        grid: &[f64; GRID_PARAMS],
        nbins: usize,
        sent: &[u32],
        ghosts: Option<GhostField<'_>>,
        binned: usize,
        b: &mut SortBuffers,
        workers: &dyn Workers,
    ) -> Result<()> {
        let p = self.try_data_ro()?;
        let (p, d) = (&*p, self.dim());
        let size = std::mem::size_of::<T>();
        // Senders past `first` are ghosts (none without them): the test
        // per sender is one compare of a constant.
        let first = ghosts.map_or(u32::MAX, |g| g.first);
        let coordinate = |e: u32, c: usize| -> f64 {
            match ghosts.filter(|_| e >= first) {
                Some(g) => bytemuck::pod_read_unaligned::<T>(&g.element(e, d * size)[c * size..(c + 1) * size]).into(),
                None => p[e as usize * d + c].into(),
            }
        };
        let bin_into = |senders: &[u32], out: &mut [u32]| {
            for (o, &e) in out.iter_mut().zip(senders) {
                let z = if d == 3 { coordinate(e, 2) } else { 0.0 };
                *o = bin_of(grid, [coordinate(e, 0), coordinate(e, 1), z]) as u32;
            }
        };
        counting_sort(sent, nbins, &bin_into, binned, b, workers);
        Ok(())
    }

    fn bin_sent(
        &self,
        grid: &[f64; GRID_PARAMS],
        sent: &[u32],
        out: &mut Vec<u32>,
        workers: &dyn Workers,
    ) -> Result<()> {
        let p = self.try_data_ro()?;
        let (p, d) = (&*p, self.dim());
        let bin_into = |senders: &[u32], out: &mut [u32]| {
            for (o, &e) in out.iter_mut().zip(senders) {
                let at = &p[e as usize * d..(e as usize + 1) * d];
                let z = if d == 3 { at[2].into() } else { 0.0 };
                *o = bin_of(grid, [at[0].into(), at[1].into(), z]) as u32;
            }
        };
        out.clear();
        out.resize(sent.len(), 0);
        bin_senders(sent, &bin_into, out, workers);
        Ok(())
    }

    fn ghost_bins(&self, grid: &[f64; GRID_PARAMS], ghosts: GhostField<'_>, g: usize, out: &mut Vec<u32>) {
        let (d, size) = (self.dim(), std::mem::size_of::<T>());
        out.clear();
        out.extend((0..g as u32).map(|k| {
            let e = ghosts.element(ghosts.first + k, d * size);
            let c = |a: usize| -> f64 { bytemuck::pod_read_unaligned::<T>(&e[a * size..(a + 1) * size]).into() };
            let z = if d == 3 { c(2) } else { 0.0 };
            bin_of(grid, [c(0), c(1), z]) as u32
        }));
    }

    fn bins(&self, grid: &[f64; GRID_PARAMS], out: &mut Vec<u32>) -> Result<()> {
        let p = self.try_data_ro()?;
        let d = self.dim();
        out.clear();
        out.extend(p[..self.set().total_size() * d].chunks_exact(d).map(|e| {
            let z = if d == 3 { e[2].into() } else { 0.0 };
            bin_of(grid, [e[0].into(), e[1].into(), z]) as u32
        }));
        Ok(())
    }
}

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
                let ids = senders.global_ids();
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
    /// # Errors
    /// [`Error::InvalidMessages`] if the list is not spatial; the error of
    /// `exchange`; as [`MessageList::build`].
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
        let (built, exchanging) = self.build_untimed(sent, exchange, workers)?;
        if let Some(t) = workers.work_timings() {
            let seconds = start.elapsed().as_secs_f64() - exchanging;
            t.record(&format!("build {}", self.0.name), seconds, 0);
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
            (Search::BruteForce, _) => (
                Err(self.invalid("ghost messages go by bin: a brute-force list has none".into())),
                0,
            ),
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
        let (mut gathered, mut gathering) = (false, 0.0);
        let (routes, ids) = (&s.routes, &mut s.ids);
        let start = std::time::Instant::now();
        exchange.exchange(self, routed.map(|()| routes), &mut || {
            let t = std::time::Instant::now();
            self.sender_ids(ids);
            (gathered, gathering) = (true, t.elapsed().as_secs_f64());
        })?;
        let exchanging = start.elapsed().as_secs_f64() - gathering;
        if !gathered {
            self.sender_ids(&mut s.ids);
        }
        Ok((binned, exchanging))
    }

    /// The senders' ids, in index order, into `out`.
    fn sender_ids(&self, out: &mut Vec<u64>) {
        let inner = &*self.0;
        out.clear();
        match (inner.senders.population(), &inner.fixed_ids) {
            (Some(p), _) => p.with_ids(|ids, _| out.extend_from_slice(ids)),
            (None, Some(ids)) => out.extend_from_slice(ids),
            (None, None) => out.extend(0..inner.senders.total_size() as u64),
        }
    }

    fn build_untimed(
        &self,
        sent: Option<&Dat<i32>>,
        exchange: Option<&mut dyn GhostExchange>,
        workers: &dyn Workers,
    ) -> Result<(usize, f64)> {
        let inner = &*self.0;
        let mut guard = inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *guard;
        s.built_at = None;
        s.device.built = None;
        s.ghosts_built = 0;
        // Senders binned (and their ids gathered) before the ghosts came.
        let (binned, exchanging, ids_gathered) = match exchange {
            Some(x) => {
                let (binned, exchanging) = self.exchange_ghosts(x, sent, s, workers)?;
                (binned, exchanging, true)
            }
            None => (0, 0.0, false),
        };
        let carried = inner.carried.lock().unwrap_or_else(|e| e.into_inner());
        s.carried_built = carried.len();
        let ghosts = self.ghosts();
        let g = ghosts.len();
        let n = inner.senders.total_size();
        // Ghosts' fields: the layout the ghosts were packed for must be the
        // carried Dats' still.
        let offsets = match g {
            0 => Vec::new(),
            _ => {
                let (offsets, layout) = self.layout_of(&carried)?;
                if ghosts.fingerprint != layout.fingerprint() {
                    return Err(self.invalid(format!(
                        "its {g} ghost messages were packed for other Dats than its messages' {} (a Dat was carried since)",
                        layout.describe()
                    )));
                }
                offsets
            }
        };
        // A spatial list carries its positions from the start.
        let positions_carried = match &inner.search {
            Search::Spatial(b) => carried.iter().position(|c| c.source_id() == b.positions.source_id()),
            Search::BruteForce => None,
        };
        // On a device (a brute-force list with ghosts, rare, on the host).
        let spatial = matches!(inner.search, Search::Spatial(_));
        if let Some(work) = workers.device_work().filter(|_| g == 0 || spatial) {
            drop(carried);
            let records = if g > 0 {
                if !ids_gathered {
                    self.sender_ids(&mut s.ids);
                }
                self.check_ghost_ids(&s.ids[..n], &ghosts)?;
                Some(on_device::GhostRecords {
                    pack: &ghosts,
                    offsets: &offsets,
                    positions: positions_carried,
                })
            } else {
                None
            };
            let built = self.build_on_device(work, sent, records, s, workers)?;
            return Ok((built, exchanging));
        }
        let field = |offset: usize| GhostField {
            bytes: &ghosts.bytes,
            record: ghosts.record,
            offset,
            first: n as u32,
        };
        if let Some(p) = inner.set.population() {
            // One slot per sender (births and deaths changed their number)
            // and per ghost.
            p.resize(inner.set.name(), n + g)?;
        }
        // The senders that send, in index order, then the ghosts.
        let flags = sent.map(Dat::try_data_ro).transpose()?;
        select_senders(n, flags.as_deref(), &mut s.sent, workers);
        drop(flags);
        s.sent.extend(n as u32..(n + g) as u32);
        if let Search::Spatial(b) = &inner.search {
            let nbins = b.grid.bin_count();
            let ghost_positions = positions_carried.filter(|_| g > 0).map(|c| field(offsets[c]));
            b.positions.sort(
                &b.grid.params(),
                nbins,
                &s.sent,
                ghost_positions,
                binned,
                &mut s.sort,
                workers,
            )?;
        }
        // Canonical order: by id within each bin (or overall), whatever the
        // senders' order in memory or their process.
        let (order, runs) = match &inner.search {
            Search::BruteForce => (&mut s.sent, None),
            Search::Spatial(_) => (&mut s.sort.order, Some(&s.sort.starts[..])),
        };
        if g > 0 {
            if !ids_gathered {
                self.sender_ids(&mut s.ids);
            }
            s.ids.truncate(n);
            s.ids.extend(ghosts.ids());
            order_by_id(order, runs, &s.ids, workers);
            let whole = [0, order.len() as i32];
            for w in runs.unwrap_or(&whole).windows(2) {
                let run = &order[w[0] as usize..w[1] as usize];
                if let Some(p) = run.windows(2).find(|p| s.ids[p[0] as usize] == s.ids[p[1] as usize]) {
                    return Err(self.invalid(format!(
                        "two of its messages come from sender id {} (a ghost's id is a sender's, or two ghosts')",
                        s.ids[p[0] as usize]
                    )));
                }
            }
        } else {
            match (inner.senders.population(), &inner.fixed_ids) {
                (Some(p), _) => p.with_ids(|ids, ascending| {
                    if !ascending {
                        order_by_id(order, runs, ids, workers)
                    }
                }),
                (None, Some(ids)) => order_by_id(order, runs, ids, workers),
                (None, None) => {}
            }
        }
        let order = &*order;
        for (c, &offset) in carried.iter().zip(offsets.iter().chain(std::iter::repeat(&0))) {
            c.gather(order, (g > 0).then(|| field(offset)), workers)?;
        }
        if let Search::Spatial(b) = &inner.search {
            b.starts.try_data_mut()?.copy_from_slice(&s.sort.starts);
            b.starts_count.record_build(s.sort.starts.len(), b.starts.set());
        }
        inner.count.record_build(s.sent.len(), &inner.set);
        s.built_at = Some(inner.senders.generation());
        s.ghosts_built = g;
        Ok((s.sent.len(), exchanging))
    }

    /// Sorts the senders in memory into the list's order (for a spatial
    /// list: by bin), every Dat on their set at once, so that agents near
    /// each other in space are near each other in memory: a loop over them
    /// then reads each bin's messages while they are still in cache
    /// (FLAME GPU's agent sorting). Senders that sent nothing follow, in
    /// their order. Ids move with their agents, and since messages are
    /// ordered by sender id within each bin, results are bitwise the same
    /// with or without sorting. The list stays valid; it needs a build
    /// before the next sort.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the senders are not dynamic
    /// ([`Set::dynamic`]), the list has not been built, or the senders
    /// changed since its last build; as [`Set::permute`].
    pub fn sort_senders(&self) -> Result<()> {
        self.sort_senders_on(&ScopedThreads::available())
    }

    /// As [`MessageList::sort_senders`], on `workers` (as
    /// [`MessageList::build_on`]).
    ///
    /// # Errors
    /// As [`MessageList::sort_senders`].
    pub fn sort_senders_on(&self, workers: &dyn Workers) -> Result<()> {
        let inner = &*self.0;
        let bad = |reason: &str| Error::InvalidMessages {
            list: inner.name.clone(),
            reason: reason.to_string(),
        };
        if !inner.senders.is_dynamic() {
            return Err(bad(&format!(
                "sorting the senders needs a dynamic set (`Set::dynamic`), and `{}` is fixed",
                inner.senders.name()
            )));
        }
        let mut guard = inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *guard;
        match s.built_at {
            None => return Err(bad("sorting the senders needs a build first (and one after each sort)")),
            Some(g) if g != inner.senders.generation() => {
                return Err(bad(
                    "the senders changed since the last build: build the list again first",
                ))
            }
            Some(_) => {}
        }
        // A build on a device left its order there.
        let listed = match &inner.search {
            Search::BruteForce => &mut s.sent,
            Search::Spatial(_) => &mut s.sort.order,
        };
        s.device.order_to_host(listed)?;
        let listed = &*listed;
        let n = inner.senders.total_size();
        s.permutation.clear();
        // Ghosts (indices past the senders) stay where they are.
        s.permutation.extend(listed.iter().filter(|&&e| (e as usize) < n));
        if s.permutation.len() < n {
            s.listed.clear();
            s.listed.resize(n, false);
            for &e in &s.permutation {
                s.listed[e as usize] = true;
            }
            s.permutation.extend((0..n as u32).filter(|&e| !s.listed[e as usize]));
        }
        inner.senders.permute_on(&s.permutation, workers)?;
        s.built_at = None;
        Ok(())
    }

    /// The message count that whole-Dat arguments of this list read.
    #[doc(hidden)]
    pub fn whole_count(&self) -> &WholeCount {
        &self.0.count
    }

    /// What `list(NEAR)` passes: the bins' offsets (read whole), the grid
    /// parameters, and the native view of both.
    ///
    /// # Errors
    /// [`Error::InvalidMessages`] if the list is not spatial.
    #[doc(hidden)]
    pub fn near_args(&self) -> Result<NearArgs<'_>> {
        match &self.0.search {
            Search::Spatial(b) => Ok(NearArgs {
                starts: &b.starts,
                starts_count: &b.starts_count,
                params: &b.params,
                grid: &b.grid,
                list: self,
            }),
            Search::BruteForce => Err(Error::InvalidMessages {
                list: self.0.name.clone(),
                reason: "`list(NEAR)` needs a spatial list; a brute-force list is read whole, `m(READ, list[..])`"
                    .to_string(),
            }),
        }
    }
}

/// The arguments of `list(NEAR)`.
#[doc(hidden)]
pub struct NearArgs<'a> {
    /// First message of each bin, and the end.
    pub starts: &'a Dat<i32>,
    /// The number of offsets (bins + 1; -1 before the first build).
    pub starts_count: &'a WholeCount,
    /// The grid's parameters.
    pub params: &'a Global<f64>,
    /// The grid.
    pub grid: &'a SpatialGrid,
    /// The list.
    pub list: &'a MessageList,
}

impl NearArgs<'_> {
    /// The native view of the bins.
    pub fn view(&self) -> SpatialView {
        // SAFETY: the loop borrows `starts` (a READ argument) while it runs,
        // and a built list's offsets cover every bin.
        unsafe { SpatialView::new(self.starts.host_ptr(), self.grid.params()) }
    }
}
