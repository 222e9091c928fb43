//! Loop arguments, type-erased: `ArgSpec` is one argument of a parallel loop (its data,
//! access mode, and `ArgRoute`: direct, through a map or a ragged map, or a whole-Dat
//! read), and `ArgData` with the `DatHandle` and `GlobalHandle` traits lets code see a
//! Dat or Global without its element type. The runtime, validation, planning, reductions and backends all
//! work through these handles. `WholeCount` is the count a whole-Dat read covers
//! (a message list's, set at each build).

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::{Access, BorrowFlag, DeviceCell, Map, RaggedMap, ScalarType, Set};

/// What a loop argument refers to, type-erased: the runtime validates, borrows,
/// plans and times loops through these handles.
#[derive(Clone, Copy)]
pub enum ArgData<'a> {
    /// A Dat.
    Dat(&'a dyn DatHandle),
    /// A Global.
    Global(&'a dyn GlobalHandle),
}

impl ArgData<'_> {
    /// Name of the Dat or Global.
    pub fn name(&self) -> &str {
        match self {
            ArgData::Dat(d) => d.name(),
            ArgData::Global(g) => g.name(),
        }
    }

    /// Identity of the data (equal for clones of one handle).
    pub fn id(&self) -> usize {
        match self {
            ArgData::Dat(d) => d.id(),
            ArgData::Global(g) => g.id(),
        }
    }

    /// Values per element.
    pub fn dim(&self) -> usize {
        match self {
            ArgData::Dat(d) => d.dim(),
            ArgData::Global(g) => g.dim(),
        }
    }

    /// Element type.
    pub fn scalar(&self) -> ScalarType {
        match self {
            ArgData::Dat(d) => d.scalar(),
            ArgData::Global(g) => g.scalar(),
        }
    }

    /// The host borrow flag.
    pub fn borrow_flag(&self) -> &BorrowFlag {
        match self {
            ArgData::Dat(d) => d.borrow_flag(),
            ArgData::Global(g) => g.borrow_flag(),
        }
    }

    /// Pointer to the host values; dereferencing it needs the data's borrow.
    pub fn host_bytes(&self) -> *mut u8 {
        match self {
            ArgData::Dat(d) => d.host_bytes(),
            ArgData::Global(g) => g.host_bytes(),
        }
    }

    /// Size of the host values in bytes.
    pub fn byte_len(&self) -> usize {
        match self {
            ArgData::Dat(d) => d.byte_len(),
            ArgData::Global(g) => g.byte_len(),
        }
    }

    /// The device side.
    pub fn device(&self) -> &DeviceCell {
        match self {
            ArgData::Dat(d) => d.device(),
            ArgData::Global(g) => g.device(),
        }
    }
}

/// Which map entries an indirect argument uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapIndex {
    /// `d(ACCESS, m[i])`: entry `i` only.
    Entry(usize),
    /// `d(ACCESS, m)`: all entries.
    All,
}

/// The map part of an indirect argument.
#[derive(Clone, Copy)]
pub struct MapArg<'a> {
    /// The map.
    pub map: &'a Map,
    /// Which entries.
    pub index: MapIndex,
    /// Whether the loop body reads the table as 64-bit entries (a
    /// [`crate::LongMap`]); validation checks the table has that width.
    pub long_view: bool,
}

/// How a loop argument reaches its data: one of the argument forms `par_loop!`
/// accepts (the runtime's side of the macro's `ArgForm` and of codegen's
/// `ArgKind`).
#[derive(Clone, Copy)]
pub enum ArgRoute<'a> {
    /// `d(ACCESS)` on the iteration set, or a Global `g(ACCESS)`.
    Direct,
    /// `d(ACCESS, m[i])` or `d(ACCESS, m)`: through entries of a map.
    Map(MapArg<'a>),
    /// `d(ACCESS, r[..])`: through all targets of a ragged map (READ or INC).
    Ragged(&'a RaggedMap),
    /// `m(READ, list[..])` or `list(NEAR)`: a Dat read whole, the first
    /// `count` elements seen by every kernel call.
    Whole(WholeArg<'a>),
}

/// One argument of a parallel loop: the data, how it is accessed, and the
/// route it takes to the data.
#[derive(Clone, Copy)]
pub struct ArgSpec<'a> {
    /// The Dat or Global.
    pub data: ArgData<'a>,
    /// The access mode.
    pub access: Access,
    /// Directly, through a map or a ragged map, or whole.
    pub route: ArgRoute<'a>,
}

/// A Dat read whole, `m(READ, list[..])`: every kernel call sees the same
/// first `count` elements (a slice parameter), indexed by the kernel.
#[derive(Clone, Copy)]
pub struct WholeArg<'a> {
    /// The message list it belongs to.
    pub list: &'a str,
    /// The set the Dat must be on.
    pub set: &'a Set,
    /// How many elements the kernel sees (unset before the list's first build).
    pub count: &'a WholeCount,
    /// For a spatial list's bins (`list(NEAR)`), the parameter that reads
    /// them; `None` for a variable.
    pub near: Option<crate::NearKind>,
}

