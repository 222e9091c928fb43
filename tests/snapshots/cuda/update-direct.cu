/* op2 generated (CUDA): loop `update`, indirect writes: None */
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

static __device__ inline void op2_kernel_update(const double *qold, double *q, double *res, const double *adt, double *rms) {
    double rmsl = 0.0;
    double adti = (1.0 / (*adt));
    for (int n = 0, n_end = 4; n < n_end; ++n) {
        double del = (adti * res[n]);
        q[n] = (qold[n] - del);
        res[n] = 0.0;
        rmsl += (del * del);
    }
    (*rms) += rmsl;
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
        double *arg1,
        double *arg2,
        const double *__restrict__ arg3,
        double *arg4)
{
    extern __shared__ unsigned long long op2_scratch[];
    const long g = (long)blockIdx.x;
    const long tid = (long)threadIdx.x;
    const long b = units ? (long)units[unit_offset + g] : g;
    const long start = base + b * block_size;
    const long e = start + tid;
    const int active = e < limit;
    unsigned long long *part = partials + (partial_offset + g) * 1;
    double red4[1];
    for (int c = 0; c < 1; ++c) red4[c] = 0;
    double s0[4];
    double s1[4];
    double s2[4];
    double s3[1];
    double s4[1];
    if (active) {
        for (int c = 0; c < 4; ++c) s0[c] = arg0[e * 4 + c];
        for (int c = 0; c < 4; ++c) s1[c] = 0;
        for (int c = 0; c < 4; ++c) s2[c] = arg2[e * 4 + c];
        for (int c = 0; c < 1; ++c) s3[c] = arg3[e * 1 + c];
        for (int c = 0; c < 1; ++c) s4[c] = 0;
        op2_kernel_update(s0, s1, s2, s3, s4);
        for (int c = 0; c < 4; ++c) arg1[e * 4 + c] = s1[c];
        for (int c = 0; c < 4; ++c) arg2[e * 4 + c] = s2[c];
        for (int c = 0; c < 1; ++c) red4[c] += s4[c];
    }
    const long n = limit - start < block_size ? limit - start : block_size;
    long top = 1;
    while (top < n) top <<= 1;
    top >>= 1;
    {
        double *x = (double *)op2_scratch;
        double *out = (double *)(part + 0);
        for (int c = 0; c < 1; ++c) {
            __syncthreads();
            x[tid] = red4[c];
            __syncthreads();
            for (long h = top; h > 0; h >>= 1) {
                if (tid < h && tid + h < n) x[tid] = x[tid] + x[tid + h];
                __syncthreads();
            }
            if (tid == 0) out[c] = out[c] + x[0];
        }
    }
}
