//! The CUDA backend (docs/ARCHITECTURE.md, Backends): the translated kernel as a
//! `__device__` function inside a generated `extern "C" __global__` entry
//! point per loop shape, compiled by NVRTC to machine code for the GPU's
//! architecture (a cubin, which loads on drivers older than the NVRTC, where
//! PTX would not), cached per context and on disk, and launched through the
//! driver API. It
//! shares the generator (one thread per element, colours or atomics, block
//! reductions) and the device layer (lazy transfers, plans on the device)
//! with the OpenCL backend: the loop machinery is the shared
//! [`DeviceExecutor`], and this module supplies CUDA as its
//! [`DeviceApi`](crate::device::DeviceApi).
//!
//! cudarc loads `libcuda` and `libnvrtc` at run time and panics when they are
//! missing, so op2 checks that they load before calling into them: without
//! them, creating the backend is an error that names the missing library.

mod api;
mod buffer;
mod ptx;

pub use api::Cuda;
pub use ptx::{compile_to_cubin, compile_to_ptx, nvrtc_version};

use op2_core::{Error, Result};

use crate::device::DeviceExecutor;
use crate::RuntimeOptions;

/// Threads (elements) per block when the options do not say.
pub const DEFAULT_BLOCK_SIZE: usize = 256;

/// The `cuda` backend: the shared device executor over the CUDA driver API.
pub type CudaExecutor = DeviceExecutor<Cuda>;

impl DeviceExecutor<Cuda> {
    /// An executor on GPU `options.device` (see [`Cuda::open`]).
    pub fn new(options: &RuntimeOptions) -> Result<CudaExecutor> {
        DeviceExecutor::with_api(Cuda::open(options)?, options, DEFAULT_BLOCK_SIZE)
    }

    /// The architecture loops are compiled for (`sm_90` on an H100).
    pub fn arch(&self) -> &str {
        self.api().arch()
    }
}

fn unavailable(reason: impl Into<String>) -> Error {
    Error::DeviceUnavailable {
        backend: "cuda",
        reason: reason.into(),
    }
}

/// A failed driver call on `device`.
fn driver_error(device: &str, call: &str, e: cudarc::driver::result::DriverError) -> Error {
    Error::Device {
        backend: "cuda",
        device: device.to_string(),
        call: call.to_string(),
        reason: e.to_string(),
    }
}

/// Whether NVRTC (`libnvrtc.so`) can be loaded.
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to load the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Whether the NVIDIA driver library (`libcuda.so`) can be loaded.
pub fn driver_available() -> bool {
    // SAFETY: only tries to load the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Fails with the name of the first missing CUDA library.
pub fn check_libraries() -> Result<()> {
    if !driver_available() {
        return Err(unavailable(
            "the NVIDIA driver library libcuda.so could not be loaded (no driver, or no GPU on this machine)",
        ));
    }
    if !nvrtc_available() {
        return Err(unavailable(
            "NVRTC (libnvrtc.so) could not be loaded: install the CUDA toolkit or the nvidia-cuda-nvrtc-cu12 \
             Python package and add its lib directory to LD_LIBRARY_PATH",
        ));
    }
    Ok(())
}
