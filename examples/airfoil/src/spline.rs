//! A not-a-knot cubic spline through points with increasing abscissae (as
//! MATLAB's `spline(x, y, xx)`), used by the mesh generator.

/// The spline through `(xs[i], ys[i])`, evaluated at each of `at`.
///
/// Needs at least 4 points. Outside `[xs[0], xs[n-1]]` the end pieces extend.
pub fn not_a_knot(xs: &[f64], ys: &[f64], at: &[f64]) -> Vec<f64> {
    let n = xs.len();
    assert!(n >= 4 && ys.len() == n, "a not-a-knot spline needs at least 4 points");
    let h: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
    // Unknowns: second derivatives m[0..n]. Rows: not-a-knot at both ends,
    // continuity of the first derivative inside.
    let mut a = vec![vec![0.0; n]; n];
    let mut rhs = vec![0.0; n];
    a[0][0] = h[1];
    a[0][1] = -(h[0] + h[1]);
    a[0][2] = h[0];
    for i in 1..n - 1 {
        a[i][i - 1] = h[i - 1];
        a[i][i] = 2.0 * (h[i - 1] + h[i]);
        a[i][i + 1] = h[i];
        rhs[i] = 6.0 * ((ys[i + 1] - ys[i]) / h[i] - (ys[i] - ys[i - 1]) / h[i - 1]);
    }
    a[n - 1][n - 3] = h[n - 2];
    a[n - 1][n - 2] = -(h[n - 3] + h[n - 2]);
    a[n - 1][n - 1] = h[n - 3];
    let m = solve(a, rhs);
    at.iter()
        .map(|&x| {
            let i = xs.partition_point(|&k| k <= x).clamp(1, n - 1) - 1;
            let (x0, x1, hi) = (xs[i], xs[i + 1], h[i]);
            let (l, r) = (x1 - x, x - x0);
            m[i] * l * l * l / (6.0 * hi)
                + m[i + 1] * r * r * r / (6.0 * hi)
                + (ys[i] / hi - m[i] * hi / 6.0) * l
                + (ys[i + 1] / hi - m[i + 1] * hi / 6.0) * r
        })
        .collect()
}

/// Gaussian elimination with partial pivoting (the systems here are small).
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, r) in lower.iter_mut().enumerate() {
            let f = r[col] / pivot_row[col];
            if f != 0.0 {
                for (x, p) in r[col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= f * p;
                }
                b[col + 1 + offset] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_a_cubic_exactly() {
        // A not-a-knot spline through samples of a cubic is that cubic.
        let f = |x: f64| 2.0 * x * x * x - x * x + 0.5 * x - 3.0;
        let xs: Vec<f64> = [0.0, 0.3, 0.7, 1.0, 1.6, 2.0, 2.1].to_vec();
        let ys: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
        let at = [0.05, 0.5, 1.3, 1.99, 2.1, -0.2, 2.3];
        for (x, y) in at.iter().zip(not_a_knot(&xs, &ys, &at)) {
            assert!((y - f(*x)).abs() < 1e-9, "at {x}: {y} vs {}", f(*x));
        }
    }

    #[test]
    fn interpolates_its_knots() {
        let xs = [0.0, 1.0, 2.5, 3.0, 4.0];
        let ys = [1.0, -1.0, 0.5, 2.0, 0.0];
        let got = not_a_knot(&xs, &ys, &xs);
        for (g, y) in got.iter().zip(ys) {
            assert!((g - y).abs() < 1e-12);
        }
    }
}
