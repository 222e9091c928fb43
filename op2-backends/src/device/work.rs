//! The device work around loops that the core asks for through
//! [`DeviceWork`] (message builds, births and deaths, permutations): each
//! job checks its buffers' context and sizes, then launches the utility
//! programs (`codegen/binning_c.rs`, `codegen/reorder_c.rs`) on the API's
//! one queue. Scratch buffers live in the executor and grow by doubling,
//! so a warm build allocates nothing.

use std::sync::{Arc, Mutex};

use op2_core::{
    scratch_buffer, BinJob, DeviceBuffer, DeviceWork, Error, GatherJob, HaloJob, LookupJob, Result, SelectJob,
};

use super::api::{DeviceApi, UtilityArg};
use super::binning::BinBuffers;
use super::DeviceExecutor;
use crate::codegen::{reorder_source, REORDER_ENTRIES, SCAN_THREADS};

/// The entry points' indices in [`REORDER_ENTRIES`].
const FILL_ZERO: usize = 0;
const SCAN: usize = 1;
const SELECT_COUNT: usize = 2;
const SELECT_SCATTER: usize = 3;
const GATHER: usize = 4;
const FILL_IDS: usize = 5;
const MARK: usize = 6;
const HALO_PACK: usize = 7;
const HALO_UNPACK: usize = 8;
const IOTA: usize = 9;

/// Threads per block of the one-thread-per-element entry points.
const THREADS: usize = 256;

/// The executor's scratch for device work, kept between jobs.
#[derive(Default)]
pub struct WorkScratch {
    bins: Option<Box<dyn DeviceBuffer>>,
    counts: Option<Box<dyn DeviceBuffer>>,
    cursor: Option<Box<dyn DeviceBuffer>>,
    total: Option<Box<dyn DeviceBuffer>>,
    block_starts: Option<Box<dyn DeviceBuffer>>,
}

/// The reordering program of one device, compiled on first use.
pub struct ReorderProgram<U>(Mutex<Option<Arc<U>>>);

impl<U> Default for ReorderProgram<U> {
    fn default() -> Self {
        ReorderProgram(Mutex::new(None))
    }
}

impl<A: DeviceApi> DeviceExecutor<A> {
    /// Launches `entry` on `threads` threads (nothing for none).
    pub(super) fn launch_over(
        &self,
        p: &A::Utility,
        entry: usize,
        threads: usize,
        args: &[UtilityArg<A::Mem>],
    ) -> Result<()> {
        if threads == 0 {
            return Ok(());
        }
        let block = THREADS.min(self.api().info().max_block_size);
        self.api()
            .launch_utility(p, entry, threads.div_ceil(block), block, args)
    }

    /// Refuses a device whose blocks cannot hold the scans' threads.
    pub(super) fn check_scan_threads(&self) -> Result<()> {
        let max = self.api().info().max_block_size;
        if SCAN_THREADS <= max {
            return Ok(());
        }
        Err(Error::InvalidOption {
            option: "device",
            reason: format!(
                "`{}` runs at most {max} threads per block; builds and compactions on it need {SCAN_THREADS}",
                self.device_name(),
            ),
        })
    }

    fn reorder_program(&self) -> Result<Arc<A::Utility>> {
        let mut program = self.reorder.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = &*program {
            return Ok(p.clone());
        }
        let p = Arc::new(
            self.api()
                .build_utility("reorder", &reorder_source(A::LANGUAGE), &REORDER_ENTRIES)?,
        );
        *program = Some(p.clone());
        Ok(p)
    }

    /// The kernel argument for `b`, checked to be of this context and to
    /// hold at least `bytes` bytes (a job's bounds, so that no launch
    /// reaches past a buffer).
    fn mem(&self, job: &str, what: &str, b: &dyn DeviceBuffer, bytes: usize) -> Result<A::Mem> {
        let problem = if b.context_id() != self.api().context_id() {
            Some("is a buffer of another device context".to_string())
        } else if b.bytes() < bytes {
            Some(format!("holds {} bytes where {bytes} are needed", b.bytes()))
        } else {
            None
        };
        match problem {
            None => Ok(self.api().mem_of(b)),
            Some(p) => Err(Error::Device {
                backend: A::BACKEND,
                device: self.device_name().to_string(),
                call: job.to_string(),
                reason: format!("the {what} {p}"),
            }),
        }
    }

