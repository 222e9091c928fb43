#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_max_threads(void) { return 1; }
#endif
/* op2 generated: loop `update` */
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
OP2_FN int op2_abs_i32(int a) { return a < 0 ? -a : a; }
OP2_FN long op2_abs_i64(long a) { return a < 0 ? -a : a; }
OP2_FN unsigned int op2_abs_u32(unsigned int a) { return a; }
OP2_FN unsigned long op2_abs_u64(unsigned long a) { return a; }
OP2_FN double op2_min_f64(double a, double b) { return fmin(a, b); }
OP2_FN double op2_max_f64(double a, double b) { return fmax(a, b); }
OP2_FN float op2_min_f32(float a, float b) { return fminf(a, b); }
OP2_FN float op2_max_f32(float a, float b) { return fmaxf(a, b); }

static inline void op2_kernel_update(const double *qold, double *q, double *res, const double *adt, double *rms) {
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

void op2_loop(const uint32_t *units, long nunits, long base, long block_size, long limit,
              void *const *data, const int *const *maps, uint64_t *partials, int nthreads)
{
    (void)maps;
    (void)partials;
    #pragma omp parallel for schedule(static) num_threads(nthreads > 0 ? nthreads : omp_get_max_threads())
    for (long u = 0; u < nunits; ++u) {
        const long start = base + (long)units[u] * block_size;
        const long end = start + block_size < limit ? start + block_size : limit;
        uint64_t *part = partials + u * 1;
        (void)part;
        double *arg0 = (double *)data[0];
        double *arg1 = (double *)data[1];
        double *arg2 = (double *)data[2];
        double *arg3 = (double *)data[3];
        double *red4 = (double *)(part + 0);
        for (long e = start; e < end; ++e) {
            double s0[4];
            for (int c = 0; c < 4; ++c) s0[c] = arg0[e * 4 + c];
            double s1[4];
            for (int c = 0; c < 4; ++c) s1[c] = 0;
            double s2[4];
            for (int c = 0; c < 4; ++c) s2[c] = arg2[e * 4 + c];
            double s3[1];
            for (int c = 0; c < 1; ++c) s3[c] = arg3[e * 1 + c];
            double s4[1];
            for (int c = 0; c < 1; ++c) s4[c] = 0;
            op2_kernel_update(s0, s1, s2, s3, s4);
            for (int c = 0; c < 4; ++c) arg1[e * 4 + c] = s1[c];
            for (int c = 0; c < 4; ++c) arg2[e * 4 + c] = s2[c];
            for (int c = 0; c < 1; ++c) red4[c] += s4[c];
        }
    }
}
