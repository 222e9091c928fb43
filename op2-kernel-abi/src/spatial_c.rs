//! The bins of a spatial message list in the C every dialect shares: the
//! kernel's `msgs: &Spatial3d` parameter (`op2_spatial`, made from the bins'
//! offsets and the grid's eight parameters) and its `msgs.near(x, y, z)`
//! (`op2_near`, the at most 18 strips of consecutive messages around the
//! point, walked by `op2_near_next`); and a `msgs: &Discrete2d`'s
//! `msgs.within(x, y, r)` (`op2_within`, the cells within `r`, row by row,
//! walked by `op2_within_next`).
//!
//! The computations repeat their Rust originals, op2-agents' `axis_bin`,
//! `strips`, `axis_cell` and `cell_runs` (`op2-agents/src/messages/grid.rs`),
//! operation for operation, in `double`, with contraction off (as for the
//! random streams: `-ffp-contract=off`, `--fmad=false`, and the OpenCL
//! pragma), so a query
//! visits the same messages in the same order on every backend. The source
//! expects `OP2_FN` and `OP2_GLOBAL`; generated loops include it when their
//! kernel reads a spatial list (`KernelUses::spatial_queries`); op2-backends'
//! tests (`codegen/spatial_c.rs`) check it against the Rust original.

/// `op2_spatial`, `op2_near` and their functions.
pub const SPATIAL_C: &str = r#"typedef struct { OP2_GLOBAL const int *starts; double g[8]; } op2_spatial;
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
"#;
