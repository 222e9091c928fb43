//! OpenCL as a [`DeviceApi`]: one context and in-order queue on one device,
//! programs built from source per loop shape, launches by `clEnqueueNDRangeKernel`.

use std::sync::{Arc, Mutex};

use op2_core::{DeviceBuffer, Error, KernelInfo, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_CPU};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::program::Program;
use opencl3::types::{cl_long, cl_mem};

use super::buffer::{null_mem, ClBuffer};
use super::cl_error;
use crate::codegen::{opencl_source, Checks, DeviceLanguage, LoopShape};
use crate::device::{next_context_id, Built, DeviceApi, DeviceInfo, LaunchArgs, Memory, UtilityArg};
use crate::IndirectWrites;

/// Build options: single precision divide and sqrt correctly rounded, as on
/// the host (double precision always is).
const BUILD_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

/// The OpenCL extension 64-bit atomics need.
const INT64_ATOMICS: &str = "cl_khr_int64_base_atomics";

/// One built loop: its program and entry point.
pub struct ClProgram {
    _program: Program,
    /// Kernel arguments are state of the kernel object: one launch at a time.
    kernel: Mutex<Kernel>,
}

// SAFETY: OpenCL programs are thread-safe handles; the kernel, whose
// arguments are state, is behind a mutex.
unsafe impl Send for ClProgram {}
// SAFETY: as above.
unsafe impl Sync for ClProgram {}

/// A utility program and its entry points.
pub struct ClUtility {
    _program: Program,
    kernels: Vec<Mutex<Kernel>>,
}

// SAFETY: as `ClProgram`.
unsafe impl Send for ClUtility {}
// SAFETY: as above.
unsafe impl Sync for ClUtility {}

/// One OpenCL device, its context and queue.
pub struct OpenCl {
    info: DeviceInfo,
    context: Context,
    queue: Arc<CommandQueue>,
}

// SAFETY: OpenCL contexts and queues are thread-safe handles (OpenCL 1.2 section A.2).
unsafe impl Send for OpenCl {}
// SAFETY: as above.
unsafe impl Sync for OpenCl {}

impl OpenCl {
    /// A context and queue on `device` (named `name`).
    pub fn open(device: &Device, name: String) -> Result<OpenCl> {
        let max_group = device
            .max_work_group_size()
            .map_err(|e| cl_error(&name, "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)", e))?;
        let int64_atomics = device.extensions().is_ok_and(|x| x.contains(INT64_ATOMICS));
        let cpu = device.dev_type().is_ok_and(|t| t & CL_DEVICE_TYPE_CPU != 0);
        let missing_64_bit_atomics =
            (!int64_atomics).then(|| format!("no 64-bit atomics (the {INT64_ATOMICS} extension)"));
        let context = Context::from_device(device).map_err(|e| cl_error(&name, "clCreateContext", e))?;
        let queue = CommandQueue::create_default_with_properties(&context, 0, 0)
            .map_err(|e| cl_error(&name, "clCreateCommandQueue", e))?;
        Ok(OpenCl {
            info: DeviceInfo {
                name,
                context_id: next_context_id(),
                max_block_size: max_group,
                // The global work size is a size_t: blocks times their size.
                max_blocks_per_launch: usize::MAX,
                missing_64_bit_atomics,
                prefers_columns: !cpu,
            },
            context,
            queue: Arc::new(queue),
        })
    }

    fn compile(&self, name: &str, source: &str) -> Result<Program> {
        Program::create_and_build_from_source(&self.context, source, BUILD_OPTIONS).map_err(|log| Error::DeviceBuild {
            backend: "opencl",
            loop_name: name.to_string(),
            device: self.info.name.clone(),
            log,
            source_text: source.to_string(),
        })
    }

    /// A buffer of this context, as its concrete type.
    pub fn new_cl_buffer(&self, name: &str, bytes: usize) -> Result<Memory<ClBuffer>> {
        ClBuffer::new(&self.context, &self.queue, &self.info, name, bytes)
    }
}

impl DeviceApi for OpenCl {
    const BACKEND: &'static str = "opencl";
    const BLOCK: &'static str = "work-group";
    const THREADS: &'static str = "work-items";
    const LANGUAGE: DeviceLanguage = DeviceLanguage::OpenCl;
    type Mem = cl_mem;
    type Program = ClProgram;
    type Utility = ClUtility;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn source(kernel: &KernelInfo, shape: &LoopShape, writes: IndirectWrites, checks: Checks) -> String {
        opencl_source(kernel, shape, writes, checks)
    }

    fn build(&self, loop_name: &str, source: &str) -> Result<(ClProgram, Built)> {
        let program = self.compile(loop_name, source)?;
        let kernel =
            Kernel::create(&program, "op2_loop").map_err(|e| cl_error(&self.info.name, "clCreateKernel", e))?;
        let program = ClProgram {
            _program: program,
            kernel: Mutex::new(kernel),
        };
        Ok((program, Built::Compiled))
    }

