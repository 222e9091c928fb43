//! Device memory for the OpenCL backend: `ClBuffer` owns one buffer in one context and
//! implements `RawMemory` with blocking reads and writes on the context's queue, so the
//! shared device code can wrap it in a `Memory`. A failed allocation becomes a
//! `DeviceOutOfMemory` error; `null_mem` is the null kernel argument.
//! `ClPinned` is host memory the implementation allocates for fast copies
//! (`CL_MEM_ALLOC_HOST_PTR`, mapped for as long as it lives).
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use op2_core::{Error, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::error_codes::{CL_INVALID_BUFFER_SIZE, CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES};
use opencl3::memory::{Buffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};

use super::cl_error;
use crate::device::{DeviceInfo, Memory, PinnedAllocation, RawMemory};

/// An OpenCL buffer owned by one context.
pub struct ClBuffer {
    buffer: Mutex<Buffer<u8>>,
    mem: usize,
    queue: Arc<CommandQueue>,
    device: String,
}

// SAFETY: OpenCL objects are thread-safe handles (OpenCL 1.2 section A.2);
// writes to the buffer object itself are serialised by the mutex.
unsafe impl Send for ClBuffer {}
// SAFETY: as above.
unsafe impl Sync for ClBuffer {}

impl ClBuffer {
    /// A buffer of `bytes` (at least 1: OpenCL has no empty buffers).
    pub fn new(
        context: &Context,
        queue: &Arc<CommandQueue>,
        info: &DeviceInfo,
        name: &str,
        bytes: usize,
    ) -> Result<Memory<ClBuffer>> {
        // SAFETY: no host pointer is given; the size is checked by OpenCL.
        let buffer = unsafe { Buffer::<u8>::create(context, CL_MEM_READ_WRITE, bytes.max(1), std::ptr::null_mut()) }
            .map_err(|e| match e.0 {
                CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES | CL_INVALID_BUFFER_SIZE => {
                    Error::DeviceOutOfMemory {
                        backend: "opencl",
                        device: info.name.clone(),
                        name: name.to_string(),
                        bytes,
                    }
                }
                _ => cl_error(&info.name, &format!("allocating {bytes} bytes for `{name}`"), e),
            })?;
        Ok(Memory::new(
            ClBuffer {
                mem: buffer.get() as usize,
                buffer: Mutex::new(buffer),
                queue: queue.clone(),
                device: info.name.clone(),
            },
            bytes,
            info.context_id,
        ))
    }

    /// The `cl_mem` handle, for kernel arguments.
    pub fn mem(&self) -> cl_mem {
        self.mem as cl_mem
    }
}

impl RawMemory for ClBuffer {
    const BACKEND: &'static str = "opencl";

    fn write(&self, src: &[u8]) -> Result<()> {
        let mut b = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: blocking write of `src` into a buffer at least as large.
        unsafe { self.queue.enqueue_write_buffer(&mut b, CL_BLOCKING, 0, src, &[]) }
            .map_err(|e| cl_error(&self.device, "clEnqueueWriteBuffer", e))?;
        Ok(())
    }

    fn fill(&self, pattern: &[u8], bytes: usize) -> Result<bool> {
        let mut b = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `bytes` bytes of a buffer at least as large (checked by
        // `Memory`), a multiple of the pattern's 4 or 8 bytes; OpenCL copies
        // the pattern before the call returns, and the in-order queue runs
        // the fill after the work queued before it.
        unsafe { self.queue.enqueue_fill_buffer(&mut b, pattern, 0, bytes, &[]) }
            .map_err(|e| cl_error(&self.device, "clEnqueueFillBuffer", e))?;
        Ok(true)
    }

    fn read(&self, dst: &mut [u8]) -> Result<()> {
        let b = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: blocking read into `dst`; the in-order queue has finished
        // the kernels that wrote the buffer before the read starts.
        unsafe { self.queue.enqueue_read_buffer(&b, CL_BLOCKING, 0, dst, &[]) }
            .map_err(|e| cl_error(&self.device, "clEnqueueReadBuffer", e))?;
        Ok(())
    }
}

/// Host memory an OpenCL implementation allocated for fast copies to its
/// device (`CL_MEM_ALLOC_HOST_PTR`: page-locked on GPUs' drivers), mapped
/// from its creation to its drop.
pub struct ClPinned {
    buffer: Buffer<u8>,
    ptr: *mut u8,
    bytes: usize,
    queue: Arc<CommandQueue>,
}

// SAFETY: the mapping is owned by this value alone (no other handle reads
// or writes through `ptr`), and OpenCL handles may be used from any thread.
unsafe impl Send for ClPinned {}

impl ClPinned {
    /// `bytes` bytes (at least 1), mapped for reading and writing.
    pub fn new(context: &Context, queue: &Arc<CommandQueue>, info: &DeviceInfo, bytes: usize) -> Result<ClPinned> {
        let bytes = bytes.max(1);
        let fail = |call: &str, e| cl_error(&info.name, &format!("{call} of {bytes} pinned bytes"), e);
        // SAFETY: no host pointer is given; the size is checked by OpenCL.
        let buffer = unsafe {
            Buffer::<u8>::create(
                context,
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                bytes,
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| fail("clCreateBuffer", e))?;
        let mut mapped: cl_mem = std::ptr::null_mut();
        // SAFETY: a blocking map of the whole new buffer; the pointer stays
        // valid until the unmap in `drop`.
        unsafe {
            queue.enqueue_map_buffer(
                &buffer,
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes,
                &mut mapped,
                &[],
            )
        }
        .map_err(|e| fail("clEnqueueMapBuffer", e))?;
        Ok(ClPinned {
            buffer,
            ptr: mapped as *mut u8,
            bytes,
            queue: queue.clone(),
        })
    }
}

impl PinnedAllocation for ClPinned {
    fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    fn size(&self) -> usize {
        self.bytes
    }
}

impl Drop for ClPinned {
    fn drop(&mut self) {
        // SAFETY: `ptr` is this buffer's mapping, unmapped once; the queue
        // finishes the unmap before the buffer's release takes effect.
        let _ = unsafe {
            self.queue
                .enqueue_unmap_mem_object(self.buffer.get(), self.ptr.cast(), &[])
        };
        let _ = self.queue.finish();
    }
}

/// A null buffer argument (for `units` of loops without a plan, and empty partials).
pub fn null_mem() -> cl_mem {
    std::ptr::null_mut::<c_void>() as cl_mem
}
