//! The work around loops that a device backend does in its own memory
//! (message builds, compactions, permutations), so that the Dats of agents
//! stay on the device from loop to loop: the [`DeviceWork`] a backend
//! lends through [`Workers::device_work`](crate::Workers::device_work), and
//! how the core stages a Dat's device copy for it ([`stage`]).

use std::sync::MutexGuard;

use crate::{ArgData, BorrowFlag, DeviceBuffer, DeviceSlot, Error, LoopUse, Result, ScalarType};

/// A counting sort of senders into the bins of a spatial grid, on a
/// device: afterwards `starts` holds each bin's first message (and the
/// end), and `order` the senders in message order, by bin and inside each
/// bin by id (or index), as a host build orders them.
pub struct BinJob<'a> {
    /// The positions' element type.
    pub position: ScalarType,
    /// Coordinates per position (2 or 3).
    pub dims: usize,
    /// Senders.
    pub senders: usize,
    /// Bins.
    pub bins: usize,
    /// Each sender's flag (`i32`, 0: sends nothing); `None`: all send.
    pub flags: Option<&'a dyn DeviceBuffer>,
    /// The positions, `dims` per sender.
    pub positions: &'a dyn DeviceBuffer,
    /// The grid's parameters (`f64`, as `op2_agents::SpatialGrid::params` gives them).
    pub grid: &'a dyn DeviceBuffer,
    /// The senders' ids (`i64`); `None`: they ascend with the index.
    pub ids: Option<&'a dyn DeviceBuffer>,
    /// Out: `bins + 1` offsets (`i32`).
    pub starts: &'a dyn DeviceBuffer,
    /// Out: a sender index (`u32`) per message.
    pub order: &'a dyn DeviceBuffer,
}

/// A stable selection on a device: the indices `e` in `0..n`, ascending,
/// whose flag passes (all of them without flags).
pub struct SelectJob<'a> {
    /// Elements.
    pub n: usize,
    /// One `i32` flag per element; `None`: every element passes.
    pub flags: Option<&'a dyn DeviceBuffer>,
    /// The bits tested.
    pub mask: i32,
    /// Whether an element passes when some bit of `mask` is set (`true`)
    /// or when none is (`false`).
    pub when_set: bool,
    /// Out: the indices (`u32`) of the elements that pass.
    pub out: &'a dyn DeviceBuffer,
}

/// A lookup on a device: `out[e]` (`i32`) becomes `table[b]` for the bin
/// `b` of sender `e`'s position in a spatial grid (`-1` for a position in
/// no bin), e.g. the rank that owns the bin.
pub struct LookupJob<'a> {
    /// The positions' element type.
    pub position: ScalarType,
    /// Coordinates per position (2 or 3).
    pub dims: usize,
    /// Senders.
    pub senders: usize,
    /// Bins (the table's length).
    pub bins: usize,
    /// The positions, `dims` per sender.
    pub positions: &'a dyn DeviceBuffer,
    /// The grid's parameters (`f64`, as `op2_agents::SpatialGrid::params` gives them).
    pub grid: &'a dyn DeviceBuffer,
    /// One `i32` per bin.
    pub table: &'a dyn DeviceBuffer,
    /// Out: one `i32` per sender.
    pub out: &'a dyn DeviceBuffer,
}

/// A second source of a [`GatherJob`]: records appended after a source's
/// elements (e.g. ghost messages after the senders' own), so that a gather
/// reads both without first copying them into one buffer.
#[derive(Clone, Copy)]
pub struct GatherTail<'a> {
    /// The first index that is the tail's: index `first + k` is element
    /// `k` of `src`.
    pub first: usize,
    /// The tail's elements (as many words each as the job's).
    pub src: &'a dyn DeviceBuffer,
}

/// A gather on a device: element `dst_first + i` of `dst` becomes element
/// `order[i]` of `src` (or of the tail, past its `first`), for `i` in
/// `0..n`, elements of `words` 32-bit words.
pub struct GatherJob<'a> {
    /// Elements gathered.
    pub n: usize,
    /// 32-bit words per element.
    pub words: usize,
    /// Where each comes from (`u32` indices into `src`).
    pub order: &'a dyn DeviceBuffer,
    /// The source.
    pub src: &'a dyn DeviceBuffer,
    /// The destination (not `src`).
    pub dst: &'a dyn DeviceBuffer,
    /// The first element of `dst` written.
    pub dst_first: usize,
    /// Elements past `src`'s, from another buffer; `None`: `src` only.
    pub tail: Option<GatherTail<'a>>,
}

