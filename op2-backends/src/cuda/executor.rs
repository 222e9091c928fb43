use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{CUdevice_attribute, CUdeviceptr, CUfunction, CUfunction_attribute, CUmodule};
use cudarc::driver::CudaContext;
use op2_core::{CodeCacheStats, DeviceBuffer, Error, Executor, LoopBody, ParLoop, ReductionLayout, Result};

use super::buffer::CudaBuffer;
use super::ptx::{compile_to_cubin, nvrtc_version, NVRTC_OPTIONS};
use super::{check_libraries, driver_error, unavailable};
use crate::code_cache::{default_dir, fnv1a, DiskCache};
use crate::codegen::{cuda_source, Checks, LoopShape};
use crate::device::{prepare_loop, DeviceApi, PartialsPool, PlanBuffersCache};
use crate::{Increments, IndirectWrites, RuntimeOptions};

/// Threads (elements) per block when the options do not say.
pub const DEFAULT_BLOCK_SIZE: usize = 256;

/// One compiled loop: its module and entry point in this context.
struct CudaLoop {
    module: CUmodule,
    function: CUfunction,
    ctx: Arc<CudaContext>,
}

impl Drop for CudaLoop {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: loaded once by `load_data` in this context, unloaded once.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

// SAFETY: module and function handles are context-wide driver objects, valid
// on any thread with the context current.
unsafe impl Send for CudaLoop {}
unsafe impl Sync for CudaLoop {}

/// The `cuda` backend: one GPU, through the driver API.
pub struct CudaExecutor {
    id: u64,
    ctx: Arc<CudaContext>,
    device: String,
    arch: String,
    /// NVRTC's version, for cache keys.
    nvrtc: String,
    block_size: usize,
    increments: Increments,
    checks: Checks,
    cache: Option<DiskCache>,
    loops: Mutex<HashMap<(LoopShape, IndirectWrites), Arc<CudaLoop>>>,
    plans: PlanBuffersCache,
    partials: PartialsPool,
    compiled: AtomicUsize,
    disk_hits: AtomicUsize,
    memory_hits: AtomicUsize,
    rebuilt: AtomicUsize,
}

fn next_context_id() -> u64 {
    // Distinct from OpenCL's ids: a buffer never looks like another backend's.
    static NEXT: AtomicU64 = AtomicU64::new(1 << 32);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl CudaExecutor {
    /// An executor on GPU `options.device` (an ordinal; else `OP2_CUDA_DEVICE`,
    /// else 0). Fails, without panicking, when the driver or NVRTC cannot be
    /// loaded or there is no such GPU.
    pub fn new(options: &RuntimeOptions) -> Result<CudaExecutor> {
        check_libraries()?;
        let wanted = options.device.clone().unwrap_or_else(|| "0".into());
        let ordinal: usize = wanted.trim().parse().map_err(|_| Error::InvalidOption {
            option: "device",
            reason: format!("`{wanted}` is not a GPU ordinal (0, 1, ...) for the cuda backend"),
        })?;
        let count =
            CudaContext::device_count().map_err(|e| unavailable(format!("the driver found no usable GPU: {e}")))?;
        if ordinal >= count.max(0) as usize {
            return Err(unavailable(format!(
                "GPU {ordinal} was asked for, but the driver sees {}",
                op2_core::plural(count.max(0) as usize, "GPU", "GPUs")
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| unavailable(format!("cannot open GPU {ordinal}: {e}")))?;
        let device = ctx.name().unwrap_or_else(|_| format!("GPU {ordinal}"));
        let fail = |call: &str, e: DriverError| driver_error(&device, call, e);
        let (major, minor) = ctx.compute_capability().map_err(|e| fail("cuDeviceGetAttribute", e))?;
        let max_threads = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(|e| fail("cuDeviceGetAttribute", e))?;
        let block_size = options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE);
        if block_size == 0 || block_size > max_threads as usize {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: format!(
                    "{block_size} elements per block: a block of `{device}` has 1 to {max_threads} threads"
                ),
            });
        }
        let increments = options.resolved_increments()?;
        let checks = options.resolved_checks()?;
        let dir: PathBuf = options.cache_dir.clone().unwrap_or_else(default_dir).join("cuda");
        Ok(CudaExecutor {
            id: next_context_id(),
            ctx,
            device,
            arch: format!("sm_{major}{minor}"),
            nvrtc: format!("{:?}", nvrtc_version()),
            block_size,
            increments,
            checks,
            // Without a writable cache directory loops are compiled every run.
            cache: DiskCache::new(dir).ok(),
            loops: Mutex::new(HashMap::new()),
            plans: PlanBuffersCache::default(),
            partials: PartialsPool::default(),
            compiled: AtomicUsize::new(0),
            disk_hits: AtomicUsize::new(0),
            memory_hits: AtomicUsize::new(0),
            rebuilt: AtomicUsize::new(0),
        })
    }

    /// The GPU's name.
    pub fn device_name(&self) -> &str {
        &self.device
    }

    /// The architecture loops are compiled for (`sm_90` on an H100).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    fn fail(&self, call: &str, e: DriverError) -> Error {
        driver_error(&self.device, call, e)
    }

    fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))
    }

    /// The machine code of a source: from the disk cache (keyed by the
    /// source, the architecture, NVRTC's version and options, and op2's
    /// version), else compiled and stored.
    fn cubin(&self, loop_name: &str, source: &str) -> Result<Vec<u8>> {
        let key = fnv1a(&[
            source.as_bytes(),
            self.arch.as_bytes(),
            self.nvrtc.as_bytes(),
            NVRTC_OPTIONS.join(" ").as_bytes(),
            b"cubin",
            env!("CARGO_PKG_VERSION").as_bytes(),
        ]);
        let path = self
            .cache
            .as_ref()
            .map(|c| c.dir().join(format!("op2_{loop_name}_{key:016x}.cubin")));
        if let Some(p) = &path {
            match DiskCache::read_sealed(p) {
                Some(cubin) => {
                    self.disk_hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(cubin);
                }
                None if p.exists() => {
                    self.rebuilt.fetch_add(1, Ordering::Relaxed);
                }
                None => {}
            }
        }
        let cubin = compile_to_cubin(loop_name, source, &self.arch)?;
        self.compiled.fetch_add(1, Ordering::Relaxed);
        if let Some(p) = &path {
            // A cache that cannot be written costs a recompile next run, nothing else.
            let _ = DiskCache::write_sealed(p, &cubin);
            let _ = DiskCache::write_atomically(&p.with_extension("cu"), source.as_bytes());
        }
        Ok(cubin)
    }

    fn function(&self, lp: &ParLoop<'_>, shape: LoopShape, writes: IndirectWrites) -> Result<Arc<CudaLoop>> {
        let mut loops = self.loops.lock().unwrap_or_else(|p| p.into_inner());
        let key = (shape, writes);
        if let Some(l) = loops.get(&key) {
            self.memory_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(l.clone());
        }
        let name = lp.kernel.name;
        let source = cuda_source(lp.kernel, &key.0, writes, self.checks);
        let cubin = self.cubin(name, &source)?;
        self.bind()?;
        // SAFETY: a whole cubin image; the context is current.
        let module = unsafe { result::module::load_data(cubin.as_ptr() as *const c_void) }
            .map_err(|e| self.fail(&format!("cuModuleLoadData for loop `{name}`"), e))?;
        // Owned from here: dropped (unloaded) on any error below.
        let mut l = CudaLoop {
            module,
            function: std::ptr::null_mut(),
            ctx: self.ctx.clone(),
        };
        // SAFETY: the module is loaded; `op2_loop` is its entry point.
        l.function = unsafe { result::module::get_function(module, CString::from(c"op2_loop")) }
            .map_err(|e| self.fail(&format!("cuModuleGetFunction(op2_loop) for loop `{name}`"), e))?;
        // A kernel that needs many registers may not launch with as many
        // threads per block as the device allows.
        // SAFETY: a live function handle.
        let max = unsafe {
            result::function::get_function_attribute(
                l.function,
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )
        }
        .map_err(|e| self.fail("cuFuncGetAttribute", e))?;
        if self.block_size > max as usize {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: format!(
                    "loop `{name}` can run at most {max} threads per block on `{}` (it needs many registers); \
                     {} elements per block were asked for",
                    self.device, self.block_size
                ),
            });
        }
        let l = Arc::new(l);
        loops.insert(key, l.clone());
        Ok(l)
    }

    /// How this loop's indirect writes are made safe.
    fn indirect_writes(&self, shape: &LoopShape) -> IndirectWrites {
        IndirectWrites::of(shape, self.increments)
    }
}

