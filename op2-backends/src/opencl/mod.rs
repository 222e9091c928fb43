//! The OpenCL backend (docs/ARCHITECTURE.md, Backends): the translated kernel inside a
//! generated OpenCL program per loop shape, built once per context; data
//! moves lazily by the device state machine of `op2-core`; one work-item per
//! element and one work-group per plan block; indirect writes by element
//! colours (one launch per block colour) or atomics (see [`Increments`]);
//! Global reductions by a tree per work-group and a fixed-order combine of
//! the groups' partials on the host.

mod buffer;
mod select;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use buffer::{null_mem, ClBuffer};
use op2_core::{CodeCacheStats, DeviceBuffer, Error, Executor, LoopBody, ParLoop, ReductionLayout, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::program::Program;
use opencl3::types::{cl_long, cl_mem};
use select::select_device;

use crate::codegen::{opencl_source, Checks, LoopShape};
use crate::device::{prepare_loop, CheckReport, DeviceApi, PartialsPool, PlanBuffersCache};
use crate::{Increments, IndirectWrites, RuntimeOptions};

/// Elements per work-group when the options do not say.
pub const DEFAULT_BLOCK_SIZE: usize = 256;

/// Build options: single precision divide and sqrt correctly rounded, as on
/// the host (double precision always is).
const BUILD_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

struct ClLoop {
    _program: Program,
    kernel: Mutex<Kernel>,
}

/// The `opencl` backend.
pub struct OpenClExecutor {
    id: u64,
    device: String,
    context: Context,
    queue: Arc<CommandQueue>,
    block_size: usize,
    increments: Increments,
    checks: Checks,
    int64_atomics: bool,
    programs: Mutex<HashMap<(LoopShape, IndirectWrites), Arc<ClLoop>>>,
    plans: PlanBuffersCache,
    partials: PartialsPool,
    built: AtomicUsize,
    reused: AtomicUsize,
}

// SAFETY: OpenCL contexts, queues and programs are thread-safe handles;
// kernels (whose arguments are state) are behind a mutex.
unsafe impl Send for OpenClExecutor {}
unsafe impl Sync for OpenClExecutor {}

fn next_context_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl OpenClExecutor {
    /// An executor on the device `options.device` names (else
    /// `OP2_OPENCL_DEVICE`, else the first GPU, else the first device).
    pub fn new(options: &RuntimeOptions) -> Result<OpenClExecutor> {
        let wanted = options.device.clone();
        let increments = options.resolved_increments()?;
        let checks = options.resolved_checks()?;
        let _init = select::INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let (device, name) = select_device(wanted.as_deref())?;
        let fail = |call: &str, e: opencl3::error_codes::ClError| Error::Device {
            backend: "opencl",
            device: name.clone(),
            call: call.to_string(),
            reason: e.to_string(),
        };
        let block_size = options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE);
        let max_group = device
            .max_work_group_size()
            .map_err(|e| fail("clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)", e))?;
        if block_size == 0 || block_size > max_group {
            return Err(Error::InvalidOption {
                option: "block_size",
                reason: format!(
                    "{block_size} elements per block: a work-group of `{name}` has 1 to {max_group} work-items"
                ),
            });
        }
        let int64_atomics = device
            .extensions()
            .is_ok_and(|x| x.contains("cl_khr_int64_base_atomics"));
        let context = Context::from_device(&device).map_err(|e| fail("clCreateContext", e))?;
        let queue = CommandQueue::create_default_with_properties(&context, 0, 0)
            .map_err(|e| fail("clCreateCommandQueue", e))?;
        Ok(OpenClExecutor {
            id: next_context_id(),
            device: name,
            context,
            queue: Arc::new(queue),
            block_size,
            increments,
            checks,
            int64_atomics,
            programs: Mutex::new(HashMap::new()),
            plans: PlanBuffersCache::default(),
            partials: PartialsPool::default(),
            built: AtomicUsize::new(0),
            reused: AtomicUsize::new(0),
        })
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device
    }

    fn fail(&self, call: &str, e: impl std::fmt::Display) -> Error {
        Error::Device {
            backend: "opencl",
            device: self.device.clone(),
            call: call.to_string(),
            reason: e.to_string(),
        }
    }

    fn new_cl_buffer(&self, name: &str, bytes: usize) -> Result<ClBuffer> {
        ClBuffer::new(&self.context, &self.queue, self.id, &self.device, name, bytes)
    }

    /// How this loop's indirect writes are made safe on this device: atomics
    /// on 64-bit values need `cl_khr_int64_base_atomics`, else colouring.
    fn indirect_writes(&self, shape: &LoopShape) -> IndirectWrites {
        let w = IndirectWrites::of(shape, self.increments);
        if w == IndirectWrites::Atomic && IndirectWrites::needs_64_bit_atomics(shape) && !self.int64_atomics {
            return IndirectWrites::of(shape, Increments::Colouring);
        }
        w
    }

    fn program(&self, lp: &ParLoop<'_>, shape: LoopShape, writes: IndirectWrites) -> Result<Arc<ClLoop>> {
        let mut programs = self.programs.lock().unwrap_or_else(|p| p.into_inner());
        let key = (shape, writes);
        if let Some(p) = programs.get(&key) {
            self.reused.fetch_add(1, Ordering::Relaxed);
            return Ok(p.clone());
        }
        let source = opencl_source(lp.kernel, &key.0, writes, self.checks);
        let program = Program::create_and_build_from_source(&self.context, &source, BUILD_OPTIONS).map_err(|log| {
            Error::DeviceBuild {
                backend: "opencl",
                loop_name: lp.kernel.name.to_string(),
                device: self.device.clone(),
                log,
                source_text: source.clone(),
            }
        })?;
        let kernel = Kernel::create(&program, "op2_loop").map_err(|e| self.fail("clCreateKernel", e))?;
        let l = Arc::new(ClLoop {
            _program: program,
            kernel: Mutex::new(kernel),
        });
        programs.insert(key, l.clone());
        self.built.fetch_add(1, Ordering::Relaxed);
        Ok(l)
    }
}

