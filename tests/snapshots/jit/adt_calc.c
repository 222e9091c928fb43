#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_max_threads(void) { return 1; }
#endif
/* op2 generated: loop `adt_calc` */
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

static inline void op2_kernel_adt_calc(long *op2_status, const double *x1, const double *x2, const double *x3, const double *x4, const double *q, double *adt, const double *gam, const double *gm1, const double *cfl) {
    (void)op2_status;
    double ri = (1.0 / q[OP2_IX(0, 4)]);
    double u = (ri * q[OP2_IX(1, 4)]);
    double v = (ri * q[OP2_IX(2, 4)]);
    double c = sqrt((((*gam) * (*gm1)) * ((ri * q[OP2_IX(3, 4)]) - (0.5 * ((u * u) + (v * v))))));
    double dx = (x2[OP2_IX(0, 2)] - x1[OP2_IX(0, 2)]);
    double dy = (x2[OP2_IX(1, 2)] - x1[OP2_IX(1, 2)]);
    (*adt) = (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x3[OP2_IX(0, 2)] - x2[OP2_IX(0, 2)]);
    dy = (x3[OP2_IX(1, 2)] - x2[OP2_IX(1, 2)]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x4[OP2_IX(0, 2)] - x3[OP2_IX(0, 2)]);
    dy = (x4[OP2_IX(1, 2)] - x3[OP2_IX(1, 2)]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x1[OP2_IX(0, 2)] - x4[OP2_IX(0, 2)]);
    dy = (x1[OP2_IX(1, 2)] - x4[OP2_IX(1, 2)]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    (*adt) /= (*cfl);
}

#undef OP2_IX
#define OP2_IX(i, n) ((i) * 4)
static inline void op2_kernel_adt_calc_lanes(long *op2_status, const double *x1, const double *x2, const double *x3, const double *x4, const double *q, double *adt, const double *gam, const double *gm1, const double *cfl) {
    (void)op2_status;
    double ri = (1.0 / q[OP2_IX(0, 4)]);
    double u = (ri * q[OP2_IX(1, 4)]);
    double v = (ri * q[OP2_IX(2, 4)]);
    double c = sqrt((((*gam) * (*gm1)) * ((ri * q[OP2_IX(3, 4)]) - (0.5 * ((u * u) + (v * v))))));
    double dx = (x2[OP2_IX(0, 2)] - x1[OP2_IX(0, 2)]);
    double dy = (x2[OP2_IX(1, 2)] - x1[OP2_IX(1, 2)]);
    (*adt) = (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x3[OP2_IX(0, 2)] - x2[OP2_IX(0, 2)]);
    dy = (x3[OP2_IX(1, 2)] - x2[OP2_IX(1, 2)]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x4[OP2_IX(0, 2)] - x3[OP2_IX(0, 2)]);
    dy = (x4[OP2_IX(1, 2)] - x3[OP2_IX(1, 2)]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    dx = (x1[OP2_IX(0, 2)] - x4[OP2_IX(0, 2)]);
    dy = (x1[OP2_IX(1, 2)] - x4[OP2_IX(1, 2)]);
    (*adt) += (fabs(((u * dy) - (v * dx))) + (c * sqrt(((dx * dx) + (dy * dy)))));
    (*adt) /= (*cfl);
}

#undef OP2_IX
#define OP2_IX(i, n) (i)
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
        uint64_t *part = partials + u * 0;
        (void)part;
        double *arg0 = (double *)data[0];
        const int *map0 = maps[0];
        double *arg1 = (double *)data[1];
        const int *map1 = maps[1];
        double *arg2 = (double *)data[2];
        const int *map2 = maps[2];
        double *arg3 = (double *)data[3];
        const int *map3 = maps[3];
        double *arg4 = (double *)data[4];
        double *arg5 = (double *)data[5];
        double *arg6 = (double *)data[6];
        double *arg7 = (double *)data[7];
        double *arg8 = (double *)data[8];
        for (long r = unit_runs[u]; r < unit_runs[u + 1]; ++r) {
            const long start = runs[2 * r], end = runs[2 * r + 1];
            long p0 = start;
            for (; p0 + 4 <= end; p0 += 4) {
                double s0[2][4];
                long t0[4];
                double s1[2][4];
                long t1[4];
                double s2[2][4];
                long t2[4];
                double s3[2][4];
                long t3[4];
                double s4[4][4];
                double s5[1][4];
                for (int l = 0; l < 4; ++l) {
                    const long e = p0 + l;
                    t0[l] = map0[e * 4 + 0];
                    for (int c = 0; c < 2; ++c) s0[c][l] = arg0[t0[l] * 2 + c];
                    t1[l] = map1[e * 4 + 1];
                    for (int c = 0; c < 2; ++c) s1[c][l] = arg1[t1[l] * 2 + c];
                    t2[l] = map2[e * 4 + 2];
                    for (int c = 0; c < 2; ++c) s2[c][l] = arg2[t2[l] * 2 + c];
                    t3[l] = map3[e * 4 + 3];
                    for (int c = 0; c < 2; ++c) s3[c][l] = arg3[t3[l] * 2 + c];
                    for (int c = 0; c < 4; ++c) s4[c][l] = arg4[e * 4 + c];
                    for (int c = 0; c < 1; ++c) s5[c][l] = 0;
                }
                #pragma omp simd
                for (int l = 0; l < 4; ++l) {
                    long op2_st[3] = {0, 0, 0};
                    op2_kernel_adt_calc_lanes(op2_st, &s0[0][l], &s1[0][l], &s2[0][l], &s3[0][l], &s4[0][l], &s5[0][l], arg6, arg7, arg8);
                }
                for (int q = 0; q < 4; q += 4) {
                    for (int l = q; l < q + 4; ++l) {
                        const long e = p0 + l;
                        (void)e;
                        for (int c = 0; c < 1; ++c) arg5[e * 1 + c] = s5[c][l];
                    }
                }
            }
            for (long e = p0; e < end; ++e) {
                long op2_st[3] = {0, 0, 0};
                double *s0 = arg0 + (long)map0[e * 4 + 0] * 2;
                double *s1 = arg1 + (long)map1[e * 4 + 1] * 2;
                double *s2 = arg2 + (long)map2[e * 4 + 2] * 2;
                double *s3 = arg3 + (long)map3[e * 4 + 3] * 2;
                double *s4 = arg4 + e * 4;
                double s5[1];
                for (int c = 0; c < 1; ++c) s5[c] = 0;
                double *s6 = arg6;
                double *s7 = arg7;
                double *s8 = arg8;
                op2_kernel_adt_calc(op2_st, s0, s1, s2, s3, s4, s5, s6, s7, s8);
                for (int c = 0; c < 1; ++c) arg5[e * 1 + c] = s5[c];
            }
        }
    }
}
