use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{CUdevice_attribute, CUdeviceptr, CUfunction, CUmodule, CUresult};
use cudarc::driver::CudaContext;
use op2_core::{CodeCacheStats, DeviceBuffer, Error, Executor, LoopBody, ParLoop, ReductionLayout, Result};

use super::buffer::CudaBuffer;
use super::ptx::{compile_to_ptx, nvrtc_version, NVRTC_OPTIONS};
use super::{check_libraries, unavailable};
use crate::code_cache::{default_dir, fnv1a, DiskCache};
use crate::codegen::{cuda_source, LoopShape};
use crate::device::{launches, prepare_args, DeviceApi, DevicePartials, PartialsPool, PlanBuffersCache};
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
    block_size: usize,
    increments: Increments,
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
        let wanted = options
            .device
            .clone()
            .or_else(|| std::env::var("OP2_CUDA_DEVICE").ok())
            .unwrap_or_else(|| "0".into());
        let ordinal: usize = wanted.trim().parse().map_err(|_| Error::InvalidOption {
            option: "device",
            reason: format!("`{wanted}` is not a GPU ordinal (0, 1, ...) for the cuda backend"),
        })?;
        let count =
            CudaContext::device_count().map_err(|e| unavailable(format!("the driver found no usable GPU: {e}")))?;
        if ordinal >= count.max(0) as usize {
            return Err(unavailable(format!(
                "GPU {ordinal} was asked for, but the driver sees {count}"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| unavailable(format!("cannot open GPU {ordinal}: {e}")))?;
        let device = ctx.name().unwrap_or_else(|_| format!("GPU {ordinal}"));
        let fail = |call: &str, e: DriverError| Error::Device {
            backend: "cuda",
            device: device.clone(),
            call: call.to_string(),
            reason: e.to_string(),
        };
        let (major, minor) = ctx.compute_capability().map_err(|e| fail("cuDeviceGetAttribute", e))?;
        let max_threads = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(|e| fail("cuDeviceGetAttribute", e))?;
        let block_size = options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE);
        if block_size > max_threads as usize {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: format!("{block_size} elements per block is more than the {max_threads} threads a block of `{device}` can have"),
            });
        }
        let increments = match options.increments {
            Some(i) => i,
            None => Increments::from_env()?,
        };
        let dir: PathBuf = options.cache_dir.clone().unwrap_or_else(default_dir).join("cuda");
        Ok(CudaExecutor {
            id: next_context_id(),
            ctx,
            device,
            arch: format!("sm_{major}{minor}"),
            block_size,
            increments,
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
        Error::Device {
            backend: "cuda",
            device: self.device.clone(),
            call: call.to_string(),
            reason: e.to_string(),
        }
    }

    fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))
    }

    /// The PTX of a source: from the disk cache (keyed by the source, the
    /// architecture, NVRTC's version and options, and op2's version), else
    /// compiled and stored.
    fn ptx(&self, loop_name: &str, source: &str) -> Result<String> {
        let version = format!("{:?}", nvrtc_version());
        let key = fnv1a(&[
            source.as_bytes(),
            self.arch.as_bytes(),
            version.as_bytes(),
            NVRTC_OPTIONS.join(" ").as_bytes(),
            env!("CARGO_PKG_VERSION").as_bytes(),
        ]);
        let path = self
            .cache
            .as_ref()
            .map(|c| c.dir().join(format!("op2_{loop_name}_{key:016x}.ptx")));
        if let Some(p) = &path {
            match DiskCache::read_sealed(p).map(String::from_utf8) {
                Some(Ok(ptx)) => {
                    self.disk_hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(ptx);
                }
                Some(Err(_)) => {
                    self.rebuilt.fetch_add(1, Ordering::Relaxed);
                }
                None if p.exists() => {
                    self.rebuilt.fetch_add(1, Ordering::Relaxed);
                }
                None => {}
            }
        }
        let ptx = compile_to_ptx(loop_name, source, &self.arch)?;
        self.compiled.fetch_add(1, Ordering::Relaxed);
        if let Some(p) = &path {
            // A cache that cannot be written costs a recompile next run, nothing else.
            let _ = DiskCache::write_sealed(p, ptx.as_bytes());
        }
        Ok(ptx)
    }

    fn function(&self, lp: &ParLoop<'_>, shape: LoopShape, writes: IndirectWrites) -> Result<Arc<CudaLoop>> {
        let mut loops = self.loops.lock().unwrap_or_else(|p| p.into_inner());
        let key = (shape, writes);
        if let Some(l) = loops.get(&key) {
            self.memory_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(l.clone());
        }
        let source = cuda_source(lp.kernel, &key.0, writes);
        let ptx = self.ptx(lp.kernel.name, &source)?;
        let image = CString::new(ptx).map_err(|_| Error::DeviceBuild {
            backend: "cuda",
            loop_name: lp.kernel.name.to_string(),
            device: self.device.clone(),
            log: "the PTX contains a NUL byte".into(),
            source_text: source.clone(),
        })?;
        self.bind()?;
        // SAFETY: a NUL-terminated PTX image; the context is current.
        let module = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }.map_err(|e| {
            let hint = if e.0 == CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION {
                format!(
                    " (NVRTC {:?} writes PTX newer than this driver reads: update the driver or use an older NVRTC)",
                    nvrtc_version()
                )
            } else {
                String::new()
            };
            Error::Device {
                backend: "cuda",
                device: self.device.clone(),
                call: format!("cuModuleLoadData for loop `{}`", lp.kernel.name),
                reason: format!("{e}{hint}"),
            }
        })?;
        // SAFETY: the module was just loaded; `op2_loop` is its entry point.
        let function = unsafe { result::module::get_function(module, CString::from(c"op2_loop")) };
        let l = Arc::new(CudaLoop {
            module,
            function: function.map_err(|e| self.fail("cuModuleGetFunction(op2_loop)", e))?,
            ctx: self.ctx.clone(),
        });
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
        let args = prepare_args(self, lp)?;
        let plan = if writes.needs_plan() {
            lp.plan(self.block_size)
        } else {
            None
        };
        let plan_buffers = plan.as_ref().map(|p| self.plans.get(self, p)).transpose()?;
        let launches = launches(plan.as_deref(), n, self.block_size);
        let total_units: usize = launches.iter().map(|l| l.count).sum();
        let partials = DevicePartials::new(self, &self.partials, &layout, lp.args, total_units)?;
        let pb = plan_buffers.as_deref();
        let ptr = |b: Option<&dyn DeviceBuffer>| b.map_or(0, |b| self.mem_of(b));

        // Every parameter of `op2_loop` is 8 bytes: a device address or a long.
        let mut params: Vec<u64> = vec![
            ptr(pb.map(|p| &*p.units)),
            0, // unit_offset, per launch
            lp.range.start as u64,
            self.block_size as u64,
            lp.range.end as u64,
            ptr(pb.map(|p| &*p.colours)),
            ptr(pb.map(|p| &*p.ncolours)),
            partials.mem(self),
            0, // partial_offset, per launch
        ];
        for (d, m) in args.data.iter().zip(&args.maps) {
            params.push(*d);
            params.extend(m.iter().copied());
        }
        let shared = if layout.words_per_chunk() > 0 {
            self.block_size * std::mem::size_of::<u64>()
        } else {
            0
        };
        self.bind()?;
        for l in launches.iter().filter(|l| l.count > 0) {
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
            .map_err(|e| self.fail(&format!("cuLaunchKernel for loop `{}`", lp.kernel.name), e))?;
        }
        result::ctx::synchronize().map_err(|e| self.fail(&format!("running loop `{}`", lp.kernel.name), e))?;
        partials.combine(&layout, lp.args)
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
