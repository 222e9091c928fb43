//! A spatial message build's counting sort and gathers on the device
//! (the entry points of `codegen/binning_c.rs`), over buffers already on
//! it: what lets a build skip the round trip of the senders' Dats through
//! the host. The launches are enqueued in order on the API's one queue
//! (stream), so each step sees the previous one's writes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use op2_core::{Coordinate, DeviceBuffer, Error, Result, ScalarType, SpatialGrid};

use super::api::{DeviceApi, UtilityArg};
use super::DeviceExecutor;
use crate::codegen::{binning_source, BINNING_ENTRIES, SCAN_THREADS};

/// The entry points' indices in [`BINNING_ENTRIES`].
const FILL_ZERO: usize = 0;
const COUNT: usize = 1;
const SCAN: usize = 2;
const SCATTER: usize = 3;
const CANONICAL: usize = 4;
const GATHER: usize = 5;

/// Threads per block of the one-thread-per-element entry points.
const THREADS: usize = 256;

/// The compiled binning programs of one device, by position type and dims.
pub struct BinningPrograms<U>(Mutex<HashMap<(ScalarType, usize), Arc<U>>>);

impl<U> Default for BinningPrograms<U> {
    fn default() -> Self {
        BinningPrograms(Mutex::new(HashMap::new()))
    }
}

/// The buffers of one binning of `n` senders into `nbins` bins.
pub struct BinBuffers<M> {
    /// Senders.
    pub n: usize,
    /// Bins.
    pub nbins: usize,
    /// Each sender's flag (`int`; null: all send).
    pub flags: M,
    /// The positions (`dims` coordinates per sender).
    pub positions: M,
    /// The grid's eight parameters (`double`).
    pub grid: M,
    /// The senders' ids (`long`; null: ordered by index).
    pub ids: M,
    /// Scratch: each sender's bin (`n` `uint`s).
    pub bins: M,
    /// Scratch: each bin's count (`nbins` `uint`s).
    pub counts: M,
    /// Scratch: each bin's next free place (`nbins` `uint`s).
    pub cursor: M,
    /// Out: each bin's first message, and the end (`nbins + 1` `int`s).
    pub starts: M,
    /// Out: the number of messages (one `int`).
    pub total: M,
    /// Out: the senders in message order (`n` `uint`s; the first `total`).
    pub order: M,
}

impl<A: DeviceApi> DeviceExecutor<A> {
    /// The binning program for positions of `position` with `dims`
    /// coordinates, compiled on first use.
    fn binning_program(&self, position: ScalarType, dims: usize) -> Result<Arc<A::Utility>> {
        let mut programs = self.binning.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = programs.get(&(position, dims)) {
            return Ok(p.clone());
        }
        let source = binning_source(A::LANGUAGE, position, dims);
        let name = format!("message_build_{}_{dims}d", position.c_name());
        let program = Arc::new(self.api().build_utility(&name, &source, &BINNING_ENTRIES)?);
        programs.insert((position, dims), program.clone());
        Ok(program)
    }

    /// Launches `entry` on `threads` threads (nothing for none).
    fn launch_over(&self, p: &A::Utility, entry: usize, threads: usize, args: &[UtilityArg<A::Mem>]) -> Result<()> {
        if threads == 0 {
            return Ok(());
        }
        let block = THREADS.min(self.api().info().max_block_size);
        self.api()
            .launch_utility(p, entry, threads.div_ceil(block), block, args)
    }

    /// Enqueues the counting sort of `b`: afterwards (once the queue has
    /// run) `b.starts`, `b.total` and `b.order` hold what the host build
    /// computes, bit for bit.
    ///
    /// # Errors
    /// [`Error::DeviceBuild`] if the program does not compile; the API's
    /// launch errors.
    pub fn enqueue_binning(&self, position: ScalarType, dims: usize, b: &BinBuffers<A::Mem>) -> Result<()> {
        use UtilityArg::{Long, Mem};
        if SCAN_THREADS > self.api().info().max_block_size {
            return Err(Error::InvalidOption {
                option: "device",
                reason: format!(
                    "`{}` runs at most {} threads per block; a message build needs {SCAN_THREADS}",
                    self.device_name(),
                    self.api().info().max_block_size
                ),
            });
        }
        let p = self.binning_program(position, dims)?;
        let (n, nbins) = (b.n as i64, b.nbins as i64);
        self.launch_over(&p, FILL_ZERO, b.nbins, &[Long(nbins), Mem(b.counts)])?;
        self.launch_over(&p, FILL_ZERO, b.nbins, &[Long(nbins), Mem(b.cursor)])?;
        let count = [
            Long(n),
            Mem(b.flags),
            Mem(b.positions),
            Mem(b.grid),
            Mem(b.bins),
            Mem(b.counts),
        ];
        self.launch_over(&p, COUNT, b.n, &count)?;
        let scan = [Long(nbins), Mem(b.counts), Mem(b.starts), Mem(b.total)];
        self.api().launch_utility(&p, SCAN, 1, SCAN_THREADS, &scan)?;
        let scatter = [Long(n), Mem(b.bins), Mem(b.starts), Mem(b.cursor), Mem(b.order)];
        self.launch_over(&p, SCATTER, b.n, &scatter)?;
        let canonical = [Long(nbins), Mem(b.starts), Mem(b.order), Mem(b.ids)];
        self.launch_over(&p, CANONICAL, b.nbins, &canonical)
    }