/// A halo's move between a Dat's device buffer (in rows or in columns)
/// and a buffer of whole records (element by element, as the host and MPI
/// hold them): [`DeviceWork::pack_halo`] gathers record `i` from element
/// `list[i]`; [`DeviceWork::unpack_halo`] gives element `first + i` record
/// `list[i]`.
pub struct HaloJob<'a> {
    /// Records moved.
    pub n: usize,
    /// `u32` indices (see above).
    pub list: &'a dyn DeviceBuffer,
    /// The Dat's device buffer.
    pub dat: &'a dyn DeviceBuffer,
    /// Values per element.
    pub comps: usize,
    /// 32-bit words per value.
    pub comp_words: usize,
    /// The Dat's column stride in elements (`0`: rows).
    pub stride: usize,
    /// The records.
    pub records: &'a dyn DeviceBuffer,
    /// The first element an unpack writes (`0` for a pack).
    pub first: usize,
}

/// What a device backend does in its own memory for the work around loops.
/// Launches run in order (one queue or stream); the calls that return a
/// count wait for it, the others only enqueue.
pub trait DeviceWork: Sync {
    /// The context whose buffers it works on (as
    /// [`DeviceBuffer::context_id`]).
    fn context_id(&self) -> u64;

    /// The device's name, for messages.
    fn device_name(&self) -> &str;

    /// A new buffer of `bytes` bytes for the carrier `name`.
    ///
    /// # Errors
    /// [`Error::DeviceOutOfMemory`] and the API's errors.
    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>>;

