/* op2 generated (CUDA): loop `f32_ops`, indirect writes: None */
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

static __device__ inline void op2_kernel_f32_ops(float *x, float *total) {
    x[0] *= 0.5f;
    x[1] += x[0];
    (*total) += x[1];
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
        float *arg0,
        float *arg1)
{
    extern __shared__ unsigned long long op2_scratch[];
    const long g = (long)blockIdx.x;
    const long tid = (long)threadIdx.x;
    const long b = units ? (long)units[unit_offset + g] : g;
    const long start = base + b * block_size;
    const long e = start + tid;
    const int active = e < limit;
    unsigned long long *part = partials + (partial_offset + g) * 1;
    float red1[1];
    for (int c = 0; c < 1; ++c) red1[c] = 0;
    float s0[2];
    float s1[1];
    if (active) {
        for (int c = 0; c < 2; ++c) s0[c] = arg0[e * 2 + c];
        for (int c = 0; c < 1; ++c) s1[c] = 0;
        op2_kernel_f32_ops(s0, s1);
        for (int c = 0; c < 2; ++c) arg0[e * 2 + c] = s0[c];
        for (int c = 0; c < 1; ++c) red1[c] += s1[c];
    }
    const long n = limit - start < block_size ? limit - start : block_size;
    long top = 1;
    while (top < n) top <<= 1;
    top >>= 1;
    {
        float *x = (float *)op2_scratch;
        float *out = (float *)(part + 0);
        for (int c = 0; c < 1; ++c) {
            __syncthreads();
            x[tid] = red1[c];
            __syncthreads();
            for (long h = top; h > 0; h >>= 1) {
                if (tid < h && tid + h < n) x[tid] = x[tid] + x[tid + h];
                __syncthreads();
            }
            if (tid == 0) out[c] = out[c] + x[0];
        }
    }
}