    /// Enqueues `dst[i] = src[order[i]]` for `n` elements of `words` 32-bit
    /// words each (a carried Dat's values in message order).
    ///
    /// # Errors
    /// As [`DeviceExecutor::enqueue_binning`].
    pub fn enqueue_gather(
        &self,
        (position, dims): (ScalarType, usize),
        n: usize,
        words: usize,
        order: A::Mem,
        src: A::Mem,
        dst: A::Mem,
    ) -> Result<()> {
        use UtilityArg::{Long, Mem};
        let p = self.binning_program(position, dims)?;
        let args = [Long(n as i64), Long(words as i64), Mem(order), Mem(src), Mem(dst)];
        self.launch_over(&p, GATHER, n * words, &args)
    }

    /// Bins `positions` (`dims` coordinates per sender, on the host) on
    /// the device as a build of a list on `grid` would, and returns the
    /// bins' starts and the senders in message order, with the positions
    /// gathered in that order: the device steps of a build, end to end
    /// (what the conformance tests compare with the host's build).
    ///
    /// # Errors
    /// As [`DeviceExecutor::enqueue_binning`]; transfer errors.
    #[allow(clippy::type_complexity)]
    pub fn bin_positions<T: Coordinate>(
        &self,
        positions: &[T],
        grid: &SpatialGrid,
        flags: Option<&[i32]>,
        ids: Option<&[i64]>,
    ) -> Result<(Vec<i32>, Vec<u32>, Vec<T>)> {
        let dims = grid.dims();
        let n = positions.len() / dims;
        let nbins = grid.bin_count();
        let api = self.api();
        let buffer = |name: &str, bytes: &[u8]| -> Result<Box<dyn DeviceBuffer>> {
            // Never empty: an API may refuse a buffer of no bytes.
            let b = api.new_buffer(name, bytes.len().max(8))?;
            b.upload(bytes)?;
            Ok(b)
        };
        let scratch = |name: &str, bytes: usize| api.new_buffer(name, bytes.max(8));
        let as_bytes = |v: &[T]| -> Vec<u8> {
            v.iter()
                .flat_map(|x| {
                    // SAFETY: a scalar is plain old data of its size.
                    unsafe { std::slice::from_raw_parts(x as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
                })
                .collect()
        };
        let pos = buffer("positions", &as_bytes(positions))?;
        let params = grid.params();
        let grid_buf = buffer("grid", bytemuck::cast_slice(&params))?;
        let flags_buf = flags.map(|f| buffer("flags", bytemuck::cast_slice(f))).transpose()?;
        let ids_buf = ids.map(|i| buffer("ids", bytemuck::cast_slice(i))).transpose()?;
        let (bins, counts, cursor) = (
            scratch("bins", 4 * n)?,
            scratch("counts", 4 * nbins)?,
            scratch("cursor", 4 * nbins)?,
        );
        let (starts, total, order) = (
            scratch("starts", 4 * (nbins + 1))?,
            scratch("total", 4)?,
            scratch("order", 4 * n)?,
        );
        let gathered = scratch("gathered", std::mem::size_of_val(positions))?;
        let mem = |b: &Option<Box<dyn DeviceBuffer>>| b.as_deref().map_or_else(|| api.null_mem(), |b| api.mem_of(b));
        let b = BinBuffers {
            n,
            nbins,
            flags: mem(&flags_buf),
            positions: api.mem_of(&*pos),
            grid: api.mem_of(&*grid_buf),
            ids: mem(&ids_buf),
            bins: api.mem_of(&*bins),
            counts: api.mem_of(&*counts),
            cursor: api.mem_of(&*cursor),
            starts: api.mem_of(&*starts),
            total: api.mem_of(&*total),
            order: api.mem_of(&*order),
        };
        self.enqueue_binning(T::TYPE, dims, &b)?;
        api.finish("message build")?;
        let mut count = [0i32; 1];
        total.download(bytemuck::cast_slice_mut(&mut count))?;
        let count = count[0] as usize;
        let words = dims * std::mem::size_of::<T>() / 4;
        self.enqueue_gather(
            (T::TYPE, dims),
            count,
            words,
            b.order,
            b.positions,
            api.mem_of(&*gathered),
        )?;
        api.finish("message build")?;
        let mut starts_host = vec![0i32; nbins + 1];
        starts.download(bytemuck::cast_slice_mut(&mut starts_host))?;
        let mut order_host = vec![0u32; count];
        order.download(bytemuck::cast_slice_mut(&mut order_host))?;
        let mut gathered_bytes = vec![0u8; count * dims * std::mem::size_of::<T>()];
        gathered.download(&mut gathered_bytes)?;
        let gathered_host = gathered_bytes
            .chunks_exact(std::mem::size_of::<T>())
            // SAFETY: the bytes of `T`s copied above; read unaligned.
            .map(|c| unsafe { std::ptr::read_unaligned(c.as_ptr() as *const T) })
            .collect();
        Ok((starts_host, order_host, gathered_host))
    }
}
