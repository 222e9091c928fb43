//! Test support for the C twins of Rust code (`PHILOX_C`, `PORTABLE_MATH_C`):
//! one program that writes words through `EMIT(x)` (an `unsigned long`),
//! run on the host C compiler and on OpenCL (PoCL in CI), and compiled to
//! PTX by NVRTC, so that each twin's test compares the words with Rust's.
//! The program has `OP2_FN` and the bit casts `OP2_F64_BITS(d)` and
//! `OP2_F32_BITS(f)` defined for it.

/// The words `body` emits after `source`, built by the host C compiler
/// (`OP2_CC`, else `cc`) as the `jit` backend builds: without contraction.
pub fn host_c_words(name: &str, source: &str, body: &str) -> Vec<u64> {
    let dir = std::env::temp_dir().join(format!("op2-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    let program = format!(
        "#include <math.h>\n#include <stdio.h>\n#include <string.h>\n#define OP2_FN static inline\n{source}\n\
         static unsigned long f64_bits(double d) {{ unsigned long u; memcpy(&u, &d, 8); return u; }}\n\
         static unsigned int f32_bits(float f) {{ unsigned int u; memcpy(&u, &f, 4); return u; }}\n\
         #define OP2_F64_BITS(d) f64_bits(d)\n#define OP2_F32_BITS(f) f32_bits(f)\n\
         #define EMIT(x) printf(\"%lu\\n\", (unsigned long)(x))\n\
         int main(void) {{\n{body}\nreturn 0; }}\n"
    );
    std::fs::write(&src, program).unwrap();
    let cc = std::env::var("OP2_CC").unwrap_or_else(|_| "cc".to_string());
    let built = std::process::Command::new(cc)
        .args(["-O2", "-march=native", "-ffp-contract=off", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lm")
        .output()
        .expect("a C compiler");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let run = std::process::Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// The program as one kernel of a device dialect: `prelude` defines
/// `OP2_FN` and the bit casts; `entry` opens the kernel writing to `out`.
#[cfg(any(feature = "opencl", feature = "cuda"))]
fn device_program(prelude: &str, source: &str, entry: &str, body: &str) -> String {
    format!("{prelude}\n{source}\n{entry} {{\nint n = 0;\n#define EMIT(x) out[n++] = (unsigned long)(x)\n{body}\n}}\n")
}

/// The `count` words `body` emits on the first OpenCL device (one
/// work-item), or `None` without a device.
#[cfg(feature = "opencl")]
pub fn opencl_words(source: &str, body: &str, count: usize) -> Option<Vec<u64>> {
    use opencl3::command_queue::CommandQueue;
    use opencl3::context::Context;
    use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
    use opencl3::kernel::{ExecuteKernel, Kernel};
    use opencl3::memory::{Buffer, CL_MEM_WRITE_ONLY};
    use opencl3::program::Program;
    use opencl3::types::{cl_ulong, CL_BLOCKING};

    let Some(&id) = get_all_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default().first() else {
        eprintln!("skipped: no OpenCL device");
        return None;
    };
    let program = device_program(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define OP2_FN inline\n\
         #define OP2_F64_BITS(d) as_ulong(d)\n#define OP2_F32_BITS(f) as_uint(f)",
        source,
        "__kernel void check(__global unsigned long *out)",
        body,
    );
    let context = Context::from_device(&Device::new(id)).unwrap();
    let queue = CommandQueue::create_default_with_properties(&context, 0, 0).unwrap();
    let program = Program::create_and_build_from_source(&context, &program, "").unwrap_or_else(|log| panic!("{log}"));
    let kernel = Kernel::create(&program, "check").unwrap();
    // SAFETY: no host pointer; the kernel writes `count` words.
    let out = unsafe { Buffer::<cl_ulong>::create(&context, CL_MEM_WRITE_ONLY, count, std::ptr::null_mut()) }.unwrap();
    // SAFETY: the one argument is the output buffer, large enough.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&out)
            .set_global_work_size(1)
            .enqueue_nd_range(&queue)
    }
    .unwrap();
    let mut got = vec![0 as cl_ulong; count];
    // SAFETY: blocking read after the kernel, into a buffer of that size.
    unsafe { queue.enqueue_read_buffer(&out, CL_BLOCKING, 0, &mut got, &[]) }.unwrap();
    Some(got)
}

/// The program's PTX for sm_80 and sm_90 (NVRTC, op2's options), checked
/// for an entry point and for no contracted double multiply-add; `None`
/// without NVRTC (an error under `OP2_REQUIRE_NVRTC`).
#[cfg(feature = "cuda")]
pub fn cuda_ptx(name: &str, source: &str, body: &str) -> Option<()> {
    if !crate::cuda::nvrtc_available() {
        assert!(std::env::var_os("OP2_REQUIRE_NVRTC").is_none(), "NVRTC is not loadable");
        eprintln!("skipped: NVRTC is not loadable");
        return None;
    }
    let program = device_program(
        "#define OP2_FN static __device__ inline\n\
         #define OP2_F64_BITS(d) ((unsigned long)__double_as_longlong(d))\n#define OP2_F32_BITS(f) __float_as_uint(f)",
        source,
        "extern \"C\" __global__ void check(unsigned long *out)",
        body,
    );
    for arch in ["sm_80", "sm_90"] {
        let ptx = crate::cuda::compile_to_ptx(name, &program, arch).unwrap_or_else(|e| panic!("{e}"));
        assert!(ptx.contains(".entry check"), "{arch}: no entry point in the PTX");
        // `--fmad=false`: the polynomials stay separate roundings.
        assert!(!ptx.contains("fma.rn.f64"), "{arch}: contracted into FMAs");
    }
    Some(())
}
