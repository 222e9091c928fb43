#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_max_threads(void) { return 1; }
#endif
/* op2 generated: loop `cell_scatter` */
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

static inline void op2_kernel_cell_scatter(const double *w, double (*v)[2]) {
    for (int k = 0, k_end = 3; k < k_end; ++k) {
        v[k][0] += ((*w) * (((double)k) + 1.0));
        v[k][1] += 1.0;
    }
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
        uint64_t *part = partials + u * 0;
        (void)part;
        double *arg0 = (double *)data[0];
        double *arg1 = (double *)data[1];
        const int *map1 = maps[1];
        for (long e = start; e < end; ++e) {
            double s0[1];
            for (int c = 0; c < 1; ++c) s0[c] = arg0[e * 1 + c];
            double s1[3][2];
            for (int i = 0; i < 3; ++i) {
                for (int c = 0; c < 2; ++c) s1[i][c] = 0;
            }
            op2_kernel_cell_scatter(s0, s1);
            for (int i = 0; i < 3; ++i) for (int c = 0; c < 2; ++c) arg1[(long)map1[e * 3 + i] * 2 + c] += s1[i][c];
        }
    }
}