    /// As [`DeviceExecutor::mem`], the null buffer for `None`.
    fn mem_or_null(&self, job: &str, what: &str, b: Option<&dyn DeviceBuffer>, bytes: usize) -> Result<A::Mem> {
        b.map_or_else(|| Ok(self.api().null_mem()), |b| self.mem(job, what, b, bytes))
    }

    /// Enqueues a halo's pack or unpack (`entry`), its buffers checked.
    fn move_halo(&self, job: &HaloJob<'_>, entry: usize) -> Result<()> {
        use UtilityArg::{Long, Mem};
        const JOB: &str = "halo exchange";
        let record = 4 * job.comps * job.comp_words;
        let list = self.mem(JOB, "list", job.list, 4 * job.n)?;
        let records = self.mem(JOB, "records", job.records, record * job.n)?;
        // Rows need the elements reached; columns their whole stride.
        let reached = match entry {
            HALO_UNPACK => job.first + job.n,
            _ => 0,
        };
        let dat_bytes = match job.stride {
            0 => record * reached,
            s => record * s,
        };
        let dat = self.mem(JOB, "Dat", job.dat, dat_bytes)?;
        if job.n == 0 || record == 0 {
            return Ok(());
        }
        let p = self.reorder_program()?;
        let shape = [
            Long(job.n as i64),
            Long(job.comps as i64),
            Long(job.comp_words as i64),
            Long(job.stride as i64),
        ];
        let [n, comps, words, stride] = shape;
        match entry {
            HALO_PACK => {
                let args = [n, comps, words, stride, Mem(list), Mem(dat), Mem(records)];
                self.launch_over(&p, HALO_PACK, job.n * record / 4, &args)
            }
            _ => {
                let first = Long(job.first as i64);
                let args = [n, comps, words, stride, first, Mem(list), Mem(records), Mem(dat)];
                self.launch_over(&p, HALO_UNPACK, job.n * record / 4, &args)
            }
        }
    }

    /// Reads the one `int` a scan left in `total`: the download waits for
    /// the work queued before it, so no separate finish is needed.
    fn read_total(&self, job: &str, total: &dyn DeviceBuffer) -> Result<usize> {
        let mut count = [0i32; 1];
        total.download(bytemuck::cast_slice_mut(&mut count))?;
        usize::try_from(count[0]).map_err(|_| Error::Device {
            backend: A::BACKEND,
            device: self.device_name().to_string(),
            call: job.to_string(),
            reason: format!("the count came back negative ({})", count[0]),
        })
    }
}

impl<A: DeviceApi> DeviceWork for DeviceExecutor<A> {
    fn context_id(&self) -> u64 {
        self.api().context_id()
    }

    fn device_name(&self) -> &str {
        self.api().device_name()
    }

    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>> {
        self.api().new_buffer(name, bytes)
    }

    fn pinned_memory(&self, bytes: usize) -> Result<Option<Box<dyn op2_core::HostMemory>>> {
        self.api().pinned_memory(bytes)
    }

    fn finish(&self) -> Result<()> {
        self.api().finish("device work")
    }

    fn bin(&self, job: &BinJob<'_>) -> Result<usize> {
        const JOB: &str = "message build";
        let (n, nbins) = (job.senders, job.bins);
        let position_bytes = n * job.dims * job.position.size();
        let b = BinBuffers {
            n,
            nbins,
            flags: self.mem_or_null(JOB, "sent flags", job.flags, 4 * n)?,
            positions: self.mem(JOB, "positions", job.positions, position_bytes)?,
            grid: self.mem(JOB, "grid", job.grid, 8 * op2_core::GRID_PARAMS)?,
            ids: self.mem_or_null(JOB, "ids", job.ids, 8 * n)?,
            starts: self.mem(JOB, "bin starts", job.starts, 4 * (nbins + 1))?,
            order: self.mem(JOB, "message order", job.order, 4 * n)?,
            bins: self.api().null_mem(),
            counts: self.api().null_mem(),
            cursor: self.api().null_mem(),
            total: self.api().null_mem(),
        };
        let mut guard = self.work_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let WorkScratch {
            bins,
            counts,
            cursor,
            total,
            ..
        } = &mut *guard;
        let total = scratch_buffer(self, total, "build: total", 4)?;
        let b = BinBuffers {
            bins: self.api().mem_of(scratch_buffer(self, bins, "build: bins", 4 * n)?),
            counts: self
                .api()
                .mem_of(scratch_buffer(self, counts, "build: counts", 4 * nbins)?),
            cursor: self
                .api()
                .mem_of(scratch_buffer(self, cursor, "build: cursor", 4 * nbins)?),
            total: self.api().mem_of(total),
            ..b
        };
        self.enqueue_binning(job.position, job.dims, &b)?;
        self.read_total(JOB, total)
    }