impl DeviceApi for CudaExecutor {
    type Mem = CUdeviceptr;

    fn context_id(&self) -> u64 {
        self.id
    }

    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>> {
        Ok(Box::new(CudaBuffer::new(
            &self.ctx,
            self.id,
            &self.device,
            name,
            bytes,
        )?))
    }

    fn mem_of(&self, buffer: &dyn DeviceBuffer) -> CUdeviceptr {
        buffer.as_any().downcast_ref::<CudaBuffer>().map_or(0, CudaBuffer::ptr)
    }

    fn null_mem(&self) -> CUdeviceptr {
        0
    }
}

impl Executor for CudaExecutor {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn is_device(&self) -> bool {
        true
    }

    fn execute(&self, lp: &ParLoop<'_>, _native_body: &LoopBody<'_>) -> Result<()> {
        let n = lp.range.len();
        if n == 0 {
            return Ok(());
        }
        let layout = ReductionLayout::new(lp.args);
        let shape = LoopShape::of(lp, &layout);
        let writes = self.indirect_writes(&shape);
        let cuda_loop = self.function(lp, shape, writes)?;
        let p = prepare_loop(self, lp, &layout, writes, self.block_size, &self.plans, &self.partials)?;
        let report = crate::device::CheckReport::new(self, self.checks)?;

        // Every parameter of `op2_loop` is 8 bytes: a device address or a long.
        let mut params: Vec<u64> = vec![
            p.units,
            0, // unit_offset, per launch
            lp.range.start as u64,
            self.block_size as u64,
            lp.range.end as u64,
            p.colours,
            p.ncolours,
            p.partials.mem(self),
            0, // partial_offset, per launch
            report.mem(self),
        ];
        for (d, m) in p.args.data.iter().zip(&p.args.maps) {
            params.push(*d);
            params.extend(m.iter().copied());
        }
        let shared = if layout.words_per_chunk() > 0 {
            self.block_size * std::mem::size_of::<u64>()
        } else {
            0
        };
        let grid_limit = i32::MAX as usize; // gridDim.x on every GPU since sm_30
        if let Some(l) = p.launches.iter().find(|l| l.count > grid_limit) {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: format!(
                    "loop `{}` would need {} blocks of {} elements in one launch, more than the {grid_limit} a grid can have",
                    lp.kernel.name, l.count, self.block_size
                ),
            });
        }
        self.bind()?;
        for l in p.launches.iter().filter(|l| l.count > 0) {
            params[1] = l.offset as u64;
            params[8] = l.offset as u64;
            let mut ptrs: Vec<*mut c_void> = params.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
            // SAFETY: the parameters match `op2_loop` as `cuda_source`
            // generates it (each 8 bytes, in order); every buffer is large
            // enough for the elements the validated loop touches; the values
            // are copied by the driver at launch.
            unsafe {
                result::launch_kernel(
                    cuda_loop.function,
                    (l.count as u32, 1, 1),
                    (self.block_size as u32, 1, 1),
                    shared as u32,
                    std::ptr::null_mut(),
                    &mut ptrs,
                )
            }
            .map_err(|e| {
                // Earlier colours may still run: let them finish before the error returns.
                let _ = result::ctx::synchronize();
                self.fail(&format!("cuLaunchKernel for loop `{}`", lp.kernel.name), e)
            })?;
        }
        result::ctx::synchronize().map_err(|e| self.fail(&format!("running loop `{}`", lp.kernel.name), e))?;
        report.result(lp.kernel.name, "cuda")?;
        p.partials.combine(&layout, lp.args)
    }

    fn code_cache_stats(&self) -> CodeCacheStats {
        CodeCacheStats {
            compiled: self.compiled.load(Ordering::Relaxed),
            disk_hits: self.disk_hits.load(Ordering::Relaxed),
            memory_hits: self.memory_hits.load(Ordering::Relaxed),
            rebuilt: self.rebuilt.load(Ordering::Relaxed),
        }
    }
}
