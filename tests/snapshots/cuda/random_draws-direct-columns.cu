/* op2 generated (CUDA): loop `random_draws`, indirect writes: None */
#define OP2_FN static __device__ inline
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#define OP2_HELPERS(T, S) \
    OP2_FN T op2_min_##S(T a, T b) { return a < b ? a : b; } \
    OP2_FN T op2_max_##S(T a, T b) { return a > b ? a : b; }
OP2_HELPERS(int, i32)
OP2_HELPERS(long, i64)
OP2_HELPERS(unsigned int, u32)
OP2_HELPERS(unsigned long, u64)
#undef OP2_HELPERS
#define OP2_WRAPPING(T, U, S) \
    OP2_FN T op2_wrapping_add_##S(T a, T b) { return (T)((U)a + (U)b); } \
    OP2_FN T op2_wrapping_sub_##S(T a, T b) { return (T)((U)a - (U)b); } \
    OP2_FN T op2_wrapping_mul_##S(T a, T b) { return (T)((U)a * (U)b); } \
    OP2_FN T op2_wrapping_neg_##S(T a) { return (T)((U)0 - (U)a); } \
    OP2_FN T op2_wrapping_shl_##S(T a, long b) { return (T)((U)a << (b & (long)(8 * sizeof(T) - 1))); } \
    OP2_FN T op2_wrapping_shr_##S(T a, long b) { return a >> (b & (long)(8 * sizeof(T) - 1)); }
OP2_WRAPPING(int, unsigned int, i32)
OP2_WRAPPING(long, unsigned long, i64)
OP2_WRAPPING(unsigned int, unsigned int, u32)
OP2_WRAPPING(unsigned long, unsigned long, u64)
#undef OP2_WRAPPING
OP2_FN int op2_abs_i32(int a) { return a < 0 ? op2_wrapping_neg_i32(a) : a; }
OP2_FN long op2_abs_i64(long a) { return a < 0 ? op2_wrapping_neg_i64(a) : a; }
OP2_FN unsigned int op2_abs_u32(unsigned int a) { return a; }
OP2_FN unsigned long op2_abs_u64(unsigned long a) { return a; }
OP2_FN double op2_min_f64(double a, double b) { return fmin(a, b); }
OP2_FN double op2_max_f64(double a, double b) { return fmax(a, b); }
OP2_FN float op2_min_f32(float a, float b) { return fminf(a, b); }
OP2_FN float op2_max_f32(float a, float b) { return fmaxf(a, b); }
OP2_FN int op2_as_i32(double x) { return x != x ? 0 : x <= -2147483648.0 ? (-2147483647 - 1) : x >= 2147483647.0 ? 2147483647 : (int)x; }
OP2_FN long op2_as_i64(double x) { return x != x ? 0 : x <= -9223372036854775808.0 ? (-9223372036854775807L - 1) : x >= 9223372036854775807.0 ? 9223372036854775807L : (long)x; }
OP2_FN unsigned int op2_as_u32(double x) { return !(x > 0.0) ? 0u : x >= 4294967295.0 ? 4294967295u : (unsigned int)x; }
OP2_FN unsigned long op2_as_u64(double x) { return !(x > 0.0) ? 0ul : x >= 18446744073709551615.0 ? 18446744073709551615ul : (unsigned long)x; }
#ifdef OP2_CHECKED
OP2_FN void op2_fail(long *st, long code, long index, long length) { if (!st[0]) { st[0] = code; st[1] = index; st[2] = length; } }
OP2_FN long op2_ix(long i, long n, long *st) { if ((unsigned long)i < (unsigned long)n) return i; op2_fail(st, 1, i, n); return 0; }
#define OP2_IX(i, n) op2_ix((long)(i), (long)(n), op2_status)
#define OP2_IX_LOCAL(i, n) op2_ix((long)(i), (long)(n), op2_status)
#define OP2_DIVISION(T, S, MIN) \
    OP2_FN T op2_div_##S(T a, T b, long *st) { if (b == 0) { op2_fail(st, 2, 0, 0); return 0; } if (MIN != 0 && a == MIN && b == (T)-1) { op2_fail(st, 3, 0, 0); return a; } return a / b; } \
    OP2_FN T op2_rem_##S(T a, T b, long *st) { if (b == 0) { op2_fail(st, 2, 0, 0); return 0; } if (MIN != 0 && a == MIN && b == (T)-1) { op2_fail(st, 3, 0, 0); return 0; } return a % b; }
