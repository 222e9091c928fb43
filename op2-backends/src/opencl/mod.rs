//! The OpenCL backend (DESIGN.md section 6): the translated kernel inside a
//! generated OpenCL program per loop shape, built once per context; data
//! moves lazily by the device state machine of `op2-core`; indirect loops run
//! one launch per block colour, one work-item per block; Global reductions use
//! per-block partials combined on the host in a fixed order.

mod buffer;
mod select;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use buffer::{null_mem, ClBuffer};
use op2_core::{
    before_loop, ArgData, CodeCacheStats, DeviceBuffer, DeviceCell, DeviceSlot, Error, Executor, LoopBody, LoopUse,
    ParLoop, Plan, ReductionLayout, Result,
};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::program::Program;
use opencl3::types::{cl_long, cl_mem};
use select::select_device;

use crate::codegen::{opencl_source, LoopShape};
use crate::RuntimeOptions;

/// Elements per block (one work-item each) when the options do not say.
pub const DEFAULT_BLOCK_SIZE: usize = 256;

/// Build options: single precision divide and sqrt correctly rounded, as on
/// the host (double precision always is).
const BUILD_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

/// A plan's block lists on the device (the plan is kept alive so that its
/// address, the key, stays unique).
type PlanUnits = (Arc<Plan>, Arc<ClBuffer>);

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
    programs: Mutex<HashMap<LoopShape, Arc<ClLoop>>>,
    units: Mutex<HashMap<usize, PlanUnits>>,
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
        let wanted = options
            .device
            .clone()
            .or_else(|| std::env::var("OP2_OPENCL_DEVICE").ok());
        let _init = select::INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let (device, name) = select_device(wanted.as_deref())?;
        let fail = |call: &str, e: opencl3::error_codes::ClError| Error::Device {
            backend: "opencl",
            device: name.clone(),
            call: call.to_string(),
            reason: e.to_string(),
        };
        let context = Context::from_device(&device).map_err(|e| fail("clCreateContext", e))?;
        let queue = CommandQueue::create_default_with_properties(&context, 0, 0)
            .map_err(|e| fail("clCreateCommandQueue", e))?;
        Ok(OpenClExecutor {
            id: next_context_id(),
            device: name,
            context,
            queue: Arc::new(queue),
            block_size: options.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
            programs: Mutex::new(HashMap::new()),
            units: Mutex::new(HashMap::new()),
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

    fn new_buffer(&self, name: &str, bytes: usize) -> Result<ClBuffer> {
        ClBuffer::new(&self.context, &self.queue, self.id, &self.device, name, bytes)
    }

    fn program(&self, lp: &ParLoop<'_>, shape: LoopShape) -> Result<Arc<ClLoop>> {
        let mut programs = self.programs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = programs.get(&shape) {
            self.reused.fetch_add(1, Ordering::Relaxed);
            return Ok(p.clone());
        }
        let source = opencl_source(lp.kernel, &shape);
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
        programs.insert(shape, l.clone());
        self.built.fetch_add(1, Ordering::Relaxed);
        Ok(l)
    }

    /// Makes sure `slot` has a buffer in this context: one from another
    /// context is retired (its newer data brought to the host first).
    fn adopt(&self, slot: &mut DeviceSlot, name: &str, host: &mut [u8]) -> Result<()> {
        let ours = slot.buffer.as_ref().is_some_and(|b| b.context_id() == self.id);
        if ours {
            return Ok(());
        }
        if slot.buffer.is_some() {
            slot.sync_host(host, true)?;
            slot.buffer = None;
            slot.state = op2_core::DeviceState::DeviceUnallocated;
        }
        slot.buffer = Some(Box::new(self.new_buffer(name, host.len())?));
        Ok(())
    }

    /// The `cl_mem` of a slot's buffer (which `adopt` made ours).
    fn mem_of(slot: &DeviceSlot) -> cl_mem {
        slot.buffer
            .as_ref()
            .and_then(|b| b.as_any().downcast_ref::<ClBuffer>())
            .map_or_else(null_mem, ClBuffer::mem)
    }

    /// Applies the state machine to one data argument; returns its buffer.
    fn prepare_data(&self, cell: &DeviceCell, name: &str, host: &mut [u8], use_: LoopUse) -> Result<cl_mem> {
        let mut slot = cell.lock();
        self.adopt(&mut slot, name, host)?;
        let t = before_loop(slot.state, use_);
        if t.upload {
            slot.upload(host)?;
        }
        slot.state = t.after;
        Ok(Self::mem_of(&slot))
    }

    /// A map's table on this device (uploaded once, kept).
    fn prepare_map(&self, map: &op2_core::Map) -> Result<cl_mem> {
        let mut slot = map.device().lock();
        if slot.buffer.as_ref().is_none_or(|b| b.context_id() != self.id) {
            let bytes: &[u8] = bytemuck_i32(map.values());
            slot.buffer = Some(Box::new(self.new_buffer(map.name(), bytes.len())?));
            slot.upload(bytes)?;
            slot.state = op2_core::DeviceState::Both;
        }
        Ok(Self::mem_of(&slot))
    }

    /// The plan's block lists (all colours, in order) on this device.
    fn units_buffer(&self, plan: &Arc<Plan>) -> Result<Arc<ClBuffer>> {
        let key = Arc::as_ptr(plan) as usize;
        let mut units = self.units.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, b)) = units.get(&key) {
            return Ok(b.clone());
        }
        let all: Vec<u32> = (0..plan.ncolours())
            .flat_map(|c| plan.blocks_of_colour(c).iter().copied())
            .collect();
        let bytes: Vec<u8> = all.iter().flat_map(|u| u.to_ne_bytes()).collect();
        let b = Arc::new(self.new_buffer("plan blocks", bytes.len())?);
        b.upload(&bytes)?;
        units.insert(key, (plan.clone(), b.clone()));
        Ok(b)
    }
}

