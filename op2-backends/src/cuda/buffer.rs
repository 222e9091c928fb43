use std::any::Any;
use std::sync::Arc;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::CudaContext;
use op2_core::{DeviceBuffer, Error, Result};

use super::driver_error;
use crate::device::check_copy;

/// Memory on one GPU, owned by one executor's context, as a core `DeviceBuffer`.
pub struct CudaBuffer {
    ptr: CUdeviceptr,
    bytes: usize,
    ctx: Arc<CudaContext>,
    context_id: u64,
    device: String,
}

impl CudaBuffer {
    /// `bytes` bytes (at least 1) of device memory for the carrier `name`.
    pub fn new(ctx: &Arc<CudaContext>, context_id: u64, device: &str, name: &str, bytes: usize) -> Result<CudaBuffer> {
        let fail = |e: DriverError| match e.0 {
            CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::DeviceOutOfMemory {
                backend: "cuda",
                device: device.to_string(),
                name: name.to_string(),
                bytes,
            },
            _ => driver_error(device, &format!("cuMemAlloc of {bytes} bytes for `{name}`"), e),
        };
        ctx.bind_to_thread().map_err(fail)?;
        // SAFETY: the context is current; the size is checked by the driver.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(fail)?;
        Ok(CudaBuffer {
            ptr,
            bytes,
            ctx: ctx.clone(),
            context_id,
            device: device.to_string(),
        })
    }

    /// The device address, for kernel arguments.
    pub fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    fn fail(&self, call: &str, e: DriverError) -> Error {
        driver_error(&self.device, call, e)
    }
}

impl DeviceBuffer for CudaBuffer {
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
        check_copy("cuda", "upload", src.len(), self.bytes)?;
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))?;
        // SAFETY: `ptr` holds at least `src.len()` bytes; the copy is
        // synchronous and ordered after earlier launches on the legacy stream.
        unsafe { result::memcpy_htod_sync(self.ptr, src) }.map_err(|e| self.fail("cuMemcpyHtoD", e))
    }

    fn download(&self, dst: &mut [u8]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        check_copy("cuda", "download", dst.len(), self.bytes)?;
        self.ctx.bind_to_thread().map_err(|e| self.fail("cuCtxSetCurrent", e))?;
        // SAFETY: as for upload; the copy waits for the kernels that wrote the buffer.
        unsafe { result::memcpy_dtoh_sync(dst, self.ptr) }.map_err(|e| self.fail("cuMemcpyDtoH", e))
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by `malloc_sync` in this context, freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}

// SAFETY: a device address is plain data; the driver API may be called from
// any thread once the context is made current (which every method does).
unsafe impl Send for CudaBuffer {}
unsafe impl Sync for CudaBuffer {}
