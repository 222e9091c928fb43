//! The C twin of op2's own elementary functions (`op2_core::portable_math`,
//! `op2-core/src/portable_math.rs`), which kernels marked
//! `#[op2::kernel(portable_math)]` call: `op2_pm_<name>` for `double` and
//! `op2_pm_<name>_f32` for `float` ([`c_interface::portable_math_function`](crate::c_interface::portable_math_function)),
//! each repeating its Rust original operation for operation: `+ - * /`,
//! `floor`, `fabs` and exact bit casts (OpenCL's `as_double`, CUDA's
//! `__longlong_as_double`, a union in C).
//!
//! A fused multiply-add would round differently, so contraction must be off
//! in the functions and in the kernels that call them: the host C is built
//! with `-ffp-contract=off`, CUDA with `--fmad=false`, and in OpenCL this
//! source turns `FP_CONTRACT` off for the rest of the program (OpenCL's
//! default is on). The source defines nothing else first: it needs `OP2_FN`
//! (as the prelude defines it). op2-backends' tests
//! (`codegen/portable_math_c.rs`) check it bit for bit against Rust on the
//! host C, OpenCL and CUDA.

/// The functions, their helpers and the bit casts they need.
pub const PORTABLE_MATH_C: &str = r#"#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
#define OP2_PM_DOUBLE(u) as_double(u)
#define OP2_PM_BITS(d) as_ulong(d)
#elif defined(__CUDACC__)
#define OP2_PM_DOUBLE(u) __longlong_as_double((long long)(u))
#define OP2_PM_BITS(d) ((unsigned long)__double_as_longlong(d))
#else
typedef union { double d; unsigned long u; } op2_pm_pun;
OP2_FN double op2_pm_double(unsigned long u) { op2_pm_pun p; p.u = u; return p.d; }
OP2_FN unsigned long op2_pm_bits(double d) { op2_pm_pun p; p.d = d; return p.u; }
#define OP2_PM_DOUBLE(u) op2_pm_double(u)
#define OP2_PM_BITS(d) op2_pm_bits(d)
#endif
OP2_FN double op2_pm_pow2(long k) { return OP2_PM_DOUBLE(((unsigned long)(k + 1023)) << 52); }
OP2_FN double op2_pm_reduce(double x, long *k) {
    double kf = floor(x * 0.6366197723675814 + 0.5);
    double t1 = kf * 1.5707963267341256;
    double r1 = x - t1;
    double t2 = kf * 6.077100506303966e-11;
    double r2 = r1 - t2;
    double t3 = kf * 2.0222662487111665e-21;
    *k = (long)(kf - 4.0 * floor(kf * 0.25));
    return r2 - t3;
}
OP2_FN double op2_pm_kernel_sin(double r) {
    double z = r * r;
    double v = z * r;
    double p = 8.33333333332249e-3 + z * (-1.984126982985795e-4 + z * (2.7557313707070068e-6
        + z * (-2.5050760253406863e-8 + z * 1.58969099521155e-10)));
    return r + v * (-1.6666666666666632e-1 + z * p);
}
OP2_FN double op2_pm_kernel_cos(double r) {
    double z = r * r;
    double p = z * (4.16666666666666e-2 + z * (-1.388888888887411e-3 + z * (2.480158728947673e-5
        + z * (-2.7557314351390663e-7 + z * (2.087572321298175e-9 + z * -1.1359647557788195e-11)))));
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + z * p);
}
OP2_FN double op2_pm_sin(double x) {
    if (!(fabs(x) < 4503599627370496.0)) return OP2_PM_DOUBLE(0x7ff8000000000000ul);
    if (fabs(x) < 1.4901161193847656e-8) return x;
    long k;
    double r = op2_pm_reduce(x, &k);
    switch (k) {
    case 0: return op2_pm_kernel_sin(r);
    case 1: return op2_pm_kernel_cos(r);
    case 2: return -op2_pm_kernel_sin(r);
    default: return -op2_pm_kernel_cos(r);
    }
}
OP2_FN double op2_pm_cos(double x) {
    if (!(fabs(x) < 4503599627370496.0)) return OP2_PM_DOUBLE(0x7ff8000000000000ul);
    long k;
    double r = op2_pm_reduce(x, &k);
    switch (k) {
    case 0: return op2_pm_kernel_cos(r);
    case 1: return -op2_pm_kernel_sin(r);
    case 2: return -op2_pm_kernel_cos(r);
    default: return op2_pm_kernel_sin(r);
    }
}
OP2_FN double op2_pm_tan(double x) {
    if (!(fabs(x) < 4503599627370496.0)) return OP2_PM_DOUBLE(0x7ff8000000000000ul);
    if (fabs(x) < 1.4901161193847656e-8) return x;
    long k;
    double r = op2_pm_reduce(x, &k);
    double s = op2_pm_kernel_sin(r);
    double c = op2_pm_kernel_cos(r);
    return k % 2 == 0 ? s / c : -c / s;
}
OP2_FN double op2_pm_exp(double x) {
    if (x != x) return x;
    if (x > 709.782712893384) return OP2_PM_DOUBLE(0x7ff0000000000000ul);
    if (x < -745.1332191019412) return 0.0;
    double kf = floor(x * 1.4426950408889634 + 0.5);
    double hi = x - kf * 6.931471803691238e-1;
    double lo = kf * 1.9082149292705877e-10;
    double r = hi - lo;
    double z = r * r;
    double c = r - z * (1.6666666666666602e-1 + z * (-2.7777777777015593e-3 + z * (6.613756321437934e-5
        + z * (-1.6533902205465252e-6 + z * 4.1381367970572385e-8))));
    double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    long k = (long)kf;
    if (k > 1000) { y = y * op2_pm_pow2(1000); k = k - 1000; }
    if (k < -1000) { y = y * op2_pm_pow2(-1000); k = k + 1000; }
    return y * op2_pm_pow2(k);
}
OP2_FN double op2_pm_ln_normal(double x) {
    unsigned long b = OP2_PM_BITS(x);
    long e = (long)((b >> 52) & 0x7fful) - 1023;
    double m = OP2_PM_DOUBLE((b & 0x000ffffffffffffful) | 0x3ff0000000000000ul);
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
OP2_FN double op2_pm_ln(double x) {
    if (x != x || x < 0.0) return OP2_PM_DOUBLE(0x7ff8000000000000ul);
    if (x == 0.0) return OP2_PM_DOUBLE(0xfff0000000000000ul);
    if (x == OP2_PM_DOUBLE(0x7ff0000000000000ul)) return x;
    if (x < 2.2250738585072014e-308) return op2_pm_ln_normal(x * op2_pm_pow2(54)) - 54.0 * 0.6931471805599453;
    return op2_pm_ln_normal(x);
}
OP2_FN double op2_pm_log10(double x) { return op2_pm_ln(x) / 2.302585092994046; }
OP2_FN double op2_pm_powi(double x, int n) {
    unsigned long m = n < 0 ? (unsigned long)(-(long)n) : (unsigned long)n;
    double r = 1.0;
    double b = x;
    while (m > 0ul) {
        if ((m & 1ul) == 1ul) r = r * b;
        b = b * b;
        m = m >> 1;
    }
    return n < 0 ? 1.0 / r : r;
}
OP2_FN double op2_pm_pow_of_positive(double x, double y) {
    if (x == 0.0) return y > 0.0 ? 0.0 : OP2_PM_DOUBLE(0x7ff0000000000000ul);
    if (x == OP2_PM_DOUBLE(0x7ff0000000000000ul)) return y > 0.0 ? x : 0.0;
    return op2_pm_exp(y * op2_pm_ln(x));
}
OP2_FN double op2_pm_powf(double x, double y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (x != x || y != y) return OP2_PM_DOUBLE(0x7ff8000000000000ul);
    if (floor(y) == y && fabs(y) <= 64.0) return op2_pm_powi(x, (int)y);
    if (x < 0.0) {
        if (floor(y) != y) return OP2_PM_DOUBLE(0x7ff8000000000000ul);
        double m = op2_pm_pow_of_positive(-x, y);
        double h = 0.5 * y;
        return floor(h) != h ? -m : m;
    }
    return op2_pm_pow_of_positive(x, y);
}
OP2_FN float op2_pm_sin_f32(float x) { return (float)op2_pm_sin((double)x); }
OP2_FN float op2_pm_cos_f32(float x) { return (float)op2_pm_cos((double)x); }
OP2_FN float op2_pm_tan_f32(float x) { return (float)op2_pm_tan((double)x); }
OP2_FN float op2_pm_exp_f32(float x) { return (float)op2_pm_exp((double)x); }
OP2_FN float op2_pm_ln_f32(float x) { return (float)op2_pm_ln((double)x); }
OP2_FN float op2_pm_log10_f32(float x) { return (float)op2_pm_log10((double)x); }
OP2_FN float op2_pm_powf_f32(float x, float y) { return (float)op2_pm_powf((double)x, (double)y); }
OP2_FN float op2_pm_powi_f32(float x, int n) { return (float)op2_pm_powi((double)x, n); }
"#;
