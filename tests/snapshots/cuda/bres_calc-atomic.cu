/* op2 generated (CUDA): loop `bres_calc`, indirect writes: Atomic */
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
OP2_FN int op2_abs_i32(int a) { return a < 0 ? -a : a; }
OP2_FN long op2_abs_i64(long a) { return a < 0 ? -a : a; }
OP2_FN unsigned int op2_abs_u32(unsigned int a) { return a; }
OP2_FN unsigned long op2_abs_u64(unsigned long a) { return a; }
OP2_FN double op2_min_f64(double a, double b) { return fmin(a, b); }
OP2_FN double op2_max_f64(double a, double b) { return fmax(a, b); }
OP2_FN float op2_min_f32(float a, float b) { return fminf(a, b); }
OP2_FN float op2_max_f32(float a, float b) { return fmaxf(a, b); }
OP2_FN void op2_atomic_add_f64(double *p, double v) {
    atomicAdd(p, v);
}

static __device__ inline void op2_kernel_bres_calc(const double *x1, const double *x2, const double *q1, const double *adt1, double *res1, const int *bound, const double *gm1, const double *eps, const double *qinf) {
    double dx = (x1[0] - x2[0]);
    double dy = (x1[1] - x2[1]);
    double ri = (1.0 / q1[0]);
    double p1 = ((*gm1) * (q1[3] - ((0.5 * ri) * ((q1[1] * q1[1]) + (q1[2] * q1[2])))));
    if (((*bound) == 1)) {
        res1[1] += (p1 * dy);
        res1[2] += ((-p1) * dx);
    }
    else {
        double vol1 = (ri * ((q1[1] * dy) - (q1[2] * dx)));
        ri = (1.0 / qinf[0]);
        double p2 = ((*gm1) * (qinf[3] - ((0.5 * ri) * ((qinf[1] * qinf[1]) + (qinf[2] * qinf[2])))));
        double vol2 = (ri * ((qinf[1] * dy) - (qinf[2] * dx)));
        double mu = ((*adt1) * (*eps));
        double f = ((0.5 * ((vol1 * q1[0]) + (vol2 * qinf[0]))) + (mu * (q1[0] - qinf[0])));
        res1[0] += f;
        f = ((0.5 * ((((vol1 * q1[1]) + (p1 * dy)) + (vol2 * qinf[1])) + (p2 * dy))) + (mu * (q1[1] - qinf[1])));
        res1[1] += f;
        f = ((0.5 * ((((vol1 * q1[2]) - (p1 * dx)) + (vol2 * qinf[2])) - (p2 * dx))) + (mu * (q1[2] - qinf[2])));
        res1[2] += f;
        f = ((0.5 * ((vol1 * (q1[3] + p1)) + (vol2 * (qinf[3] + p2)))) + (mu * (q1[3] - qinf[3])));
        res1[3] += f;
    }
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
        const double *__restrict__ arg0,
        const int *__restrict__ map0,
        const double *__restrict__ arg1,
        const int *__restrict__ map1,
        const double *__restrict__ arg2,
        const int *__restrict__ map2,
        const double *__restrict__ arg3,
        const int *__restrict__ map3,
        double *arg4,
        const int *__restrict__ map4,
        const int *__restrict__ arg5,
        const double *__restrict__ arg6,
        const double *__restrict__ arg7,
        const double *__restrict__ arg8)
{
    const long g = (long)blockIdx.x;
    const long tid = (long)threadIdx.x;
    const long b = units ? (long)units[unit_offset + g] : g;
    const long start = base + b * block_size;
    const long e = start + tid;
    const int active = e < limit;
    double s0[2];
    long t0;
    double s1[2];
    long t1;
    double s2[4];
    long t2;
    double s3[1];
    long t3;
    double s4[4];
    long t4;
    int s5[1];
    double s6[1];
    double s7[1];
    double s8[4];
    if (active) {
        t0 = map0[e * 2 + 0];
        for (int c = 0; c < 2; ++c) s0[c] = arg0[t0 * 2 + c];
        t1 = map1[e * 2 + 1];
        for (int c = 0; c < 2; ++c) s1[c] = arg1[t1 * 2 + c];
        t2 = map2[e * 1 + 0];
        for (int c = 0; c < 4; ++c) s2[c] = arg2[t2 * 4 + c];
        t3 = map3[e * 1 + 0];
        for (int c = 0; c < 1; ++c) s3[c] = arg3[t3 * 1 + c];
        t4 = map4[e * 1 + 0];
        for (int c = 0; c < 4; ++c) s4[c] = 0;
        for (int c = 0; c < 1; ++c) s5[c] = arg5[e * 1 + c];
        for (int c = 0; c < 1; ++c) s6[c] = arg6[c];
        for (int c = 0; c < 1; ++c) s7[c] = arg7[c];
        for (int c = 0; c < 4; ++c) s8[c] = arg8[c];
        op2_kernel_bres_calc(s0, s1, s2, s3, s4, s5, s6, s7, s8);
        for (int c = 0; c < 4; ++c) op2_atomic_add_f64(&arg4[t4 * 4 + c], s4[c]);
    }
}