/// A map table as bytes.
fn bytemuck_i32(v: &[i32]) -> &[u8] {
    // SAFETY: i32 has no padding and every byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
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
        let cl_loop = self.program(lp, shape.clone())?;

        // Data and maps on the device, by the state machine.
        let mut data_mems: Vec<cl_mem> = Vec::with_capacity(lp.args.len());
        let mut map_mems: Vec<Option<cl_mem>> = Vec::with_capacity(lp.args.len());
        for (k, arg) in lp.args.iter().enumerate() {
            let same = |a: &&op2_core::ArgSpec<'_>| a.data.id() == arg.data.id();
            let first = lp.args[..k].iter().position(|a| a.data.id() == arg.data.id());
            // SAFETY: the runtime holds this argument's borrow.
            let host = unsafe { std::slice::from_raw_parts_mut(arg.data.host_bytes(), arg.data.byte_len()) };
            let mem = match (first, arg.data) {
                (Some(j), _) => data_mems[j],
                (None, ArgData::Global(g)) if arg.access.is_reduction() => {
                    // Reductions combine on the host: its copy must be current
                    // and the device copy becomes stale.
                    g.device().lock().sync_host(host, true)?;
                    null_mem()
                }
                (None, _) => {
                    let use_ = lp.args.iter().filter(same).fold(
                        LoopUse {
                            needs_data: false,
                            writes: false,
                        },
                        |u, a| {
                            let v = LoopUse::of(a.access, a.map.is_some());
                            LoopUse {
                                needs_data: u.needs_data || v.needs_data,
                                writes: u.writes || v.writes,
                            }
                        },
                    );
                    self.prepare_data(arg.data.device(), arg.data.name(), host, use_)?
                }
            };
            data_mems.push(mem);
            map_mems.push(match arg.map {
                Some(m) => Some(self.prepare_map(m.map)?),
                None => None,
            });
        }

        // Launch: one per colour (or one for a loop without a plan).
        let plan = lp.plan(self.block_size);
        let (units_buf, launches): (Option<Arc<ClBuffer>>, Vec<(usize, usize)>) = match &plan {
            None => (None, vec![(0, n.div_ceil(self.block_size))]),
            Some(p) => {
                let mut offset = 0;
                let launches = (0..p.ncolours())
                    .map(|c| {
                        let len = p.blocks_of_colour(c).len();
                        offset += len;
                        (offset - len, len)
                    })
                    .collect();
                (Some(self.units_buffer(p)?), launches)
            }
        };
        let total_units: usize = launches.iter().map(|l| l.1).sum();
        let words = layout.words_per_chunk();
        let mut partials = layout.new_partials(lp.args, total_units);
        let partials_buf = if words > 0 {
            let b = self.new_buffer("reduction partials", partials.len() * 8)?;
            b.upload(bytemuck_u64(&partials))?;
            Some(b)
        } else {
            None
        };
        let units_mem = units_buf.as_ref().map_or_else(null_mem, |b| b.mem());
        let partials_mem = partials_buf.as_ref().map_or_else(null_mem, |b| b.mem());
        {
            let kernel = cl_loop.kernel.lock().unwrap_or_else(|p| p.into_inner());
            for &(offset, count) in &launches {
                if count == 0 {
                    continue;
                }
                let mut exec = ExecuteKernel::new(&kernel);
                // SAFETY: the arguments match `op2_loop`'s parameters as
                // `opencl_source` generates them, and every buffer is large
                // enough for the elements the validated loop touches.
                unsafe {
                    exec.set_arg(&units_mem)
                        .set_arg(&(offset as cl_long))
                        .set_arg(&(count as cl_long))
                        .set_arg(&(lp.range.start as cl_long))
                        .set_arg(&(self.block_size as cl_long))
                        .set_arg(&(lp.range.end as cl_long))
                        .set_arg(&partials_mem)
                        .set_arg(&(offset as cl_long));
                    for (mem, map) in data_mems.iter().zip(&map_mems) {
                        exec.set_arg(mem);
                        if let Some(m) = map {
                            exec.set_arg(m);
                        }
                    }
                    exec.set_global_work_size(count)
                        .enqueue_nd_range(&self.queue)
                        .map_err(|e| self.fail("clEnqueueNDRangeKernel", e))?;
                }
            }
        }
        self.queue.finish().map_err(|e| self.fail("clFinish", e))?;
        if let Some(b) = partials_buf {
            b_download_u64(&b, &mut partials)?;
            layout.combine_all(lp.args, &partials);
            for a in lp.args.iter().filter(|a| a.is_global() && a.access.is_reduction()) {
                let c = a.data.device().lock().counter.clone();
                c.count_upload(total_units * words * 8);
                c.count_download(total_units * words * 8);
            }
        }
        Ok(())
    }

    fn code_cache_stats(&self) -> CodeCacheStats {
        CodeCacheStats {
            compiled: self.built.load(Ordering::Relaxed),
            memory_hits: self.reused.load(Ordering::Relaxed),
            ..CodeCacheStats::default()
        }
    }
}

fn bytemuck_u64(v: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn b_download_u64(b: &ClBuffer, v: &mut [u64]) -> Result<()> {
    // SAFETY: u64 has no padding and every byte pattern is valid.
    let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) };
    b.download(bytes)
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
            .new_buffer("huge", 1 << 60)
            .err()
            .expect("2^60 bytes cannot be allocated");
        assert!(
            matches!(e, Error::DeviceOutOfMemory { bytes, .. } if bytes == 1 << 60),
            "{e:?}"
        );
        assert!(e.to_string().contains("huge"), "{e}");
    }
}
