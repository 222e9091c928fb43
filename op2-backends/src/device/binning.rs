//! A spatial message build's counting sort on the device (the entry
//! points of `codegen/binning_c.rs`), over buffers already on it: what lets
//! a build skip the round trip of the senders' Dats through the host. The
//! launches are enqueued in order on the API's one queue (stream), so each
//! step sees the previous one's writes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use op2_core::{BinJob, DeviceBuffer, DeviceWork, Error, GatherJob, Result, Scalar, ScalarType};

use super::api::{DeviceApi, UtilityArg};
use super::DeviceExecutor;
use crate::codegen::{binning_source, BINNING_ENTRIES, SCAN_THREADS};

/// The entry points' indices in [`BINNING_ENTRIES`].
const FILL_ZERO: usize = 0;
const SCAN: usize = 1;
const COUNT: usize = 2;
const SCATTER: usize = 3;
const CANONICAL: usize = 4;
const LOOKUP: usize = 5;

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

    /// Enqueues the counting sort of `b`: afterwards (once the queue has
    /// run) `b.starts`, `b.total` and `b.order` hold what the host build
    /// computes, bit for bit.
    ///
    /// # Errors
    /// [`op2_core::Error::DeviceBuild`] if the program does not compile; the API's
    /// launch errors.
    pub fn enqueue_binning(&self, position: ScalarType, dims: usize, b: &BinBuffers<A::Mem>) -> Result<()> {
        use UtilityArg::{Long, Mem};
        self.check_scan_threads()?;
        let p = self.binning_program(position, dims)?;
        let (n, nbins) = (b.n as i64, b.nbins as i64);
        self.launch_over(&p, FILL_ZERO, b.nbins, &[Long(nbins), Mem(b.counts)])?;
        self.launch_over(&p, FILL_ZERO, b.nbins, &[Long(nbins), Mem(b.cursor)])?;
        let count = [
            Long(n),
            Long(nbins),
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

    /// Enqueues `out[e] = table[bin of e]` for `n` senders of `position`
    /// coordinates (`dims` each) in `nbins` bins; `mem` is the positions,
    /// the grid's parameters, the table and `out`, checked by the caller.
    ///
    /// # Errors
    /// As [`DeviceExecutor::enqueue_binning`].
    pub(super) fn enqueue_lookup(
        &self,
        position: ScalarType,
        dims: usize,
        n: usize,
        nbins: usize,
        mem: [A::Mem; 4],
    ) -> Result<()> {
        use UtilityArg::{Long, Mem};
        if n == 0 {
            return Ok(());
        }
        let p = self.binning_program(position, dims)?;
        let [positions, grid, table, out] = mem;
        let args = [
            Long(n as i64),
            Long(nbins as i64),
            Mem(positions),
            Mem(grid),
            Mem(table),
            Mem(out),
        ];
        self.launch_over(&p, LOOKUP, n, &args)
    }

    /// Bins `positions` (`dims` coordinates per sender, on the host) on
    /// the device as a build of a list on a grid of `bins` bins would (the
    /// grid as kernels receive it, `grid_params`), and returns the
    /// bins' starts and the senders in message order, with the positions
    /// gathered in that order: the device steps of a build, end to end,
    /// through [`DeviceWork`] (what the tests compare with the host's build).
    ///
    /// # Errors
    /// As [`DeviceWork::bin`]; transfer errors.
    #[allow(clippy::type_complexity)]
    pub fn bin_positions<T: Scalar>(
        &self,
        positions: &[T],
        (dims, bins, grid_params): (usize, usize, &[f64]),
        flags: Option<&[i32]>,
        ids: Option<&[i64]>,
    ) -> Result<(Vec<i32>, Vec<u32>, Vec<T>)> {
        // The kernels read `dims` values a sender, 8 grid values, and a flag
        // and an id a sender: anything shorter would be read past its end.
        let bad = |reason: String| Error::InvalidOption {
            option: "bin_positions",
            reason,
        };
        if !(dims == 2 || dims == 3) || positions.len() % dims != 0 {
            return Err(bad(format!(
                "{} position values in {dims}-D: positions are 2-D or 3-D, whole senders",
                positions.len()
            )));
        }
        let n = positions.len() / dims;
        if grid_params.len() != 8 {
            return Err(bad(format!("{} grid values; a grid has 8", grid_params.len())));
        }
        if let Some(len) = [flags.map(<[i32]>::len), ids.map(<[i64]>::len)]
            .into_iter()
            .flatten()
            .find(|&l| l != n)
        {
            return Err(bad(format!("{len} flags or ids for {n} senders")));
        }
        let buffer = |name: &str, bytes: &[u8]| -> Result<Box<dyn DeviceBuffer>> {
            // Never empty: an API may refuse a buffer of no bytes.
            let b = self.api().new_buffer(name, bytes.len().max(8))?;
            b.upload(bytes)?;
            Ok(b)
        };
        let scratch = |name: &str, bytes: usize| self.api().new_buffer(name, bytes.max(8));
        let pos = buffer("positions", scalar_bytes(positions))?;
        let grid_buf = buffer("grid", bytemuck::cast_slice(grid_params))?;
        let flags_buf = flags.map(|f| buffer("flags", bytemuck::cast_slice(f))).transpose()?;
        let ids_buf = ids.map(|i| buffer("ids", bytemuck::cast_slice(i))).transpose()?;
        let starts = scratch("starts", 4 * (bins + 1))?;
        let order = scratch("order", 4 * n)?;
        let gathered = scratch("gathered", std::mem::size_of_val(positions))?;
        let count = self.bin(&BinJob {
            position: T::TYPE,
            dims,
            senders: n,
            bins,
            flags: flags_buf.as_deref(),
            positions: &*pos,
            grid: &*grid_buf,
            ids: ids_buf.as_deref(),
            starts: &*starts,
            order: &*order,
        })?;
        self.gather(&GatherJob {
            n: count,
            words: dims * std::mem::size_of::<T>() / 4,
            order: &*order,
            src: &*pos,
            dst: &*gathered,
            dst_first: 0,
            tail: None,
        })?;
        self.api().finish("message build")?;
        let mut starts_host = vec![0i32; bins + 1];
        starts.download(bytemuck::cast_slice_mut(&mut starts_host))?;
        let mut order_host = vec![0u32; count];
        order.download(bytemuck::cast_slice_mut(&mut order_host))?;
        let mut gathered_host = vec![T::ZERO; count * dims];
        gathered.download(scalar_bytes_mut(&mut gathered_host))?;
        Ok((starts_host, order_host, gathered_host))
    }
}

/// The bytes of scalars.
fn scalar_bytes<T: Scalar>(v: &[T]) -> &[u8] {
    // SAFETY: scalars are plain old data without padding; u8 has no alignment.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// The bytes of scalars, to write.
fn scalar_bytes_mut<T: Scalar>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as `scalar_bytes`; every bit pattern is a valid scalar.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}
