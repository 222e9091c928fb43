//! Philox4x32-10 and its distributions in the C every dialect shares (host C,
//! OpenCL C, CUDA), computing the same words as `op2_core::Philox`: 32- and
//! 64-bit integer arithmetic and exact scalings only, so no backend's
//! floating-point contraction or math library can change a draw.
//!
//! The normal draws (Box–Muller) use no math library either: `op2_philox_ln`
//! and `op2_philox_cos_2pi` repeat `op2_core::portable_ln` and
//! `op2_core::portable_cos_2pi` operation for operation (`+ - * /`, `sqrt`,
//! all correctly rounded, and exact bit casts: OpenCL's `as_ulong`, CUDA's
//! `__double_as_longlong`, a union in C). A fused multiply-add would round
//! differently, so contraction must be off: the host C is built with
//! `-ffp-contract=off`, CUDA with `--fmad=false`, and the OpenCL versions say
//! `#pragma OPENCL FP_CONTRACT OFF` (OpenCL's default is on).
//!
//! The source defines `OP2_FN` first, as for the prelude. Generated loops
//! include it when their kernel makes a stream (`Philox::new` translates to
//! `op2_philox_new`); the tests below check it word for word against Rust.

/// The generator: `op2_philox4x32_10` (one block, in place), the stream
/// `op2_philox` keyed by `(seed, id, call)` and its draws.
pub const PHILOX_C: &str = r#"OP2_FN void op2_philox4x32_10(unsigned int *c, unsigned int k0, unsigned int k1) {
    for (int round = 0; round < 10; round++) {
        if (round > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
        unsigned long p0 = (unsigned long)0xD2511F53u * c[0];
        unsigned long p1 = (unsigned long)0xCD9E8D57u * c[2];
        unsigned int n0 = (unsigned int)(p1 >> 32) ^ c[1] ^ k0;
        unsigned int n2 = (unsigned int)(p0 >> 32) ^ c[3] ^ k1;
        c[0] = n0; c[1] = (unsigned int)p1; c[2] = n2; c[3] = (unsigned int)p0;
    }
}
typedef struct { unsigned int key[2]; unsigned int counter[4]; unsigned int words[4]; unsigned int used; } op2_philox;
OP2_FN op2_philox op2_philox_new(unsigned long seed, unsigned long id, unsigned int call) {
    op2_philox s;
    s.key[0] = (unsigned int)seed; s.key[1] = (unsigned int)(seed >> 32);
    s.counter[0] = 0u; s.counter[1] = call; s.counter[2] = (unsigned int)id; s.counter[3] = (unsigned int)(id >> 32);
    s.words[0] = s.words[1] = s.words[2] = s.words[3] = 0u;
    s.used = 4u;
    return s;
}
OP2_FN unsigned int op2_philox_u32(op2_philox *s) {
    if (s->used == 4u) {
        for (int i = 0; i < 4; i++) s->words[i] = s->counter[i];
        op2_philox4x32_10(s->words, s->key[0], s->key[1]);
        s->counter[0] += 1u;
        s->used = 0u;
    }
    return s->words[s->used++];
}
OP2_FN unsigned long op2_philox_u64(op2_philox *s) {
    unsigned long hi = op2_philox_u32(s);
    return (hi << 32) | op2_philox_u32(s);
}
OP2_FN double op2_philox_uniform_f64(op2_philox *s) { return (double)(op2_philox_u64(s) >> 11) * (1.0 / 9007199254740992.0); }
OP2_FN float op2_philox_uniform_f32(op2_philox *s) { return (float)(op2_philox_u32(s) >> 8) * (1.0f / 16777216.0f); }
OP2_FN unsigned int op2_philox_below(op2_philox *s, unsigned int n) {
    if (n == 0u) return 0u;
    unsigned int threshold = (0u - n) % n;
    for (;;) {
        unsigned long p = (unsigned long)op2_philox_u32(s) * n;
        if ((unsigned int)p >= threshold) return (unsigned int)(p >> 32);
    }
}
OP2_FN int op2_philox_bernoulli(op2_philox *s, double p) { return op2_philox_uniform_f64(s) < p; }
#if defined(__OPENCL_VERSION__)
#define OP2_PHILOX_BITS(d) as_ulong(d)
#define OP2_PHILOX_DOUBLE(u) as_double(u)
#elif defined(__CUDACC__)
#define OP2_PHILOX_BITS(d) ((unsigned long)__double_as_longlong(d))
#define OP2_PHILOX_DOUBLE(u) __longlong_as_double((long long)(u))
#else
typedef union { double d; unsigned long u; } op2_philox_pun;
OP2_FN unsigned long op2_philox_bits(double d) { op2_philox_pun p; p.d = d; return p.u; }
OP2_FN double op2_philox_double(unsigned long u) { op2_philox_pun p; p.u = u; return p.d; }
#define OP2_PHILOX_BITS(d) op2_philox_bits(d)
#define OP2_PHILOX_DOUBLE(u) op2_philox_double(u)
#endif
OP2_FN double op2_philox_ln(double x) {
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#endif
    unsigned long b = OP2_PHILOX_BITS(x);
    long e = (long)((b >> 52) & 0x7fful) - 1023;
    double m = OP2_PHILOX_DOUBLE((b & 0x000ffffffffffffful) | 0x3ff0000000000000ul);
    if (m > 1.4142135623730951) { m = m * 0.5; e = e + 1; }
    double s = (m - 1.0) / (m + 1.0);
    double f = s + s;
    double z = s * s;
    double q = 0.3333333333333333 + z * (0.2 + z * (0.14285714285714285 + z * (0.1111111111111111 + z * (0.09090909090909091
        + z * (0.07692307692307693 + z * (0.06666666666666667 + z * (0.058823529411764705 + z * (0.05263157894736842
        + z * 0.047619047619047616))))))));
    double ed = (double)e;
    return ed * 0.6931471803691238 + (f + (f * (z * q) + ed * 1.9082149292705877e-10));
}
OP2_FN double op2_philox_cos_2pi(double v) {
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#endif
    unsigned int q = ((unsigned int)(v * 8.0) + 1u) >> 1;
    double y = (v * 4.0 - (double)q) * 1.5707963267948966;
    double z = y * y;
    if (q & 1u) {
        double sn = y + y * (z * (-0.16666666666666666 + z * (0.008333333333333333 + z * (-0.0001984126984126984
            + z * (2.7557319223985893e-6 + z * (-2.505210838544172e-8 + z * (1.6059043836821613e-10
            + z * (-7.647163731819816e-13 + z * 2.8114572543455206e-15))))))));
        return (q & 2u) ? sn : -sn;
    }
    double cs = (1.0 - 0.5 * z) + (z * z) * (0.041666666666666664 + z * (-0.001388888888888889 + z * (2.48015873015873e-5
        + z * (-2.755731922398589e-7 + z * (2.08767569878681e-9 + z * (-1.1470745597729725e-11
        + z * (4.779477332387385e-14 + z * -1.5619206968586225e-16)))))));
    return (q & 2u) ? -cs : cs;
}
OP2_FN double op2_philox_normal_f64(op2_philox *s) {
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#endif
    double u = 1.0 - op2_philox_uniform_f64(s);
    double v = op2_philox_uniform_f64(s);
    return sqrt(-2.0 * op2_philox_ln(u)) * op2_philox_cos_2pi(v);
}
OP2_FN float op2_philox_normal_f32(op2_philox *s) { return (float)op2_philox_normal_f64(s); }
"#;

