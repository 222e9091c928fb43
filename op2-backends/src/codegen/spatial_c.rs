//! The checks of the C twin of spatial queries, `op2_kernel_abi::SPATIAL_C`,
//! against its Rust original in op2-agents (`messages/grid.rs`,
//! `messages/query.rs`): the same bins and strips, in the same order.

pub use op2_kernel_abi::SPATIAL_C;

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
        for (size, boundary, reach) in [
            ([7, 5], Boundary::Clamp, None),
            ([7, 5], Boundary::Wrap, None),
            ([2, 1], Boundary::Wrap, None),
            ([6, 4], Boundary::Wrap, None),
            ([7, 5], Boundary::Clamp, Some(1)),
            ([6, 4], Boundary::Wrap, Some(0)),
        ] {
            let grid = SpatialGrid::discrete_2d("g", size, boundary).unwrap();
            let grid = match reach {
                Some(cells) => grid.with_reach(cells).unwrap(),
                None => grid,
            };
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
                if let Some(cells) = reach {
                    // A reach bounds the radius: as the grid without one
                    // asked for no more than the reach.
                    let free = SpatialGrid::discrete_2d("g", size, boundary).unwrap();
                    // SAFETY: as above; the grids have the same cells.
                    let free = Discrete2d::from_view(unsafe { SpatialView::new(starts.as_ptr(), free.params()) });
                    let bounded: Vec<usize> = free.within(*x, *y, (*r).min(cells as i64)).collect();
                    assert_eq!(msgs.within(*x, *y, *r).collect::<Vec<_>>(), bounded, "{x}, {y}, {r}");
                }
            }
            body += "}\n";
        }
        assert_eq!(run_c(&body, "within"), expected);
    }
}
