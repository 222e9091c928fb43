//! Device memory for the CUDA backend: `CudaBuffer` owns one allocation on one GPU
//! context and implements `RawMemory` (synchronous uploads and downloads), so the shared
//! device code can wrap it in a `Memory`. Running out of memory becomes a
//! `DeviceOutOfMemory` error that names the carrier.
use std::sync::Arc;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::CudaContext;
use op2_core::{Error, Result};

use super::driver_error;
use crate::device::{DeviceInfo, Memory, RawMemory};

/// Memory on one GPU, owned by one context.
pub struct CudaBuffer {
    ptr: CUdeviceptr,
    ctx: Arc<CudaContext>,
    device: String,
}

impl CudaBuffer {
    /// `bytes` bytes (at least 1) of device memory for the carrier `name`.
    pub fn new(ctx: &Arc<CudaContext>, info: &DeviceInfo, name: &str, bytes: usize) -> Result<Memory<CudaBuffer>> {
        let fail = |e: DriverError| match e.0 {
            CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::DeviceOutOfMemory {
                backend: "cuda",
                device: info.name.clone(),
                name: name.to_string(),
                bytes,
            },
            _ => driver_error(&info.name, &format!("cuMemAlloc of {bytes} bytes for `{name}`"), e),
        };
        ctx.bind_to_thread().map_err(fail)?;
        // SAFETY: the context is current; the size is checked by the driver.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(fail)?;
        Ok(Memory::new(
            CudaBuffer {
                ptr,
                ctx: ctx.clone(),
                device: info.name.clone(),
            },
            bytes,
            info.context_id,
        ))
    }

    /// The device address, for kernel arguments.
    pub fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    fn fail(&self, call: &str, e: DriverError) -> Error {
        driver_error(&self.device, call, e)
    }
}

impl RawMemory for CudaBuffer {
    const BACKEND: &'static str = "cuda";

    fn write(&self, src: &[u8]) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))?;
        // SAFETY: `ptr` holds at least `src.len()` bytes; the copy is
        // synchronous and ordered after earlier launches on the legacy stream.
        unsafe { result::memcpy_htod_sync(self.ptr, src) }.map_err(|e| self.fail("cuMemcpyHtoD", e))
    }

    fn read(&self, dst: &mut [u8]) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))?;
        // SAFETY: as for write; the copy waits for the kernels that wrote the buffer.
        unsafe { result::memcpy_dtoh_sync(dst, self.ptr) }.map_err(|e| self.fail("cuMemcpyDtoH", e))
    }

    fn fill(&self, pattern: &[u8], bytes: usize) -> Result<bool> {
        // A memset takes a byte or a 32-bit word: a pattern of one repeated
        // byte, or of one repeated word (an 8-byte value whose halves are
        // equal, such as 0.0).
        let word = |p: &[u8]| u32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
        let repeats = |n: usize| pattern.chunks(n).all(|c| c == &pattern[..n]);
        let (byte, words) = match pattern.len() {
            4 | 8 if repeats(1) => (Some(pattern[0]), None),
            4 | 8 if repeats(4) && bytes % 4 == 0 => (None, Some(word(pattern))),
            _ => return Ok(false),
        };
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))?;
        let null_stream = std::ptr::null_mut();
        match (byte, words) {
            // SAFETY: `ptr` holds at least `bytes` bytes (checked by `Memory`);
            // the memset is queued on the legacy stream, in order with the
            // launches and copies, and reads no host memory.
            (Some(b), _) => unsafe { result::memset_d8_async(self.ptr, b, bytes, null_stream) }
                .map_err(|e| self.fail("cuMemsetD8Async", e))?,
            // SAFETY: as above; `bytes` is a multiple of 4.
            (None, Some(w)) => unsafe { cudarc::driver::sys::cuMemsetD32Async(self.ptr, w, bytes / 4, null_stream) }
                .result()
                .map_err(|e| self.fail("cuMemsetD32Async", e))?,
            (None, None) => return Ok(false),
        }
        Ok(true)
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // cuMemFree waits for the work queued before it, which may still
            // use this buffer: device loops return once launched.
            // SAFETY: allocated by `malloc_sync` in this context, freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}

// SAFETY: a device address is plain data; the driver API may be called from
// any thread once the context is made current (which every method does).
unsafe impl Send for CudaBuffer {}
// SAFETY: as above.
unsafe impl Sync for CudaBuffer {}
