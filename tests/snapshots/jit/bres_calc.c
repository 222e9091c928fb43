#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_max_threads(void) { return 1; }
#endif
/* op2 generated: loop `bres_calc` */
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

static inline void op2_kernel_bres_calc(long *op2_status, const double *x1, const double *x2, const double *q1, const double *adt1, double *res1, const int *bound, const double *gm1, const double *eps, const double *qinf) {
    (void)op2_status;
    double dx = (x1[OP2_IX(0, 2)] - x2[OP2_IX(0, 2)]);
    double dy = (x1[OP2_IX(1, 2)] - x2[OP2_IX(1, 2)]);
    double ri = (1.0 / q1[OP2_IX(0, 4)]);
    double p1 = ((*gm1) * (q1[OP2_IX(3, 4)] - ((0.5 * ri) * ((q1[OP2_IX(1, 4)] * q1[OP2_IX(1, 4)]) + (q1[OP2_IX(2, 4)] * q1[OP2_IX(2, 4)])))));
    if ((*bound) == 1) {
        res1[OP2_IX(1, 4)] += (p1 * dy);
        res1[OP2_IX(2, 4)] += ((-p1) * dx);
    }
    else {
        double vol1 = (ri * ((q1[OP2_IX(1, 4)] * dy) - (q1[OP2_IX(2, 4)] * dx)));
        ri = (1.0 / qinf[OP2_IX(0, 4)]);
        double p2 = ((*gm1) * (qinf[OP2_IX(3, 4)] - ((0.5 * ri) * ((qinf[OP2_IX(1, 4)] * qinf[OP2_IX(1, 4)]) + (qinf[OP2_IX(2, 4)] * qinf[OP2_IX(2, 4)])))));
        double vol2 = (ri * ((qinf[OP2_IX(1, 4)] * dy) - (qinf[OP2_IX(2, 4)] * dx)));
        double mu = ((*adt1) * (*eps));
        double f = ((0.5 * ((vol1 * q1[OP2_IX(0, 4)]) + (vol2 * qinf[OP2_IX(0, 4)]))) + (mu * (q1[OP2_IX(0, 4)] - qinf[OP2_IX(0, 4)])));
        res1[OP2_IX(0, 4)] += f;
        f = ((0.5 * ((((vol1 * q1[OP2_IX(1, 4)]) + (p1 * dy)) + (vol2 * qinf[OP2_IX(1, 4)])) + (p2 * dy))) + (mu * (q1[OP2_IX(1, 4)] - qinf[OP2_IX(1, 4)])));
        res1[OP2_IX(1, 4)] += f;
        f = ((0.5 * ((((vol1 * q1[OP2_IX(2, 4)]) - (p1 * dx)) + (vol2 * qinf[OP2_IX(2, 4)])) - (p2 * dx))) + (mu * (q1[OP2_IX(2, 4)] - qinf[OP2_IX(2, 4)])));
        res1[OP2_IX(2, 4)] += f;
        f = ((0.5 * ((vol1 * (q1[OP2_IX(3, 4)] + p1)) + (vol2 * (qinf[OP2_IX(3, 4)] + p2)))) + (mu * (q1[OP2_IX(3, 4)] - qinf[OP2_IX(3, 4)])));
        res1[OP2_IX(3, 4)] += f;
    }
}

