/* op2 generated (CUDA): loop `cell_scatter`, indirect writes: Coloured { whole_body: false } */
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

static __device__ inline void op2_kernel_cell_scatter(const double *w, double (*v)[2]) {
    for (int k = 0, k_end = 3; k < k_end; ++k) {
        v[k][0] += ((*w) * (((double)k) + 1.0));
        v[k][1] += 1.0;
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
    double s1[3][2];
    if (active) {
        for (int c = 0; c < 1; ++c) s0[c] = arg0[e * 1 + c];
        for (int i = 0; i < 3; ++i) {
            for (int c = 0; c < 2; ++c) s1[i][c] = 0;
        }
        op2_kernel_cell_scatter(s0, s1);
    }
    const unsigned int my_colour = active ? colours[e - base] : 0xffffffffu;
    const unsigned int nc = ncolours[b];
    for (unsigned int col = 0; col < nc; ++col) {
        if (my_colour == col) {
            for (int i = 0; i < 3; ++i) for (int c = 0; c < 2; ++c) arg1[(long)map1[e * 3 + i] * 2 + c] += s1[i][c];
        }
        __syncthreads();
    }
}
