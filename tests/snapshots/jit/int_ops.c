#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_max_threads(void) { return 1; }
#endif
/* op2 generated: loop `int_ops` */
#include <math.h>
#include <stdint.h>
#define OP2_FN static inline
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

static inline void op2_kernel_int_ops(long *op2_status, int *x, int *count, int *biggest) {
    (void)op2_status;
    (*x) = op2_wrapping_sub_i32(op2_wrapping_mul_i32((*x), 3), 1);
    (*count) = op2_wrapping_add_i32((*count), 1);
    (*biggest) = op2_max_i32((*biggest), (*x));
}

void op2_loop(const long *runs, const long *unit_runs, long nunits,
              void *const *data, const int *const *maps, uint64_t *partials, int nthreads,
              long *report, const int *elems)
{
    (void)maps;
    (void)partials;
    (void)report;
    (void)elems;
    #pragma omp parallel for schedule(static) num_threads(nthreads > 0 ? nthreads : omp_get_max_threads())
    for (long u = 0; u < nunits; ++u) {
        uint64_t *part = partials + u * 2;
        (void)part;
        int *arg0 = (int *)data[0];
        int *red1 = (int *)(part + 0);
        int *red2 = (int *)(part + 1);
        for (long r = unit_runs[u]; r < unit_runs[u + 1]; ++r) {
            const long start = runs[2 * r], end = runs[2 * r + 1];
            for (long e = start; e < end; ++e) {
                long op2_st[3] = {0, 0, 0};
                int *s0 = arg0 + e * 1;
                int s1[1];
                for (int c = 0; c < 1; ++c) s1[c] = 0;
                int s2[1];
                for (int c = 0; c < 1; ++c) s2[c] = red2[c];
                op2_kernel_int_ops(op2_st, s0, s1, s2);
                for (int c = 0; c < 1; ++c) red1[c] = op2_wrapping_add_i32(red1[c], s1[c]);
                for (int c = 0; c < 1; ++c) red2[c] = op2_max_i32(red2[c], s2[c]);
            }
        }
    }
}
