/* op2 generated (CUDA): loop `ragged_count`, indirect writes: Coloured { whole_body: true } */
#define OP2_FN static __device__ inline
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#define OP2_GLOBAL 
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
OP2_FN void op2_ragged_inc_i32(OP2_GLOBAL int *p, int v) { *p = op2_wrapping_add_i32(*p, v); }

#define OP2_TGT_hits(t, j) (t)[j]
static __device__ inline void op2_kernel_ragged_count(long *op2_status, OP2_GLOBAL int *hits, OP2_GLOBAL const int *hits_targets, int hits_len) {
    (void)op2_status;
    for (unsigned long j = 0ul, j_end = ((unsigned long)hits_len); j < j_end; ++j) {
        op2_ragged_inc_i32(&hits[OP2_TGT_hits(hits_targets, OP2_IX(j, hits_len))], 1);
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
        int *report,
        int *arg0,
        const int *__restrict__ map0,
        const int *__restrict__ tgt0)
{
    const long g = (long)blockIdx.x;
    const long tid = (long)threadIdx.x;
    const long b = units ? (long)units[unit_offset + g] : g;
    const long start = base + b * block_size;
    const long e = start + tid;
    const int active = e < limit;
    long op2_st[3] = {0, 0, 0};
    long o0;
    int n0;
    const unsigned int my_colour = active ? colours[e - base] : 0xffffffffu;
    const unsigned int nc = ncolours[b];
    for (unsigned int col = 0; col < nc; ++col) {
        if (my_colour == col) {
            o0 = map0[e];
            n0 = (int)(map0[e + 1] - o0);
            op2_kernel_ragged_count(op2_st, arg0, tgt0 + o0, n0);
        }
        __syncthreads();
    }
}