impl<'a> ArgSpec<'a> {
    /// A direct Dat or a Global.
    pub fn direct(data: ArgData<'a>, access: Access) -> ArgSpec<'a> {
        ArgSpec {
            data,
            access,
            route: ArgRoute::Direct,
        }
    }

    /// A Dat through entries of a map: `d(ACCESS, m[i])` or `d(ACCESS, m)`.
    pub fn through_map(data: ArgData<'a>, access: Access, map: &'a Map, index: MapIndex) -> ArgSpec<'a> {
        ArgSpec {
            data,
            access,
            route: ArgRoute::Map(MapArg {
                map,
                index,
                long_view: false,
            }),
        }
    }

    /// A Dat through all targets of a ragged map: `d(ACCESS, r[..])`.
    pub fn through_ragged(data: ArgData<'a>, access: Access, ragged: &'a RaggedMap) -> ArgSpec<'a> {
        ArgSpec {
            data,
            access,
            route: ArgRoute::Ragged(ragged),
        }
    }

    /// A Dat read whole: `m(READ, list[..])`, or a spatial list's bins.
    pub fn whole(data: ArgData<'a>, access: Access, whole: WholeArg<'a>) -> ArgSpec<'a> {
        ArgSpec {
            data,
            access,
            route: ArgRoute::Whole(whole),
        }
    }

    /// Whether the argument goes through a map (fixed or ragged).
    pub fn is_indirect(&self) -> bool {
        matches!(self.route, ArgRoute::Map(_) | ArgRoute::Ragged(_))
    }

    /// The name of the map the argument goes through, if any.
    pub fn map_name(&self) -> Option<&str> {
        match self.route {
            ArgRoute::Map(m) => Some(m.map.name()),
            ArgRoute::Ragged(r) => Some(r.name()),
            ArgRoute::Direct | ArgRoute::Whole(_) => None,
        }
    }

    /// Whether the argument is a Global.
    pub fn is_global(&self) -> bool {
        matches!(self.data, ArgData::Global(_))
    }
}

/// A Dat seen without its element type.
pub trait DatHandle: Send + Sync {
    /// The Dat's name.
    fn name(&self) -> &str;
    /// The set it lives on.
    fn set(&self) -> &Set;
    /// Values per element.
    fn dim(&self) -> usize;
    /// Element type.
    fn scalar(&self) -> ScalarType;
    /// Identity (equal for clones of one handle).
    fn id(&self) -> usize;
    /// The host borrow flag.
    fn borrow_flag(&self) -> &BorrowFlag;
    /// Pointer to the host values; dereferencing it needs this Dat's borrow.
    fn host_bytes(&self) -> *mut u8;
    /// Size of the host values in bytes.
    fn byte_len(&self) -> usize;
    /// The device side.
    fn device(&self) -> &DeviceCell;
    /// The halo's state (distributed runs).
    fn halo(&self) -> &crate::HaloState;
}

