//! CUDA as a [`DeviceApi`]: one context on one GPU through the driver API;
//! loops compiled by NVRTC to a cubin for the GPU's architecture, cached on
//! disk, loaded as modules and launched with `cuLaunchKernel`.

use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{CUdevice_attribute, CUdeviceptr, CUfunction, CUfunction_attribute, CUmodule};
use cudarc::driver::CudaContext;
use op2_core::{DeviceBuffer, Error, KernelInfo, Result};

use super::buffer::CudaBuffer;
use super::ptx::{compile_to_cubin, nvrtc_version, NVRTC_OPTIONS};
use super::{check_libraries, driver_error, unavailable};
use crate::code_cache::{cache_key, default_dir, DiskCache};
use crate::codegen::{cuda_source, Checks, DeviceLanguage, LoopShape};
use crate::device::{next_context_id, Built, DeviceApi, DeviceInfo, LaunchArgs, Memory, UtilityArg};
use crate::{IndirectWrites, RuntimeOptions};

/// A module loaded in this context, unloaded when dropped.
struct Module {
    module: CUmodule,
    ctx: Arc<CudaContext>,
}

impl Drop for Module {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: loaded once by `load_data` in this context, unloaded once.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

/// One compiled loop: its module and entry point in this context.
pub struct CudaProgram {
    function: CUfunction,
    _module: Module,
}

/// A utility program: its module and entry points in this context.
pub struct CudaUtility {
    functions: Vec<CUfunction>,
    _module: Module,
}

// SAFETY: module and function handles are context-wide driver objects, valid
// on any thread with the context current.
unsafe impl Send for CudaProgram {}
// SAFETY: as above.
unsafe impl Sync for CudaProgram {}
// SAFETY: as above.
unsafe impl Send for CudaUtility {}
// SAFETY: as above.
unsafe impl Sync for CudaUtility {}

/// One GPU and its context.
pub struct Cuda {
    info: DeviceInfo,
    ctx: Arc<CudaContext>,
    arch: String,
    /// NVRTC's version, for cache keys.
    nvrtc: String,
    cache: Option<DiskCache>,
}

impl Cuda {
    /// A context on GPU `options.device` (an ordinal; a [`Runtime`](crate::Runtime)
    /// fills it from `OP2_CUDA_DEVICE`), else the node rank's modulo the
    /// GPUs (the first GPU for one process). Fails, without panicking, when the driver or NVRTC cannot be
    /// loaded or there is no such GPU.
    pub fn open(options: &RuntimeOptions) -> Result<Cuda> {
        check_libraries()?;
        let count =
            CudaContext::device_count().map_err(|e| unavailable(format!("the driver found no usable GPU: {e}")))?;
        // Without a choice, each rank of a node its own GPU.
        let wanted = options
            .device
            .clone()
            .unwrap_or_else(|| op2_core::default_device_index(options.node_rank, count.max(0) as usize).to_string());
        let ordinal: usize = wanted.trim().parse().map_err(|_| Error::InvalidOption {
            option: "device",
            reason: format!("`{wanted}` is not a GPU ordinal (0, 1, ...) for the cuda backend"),
        })?;
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
        let dir: PathBuf = options.cache_dir.clone().unwrap_or_else(default_dir).join("cuda");
        Ok(Cuda {
            info: DeviceInfo {
                name: device,
                context_id: next_context_id(),
                max_block_size: max_threads.max(0) as usize,
                max_blocks_per_launch: i32::MAX as usize, // gridDim.x on every GPU since sm_30
                missing_64_bit_atomics: None,
                prefers_columns: true,
            },
            ctx,
            arch: format!("sm_{major}{minor}"),
            nvrtc: format!("{:?}", nvrtc_version()),
            // Without a writable cache directory loops are compiled every run.
            cache: DiskCache::new(dir).ok(),
        })
    }

    /// The architecture loops are compiled for (`sm_90` on an H100).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    fn fail(&self, call: &str, e: DriverError) -> Error {
        driver_error(&self.info.name, call, e)
    }

    fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))
    }

    /// `source` compiled (or found in the cache) and loaded as a module.
    fn load(&self, name: &str, source: &str) -> Result<(Module, Built)> {
        let (cubin, built) = self.cubin(name, source)?;
        self.bind()?;
        // SAFETY: a whole cubin image; the context is current.
        let module = unsafe { result::module::load_data(cubin.as_ptr() as *const c_void) }
            .map_err(|e| self.fail(&format!("cuModuleLoadData for `{name}`"), e))?;
        Ok((
            Module {
                module,
                ctx: self.ctx.clone(),
            },
            built,
        ))
    }

    /// The machine code of a source: from the disk cache (keyed by the
    /// source, the architecture, NVRTC's version and options, and op2's
    /// version), else compiled and stored.
    fn cubin(&self, loop_name: &str, source: &str) -> Result<(Vec<u8>, Built)> {
        let key = cache_key(&[
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
        let mut built = Built::Compiled;
        if let Some(p) = &path {
            match DiskCache::read_sealed(p) {
                Some(cubin) => return Ok((cubin, Built::FromDisk)),
                None if p.exists() => built = Built::Rebuilt,
                None => {}
            }
        }
        let cubin = compile_to_cubin(loop_name, source, &self.arch)?;
        if let Some(p) = &path {
            // A cache that cannot be written costs a recompile next run, nothing else.
            let _ = DiskCache::write_sealed(p, &cubin);
            let _ = DiskCache::write_atomically(&p.with_extension("cu"), source.as_bytes());
        }
        Ok((cubin, built))
    }
}

impl DeviceApi for Cuda {
    const BACKEND: &'static str = "cuda";
    const BLOCK: &'static str = "block";
    const THREADS: &'static str = "threads";
    const LANGUAGE: DeviceLanguage = DeviceLanguage::Cuda;
    type Mem = CUdeviceptr;
    type Program = CudaProgram;
    type Utility = CudaUtility;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn source(kernel: &KernelInfo, shape: &LoopShape, writes: IndirectWrites, checks: Checks) -> String {
        cuda_source(kernel, shape, writes, checks)
    }

    fn build(&self, name: &str, source: &str) -> Result<(CudaProgram, Built)> {
        let (module, built) = self.load(name, source)?;
        // SAFETY: the module is loaded; `op2_loop` is its entry point.
        let function = unsafe { result::module::get_function(module.module, CString::from(c"op2_loop")) }
            .map_err(|e| self.fail(&format!("cuModuleGetFunction(op2_loop) for loop `{name}`"), e))?;
        Ok((
            CudaProgram {
                function,
                _module: module,
            },
            built,
        ))
    }

    fn program_max_block_size(&self, program: &CudaProgram) -> Result<usize> {
        // SAFETY: a live function handle.
        let max = unsafe {
            result::function::get_function_attribute(
                program.function,
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )
        }
        .map_err(|e| self.fail("cuFuncGetAttribute", e))?;
        Ok(max.max(0) as usize)
    }

    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>> {
        Ok(Box::new(CudaBuffer::new(&self.ctx, &self.info, name, bytes)?))
    }

    fn pinned_memory(&self, bytes: usize) -> Result<Option<Box<dyn op2_core::HostMemory>>> {
        let pinned = super::buffer::CudaPinned::new(&self.ctx, &self.info, bytes)?;
        Ok(Some(Box::new(crate::device::Pinned(pinned))))
    }

    fn mem_of(&self, buffer: &dyn DeviceBuffer) -> CUdeviceptr {
        buffer
            .as_any()
            .downcast_ref::<Memory<CudaBuffer>>()
            .map_or(0, |m| m.raw().ptr())
    }

    fn null_mem(&self) -> CUdeviceptr {
        0
    }

    fn launch(&self, program: &CudaProgram, name: &str, a: &LaunchArgs<'_, CUdeviceptr>) -> Result<()> {
        op2_core::device_counts::count_launch();
        // Every parameter of `op2_loop` is 8 bytes: a device address or a long.
        let mut params: Vec<u64> = vec![
            a.units,
            a.unit_offset as u64,
            a.start as u64,
            a.block_size as u64,
            a.end as u64,
            a.colours,
            a.ncolours,
            a.partials,
            a.partial_offset as u64,
            a.report,
        ];
        params.extend(a.elems);
        for ((d, stride), m) in a.data.iter().zip(a.strides).zip(a.maps) {
            params.push(*d);
            params.extend(stride.map(|s| s as u64));
            params.extend(m.iter().flatten().copied());
        }
        // Block-shared scratch for the reduction tree, only where there is one.
        let shared = if a.reduces {
            a.block_size * std::mem::size_of::<u64>()
        } else {
            0
        };
        let mut ptrs: Vec<*mut c_void> = params.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
        self.bind()?;
        // SAFETY: the parameters match `op2_loop` as `cuda_source` generates
        // it (each 8 bytes, in order); every buffer is large enough for the
        // elements the validated loop touches; the values are copied by the
        // driver at launch.
        unsafe {
            result::launch_kernel(
                program.function,
                (a.blocks as u32, 1, 1),
                (a.block_size as u32, 1, 1),
                shared as u32,
                std::ptr::null_mut(),
                &mut ptrs,
            )
        }
        .map_err(|e| self.fail(&format!("cuLaunchKernel for loop `{name}`"), e))
    }

    fn build_utility(&self, name: &str, source: &str, entries: &[&str]) -> Result<CudaUtility> {
        let (module, _) = self.load(name, source)?;
        let functions = entries
            .iter()
            .map(|e| {
                // A name with a NUL (none of op2's) becomes "", which the driver refuses.
                let c_name = CString::new(*e).unwrap_or_default();
                // SAFETY: the module is loaded.
                unsafe { result::module::get_function(module.module, c_name) }
                    .map_err(|err| self.fail(&format!("cuModuleGetFunction({e}) for `{name}`"), err))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(CudaUtility {
            functions,
            _module: module,
        })
    }

    fn launch_utility(
        &self,
        utility: &CudaUtility,
        entry: usize,
        blocks: usize,
        block_size: usize,
        args: &[UtilityArg<CUdeviceptr>],
    ) -> Result<()> {
        op2_core::device_counts::count_launch();
        // Every parameter is 8 bytes: a device address or a long.
        let mut params: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                UtilityArg::Mem(m) => m,
                UtilityArg::Long(v) => v as u64,
            })
            .collect();
        let mut ptrs: Vec<*mut c_void> = params.iter_mut().map(|p| p as *mut u64 as *mut c_void).collect();
        self.bind()?;
        // SAFETY: the callers pass the entry point's parameters in order
        // (`binning_source`), buffers large enough for the threads launched.
        unsafe {
            result::launch_kernel(
                utility.functions[entry],
                (blocks as u32, 1, 1),
                (block_size as u32, 1, 1),
                0,
                std::ptr::null_mut(),
                &mut ptrs,
            )
        }
        .map_err(|e| self.fail("cuLaunchKernel for a message build", e))
    }

    fn finish(&self, name: &str) -> Result<()> {
        op2_core::device_counts::count_wait();
        // Synchronizes the calling thread's current context: this one's,
        // not another runtime's (another GPU) last bound on this thread.
        self.bind()?;
        result::ctx::synchronize().map_err(|e| self.fail(&format!("running loop `{name}`"), e))
    }
}