impl DeviceApi for OpenClExecutor {
    type Mem = cl_mem;

    fn context_id(&self) -> u64 {
        self.id
    }

    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>> {
        Ok(Box::new(self.new_cl_buffer(name, bytes)?))
    }

    fn mem_of(&self, buffer: &dyn DeviceBuffer) -> cl_mem {
        buffer
            .as_any()
            .downcast_ref::<ClBuffer>()
            .map_or_else(null_mem, ClBuffer::mem)
    }

    fn null_mem(&self) -> cl_mem {
        null_mem()
    }
}

impl Executor for OpenClExecutor {
    fn name(&self) -> &'static str {
        "opencl"
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
        let cl_loop = self.program(lp, shape, writes)?;
        let p = prepare_loop(self, lp, &layout, writes, self.block_size, &self.plans, &self.partials)?;
        let partials_mem = p.partials.mem(self);
        let report = CheckReport::new(self, self.checks)?;
        let report_mem = report.mem(self);
        {
            let kernel = cl_loop.kernel.lock().unwrap_or_else(|p| p.into_inner());
            for l in p.launches.iter().filter(|l| l.count > 0) {
                let mut exec = ExecuteKernel::new(&kernel);
                // SAFETY: the arguments match `op2_loop`'s parameters as
                // `opencl_source` generates them, and every buffer is large
                // enough for the elements the validated loop touches.
                unsafe {
                    exec.set_arg(&p.units)
                        .set_arg(&(l.offset as cl_long))
                        .set_arg(&(lp.range.start as cl_long))
                        .set_arg(&(self.block_size as cl_long))
                        .set_arg(&(lp.range.end as cl_long))
                        .set_arg(&p.colours)
                        .set_arg(&p.ncolours)
                        .set_arg(&partials_mem)
                        .set_arg(&(l.offset as cl_long))
                        .set_arg(&report_mem)
                        .set_arg_local_buffer(self.block_size * std::mem::size_of::<u64>());
                    for (m, map) in p.args.data.iter().zip(&p.args.maps) {
                        exec.set_arg(m);
                        if let Some(map) = map {
                            exec.set_arg(map);
                        }
                    }
                    exec.set_global_work_size(l.count * self.block_size)
                        .set_local_work_size(self.block_size)
                        .enqueue_nd_range(&self.queue)
                        .map_err(|e| self.fail("clEnqueueNDRangeKernel", e))?;
                }
            }
        }
        self.queue.finish().map_err(|e| self.fail("clFinish", e))?;
        report.result(lp.kernel.name, "opencl")?;
        p.partials.combine(&layout, lp.args)
    }

    fn code_cache_stats(&self) -> CodeCacheStats {
        CodeCacheStats {
            compiled: self.built.load(Ordering::Relaxed),
            memory_hits: self.reused.load(Ordering::Relaxed),
            ..CodeCacheStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_allocation_is_out_of_device_memory() {
        let Ok(exec) = OpenClExecutor::new(&RuntimeOptions::default()) else {
            eprintln!("skipped: no OpenCL device");
            return;
        };
        let e = exec
            .new_cl_buffer("huge", 1 << 60)
            .err()
            .expect("2^60 bytes cannot be allocated");
        assert!(
            matches!(e, Error::DeviceOutOfMemory { bytes, .. } if bytes == 1 << 60),
            "{e:?}"
        );
        assert!(e.to_string().contains("huge"), "{e}");
    }

    #[test]
    fn a_copy_larger_than_the_buffer_is_an_error() {
        let Ok(exec) = OpenClExecutor::new(&RuntimeOptions::default()) else {
            eprintln!("skipped: no OpenCL device");
            return;
        };
        let b = exec.new_cl_buffer("small", 8).unwrap();
        let e = b.upload(&[0u8; 16]).unwrap_err();
        assert!(
            matches!(e, Error::Transfer { .. }) && e.to_string().contains("16 bytes"),
            "{e}"
        );
        let e = b.download(&mut [0u8; 9]).unwrap_err();
        assert!(e.to_string().contains("9 bytes"), "{e}");
        b.upload(&[1u8; 8]).unwrap();
    }
}
