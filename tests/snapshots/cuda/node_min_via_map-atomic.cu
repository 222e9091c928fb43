/* op2 generated (CUDA): loop `node_min_via_map`, indirect writes: Atomic */
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
OP2_FN void op2_atomic_min_f64(double *p, double v) {
    unsigned long long *q = (unsigned long long *)p;
    unsigned long long old = *q, assumed;
    do {
        assumed = old;
        old = atomicCAS(q, assumed, (unsigned long long)__double_as_longlong(op2_min_f64(__longlong_as_double((long long)assumed), v)));
    } while (assumed != old);
}

static __device__ inline void op2_kernel_node_min_via_map(const double *v, double *target) {
    (*target) = fmin((*target), (*v));
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
        const int *__restrict__ map1)
{
    const long g = (long)blockIdx.x;
    const long tid = (long)threadIdx.x;
    const long b = units ? (long)units[unit_offset + g] : g;
    const long start = base + b * block_size;
    const long e = start + tid;
    const int active = e < limit;
    double s0[1];
    double s1[1];
    long t1;
    if (active) {
        for (int c = 0; c < 1; ++c) s0[c] = arg0[e * 1 + c];
        t1 = map1[e * 2 + 1];
        for (int c = 0; c < 1; ++c) s1[c] = arg1[t1 * 1 + c];
        op2_kernel_node_min_via_map(s0, s1);
        for (int c = 0; c < 1; ++c) op2_atomic_min_f64(&arg1[t1 * 1 + c], s1[c]);
    }
}
