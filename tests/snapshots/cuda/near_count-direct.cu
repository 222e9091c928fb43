/* op2 generated (CUDA): loop `near_count`, indirect writes: None */
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

typedef struct { OP2_GLOBAL const int *starts; double g[8]; } op2_spatial;
typedef struct { long strip[18][2]; int count; int next; long at; long end; } op2_near;
OP2_FN op2_spatial op2_spatial_new(OP2_GLOBAL const int *starts, const double *grid) {
    op2_spatial s;
    s.starts = starts;
    for (int i = 0; i < 8; ++i) s.g[i] = grid[i];
    return s;
}
OP2_FN long op2_axis_bin(double x, double min, double inv, double n, int wrap) {
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#endif
    double c = floor((x - min) * inv);
    if (wrap) c = c - floor(c / n) * n;
    if (!(c >= 0.0)) c = 0.0;
    if (c > n - 1.0) c = n - 1.0;
    return (long)c;
}
OP2_FN int op2_spatial_axis(long b, long n, int wrap, long *out) {
    int count = 0;
    for (long d = -1; d <= 1; ++d) {
        long c = b + d;
        if (wrap) {
            c = ((c % n) + n) % n;
        } else if (c < 0 || c >= n) {
            continue;
        }
        int seen = 0;
        for (int i = 0; i < count; ++i) seen |= out[i] == c;
        if (!seen) out[count++] = c;
    }
    return count;
}
OP2_FN op2_near op2_spatial_near(const op2_spatial *s, double x, double y, double z) {
    op2_near it;
    it.count = 0;
    it.next = 0;
    it.at = 0;
    it.end = 0;
    const int wrap = s->g[7] != 0.0;
    const long nx = (long)s->g[4], ny = (long)s->g[5], nz = (long)s->g[6];
    const long bx = op2_axis_bin(x, s->g[0], s->g[3], s->g[4], wrap);
    const long by = op2_axis_bin(y, s->g[1], s->g[3], s->g[5], wrap);
    const long bz = nz > 1 ? op2_axis_bin(z, s->g[2], s->g[3], s->g[6], wrap) : 0;
    long xs[3], ys[3], zs[3];
    const int cx = op2_spatial_axis(bx, nx, wrap, xs);
    const int cy = op2_spatial_axis(by, ny, wrap, ys);
    const int cz = op2_spatial_axis(bz, nz, wrap, zs);
    for (int zi = 0; zi < cz; ++zi) {
        for (int yi = 0; yi < cy; ++yi) {
            const long row = nx * (ys[yi] + ny * zs[zi]);
            int i = 0;
            while (i < cx) {
                const long first = xs[i];
                long last = first;
                while (i + 1 < cx && xs[i + 1] == last + 1) { ++i; last = xs[i]; }
                ++i;
                it.strip[it.count][0] = s->starts[row + first];
                it.strip[it.count][1] = s->starts[row + last + 1];
                ++it.count;
            }
        }
    }
    return it;
}
OP2_FN int op2_near_next(op2_near *it, long *j) {
    while (it->at == it->end) {
        if (it->next == it->count) return 0;
        it->at = it->strip[it->next][0];
        it->end = it->strip[it->next][1];
        ++it->next;
    }
    *j = it->at++;
    return 1;
}
typedef struct {
    OP2_GLOBAL const int *starts; long nx;
    long xs[2][2]; int nxs; long ys[2][2]; int nys;
    int yrun; long y; int xnext; long at; long end;
} op2_within;
OP2_FN long op2_axis_cell(long x, long n, int wrap) {
    if (wrap) return ((x % n) + n) % n;
    return x < 0 ? 0 : (x > n - 1 ? n - 1 : x);
}
OP2_FN int op2_cell_runs(long b, long r, long n, int wrap, long out[2][2]) {
    if (r < 0) return 0;
    if (r > n) r = n;
    const long lo = b - r, hi = b + r;
    if (!wrap) {
        out[0][0] = lo < 0 ? 0 : lo;
        out[0][1] = hi > n - 1 ? n - 1 : hi;
        return 1;
    }
    if (r >= n / 2) { out[0][0] = 0; out[0][1] = n - 1; return 1; }
    if (lo < 0) { out[0][0] = lo + n; out[0][1] = n - 1; out[1][0] = 0; out[1][1] = hi; return 2; }
    if (hi >= n) { out[0][0] = lo; out[0][1] = n - 1; out[1][0] = 0; out[1][1] = hi - n; return 2; }
    out[0][0] = lo; out[0][1] = hi;
    return 1;
}
OP2_FN op2_within op2_spatial_within(const op2_spatial *s, long x, long y, long r) {
    op2_within it;
    const int wrap = s->g[7] != 0.0;
    if (s->g[2] >= 0.0 && (double)r > s->g[2]) r = (long)s->g[2];
    it.starts = s->starts;
    it.nx = (long)s->g[4];
    const long ny = (long)s->g[5];
    it.nxs = op2_cell_runs(op2_axis_cell(x, it.nx, wrap), r, it.nx, wrap, it.xs);
    it.nys = op2_cell_runs(op2_axis_cell(y, ny, wrap), r, ny, wrap, it.ys);
    it.yrun = 0;
    it.y = it.ys[0][0] - 1;
    it.xnext = it.nxs;
    it.at = 0;
    it.end = 0;
    return it;
}
OP2_FN int op2_within_next(op2_within *it, long *j) {
    while (it->at == it->end) {
        if (it->xnext == it->nxs) {
            if (it->yrun == it->nys) return 0;
            ++it->y;
            if (it->y > it->ys[it->yrun][1]) {
                ++it->yrun;
                if (it->yrun == it->nys) return 0;
                it->y = it->ys[it->yrun][0];
            }
            it->xnext = 0;
            continue;
        }
        const long row = it->nx * it->y;
        it->at = it->starts[row + it->xs[it->xnext][0]];
        it->end = it->starts[row + it->xs[it->xnext][1] + 1];
        ++it->xnext;
    }
    *j = it->at++;
    return 1;
}
#define OP2_TGT_ids(t, j) (j)
static __device__ inline void op2_kernel_near_count(long *op2_status, const float *p, int *n, OP2_GLOBAL const unsigned int *ids, OP2_GLOBAL const int *ids_targets, int ids_len, OP2_GLOBAL const int *op2_op2_bins_msgs, OP2_GLOBAL const int *op2_op2_bins_msgs_targets, int op2_op2_bins_msgs_len, const double *op2_op2_grid_msgs) {
    (void)op2_status;
    op2_spatial msgs = op2_spatial_new(op2_op2_bins_msgs, op2_op2_grid_msgs);
    int c = 0;
    {
        op2_near op2_near = op2_spatial_near(&msgs, (double)(p[OP2_IX(0, 2)]), (double)(p[OP2_IX(1, 2)]), 0.0);
        long op2_at;
        while (op2_near_next(&op2_near, &op2_at)) {
            const unsigned long j = (unsigned long)op2_at;
            if (ids[OP2_TGT_ids(ids_targets, OP2_IX(j, ids_len))] > 0u) {
                c = op2_wrapping_add_i32(c, 1);
            }
        }
    }
    for (unsigned long j = 0ul, j_end = ((unsigned long)ids_len); j < j_end; ++j) {
        c = op2_wrapping_add_i32(c, ((int)ids[OP2_TGT_ids(ids_targets, OP2_IX(j, ids_len))]));
    }
    (*n) = c;
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
        const float *__restrict__ arg0,
        int *arg1,
        const unsigned int *__restrict__ arg2,
        const int *__restrict__ map2,
        const int *__restrict__ arg3,
        const int *__restrict__ map3,
        const double *__restrict__ arg4)
{
    const long g = (long)blockIdx.x;
    const long tid = (long)threadIdx.x;
    const long b = units ? (long)units[unit_offset + g] : g;
    const long start = base + b * block_size;
    const long e = start + tid;
    const int active = e < limit;
    long op2_st[3] = {0, 0, 0};
    float s0[2];
    int s1[1];
    int n2;
    int n3;
    double s4[8];
    if (active) {
        for (int c = 0; c < 2; ++c) s0[c] = arg0[e * 2 + c];
        for (int c = 0; c < 1; ++c) s1[c] = 0;
        n2 = map2[0];
        n3 = map3[0];
        for (int c = 0; c < 8; ++c) s4[c] = arg4[c];
        op2_kernel_near_count(op2_st, s0, s1, arg2, 0, n2, arg3, 0, n3, s4);
        for (int c = 0; c < 1; ++c) arg1[e * 1 + c] = s1[c];
    }
}