#else
#define OP2_IX(i, n) (i)
#define OP2_IX_LOCAL(i, n) (i)
#define OP2_DIVISION(T, S, MIN) \
    OP2_FN T op2_div_##S(T a, T b, long *st) { (void)st; return a / b; } \
    OP2_FN T op2_rem_##S(T a, T b, long *st) { (void)st; return a % b; }
#endif
OP2_DIVISION(int, i32, (-2147483647 - 1))
OP2_DIVISION(long, i64, (-9223372036854775807L - 1))
OP2_DIVISION(unsigned int, u32, 0u)
OP2_DIVISION(unsigned long, u64, 0ul)
#undef OP2_DIVISION

#if defined(__OPENCL_VERSION__)
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
OP2_FN void op2_philox4x32_10(unsigned int *c, unsigned int k0, unsigned int k1) {
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
static __device__ inline void op2_kernel_random_draws(long *op2_status, unsigned int *words, double *values, const long *id, const long *key) {
    (void)op2_status;
    op2_philox rng = op2_philox_new(((unsigned long)key[OP2_IX(0, 2)]), ((unsigned long)(*id)), ((unsigned int)key[OP2_IX(1, 2)]));
    words[OP2_IX(0, 3)] = op2_philox_u32(&rng);
    words[OP2_IX(1, 3)] = op2_philox_below(&rng, 6u);
    words[OP2_IX(2, 3)] = op2_philox_below(&rng, 1000000007u);
    values[OP2_IX(0, 6)] = op2_philox_uniform_f64(&rng);
    values[OP2_IX(1, 6)] = ((double)op2_philox_uniform_f32(&rng));
    values[OP2_IX(2, 6)] = (op2_philox_bernoulli(&rng, 0.3) ? 1.0 : 0.0);
    values[OP2_IX(3, 6)] = ((double)op2_wrapping_shr_u64(op2_philox_u64(&rng), (long)(11)));
    values[OP2_IX(4, 6)] = op2_philox_normal_f64(&rng);
    values[OP2_IX(5, 6)] = ((double)op2_philox_normal_f32(&rng));
}


extern "C" __global__ void op2_loop(const unsigned int *units,
        long unit_offset,
        long base,
        long block_size,
        long limit,
        const unsigned int *colours,
        const unsigned int *ncolours,
        unsigned long long *partials,
        long partial_offset,
        int *report,
        unsigned int *arg0,
        long stride0,
        double *arg1,
        long stride1,
        const long *__restrict__ arg2,
        const long *__restrict__ arg3)
{
    const long g = (long)blockIdx.x;
    const long tid = (long)threadIdx.x;
    const long b = units ? (long)units[unit_offset + g] : g;
    const long start = base + b * block_size;
    const long e = start + tid;
    const int active = e < limit;
    long op2_st[3] = {0, 0, 0};
    unsigned int s0[3];
    double s1[6];
    long s2[1];
    long s3[2];
    if (active) {
        for (int c = 0; c < 3; ++c) s0[c] = 0;
        for (int c = 0; c < 6; ++c) s1[c] = 0;
        for (int c = 0; c < 1; ++c) s2[c] = arg2[e * 1 + c];
        for (int c = 0; c < 2; ++c) s3[c] = arg3[c];
        op2_kernel_random_draws(op2_st, s0, s1, s2, s3);
        for (int c = 0; c < 3; ++c) arg0[e + c * stride0] = s0[c];
        for (int c = 0; c < 6; ++c) arg1[e + c * stride1] = s1[c];
    }
}
