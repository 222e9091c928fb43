use std::any::Any;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use op2_core::{DeviceBuffer, Error, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::error_codes::{CL_INVALID_BUFFER_SIZE, CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES};
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};

use crate::device::check_copy;

/// An OpenCL buffer owned by one executor's context, as a core `DeviceBuffer`.
pub struct ClBuffer {
    buffer: Mutex<Buffer<u8>>,
    mem: usize,
    bytes: usize,
    queue: Arc<CommandQueue>,
    context_id: u64,
    device: String,
}

// SAFETY: OpenCL objects are thread-safe handles (OpenCL 1.2 section A.2);
// writes to the buffer object itself are serialised by the mutex.
unsafe impl Send for ClBuffer {}
unsafe impl Sync for ClBuffer {}

impl ClBuffer {
    /// A buffer of `bytes` (at least 1: OpenCL has no empty buffers).
    pub fn new(
        context: &Context,
        queue: &Arc<CommandQueue>,
        context_id: u64,
        device: &str,
        name: &str,
        bytes: usize,
    ) -> Result<ClBuffer> {
        // SAFETY: no host pointer is given; the size is checked by OpenCL.
        let buffer = unsafe { Buffer::<u8>::create(context, CL_MEM_READ_WRITE, bytes.max(1), std::ptr::null_mut()) }
            .map_err(|e| match e.0 {
                CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES | CL_INVALID_BUFFER_SIZE => {
                    Error::DeviceOutOfMemory {
                        backend: "opencl",
                        device: device.to_string(),
                        name: name.to_string(),
                        bytes,
                    }
                }
                _ => Error::Device {
                    backend: "opencl",
                    device: device.to_string(),
                    call: format!("allocating {bytes} bytes for `{name}`"),
                    reason: e.to_string(),
                },
            })?;
        Ok(ClBuffer {
            mem: buffer.get() as usize,
            buffer: Mutex::new(buffer),
            bytes,
            queue: queue.clone(),
            context_id,
            device: device.to_string(),
        })
    }

    /// The `cl_mem` handle, for kernel arguments.
    pub fn mem(&self) -> cl_mem {
        self.mem as cl_mem
    }

    fn fail(&self, call: &str, e: impl std::fmt::Display) -> Error {
        Error::Device {
            backend: "opencl",
            device: self.device.clone(),
            call: call.to_string(),
            reason: e.to_string(),
        }
    }
}

impl DeviceBuffer for ClBuffer {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn context_id(&self) -> u64 {
        self.context_id
    }

    fn upload(&self, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        check_copy("opencl", "upload", src.len(), self.bytes)?;
        let mut b = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: blocking write of `src` into a buffer at least as large.
        unsafe { self.queue.enqueue_write_buffer(&mut b, CL_BLOCKING, 0, src, &[]) }
            .map_err(|e| self.fail("clEnqueueWriteBuffer", e))?;
        Ok(())
    }

    fn download(&self, dst: &mut [u8]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        check_copy("opencl", "download", dst.len(), self.bytes)?;
        let b = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: blocking read into `dst`; the in-order queue has finished
        // the kernels that wrote the buffer before the read starts.
        unsafe { self.queue.enqueue_read_buffer(&b, CL_BLOCKING, 0, dst, &[]) }
            .map_err(|e| self.fail("clEnqueueReadBuffer", e))?;
        Ok(())
    }
}

/// A null buffer argument (for `units` of loops without a plan, and empty partials).
pub fn null_mem() -> cl_mem {
    std::ptr::null_mut::<c_void>() as cl_mem
}