    fn select(&self, job: &SelectJob<'_>) -> Result<usize> {
        let test = if job.when_set { FLAGS_ANY_SET } else { FLAGS_NONE_SET };
        self.select_by(job.n, job.flags, job.mask, test, job.out)
    }

    fn select_equal(&self, n: usize, flags: &dyn DeviceBuffer, value: i32, out: &dyn DeviceBuffer) -> Result<usize> {
        self.select_by(n, Some(flags), value, FLAGS_EQUAL, out)
    }

    fn gather(&self, job: &GatherJob<'_>) -> Result<()> {
        use UtilityArg::{Long, Mem};
        const JOB: &str = "gather";
        let bytes = 4 * job.words;
        let order = self.mem(JOB, "order", job.order, 4 * job.n)?;
        // The kernel skips indices past the source's elements.
        let src_n = job.src.bytes() / bytes.max(1);
        let src = self.mem(JOB, "source", job.src, 0)?;
        let dst = self.mem(JOB, "destination", job.dst, bytes * (job.dst_first + job.n))?;
        // Without a tail, no index reaches it.
        let (split, tail_n, tail) = match job.tail {
            Some(t) => (t.first, t.src.bytes() / bytes.max(1), self.mem(JOB, "tail", t.src, 0)?),
            None => (usize::MAX >> 1, 0, self.api().null_mem()),
        };
        if job.n == 0 || job.words == 0 {
            return Ok(());
        }
        let p = self.reorder_program()?;
        let args = [
            Long(job.n as i64),
            Long(job.words as i64),
            Mem(order),
            Long(src_n as i64),
            Mem(src),
            Long(split as i64),
            Long(tail_n as i64),
            Mem(tail),
            Mem(dst),
            Long(job.dst_first as i64),
        ];
        self.launch_over(&p, GATHER, job.n * job.words, &args)
    }

    fn copy_words(&self, src: &dyn DeviceBuffer, dst: &dyn DeviceBuffer, dst_first: usize, words: usize) -> Result<()> {
        use UtilityArg::{Long, Mem};
        const JOB: &str = "copy";
        let src = self.mem(JOB, "source", src, 4 * words)?;
        let dst = self.mem(JOB, "destination", dst, 4 * (dst_first + words))?;
        if words == 0 {
            return Ok(());
        }
        let p = self.reorder_program()?;
        // The gather with no order: word `i` of `src` to `dst_first + i`.
        let null = self.api().null_mem();
        let args = [
            Long(words as i64),
            Long(1),
            Mem(null),
            Long(words as i64),
            Mem(src),
            Long(i64::MAX >> 1),
            Long(0),
            Mem(null),
            Mem(dst),
            Long(dst_first as i64),
        ];
        self.launch_over(&p, GATHER, words, &args)
    }

    fn pack_halo(&self, job: &HaloJob<'_>) -> Result<()> {
        self.move_halo(job, HALO_PACK)
    }

    fn unpack_halo(&self, job: &HaloJob<'_>) -> Result<()> {
        self.move_halo(job, HALO_UNPACK)
    }

    fn lookup(&self, job: &LookupJob<'_>) -> Result<()> {
        const JOB: &str = "bin lookup";
        let n = job.senders;
        let position_bytes = n * job.dims * job.position.size();
        let positions = self.mem(JOB, "positions", job.positions, position_bytes)?;
        let grid = self.mem(JOB, "grid", job.grid, 8 * op2_core::GRID_PARAMS)?;
        let table = self.mem(JOB, "table", job.table, 4 * job.bins)?;
        let out = self.mem(JOB, "out", job.out, 4 * n)?;
        self.enqueue_lookup(job.position, job.dims, n, job.bins, [positions, grid, table, out])
    }

