use op2_core::{Error, Result};

use super::{nvrtc_available, unavailable};

/// NVRTC options besides the architecture: no contraction of `a * b + c`
/// into FMAs, as the host C is built (`-ffp-contract=off`), so that device
/// results match the host's to rounding of the same operations.
pub const NVRTC_OPTIONS: &[&str] = &["--fmad=false"];

/// NVRTC's version, `(major, minor)`, or `None` when it cannot be loaded.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_available() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present; the call writes two ints.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

/// Compiles a generated CUDA source to PTX for `arch` (e.g. `sm_80`).
pub fn compile_to_ptx(loop_name: &str, source: &str, arch: &str) -> Result<String> {
    if !nvrtc_available() {
        return Err(unavailable("NVRTC (libnvrtc.so) could not be loaded"));
    }
    let mut options: Vec<String> = NVRTC_OPTIONS.iter().map(|o| o.to_string()).collect();
    options.push(format!("--gpu-architecture={arch}"));
    let opts = cudarc::nvrtc::CompileOptions {
        options,
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source, opts)
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
