//! Compiling generated CUDA source at run time with NVRTC, to PTX text or to a cubin for
//! one real architecture. The CUDA backend loads cubins, which work on drivers older than
//! the NVRTC. FMA contraction is turned off (`NVRTC_OPTIONS`) so device results match the
//! host C to rounding; a failed build becomes a `DeviceBuild` error with the log.
use std::ffi::{c_char, CString};

use cudarc::nvrtc::result as nvrtc;
use cudarc::nvrtc::sys::{nvrtcGetCUBIN, nvrtcGetCUBINSize, nvrtcProgram, nvrtcResult};
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
    (r == nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

/// What NVRTC hands back.
#[derive(Clone, Copy)]
enum Output {
    /// PTX text: portable, assembled by the driver at load time.
    Ptx,
    /// Machine code for exactly `arch`: loads on any driver that knows the
    /// GPU, whatever PTX version the NVRTC writes.
    Cubin,
}

/// Destroys the program however compilation ends.
struct Program(nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program`, destroyed once.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

fn text(v: &[c_char]) -> String {
    let bytes: Vec<u8> = v.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn compile(loop_name: &str, source: &str, arch: &str, output: Output) -> Result<Vec<u8>> {
    if !nvrtc_available() {
        return Err(unavailable("NVRTC (libnvrtc.so) could not be loaded"));
    }
    let build_error = |log: String| Error::DeviceBuild {
        backend: "cuda",
        loop_name: loop_name.to_string(),
        device: format!("NVRTC, {arch}"),
        log,
        source_text: source.to_string(),
    };
    let src = CString::new(source).map_err(|_| build_error("the source contains a NUL byte".into()))?;
    let prog = Program(nvrtc::create_program(&src, None).map_err(|e| build_error(format!("{e:?}")))?);
    let mut options: Vec<String> = NVRTC_OPTIONS.iter().map(|o| o.to_string()).collect();
    options.push(format!("--gpu-architecture={arch}"));
    // SAFETY: `prog` is live; the options contain no NUL.
    if let Err(e) = unsafe { nvrtc::compile_program(prog.0, &options) } {
        // SAFETY: as above.
        let log = unsafe { nvrtc::get_program_log(prog.0) }.map_or_else(|_| format!("{e:?}"), |l| text(&l));
        return Err(build_error(log));
    }
    match output {
        Output::Ptx => {
            // SAFETY: compiled above.
            let ptx = unsafe { nvrtc::get_ptx(prog.0) }.map_err(|e| build_error(format!("nvrtcGetPTX: {e:?}")))?;
            Ok(text(&ptx).into_bytes())
        }
        Output::Cubin => {
            let mut size = 0usize;
            // SAFETY: compiled above; writes the size.
            let r = unsafe { nvrtcGetCUBINSize(prog.0, &mut size) };
            if r != nvrtcResult::NVRTC_SUCCESS || size == 0 {
                return Err(build_error(format!(
                    "nvrtcGetCUBINSize: {r:?} (is `{arch}` a real architecture?)"
                )));
            }
            let mut cubin = vec![0u8; size];
            // SAFETY: `cubin` holds the `size` bytes NVRTC reported.
            let r = unsafe { nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) };
            if r != nvrtcResult::NVRTC_SUCCESS {
                return Err(build_error(format!("nvrtcGetCUBIN: {r:?}")));
            }
            Ok(cubin)
        }
    }
}

/// Compiles a generated CUDA source to PTX for `arch` (e.g. `sm_80`).
pub fn compile_to_ptx(loop_name: &str, source: &str, arch: &str) -> Result<String> {
    compile(loop_name, source, arch, Output::Ptx).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Compiles a generated CUDA source to machine code (a cubin, ELF) for the
/// real architecture `arch` (e.g. `sm_90`). The backend loads these rather
/// than PTX: a driver older than the NVRTC rejects its PTX, not its cubins.
pub fn compile_to_cubin(loop_name: &str, source: &str, arch: &str) -> Result<Vec<u8>> {
    compile(loop_name, source, arch, Output::Cubin)
}