/// What the checks print: the known-answer blocks, then per stream a run of
/// draws of every kind, one word per line in hex (floats by their bits).
#[cfg(test)]
pub(crate) mod check {
    use op2_core::{philox4x32_10, portable_cos_2pi, portable_ln, Philox};

    /// Random123's known-answer inputs for Philox4x32-10 (counter, key).
    pub const KAT_INPUTS: [([u32; 4], [u32; 2]); 3] = [
        ([0; 4], [0; 2]),
        ([u32::MAX; 4], [u32::MAX; 2]),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
        ),
    ];

    /// Streams the checks draw from: (seed, id, call).
    pub const STREAMS: [(u64, u64, u32); 3] = [(0, 0, 0), (0x0123_4567_89ab_cdef, 7 | (1 << 40), 3), (42, 99, 1)];

    /// Normals each stream draws after its rounds of every kind: enough that
    /// a build contracting `a*b+c` into FMAs fails (about 1% of the normals
    /// change then).
    pub const NORMALS: usize = 1000;

    /// Inputs of the logarithm: the extremes of the normal draws' `(0, 1]`,
    /// both sides of the mantissa split at `sqrt(2)`, and positive normal
    /// numbers of every exponent.
    pub fn ln_inputs() -> Vec<f64> {
        let mut xs = vec![
            1.0,
            0.5,
            2f64.powi(-53),
            1.0 - 2f64.powi(-53),
            std::f64::consts::FRAC_1_SQRT_2,
            f64::from_bits(std::f64::consts::FRAC_1_SQRT_2.to_bits() - 1),
        ];
        let mut s = Philox::new(11, 0, 0);
        xs.extend((0..100).map(|_| 1.0 - s.uniform_f64()));
        xs.extend((0..100).map(|_| f64::from_bits((s.next_u64() % (0x7fe0 << 48)) + (1 << 52))));
        xs
    }

    /// Inputs of the cosine: quarter turns, the octant boundaries and their
    /// neighbours, and uniforms of `[0, 1)`.
    pub fn cos_inputs() -> Vec<f64> {
        let mut xs: Vec<f64> = (0..8).map(|o| f64::from(o) / 8.0).collect();
        xs.extend((1..8).flat_map(|o| {
            let v = f64::from(o) / 8.0;
            [v - 2f64.powi(-53), v + 2f64.powi(-53)]
        }));
        xs.push(1.0 - 2f64.powi(-53));
        let mut s = Philox::new(12, 0, 0);
        xs.extend((0..200).map(|_| s.uniform_f64()));
        xs
    }

    /// Words Rust computes, in the order the C checks print them.
    pub fn expected() -> Vec<u64> {
        let mut out = Vec::new();
        for (c, k) in KAT_INPUTS {
            out.extend(philox4x32_10(c, k).map(u64::from));
        }
        out.extend(ln_inputs().into_iter().map(|x| portable_ln(x).to_bits()));
        out.extend(cos_inputs().into_iter().map(|v| portable_cos_2pi(v).to_bits()));
        for (seed, id, call) in STREAMS {
            let mut s = Philox::new(seed, id, call);
            for _ in 0..3 {
                out.push(u64::from(s.next_u32()));
                out.push(s.next_u64());
                out.push(s.uniform_f64().to_bits());
                out.push(u64::from(s.uniform_f32().to_bits()));
                out.push(u64::from(s.below(6)));
                out.push(u64::from(s.below(1_000_000_007)));
                out.push(u64::from(s.bernoulli(0.3)));
                out.push(s.normal_f64().to_bits());
                out.push(u64::from(s.normal_f32().to_bits()));
            }
            out.extend((0..NORMALS).map(|_| s.normal_f64().to_bits()));
        }
        out
    }

    /// C statements writing the same words through `EMIT(x)` (an unsigned long).
    pub fn body() -> String {
        let mut s = String::from("unsigned int c[4];\n");
        for (c, k) in KAT_INPUTS {
            s.push_str(&format!(
                "c[0] = {}u; c[1] = {}u; c[2] = {}u; c[3] = {}u; op2_philox4x32_10(c, {}u, {}u);\n\
                 for (int i = 0; i < 4; i++) EMIT((unsigned long)c[i]);\n",
                c[0], c[1], c[2], c[3], k[0], k[1]
            ));
        }
        let exact = |x: f64| format!("OP2_PHILOX_DOUBLE({}ul)", x.to_bits());
        for x in ln_inputs() {
            s.push_str(&format!("EMIT(OP2_F64_BITS(op2_philox_ln({})));\n", exact(x)));
        }
        for v in cos_inputs() {
            s.push_str(&format!("EMIT(OP2_F64_BITS(op2_philox_cos_2pi({})));\n", exact(v)));
        }
        for (seed, id, call) in STREAMS {
            s.push_str(&format!(
                "{{ op2_philox s = op2_philox_new({seed}ul, {id}ul, {call}u);\n\
                 for (int r = 0; r < 3; r++) {{\n\
                 EMIT((unsigned long)op2_philox_u32(&s)); EMIT(op2_philox_u64(&s));\n\
                 {{ double d = op2_philox_uniform_f64(&s); EMIT(OP2_F64_BITS(d)); }}\n\
                 {{ float f = op2_philox_uniform_f32(&s); EMIT((unsigned long)OP2_F32_BITS(f)); }}\n\
                 EMIT((unsigned long)op2_philox_below(&s, 6u)); EMIT((unsigned long)op2_philox_below(&s, 1000000007u));\n\
                 EMIT((unsigned long)op2_philox_bernoulli(&s, 0.3));\n\
                 {{ double d = op2_philox_normal_f64(&s); EMIT(OP2_F64_BITS(d)); }}\n\
                 {{ float f = op2_philox_normal_f32(&s); EMIT((unsigned long)OP2_F32_BITS(f)); }} }}\n\
                 for (int i = 0; i < {NORMALS}; i++) {{ double d = op2_philox_normal_f64(&s); EMIT(OP2_F64_BITS(d)); }} }}\n"
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::check::{body, expected};
    use super::PHILOX_C;

    #[test]
    fn host_c_draws_the_same_words_as_rust() {
        let dir = std::env::temp_dir().join(format!("op2-philox-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("philox.c");
        let exe = dir.join("philox");
        let program = format!(
            "#include <math.h>\n#include <stdio.h>\n#include <string.h>\n#define OP2_FN static inline\n{PHILOX_C}\n\
             static unsigned long f64_bits(double d) {{ unsigned long u; memcpy(&u, &d, 8); return u; }}\n\
             static unsigned int f32_bits(float f) {{ unsigned int u; memcpy(&u, &f, 4); return u; }}\n\
             #define OP2_F64_BITS(d) f64_bits(d)\n#define OP2_F32_BITS(f) f32_bits(f)\n\
             #define EMIT(x) printf(\"%lu\\n\", (unsigned long)(x))\n\
             int main(void) {{\n{}\nreturn 0; }}\n",
            body()
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
        let got: Vec<u64> = String::from_utf8_lossy(&run.stdout)
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(got, expected());
    }

    /// The checks as one kernel of a device dialect: `prelude` defines
    /// `OP2_FN` and the bit casts; `entry` opens the kernel writing to `out`.
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    fn device_check(prelude: &str, entry: &str) -> String {
        format!(
            "{prelude}\n{PHILOX_C}\n{entry} {{\nint n = 0;\n#define EMIT(x) out[n++] = (unsigned long)(x)\n{}\n}}\n",
            body()
        )
    }

    #[cfg(feature = "opencl")]
    #[test]
    fn opencl_draws_the_same_words_as_rust() {
        use opencl3::command_queue::CommandQueue;
        use opencl3::context::Context;
        use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
        use opencl3::kernel::{ExecuteKernel, Kernel};
        use opencl3::memory::{Buffer, CL_MEM_WRITE_ONLY};
        use opencl3::program::Program;
        use opencl3::types::{cl_ulong, CL_BLOCKING};

        let Some(&id) = get_all_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default().first() else {
            eprintln!("skipped: no OpenCL device");
            return;
        };
        let source = device_check(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define OP2_FN inline\n\
             #define OP2_F64_BITS(d) as_ulong(d)\n#define OP2_F32_BITS(f) as_uint(f)",
            "__kernel void check(__global unsigned long *out)",
        );
        let want = expected();
        let context = Context::from_device(&Device::new(id)).unwrap();
        let queue = CommandQueue::create_default_with_properties(&context, 0, 0).unwrap();
        let program =
            Program::create_and_build_from_source(&context, &source, "").unwrap_or_else(|log| panic!("{log}"));
        let kernel = Kernel::create(&program, "check").unwrap();
        // SAFETY: no host pointer; the kernel writes `want.len()` words.
        let out = unsafe { Buffer::<cl_ulong>::create(&context, CL_MEM_WRITE_ONLY, want.len(), std::ptr::null_mut()) }
            .unwrap();
        // SAFETY: the one argument is the output buffer, large enough.
        unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(&out)
                .set_global_work_size(1)
                .enqueue_nd_range(&queue)
        }
        .unwrap();
        let mut got = vec![0 as cl_ulong; want.len()];
        // SAFETY: blocking read after the kernel, into a buffer of that size.
        unsafe { queue.enqueue_read_buffer(&out, CL_BLOCKING, 0, &mut got, &[]) }.unwrap();
        assert_eq!(got, want);
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn cuda_source_compiles_with_nvrtc() {
        if !crate::cuda::nvrtc_available() {
            assert!(std::env::var_os("OP2_REQUIRE_NVRTC").is_none(), "NVRTC is not loadable");
            eprintln!("skipped: NVRTC is not loadable");
            return;
        }
        let source = device_check(
            "#define OP2_FN static __device__ inline\n\
             #define OP2_F64_BITS(d) ((unsigned long)__double_as_longlong(d))\n#define OP2_F32_BITS(f) __float_as_uint(f)",
            "extern \"C\" __global__ void check(unsigned long *out)",
        );
        for arch in ["sm_80", "sm_90"] {
            let ptx = crate::cuda::compile_to_ptx("philox_check", &source, arch).unwrap_or_else(|e| panic!("{e}"));
            assert!(ptx.contains(".entry check"), "{arch}: no entry point in the PTX");
            // `--fmad=false`: the normals' polynomials stay separate roundings.
            assert!(!ptx.contains("fma.rn.f64"), "{arch}: contracted into FMAs");
        }
    }
}