    fn program_max_block_size(&self, program: &ClProgram) -> Result<usize> {
        let kernel = program.kernel.lock().unwrap_or_else(|p| p.into_inner());
        kernel.get_work_group_size(self.context.default_device()).map_err(|e| {
            cl_error(
                &self.info.name,
                "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)",
                e,
            )
        })
    }

    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>> {
        Ok(Box::new(self.new_cl_buffer(name, bytes)?))
    }

    fn pinned_memory(&self, bytes: usize) -> Result<Option<Box<dyn op2_core::HostMemory>>> {
        let pinned = super::buffer::ClPinned::new(&self.context, &self.queue, &self.info, bytes)?;
        Ok(Some(Box::new(crate::device::Pinned(pinned))))
    }

    fn mem_of(&self, buffer: &dyn DeviceBuffer) -> cl_mem {
        buffer
            .as_any()
            .downcast_ref::<Memory<ClBuffer>>()
            .map_or_else(null_mem, |m| m.raw().mem())
    }

    fn null_mem(&self) -> cl_mem {
        null_mem()
    }

    fn launch(&self, program: &ClProgram, _loop_name: &str, a: &LaunchArgs<'_, cl_mem>) -> Result<()> {
        op2_core::device_counts::count_launch();
        let kernel = program.kernel.lock().unwrap_or_else(|p| p.into_inner());
        let mut exec = ExecuteKernel::new(&kernel);
        // SAFETY: the arguments match `op2_loop`'s parameters as
        // `opencl_source` generates them, and every buffer is large enough
        // for the elements the validated loop touches.
        unsafe {
            exec.set_arg(&a.units)
                .set_arg(&(a.unit_offset as cl_long))
                .set_arg(&(a.start as cl_long))
                .set_arg(&(a.block_size as cl_long))
                .set_arg(&(a.end as cl_long))
                .set_arg(&a.colours)
                .set_arg(&a.ncolours)
                .set_arg(&a.partials)
                .set_arg(&(a.partial_offset as cl_long))
                .set_arg(&a.report);
            if let Some(elems) = &a.elems {
                exec.set_arg(elems);
            }
            // The generated signature always has the reduction scratch,
            // and OpenCL has no empty local arguments.
            exec.set_arg_local_buffer(a.block_size * std::mem::size_of::<u64>());
            for ((m, stride), maps) in a.data.iter().zip(a.strides).zip(a.maps) {
                exec.set_arg(m);
                if let Some(stride) = stride {
                    exec.set_arg(&(*stride as cl_long));
                }
                for map in maps.iter().flatten() {
                    exec.set_arg(map);
                }
            }
            exec.set_global_work_size(a.blocks * a.block_size)
                .set_local_work_size(a.block_size)
                .enqueue_nd_range(&self.queue)
                .map_err(|e| cl_error(&self.info.name, "clEnqueueNDRangeKernel", e))?;
        }
        Ok(())
    }

    fn build_utility(&self, name: &str, source: &str, entries: &[&str]) -> Result<ClUtility> {
        let program = self.compile(name, source)?;
        let kernels = entries
            .iter()
            .map(|e| {
                Kernel::create(&program, e)
                    .map(Mutex::new)
                    .map_err(|err| cl_error(&self.info.name, &format!("clCreateKernel({e})"), err))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ClUtility {
            _program: program,
            kernels,
        })
    }

    fn launch_utility(
        &self,
        utility: &ClUtility,
        entry: usize,
        blocks: usize,
        block_size: usize,
        args: &[UtilityArg<cl_mem>],
    ) -> Result<()> {
        op2_core::device_counts::count_launch();
        let kernel = utility.kernels[entry].lock().unwrap_or_else(|p| p.into_inner());
        let mut exec = ExecuteKernel::new(&kernel);
        // SAFETY: the callers pass the entry point's parameters in order
        // (`binning_source`), buffers large enough for the threads launched.
        unsafe {
            for a in args {
                match a {
                    UtilityArg::Mem(m) => exec.set_arg(m),
                    UtilityArg::Long(v) => exec.set_arg(&(*v as cl_long)),
                };
            }
            exec.set_global_work_size(blocks * block_size)
                .set_local_work_size(block_size)
                .enqueue_nd_range(&self.queue)
                .map_err(|e| cl_error(&self.info.name, "clEnqueueNDRangeKernel", e))?;
        }
        Ok(())
    }

    fn flush(&self, _loop_name: &str) -> Result<()> {
        self.queue.flush().map_err(|e| cl_error(&self.info.name, "clFlush", e))
    }

    fn finish(&self, _loop_name: &str) -> Result<()> {
        op2_core::device_counts::count_wait();
        self.queue
            .finish()
            .map_err(|e| cl_error(&self.info.name, "clFinish", e))
    }
}