    /// Runs a [`BinJob`]; returns the number of messages.
    ///
    /// # Errors
    /// The API's compile, launch and transfer errors.
    fn bin(&self, job: &BinJob<'_>) -> Result<usize>;

    /// Runs a [`SelectJob`]; returns how many elements passed.
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn select(&self, job: &SelectJob<'_>) -> Result<usize>;

    /// Enqueues the selection of the elements `0..n` whose `i32` flag in
    /// `flags` equals `value` (an agent's state, say), in order: their
    /// indices (`u32`) go to `out`; returns how many, read back (four
    /// bytes: the one wait).
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn select_equal(&self, n: usize, flags: &dyn DeviceBuffer, value: i32, out: &dyn DeviceBuffer) -> Result<usize>;

    /// Enqueues a [`GatherJob`].
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn gather(&self, job: &GatherJob<'_>) -> Result<()>;

    /// Enqueues a copy of the first `words` 32-bit words of `src` into
    /// `dst` (not `src`), from its word `dst_first` on.
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn copy_words(&self, src: &dyn DeviceBuffer, dst: &dyn DeviceBuffer, dst_first: usize, words: usize) -> Result<()>;

    /// Waits for the work queued so far (before memory it wrote is handed
    /// to something outside the queue, such as MPI).
    ///
    /// # Errors
    /// As [`DeviceWork::bin`]: a failed launch is reported here.
    fn finish(&self) -> Result<()>;

    /// `bytes` bytes of page-locked host memory for copies to and from this
    /// device at the bus's full speed (`None` where the backend has none:
    /// callers use ordinary memory).
    ///
    /// # Errors
    /// As [`DeviceWork::new_buffer`].
    fn pinned_memory(&self, bytes: usize) -> Result<Option<Box<dyn crate::HostMemory>>> {
        let _ = bytes;
        Ok(None)
    }

    /// Enqueues a halo's pack: record `i` of `job.records` becomes element
    /// `job.list[i]` of the Dat ([`HaloJob`]).
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn pack_halo(&self, job: &HaloJob<'_>) -> Result<()>;

    /// Enqueues a halo's unpack: element `job.first + i` of the Dat becomes
    /// record `job.list[i]` of `job.records` ([`HaloJob`]).
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn unpack_halo(&self, job: &HaloJob<'_>) -> Result<()>;

    /// Enqueues a [`LookupJob`].
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn lookup(&self, job: &LookupJob<'_>) -> Result<()>;

    /// Enqueues `flags[indices[i]] = value` (`i32`) for `i` in `0..m`,
    /// skipping indices past `n` (the elements `flags` holds).
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn mark(&self, flags: &dyn DeviceBuffer, n: usize, indices: &dyn DeviceBuffer, m: usize, value: i32) -> Result<()>;

    /// Enqueues `dst[first + i] = first_id + i` (`i64`) for `i` in `0..n`:
    /// the ids of new agents.
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn fill_ids(&self, dst: &dyn DeviceBuffer, first: usize, n: usize, first_id: u64) -> Result<()>;

    /// Enqueues `dst[i] = i` (`u32`) for `i` in `0..n`.
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn fill_iota(&self, dst: &dyn DeviceBuffer, n: usize) -> Result<()>;

    /// Enqueues zeros into the first `words` 32-bit words of `dst`.
    ///
    /// # Errors
    /// As [`DeviceWork::bin`].
    fn fill_zero(&self, dst: &dyn DeviceBuffer, words: usize) -> Result<()>;
}

/// A read of all of a carrier's data.
pub const READ: LoopUse = LoopUse {
    needs_data: true,
    writes: false,
};

/// A write of a carrier's data that needs none of its old values.
pub const OVERWRITE: LoopUse = LoopUse {
    needs_data: false,
    writes: true,
};

/// A change of some of a carrier's data (the rest kept).
pub const UPDATE: LoopUse = LoopUse {
    needs_data: true,
    writes: true,
};

/// A carrier's device copy, held for device work: its host borrow (shared
/// to read, exclusive to write) and its device lock, both released when
/// dropped.
pub struct Staged<'a> {
    flag: &'a BorrowFlag,
    exclusive: bool,
    slot: MutexGuard<'a, DeviceSlot>,
}

impl Staged<'_> {
    /// The device buffer.
    pub fn buffer(&self) -> &dyn DeviceBuffer {
        match self.slot.buffer.as_deref() {
            Some(b) => b,
            None => unreachable!("stage() gives every staged carrier a buffer"),
        }
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        self.flag.release(self.exclusive);
    }
}

/// Brings `data` to `work`'s device for `use_`, as a loop argument would
/// be: borrowed (exclusively if the use writes), its device buffer made
/// (at least `bytes` bytes, and no smaller than its host data), the host's
/// newer data uploaded if the use needs it, and its state afterwards the
/// one a loop leaves (a write leaves the device copy the valid one).
///
/// # Errors
/// [`Error::HostBorrow`] naming the carrier if it is borrowed in the way;
/// transfer and allocation errors.
pub fn stage<'a>(work: &dyn DeviceWork, data: ArgData<'a>, use_: LoopUse, bytes: usize) -> Result<Staged<'a>> {
    let (flag, cell) = match data {
        ArgData::Dat(d) => (d.borrow_flag(), d.device()),
        ArgData::Global(g) => (g.borrow_flag(), g.device()),
    };
    flag.try_borrow(use_.writes).map_err(|how| Error::HostBorrow {
        name: data.name().to_string(),
        how,
    })?;
    // Released by `Staged`'s drop from here on, errors included.
    let mut staged = Staged {
        flag,
        exclusive: use_.writes,
        slot: cell.lock(),
    };
    // SAFETY: the borrow taken above covers the host data.
    let host = unsafe { std::slice::from_raw_parts_mut(data.host_bytes(), data.byte_len()) };
    let slot = &mut *staged.slot;
    let name = data.name();
    // Device work indexes element by element.
    slot.rows_needed = true;
    slot.prepare(work.context_id(), bytes.max(host.len()), host, use_, None, &|b| {
        work.new_buffer(name, b)
    })?;
    Ok(staged)
}

/// A scratch buffer of at least `bytes` bytes on `work`'s device, kept in
/// `cell` from call to call and grown by doubling (so a population that
/// grows step by step reallocates it O(log n) times). A buffer of another
/// context is replaced.
///
/// # Errors
/// As [`DeviceWork::new_buffer`].
pub fn scratch_buffer<'c>(
    work: &dyn DeviceWork,
    cell: &'c mut Option<Box<dyn DeviceBuffer>>,
    name: &str,
    bytes: usize,
) -> Result<&'c dyn DeviceBuffer> {
    let fits = |b: &dyn DeviceBuffer| b.context_id() == work.context_id() && b.bytes() >= bytes;
    if !cell.as_deref().is_some_and(fits) {
        let old = cell.as_deref().filter(|b| b.context_id() == work.context_id());
        let grown = old.map_or(0, |b| b.bytes().saturating_mul(2));
        // Never empty: an API may refuse a buffer of no bytes.
        *cell = Some(work.new_buffer(name, bytes.max(grown).max(8))?);
    }
    match cell.as_deref() {
        Some(b) => Ok(b),
        None => unreachable!("filled above"),
    }
}