/// A Global seen without its element type, with what reductions need.
pub trait GlobalHandle: Send + Sync {
    /// The Global's name.
    fn name(&self) -> &str;
    /// Number of values.
    fn dim(&self) -> usize;
    /// Element type.
    fn scalar(&self) -> ScalarType;
    /// Identity (equal for clones of one handle).
    fn id(&self) -> usize;
    /// The host borrow flag.
    fn borrow_flag(&self) -> &BorrowFlag;
    /// Starts a partial result: zero for INC, the current value for MIN/MAX.
    /// `slot` holds at least `dim` values of the element type.
    fn init_partial(&self, access: Access, slot: &mut [u64]);
    /// Folds a partial result into the Global.
    fn combine_partial(&self, access: Access, slot: &[u64]);
    /// Pointer to the host values; dereferencing it needs this Global's borrow.
    fn host_bytes(&self) -> *mut u8;
    /// Size of the host values in bytes.
    fn byte_len(&self) -> usize;
    /// The device side.
    fn device(&self) -> &DeviceCell;
    /// Before a distributed reduction: returns the current value and, for
    /// INC, sets it to zero so that the loop leaves this rank's sum alone.
    fn begin_distributed_reduction(&self, access: Access) -> Vec<u8>;
    /// After it: combines across ranks with `all_reduce` and, for INC, adds
    /// the value saved by [`GlobalHandle::begin_distributed_reduction`].
    fn end_distributed_reduction(
        &self,
        access: Access,
        saved: &[u8],
        all_reduce: &mut dyn FnMut(&mut [u8]) -> crate::Result<()>,
    ) -> crate::Result<()>;
    /// Puts back bytes saved earlier (to drop what exec-halo elements added).
    fn restore(&self, saved: &[u8]);
    /// The ranks this Global is shared by ([`crate::Global::reduce_across`]).
    fn across_ranks(&self) -> Option<std::sync::Arc<dyn crate::AllReduce>> {
        None
    }
}

/// The number of values a whole-Dat argument (`d(READ, list[..])`) covers,
/// as loops and generated code read it: -1 until the list is first built.
/// Generated code reads the count through a pointer (and devices through a
/// one-entry buffer, uploaded again after every change).
pub struct WholeCount {
    count: AtomicI32,
    /// The generation of the Dat's set at the build: a permutation or a
    /// change of a dynamic message set since then scrambles the messages.
    generation: AtomicU64,
    device: DeviceCell,
    /// The Dats (by [`DatHandle::id`]) carried since the last build: the
    /// build did not fill them, so no loop may read them until the next.
    unfilled: Mutex<Vec<usize>>,
}

impl WholeCount {
    /// A count before the first build (-1).
    pub fn unbuilt() -> WholeCount {
        WholeCount {
            count: AtomicI32::new(-1),
            generation: AtomicU64::new(0),
            device: DeviceCell::default(),
            unfilled: Mutex::new(Vec::new()),
        }
    }

    /// Marks the count unbuilt again, as before the first build: a build
    /// that failed part way left the Dats in no order a loop may read.
    pub fn invalidate(&self) {
        self.count.store(-1, Ordering::Release);
    }

    /// Whether the last build filled the Dat with id `dat` (true for every
    /// Dat a list carried at its last build, and for its bins).
    pub fn filled(&self, dat: usize) -> bool {
        !self.unfilled.lock().unwrap_or_else(|p| p.into_inner()).contains(&dat)
    }

    /// Records that Dat `dat` (by [`DatHandle::id`]) was carried after the
    /// last build, which did not fill it: no loop may read it until the next.
    pub fn mark_unfilled(&self, dat: usize) {
        self.unfilled.lock().unwrap_or_else(|p| p.into_inner()).push(dat);
    }

    /// The number of elements, or `None` before the first build.
    pub fn get(&self) -> Option<usize> {
        usize::try_from(self.count.load(Ordering::Acquire)).ok()
    }

    /// Whether the Dats counted are as the build left them: their set has
    /// not been renumbered since.
    pub fn is_current(&self, set: &Set) -> bool {
        self.generation.load(Ordering::Acquire) == set.generation()
    }

    /// Records a build of `n` elements of `set`, which fills every Dat
    /// carried so far.
    pub fn record_build(&self, n: usize, set: &Set) {
        // A build fills every Dat carried so far.
        self.unfilled.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.generation.store(set.generation(), Ordering::Release);
        // Set sizes fit an i32 (MAX_SET_SIZE).
        self.count.store(n as i32, Ordering::Release);
        // The device copy is stale: the next loop uploads the new count
        // (into the buffer it has).
        let mut device = self.device.lock();
        if device.buffer.is_some() {
            device.state = crate::DeviceState::Host;
        }
    }

    /// The count, where generated code reads it (one `int`).
    pub fn as_ptr(&self) -> *const i32 {
        self.count.as_ptr()
    }

    /// The count as a one-entry table, for devices.
    pub fn table(&self) -> [i32; 1] {
        [self.count.load(Ordering::Acquire)]
    }

    /// The count's device copy.
    pub fn device(&self) -> &DeviceCell {
        &self.device
    }
}
