//! The bins of a spatial message list in the C every dialect shares: the
//! kernel's `msgs: &Spatial3d` parameter (`op2_spatial`, made from the bins'
//! offsets and the grid's eight parameters) and its `msgs.near(x, y, z)`
//! (`op2_near`, the at most 18 strips of consecutive messages around the
//! point, walked by `op2_near_next`); and a `msgs: &Discrete2d`'s
//! `msgs.within(x, y, r)` (`op2_within`, the cells within `r`, row by row,
//! walked by `op2_within_next`).
//!
//! The computations repeat `op2_core`'s `axis_bin`, `strips`, `axis_cell`
//! and `cell_runs` operation for operation, in `double`, with contraction off (as for the random streams:
//! `-ffp-contract=off`, `--fmad=false`, and the OpenCL pragma), so a query
//! visits the same messages in the same order on every backend. The source
//! expects `OP2_FN` and `OP2_GLOBAL`; generated loops include it when their
//! kernel reads a spatial list (`op2_spatial_new` in its translation).

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

#[cfg(test)]
mod tests {
    use op2_agents::{strips, Boundary, Discrete2d, FromSpatialView, SpatialGrid, SpatialView, MAX_STRIPS};

    use super::SPATIAL_C;

    /// Compiles `body` after the prelude and returns what it prints.
    fn run_c(body: &str, tag: &str) -> String {
        let dir = std::env::temp_dir().join(format!("op2-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (src, exe) = (dir.join("spatial.c"), dir.join("spatial"));
        let program = format!(
            "#include <math.h>\n#include <stdio.h>\n#define OP2_FN static inline\n#define OP2_GLOBAL\n{SPATIAL_C}\nint main(void) {{\n{body}return 0; }}\n"
        );
        std::fs::write(&src, program).unwrap();
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let status = std::process::Command::new(cc)
            .args(["-O2", "-ffp-contract=off", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lm")
            .status()
            .unwrap();
        assert!(status.success());
        let out = std::process::Command::new(&exe).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        String::from_utf8(out.stdout).unwrap()
    }

    /// Offsets and grid parameters as C static arrays, with an
    /// `op2_spatial s` over them.
    fn c_grid(grid: &SpatialGrid, starts: &[i32]) -> String {
        let list = |v: Vec<String>| v.join(", ");
        format!(
            "static const int starts[] = {{{}}}; static const double g[8] = {{{}}};\nop2_spatial s = op2_spatial_new(starts, g);\n",
            list(starts.iter().map(|s| s.to_string()).collect()),
            list(grid.params().iter().map(|p| format!("{p:e}")).collect())
        )
    }

    /// Grids and query points (inside, outside, on bin edges, NaN) whose
    /// strips C and Rust must agree on.
    fn cases() -> Vec<(SpatialGrid, Vec<[f64; 3]>)> {
        let g3 = |b| SpatialGrid::new_3d("g", [0.0, -1.0, 2.0], [10.0, 5.0, 8.0], 2.0, b).unwrap();
        let g2 = |b| SpatialGrid::new_2d("g", [-3.0, 0.0], [3.0, 4.0], 2.0, b).unwrap();
        let narrow = SpatialGrid::new_2d("g", [0.0, 0.0], [4.0, 2.0], 2.0, Boundary::Wrap).unwrap();
        let mut points = vec![
            [0.0, -1.0, 2.0],
            [9.999, 4.999, 7.999],
            [2.0, 1.0, 4.0],
            [-50.0, 100.0, 3.0],
            [f64::NAN, 0.5, f64::INFINITY],
            [1e300, -1e300, 5.0],
            [-2.0, 3.0, 0.0],
        ];
        let mut s = op2_core::Philox::new(5, 0, 0);
        points.extend((0..40).map(|_| {
            [
                s.uniform_f64() * 16.0 - 3.0,
                s.uniform_f64() * 10.0 - 3.0,
                s.uniform_f64() * 10.0,
            ]
        }));
        vec![
            (g3(Boundary::Clamp), points.clone()),
            (g3(Boundary::Wrap), points.clone()),
            (g2(Boundary::Clamp), points.clone()),
            (g2(Boundary::Wrap), points.clone()),
            (narrow, points),
        ]
    }

    /// Strips under offsets `starts[b] = b * 10 + b % 3` (distinct per bin).
    fn starts_of(grid: &SpatialGrid) -> Vec<i32> {
        (0..=grid.bin_count() as i32).map(|b| b * 10 + b % 3).collect()
    }

    #[test]
    fn c_visits_the_same_strips_as_rust() {
        let mut body = String::new();
        let mut expected = String::new();
        for (grid, points) in cases() {
            let starts = starts_of(&grid);
            let params = grid.params();
            body += &format!("{{ {}", c_grid(&grid, &starts));
            for p in points {
                let c = |x: f64| {
                    if x.is_nan() {
                        "NAN".to_string()
                    } else if x.is_infinite() {
                        format!("{}INFINITY", if x < 0.0 { "-" } else { "" })
                    } else {
                        format!("{x:e}")
                    }
                };
                body += &format!(
                    "{{ op2_near it = op2_spatial_near(&s, {}, {}, {}); long j; while (op2_near_next(&it, &j)) printf(\"%ld \", j); printf(\"\\n\"); }}\n",
                    c(p[0]),
                    c(p[1]),
                    c(p[2])
                );
                let mut out = [[0u32; 2]; MAX_STRIPS];
                let n = strips(&params, |b| starts[b], p, &mut out);
                for [a, b] in &out[..n] {
                    for j in *a..*b {
                        expected += &format!("{j} ");
                    }
                }
                expected.push('\n');
            }
            body += "}\n";
        }
        assert_eq!(run_c(&body, "spatial"), expected);
    }

    #[test]
    fn c_visits_the_same_cells_within_a_radius_as_rust() {
        let mut body = String::new();
        let mut expected = String::new();
        let queries: Vec<[i64; 3]> = vec![
            [0, 0, 0],
            [3, 2, 1],
            [-5, 9, 1],
            [6, 4, 2],
            [1, 1, -1],
            [2, 3, 3],
            [4, 0, 100],
            [-1_000_000_007, 3, 2],
            [5, 5, i64::MAX],
            [0, 4, 2],
            [6, 0, 1],
        ];
        for (size, boundary) in [
            ([7, 5], Boundary::Clamp),
            ([7, 5], Boundary::Wrap),
            ([2, 1], Boundary::Wrap),
            ([6, 4], Boundary::Wrap),
        ] {
            let grid = SpatialGrid::discrete_2d("g", size, boundary).unwrap();
            let starts = starts_of(&grid);
            body += &format!("{{ {}", c_grid(&grid, &starts));
            // SAFETY: `starts` has an offset for every cell and the end.
            let msgs = Discrete2d::from_view(unsafe { SpatialView::new(starts.as_ptr(), grid.params()) });
            for [x, y, r] in &queries {
                body += &format!(
                    "{{ op2_within it = op2_spatial_within(&s, {x}L, {y}L, {r}L); long j; while (op2_within_next(&it, &j)) printf(\"%ld \", j); printf(\"\\n\"); }}\n"
                );
                for j in msgs.within(*x, *y, *r) {
                    expected += &format!("{j} ");
                }
                expected.push('\n');
            }
            body += "}\n";
        }
        assert_eq!(run_c(&body, "within"), expected);
    }
}
