//! The CUDA backend's first part: the checks that CUDA's libraries are
//! present (cudarc panics when they are not, so op2 asks first) and NVRTC
//! compilation of generated CUDA sources to PTX. Running loops on a GPU is
//! not implemented yet: `Runtime::new(Backend::Cuda)` says so after the
//! library checks.

use op2_core::{Error, Result};

fn unavailable(reason: impl Into<String>) -> Error {
    Error::DeviceUnavailable {
        backend: "cuda",
        reason: reason.into(),
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

/// Compiles a generated CUDA source to PTX for `arch` (e.g. `sm_80`).
pub fn compile_to_ptx(loop_name: &str, source: &str, arch: &'static str) -> Result<String> {
    if !nvrtc_available() {
        return Err(unavailable("NVRTC (libnvrtc.so) could not be loaded"));
    }
    let options = cudarc::nvrtc::CompileOptions {
        arch: Some(arch),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source, options)
        .map(|ptx| ptx.to_src())
        .map_err(|e| {
            let log = match &e {
                cudarc::nvrtc::CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
                other => format!("{other:?}"),
            };
            Error::DeviceBuild {
                backend: "cuda",
                loop_name: loop_name.to_string(),
                device: format!("NVRTC, {arch}"),
                log,
                source_text: source.to_string(),
            }
        })
}

/// The `cuda` backend: after checking the libraries, reports that running
/// loops on a GPU is not implemented in this version.
pub fn executor() -> Result<Box<dyn op2_core::Executor>> {
    check_libraries()?;
    Err(unavailable(
        "CUDA libraries found, but running loops on a GPU is not implemented in this version of op2 \
         (generated CUDA is compiled to PTX and checked in tests)",
    ))
}
