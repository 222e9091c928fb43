//! Device memory for the CUDA backend: `CudaBuffer` owns one allocation on one GPU
//! context and implements `RawMemory` (synchronous uploads and downloads), so the shared
//! device code can wrap it in a `Memory`. Running out of memory becomes a
//! `DeviceOutOfMemory` error that names the carrier. `CudaPinned` is
//! page-locked host memory (`cuMemHostAlloc`) for copies at the bus's full
//! speed.
use std::sync::Arc;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::CudaContext;
use op2_core::{Error, Result};

use super::driver_error;
use crate::device::{DeviceInfo, Memory, PinnedAllocation, RawMemory};

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

    fn address(&self) -> Option<u64> {
        Some(self.ptr)
    }

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
        // A memset writes one repeated 32-bit word: a 4-byte value, or an
        // 8-byte one whose halves are equal (such as 0.0). `Memory` made
        // `bytes` a multiple of the pattern's length.
        if !matches!(pattern.len(), 4 | 8) || pattern[..4] != pattern[pattern.len() - 4..] {
            return Ok(false);
        }
        let word = u32::from_ne_bytes([pattern[0], pattern[1], pattern[2], pattern[3]]);
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))?;
        // SAFETY: `ptr` holds at least `bytes` bytes (checked by `Memory`), a
        // multiple of 4; the memset is queued on the legacy stream, in order
        // with the launches and copies, and reads no host memory.
        unsafe { cudarc::driver::sys::cuMemsetD32Async(self.ptr, word, bytes / 4, std::ptr::null_mut()) }
            .result()
            .map_err(|e| self.fail("cuMemsetD32Async", e))?;
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

/// Page-locked host memory of one context (`cuMemHostAlloc`): the driver
/// copies to and from it without a staging copy.
pub struct CudaPinned {
    ptr: *mut u8,
    bytes: usize,
    ctx: Arc<CudaContext>,
}

impl CudaPinned {
    /// `bytes` bytes (at least 1).
    pub fn new(ctx: &Arc<CudaContext>, info: &DeviceInfo, bytes: usize) -> Result<CudaPinned> {
        let bytes = bytes.max(1);
        let fail = |e: DriverError| driver_error(&info.name, &format!("cuMemHostAlloc of {bytes} bytes"), e);
        ctx.bind_to_thread().map_err(fail)?;
        // SAFETY: the context is current; no flags (portable to this context).
        let ptr = unsafe { result::malloc_host(bytes, 0) }.map_err(fail)?;
        Ok(CudaPinned {
            ptr: ptr.cast(),
            bytes,
            ctx: ctx.clone(),
        })
    }
}

impl PinnedAllocation for CudaPinned {
    fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    fn size(&self) -> usize {
        self.bytes
    }
}

impl Drop for CudaPinned {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by `malloc_host` in this context, freed once;
            // copies from it were synchronous, so none is in flight.
            let _ = unsafe { result::free_host(self.ptr.cast()) };
        }
    }
}

// SAFETY: the allocation is owned by this value alone.
unsafe impl Send for CudaPinned {}

// SAFETY: a device address is plain data; the driver API may be called from
// any thread once the context is made current (which every method does).
unsafe impl Send for CudaBuffer {}
// SAFETY: as above.
unsafe impl Sync for CudaBuffer {}