typedef double op2_v4d __attribute__((vector_size(32)));
#ifdef __clang__
#define OP2_SHUFFLE4(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
typedef long long op2_v4l __attribute__((vector_size(32)));
#define OP2_SHUFFLE4(a, b, i, j, k, l) __builtin_shuffle(a, b, (op2_v4l){i, j, k, l})
#endif
/* row[l] = (col[0][l], col[1][l], col[2][l], col[3][l]), col[c] = col + c * stride */
static inline void op2_rows4(const double *col, long stride, op2_v4d *row)
{
    op2_v4d a, b, c, d;
    __builtin_memcpy(&a, col, sizeof a);
    __builtin_memcpy(&b, col + stride, sizeof b);
    __builtin_memcpy(&c, col + 2 * stride, sizeof c);
    __builtin_memcpy(&d, col + 3 * stride, sizeof d);
    const op2_v4d ab0 = OP2_SHUFFLE4(a, b, 0, 4, 2, 6), ab1 = OP2_SHUFFLE4(a, b, 1, 5, 3, 7);
    const op2_v4d cd0 = OP2_SHUFFLE4(c, d, 0, 4, 2, 6), cd1 = OP2_SHUFFLE4(c, d, 1, 5, 3, 7);
    row[0] = OP2_SHUFFLE4(ab0, cd0, 0, 1, 4, 5);
    row[1] = OP2_SHUFFLE4(ab1, cd1, 0, 1, 4, 5);
    row[2] = OP2_SHUFFLE4(ab0, cd0, 2, 3, 6, 7);
    row[3] = OP2_SHUFFLE4(ab1, cd1, 2, 3, 6, 7);
}
static inline void op2_add4(double *p, op2_v4d v)
{
    op2_v4d x;
    __builtin_memcpy(&x, p, sizeof x);
    x += v;
    __builtin_memcpy(p, &x, sizeof x);
}
#undef OP2_IX
#define OP2_IX(i, n) ((i) * 4)
static inline void op2_kernel_bres_calc_lanes(long *op2_status, const double *x1, const double *x2, const double *q1, const double *adt1, double *res1, const int *bound, const double *gm1, const double *eps, const double *qinf) {
    (void)op2_status;
    double dx = (x1[OP2_IX(0, 2)] - x2[OP2_IX(0, 2)]);
    double dy = (x1[OP2_IX(1, 2)] - x2[OP2_IX(1, 2)]);
    double ri = (1.0 / q1[OP2_IX(0, 4)]);
    double p1 = ((*gm1) * (q1[OP2_IX(3, 4)] - ((0.5 * ri) * ((q1[OP2_IX(1, 4)] * q1[OP2_IX(1, 4)]) + (q1[OP2_IX(2, 4)] * q1[OP2_IX(2, 4)])))));
    if ((*bound) == 1) {
        res1[OP2_IX(1, 4)] += (p1 * dy);
        res1[OP2_IX(2, 4)] += ((-p1) * dx);
    }
    else {
        double vol1 = (ri * ((q1[OP2_IX(1, 4)] * dy) - (q1[OP2_IX(2, 4)] * dx)));
        ri = (1.0 / qinf[OP2_IX(0, 4)]);
        double p2 = ((*gm1) * (qinf[OP2_IX(3, 4)] - ((0.5 * ri) * ((qinf[OP2_IX(1, 4)] * qinf[OP2_IX(1, 4)]) + (qinf[OP2_IX(2, 4)] * qinf[OP2_IX(2, 4)])))));
        double vol2 = (ri * ((qinf[OP2_IX(1, 4)] * dy) - (qinf[OP2_IX(2, 4)] * dx)));
        double mu = ((*adt1) * (*eps));
        double f = ((0.5 * ((vol1 * q1[OP2_IX(0, 4)]) + (vol2 * qinf[OP2_IX(0, 4)]))) + (mu * (q1[OP2_IX(0, 4)] - qinf[OP2_IX(0, 4)])));
        res1[OP2_IX(0, 4)] += f;
        f = ((0.5 * ((((vol1 * q1[OP2_IX(1, 4)]) + (p1 * dy)) + (vol2 * qinf[OP2_IX(1, 4)])) + (p2 * dy))) + (mu * (q1[OP2_IX(1, 4)] - qinf[OP2_IX(1, 4)])));
        res1[OP2_IX(1, 4)] += f;
        f = ((0.5 * ((((vol1 * q1[OP2_IX(2, 4)]) - (p1 * dx)) + (vol2 * qinf[OP2_IX(2, 4)])) - (p2 * dx))) + (mu * (q1[OP2_IX(2, 4)] - qinf[OP2_IX(2, 4)])));
        res1[OP2_IX(2, 4)] += f;
        f = ((0.5 * ((vol1 * (q1[OP2_IX(3, 4)] + p1)) + (vol2 * (qinf[OP2_IX(3, 4)] + p2)))) + (mu * (q1[OP2_IX(3, 4)] - qinf[OP2_IX(3, 4)])));
        res1[OP2_IX(3, 4)] += f;
    }
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
        const int *map4 = maps[4];
        int *arg5 = (int *)data[5];
        double *arg6 = (double *)data[6];
        double *arg7 = (double *)data[7];
        double *arg8 = (double *)data[8];
        for (long r = unit_runs[u]; r < unit_runs[u + 1]; ++r) {
            const long start = runs[2 * r], end = runs[2 * r + 1];
            double s8[4][4];
            for (int c = 0; c < 4; ++c) for (int l = 0; l < 4; ++l) s8[c][l] = arg8[c];
            long p0 = start;
            for (; p0 + 4 <= end; p0 += 4) {
                double s0[2][4];
                long t0[4];
                double s1[2][4];
                long t1[4];
                double s2[4][4];
                long t2[4];
                double s3[1][4];
                long t3[4];
                double s4[4][4];
                long t4[4];
                int s5[1][4];
                for (int l = 0; l < 4; ++l) {
                    const long e = p0 + l;
                    t0[l] = map0[e * 2 + 0];
                    for (int c = 0; c < 2; ++c) s0[c][l] = arg0[t0[l] * 2 + c];
                    t1[l] = map1[e * 2 + 1];
                    for (int c = 0; c < 2; ++c) s1[c][l] = arg1[t1[l] * 2 + c];
                    t2[l] = map2[e * 1 + 0];
                    for (int c = 0; c < 4; ++c) s2[c][l] = arg2[t2[l] * 4 + c];
                    t3[l] = map3[e * 1 + 0];
                    for (int c = 0; c < 1; ++c) s3[c][l] = arg3[t3[l] * 1 + c];
                    t4[l] = map4[e * 1 + 0];
                    for (int c = 0; c < 4; ++c) s4[c][l] = 0;
                    for (int c = 0; c < 1; ++c) s5[c][l] = arg5[e * 1 + c];
                }
                #pragma omp simd
                for (int l = 0; l < 4; ++l) {
                    long op2_st[3] = {0, 0, 0};
                    op2_kernel_bres_calc_lanes(op2_st, &s0[0][l], &s1[0][l], &s2[0][l], &s3[0][l], &s4[0][l], &s5[0][l], arg6, arg7, &s8[0][l]);
                }
                for (int q = 0; q < 4; q += 4) {
                    op2_v4d r4[4];
                    op2_rows4(&s4[0][q], 4, r4);
                    for (int l = q; l < q + 4; ++l) {
                        const long e = p0 + l;
                        (void)e;
                        op2_add4(arg4 + t4[l] * 4, r4[l - q]);
                    }
                }
            }
            for (long e = p0; e < end; ++e) {
                long op2_st[3] = {0, 0, 0};
                double *s0 = arg0 + (long)map0[e * 2 + 0] * 2;
                double *s1 = arg1 + (long)map1[e * 2 + 1] * 2;
                double *s2 = arg2 + (long)map2[e * 1 + 0] * 4;
                double *s3 = arg3 + (long)map3[e * 1 + 0] * 1;
                double s4[4];
                long t4;
                t4 = map4[e * 1 + 0];
                for (int c = 0; c < 4; ++c) s4[c] = 0;
                int *s5 = arg5 + e * 1;
                double *s6 = arg6;
                double *s7 = arg7;
                double *s8 = arg8;
                op2_kernel_bres_calc(op2_st, s0, s1, s2, s3, s4, s5, s6, s7, s8);
                for (int c = 0; c < 4; ++c) arg4[t4 * 4 + c] += s4[c];
            }
        }
    }
}
