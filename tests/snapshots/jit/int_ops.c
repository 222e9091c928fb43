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
OP2_FN int op2_abs_i32(int a) { return a < 0 ? -a : a; }
OP2_FN long op2_abs_i64(long a) { return a < 0 ? -a : a; }
OP2_FN unsigned int op2_abs_u32(unsigned int a) { return a; }
OP2_FN unsigned long op2_abs_u64(unsigned long a) { return a; }
OP2_FN double op2_min_f64(double a, double b) { return fmin(a, b); }
OP2_FN double op2_max_f64(double a, double b) { return fmax(a, b); }
OP2_FN float op2_min_f32(float a, float b) { return fminf(a, b); }
OP2_FN float op2_max_f32(float a, float b) { return fmaxf(a, b); }

static inline void op2_kernel_int_ops(int *x, int *count, int *biggest) {
    (*x) = (((*x) * 3) - 1);
    (*count) += 1;
    (*biggest) = op2_max_i32((*biggest), (*x));
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
        uint64_t *part = partials + u * 2;
        (void)part;
        int *arg0 = (int *)data[0];
        int *red1 = (int *)(part + 0);
        int *red2 = (int *)(part + 1);
        for (long e = start; e < end; ++e) {
            int s0[1];
            for (int c = 0; c < 1; ++c) s0[c] = arg0[e * 1 + c];
            int s1[1];
            for (int c = 0; c < 1; ++c) s1[c] = 0;
            int s2[1];
            for (int c = 0; c < 1; ++c) s2[c] = red2[c];
            op2_kernel_int_ops(s0, s1, s2);
            for (int c = 0; c < 1; ++c) arg0[e * 1 + c] = s0[c];
            for (int c = 0; c < 1; ++c) red1[c] += s1[c];
            for (int c = 0; c < 1; ++c) red2[c] = op2_max_i32(red2[c], s2[c]);
        }
    }
}
