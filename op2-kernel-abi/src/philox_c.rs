//! Philox4x32-10 and its distributions in the C every dialect shares (host C,
//! OpenCL C, CUDA), computing the same words as its Rust original,
//! `op2_core::Philox` (`op2-core/src/philox.rs`): 32- and 64-bit integer
//! arithmetic and exact scalings only, so no backend's floating-point
//! contraction or math library can change a draw.
//!
//! The normal draws (Box–Muller) use no math library either: the logarithm
//! of op2's own math functions, `op2_pm_ln_normal`
//! ([`PORTABLE_MATH_C`](crate::PORTABLE_MATH_C), which must precede this
//! source), and `op2_philox_cos_2pi` repeat `op2_core::portable_ln` and
//! `op2_core::portable_cos_2pi` operation for operation (`+ - * /`, `sqrt`,
//! all correctly rounded, and exact bit casts). A fused multiply-add would
//! round differently, so contraction must be off: the host C is built with
//! `-ffp-contract=off`, CUDA with `--fmad=false`, and the OpenCL versions say
//! `#pragma OPENCL FP_CONTRACT OFF` (OpenCL's default is on).
//!
//! The source needs `OP2_FN` defined first, as for the prelude. Generated
//! loops include it when their kernel makes a stream (`KernelUses::random_streams`);
//! op2-backends' tests (`codegen/philox_c.rs`) check it word for word against
//! Rust on the host C, OpenCL and CUDA.

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
    return sqrt(-2.0 * op2_pm_ln_normal(u)) * op2_philox_cos_2pi(v);
}
OP2_FN float op2_philox_normal_f32(op2_philox *s) { return (float)op2_philox_normal_f64(s); }
"#;