    fn mark(&self, flags: &dyn DeviceBuffer, n: usize, indices: &dyn DeviceBuffer, m: usize, value: i32) -> Result<()> {
        use UtilityArg::{Long, Mem};
        let flags = self.mem("mark", "flags", flags, 4 * n)?;
        let indices = self.mem("mark", "indices", indices, 4 * m)?;
        if m == 0 {
            return Ok(());
        }
        let p = self.reorder_program()?;
        let args = [
            Long(m as i64),
            Mem(indices),
            Long(n as i64),
            Long(value.into()),
            Mem(flags),
        ];
        self.launch_over(&p, MARK, m, &args)
    }

    fn fill_ids(&self, dst: &dyn DeviceBuffer, first: usize, n: usize, first_id: u64) -> Result<()> {
        use UtilityArg::{Long, Mem};
        let dst = self.mem("new ids", "ids", dst, 8 * (first + n))?;
        if n == 0 {
            return Ok(());
        }
        let p = self.reorder_program()?;
        let args = [Long(n as i64), Long(first as i64), Long(first_id as i64), Mem(dst)];
        self.launch_over(&p, FILL_IDS, n, &args)
    }

    fn fill_iota(&self, dst: &dyn DeviceBuffer, n: usize) -> Result<()> {
        use UtilityArg::{Long, Mem};
        let dst = self.mem("identity", "indices", dst, 4 * n)?;
        if n == 0 {
            return Ok(());
        }
        let p = self.reorder_program()?;
        self.launch_over(&p, IOTA, n, &[Long(n as i64), Mem(dst)])
    }

    fn fill_zero(&self, dst: &dyn DeviceBuffer, words: usize) -> Result<()> {
        use UtilityArg::{Long, Mem};
        let dst = self.mem("fill", "buffer", dst, 4 * words)?;
        if words == 0 {
            return Ok(());
        }
        let p = self.reorder_program()?;
        self.launch_over(&p, FILL_ZERO, words, &[Long(words as i64), Mem(dst)])
    }
}

/// How a selection tests an element's flag (the reorder program's
/// `op2_passes`): some bit of the mask set, none set, or equal to it.
const FLAGS_NONE_SET: i64 = 0;
const FLAGS_ANY_SET: i64 = 1;
const FLAGS_EQUAL: i64 = 2;

impl<A: DeviceApi> DeviceExecutor<A> {
    /// The selection of the elements `0..n` whose flag passes `test`
    /// against `mask` (`FLAGS_*`), their indices into `out`; their count.
    fn select_by(
        &self,
        n: usize,
        flags: Option<&dyn DeviceBuffer>,
        mask: i32,
        test: i64,
        out: &dyn DeviceBuffer,
    ) -> Result<usize> {
        use UtilityArg::{Long, Mem};
        const JOB: &str = "selection";
        self.check_scan_threads()?;
        let flags = self.mem_or_null(JOB, "flags", flags, 4 * n)?;
        let out = self.mem(JOB, "selected indices", out, 4 * n)?;
        if n == 0 {
            return Ok(0);
        }
        let p = self.reorder_program()?;
        let blocks = n.div_ceil(SCAN_THREADS);
        let mut guard = self.work_scratch.lock().unwrap_or_else(|p| p.into_inner());
        let WorkScratch {
            counts,
            block_starts,
            total,
            ..
        } = &mut *guard;
        let counts = self
            .api()
            .mem_of(scratch_buffer(self, counts, "selection: counts", 4 * blocks)?);
        let starts = self.api().mem_of(scratch_buffer(
            self,
            block_starts,
            "selection: starts",
            4 * (blocks + 1),
        )?);
        let total = scratch_buffer(self, total, "selection: total", 4)?;
        let test = [Long(n as i64), Mem(flags), Long(mask.into()), Long(test)];
        let api = self.api();
        api.launch_utility(
            &p,
            SELECT_COUNT,
            blocks,
            SCAN_THREADS,
            &[test[0], test[1], test[2], test[3], Mem(counts)],
        )?;
        let scan = [Long(blocks as i64), Mem(counts), Mem(starts), Mem(api.mem_of(total))];
        api.launch_utility(&p, SCAN, 1, SCAN_THREADS, &scan)?;
        let scatter = [test[0], test[1], test[2], test[3], Mem(starts), Mem(out)];
        api.launch_utility(&p, SELECT_SCATTER, blocks, SCAN_THREADS, &scatter)?;
        self.read_total(JOB, total)
    }
}
