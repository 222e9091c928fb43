/* op2 generated (CUDA): loop `adt_calc`, indirect writes: None */
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

static __device__ inline void op2_kernel_adt_calc(const double *x1, const double *x2, const double *x3, const double *x4, const double *q, double *adt, const double *gam, const double *gm1, const double *cfl) {
    double ri = (1.0 / q[0]);
    double u = (ri * q[1]);
    double v = (ri * q[2]);
    double c = sqrt((((*gam) * (*gm1)) * ((ri * q[3]) - (0.5 * ((u * u) + (v * v))))));
    double dx = (x2[0] - x1[0]);
    double dy = (x2[1] - x1[1]);
    (*adt) = (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x3[0] - x2[0]);
    dy = (x3[1] - x2[1]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x4[0] - x3[0]);
    dy = (x4[1] - x3[1]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x1[0] - x4[0]);
    dy = (x1[1] - x4[1]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    (*adt) /= (*cfl);
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
        const double *__restrict__ arg4,
        double *arg5,
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
    double s2[2];
    long t2;
    double s3[2];
    long t3;
    double s4[4];
    double s5[1];
    double s6[1];
    double s7[1];
    double s8[1];
    if (active) {
        t0 = map0[e * 4 + 0];
        for (int c = 0; c < 2; ++c) s0[c] = arg0[t0 * 2 + c];
        t1 = map1[e * 4 + 1];
        for (int c = 0; c < 2; ++c) s1[c] = arg1[t1 * 2 + c];
        t2 = map2[e * 4 + 2];
        for (int c = 0; c < 2; ++c) s2[c] = arg2[t2 * 2 + c];
        t3 = map3[e * 4 + 3];
        for (int c = 0; c < 2; ++c) s3[c] = arg3[t3 * 2 + c];
        for (int c = 0; c < 4; ++c) s4[c] = arg4[e * 4 + c];
        for (int c = 0; c < 1; ++c) s5[c] = 0;
        for (int c = 0; c < 1; ++c) s6[c] = arg6[c];
        for (int c = 0; c < 1; ++c) s7[c] = arg7[c];
        for (int c = 0; c < 1; ++c) s8[c] = arg8[c];
        op2_kernel_adt_calc(s0, s1, s2, s3, s4, s5, s6, s7, s8);
        for (int c = 0; c < 1; ++c) arg5[e * 1 + c] = s5[c];
    }
}
