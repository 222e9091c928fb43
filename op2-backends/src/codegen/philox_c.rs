//! The checks of the C twin of the random streams, `op2_kernel_abi::PHILOX_C`,
//! against its Rust original `op2_core::Philox`: word for word, on the host
//! C compiler, OpenCL (PoCL) and CUDA (PTX).

pub use op2_kernel_abi::PHILOX_C;

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
        let exact = |x: f64| format!("OP2_PM_DOUBLE({}ul)", x.to_bits());
        for x in ln_inputs() {
            s.push_str(&format!("EMIT(OP2_F64_BITS(op2_pm_ln_normal({})));\n", exact(x)));
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
    use super::super::twin_check;
    use super::check::{body, expected};
    use super::PHILOX_C;

    /// The generator after the math it takes its logarithm from.
    fn source() -> String {
        format!("{}{PHILOX_C}", op2_kernel_abi::PORTABLE_MATH_C)
    }

    #[test]
    fn host_c_draws_the_same_words_as_rust() {
        assert_eq!(twin_check::host_c_words("philox", &source(), &body()), expected());
    }

    #[cfg(feature = "opencl")]
    #[test]
    fn opencl_draws_the_same_words_as_rust() {
        let want = expected();
        if let Some(got) = twin_check::opencl_words(&source(), &body(), want.len()) {
            assert_eq!(got, want);
        }
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn cuda_source_compiles_with_nvrtc() {
        twin_check::cuda_ptx("philox_check", &source(), &body());
    }
}
