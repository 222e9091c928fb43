//! The Airfoil mesh generator: a C-grid around a NACA0012 aerofoil with I x J
//! parameters, built step by step as OP2's generator does (400 x 600 gives the
//! 720 000-cell benchmark mesh; see docs/ARCHITECTURE.md, The Airfoil benchmark).

use crate::spline::not_a_knot;
use crate::Mesh;

/// Points on the upper surface.
const SURFACE_POINTS: usize = 100;

/// `n` points evenly spaced from `a` to `b`, both ends exact (as `linspace`).
fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    let step = (b - a) / (n - 1) as f64;
    (0..n)
        .map(|k| if k == n - 1 { b } else { a + k as f64 * step })
        .collect()
}

/// Principal square root of `re + i*im`.
fn csqrt(re: f64, im: f64) -> (f64, f64) {
    let r = re.hypot(im);
    let s = ((r + re.abs()) / 2.0).sqrt();
    if s == 0.0 {
        (0.0, 0.0)
    } else if re >= 0.0 {
        (s, im / (2.0 * s))
    } else {
        (im.abs() / (2.0 * s), s.copysign(im))
    }
}

/// Rounds to 6 decimals, as C's `%f` writes it (part of the reference result).
fn round6(v: f64) -> f64 {
    format!("{v:.6}").parse().unwrap_or(v)
}

/// The aerofoil outline in the square-root plane: (Re Z, Im Z), 199 points
/// with increasing real parts.
fn outline() -> (Vec<f64>, Vec<f64>) {
    let t = linspace(0.0, std::f64::consts::FRAC_PI_2, SURFACE_POINTS);
    let z: Vec<(f64, f64)> = t
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let x = t.sin() * t.sin();
            let y = if k == SURFACE_POINTS - 1 {
                0.0
            } else {
                0.594689181
                    * (0.298222773 * x.sqrt() - 0.127125232 * x - 0.357907906 * x.powi(2) + 0.291984971 * x.powi(3)
                        - 0.105174696 * x.powi(4))
            };
            csqrt(x - 0.0077, y)
        })
        .collect();
    // Reversed -conj(z) (the lower half mirrored), then z_2 .. z_100.
    let lower = z.iter().rev().map(|&(re, im)| (-re, im));
    let upper = z.iter().skip(1).copied();
    lower.chain(upper).unzip()
}

/// Generates the mesh for parameters `i` (around the aerofoil: 3i cells) and
/// `j` (outwards: j cells). Panics if `i < 2` or `j < 2`.
pub fn generate(i: usize, j: usize) -> Mesh {
    assert!(i >= 2 && j >= 2, "mesh parameters must be at least 2x2, got {i}x{j}");
    let ni = 3 * i + 1; // nodes around
    let nj = j + 1; // nodes outwards
    let xb = linspace(-3.0, 3.0, ni);
    let mut yb = vec![0.0; ni];
    let (zr, zi) = outline();
    // 1-based indices I+2 ..= 2I are 0-based I+1 ..= 2I-1.
    let inner = i + 1..2 * i;
    let ys = not_a_knot(&zr, &zi, &xb[inner.clone()]);
    yb[inner].copy_from_slice(&ys);

    let node = |a: usize, b: usize| (a - 1 + (b - 1) * ni) as i32;
    let cell = |a: usize, b: usize| (a - 1 + (b - 1) * 3 * i) as i32;

    let mut x = vec![0.0; 2 * ni * nj];
    for (a, (&xg, &y0)) in xb.iter().zip(&yb).enumerate() {
        for (b, yg) in linspace(y0, 3.0, nj).into_iter().enumerate() {
            let n = a + b * ni;
            x[2 * n] = round6(xg * xg - yg * yg);
            x[2 * n + 1] = round6(2.0 * xg * yg);
        }
    }

    let mut cells = Vec::with_capacity(4 * 3 * i * j);
    for b in 1..=j {
        for a in 1..=3 * i {
            cells.extend([node(a, b), node(a + 1, b), node(a + 1, b + 1), node(a, b + 1)]);
        }
    }

    let (mut edge, mut ecell) = (Vec::new(), Vec::new());
    for b in 1..=j {
        for a in 1..=3 * i {
            if b == 1 && a <= i {
                edge.extend([node(a, 1), node(a + 1, 1)]);
                ecell.extend([cell(3 * i + 1 - a, 1), cell(a, 1)]);
            }
            if b < j {
                edge.extend([node(a, b + 1), node(a + 1, b + 1)]);
                ecell.extend([cell(a, b), cell(a, b + 1)]);
            }
            if a < 3 * i {
                edge.extend([node(a + 1, b), node(a + 1, b + 1)]);
                ecell.extend([cell(a + 1, b), cell(a, b)]);
            }
        }
    }

    let (mut bedge, mut becell, mut bound) = (Vec::new(), Vec::new(), Vec::new());
    for a in i + 1..=2 * i {
        bedge.extend([node(a + 1, 1), node(a, 1)]);
        becell.push(cell(a, 1));
        bound.push(1);
    }
    for b in 1..=j {
        bedge.extend([node(3 * i + 1, b + 1), node(3 * i + 1, b)]);
        becell.push(cell(3 * i, b));
        bound.push(2);
    }
    for a in (1..=3 * i).rev() {
        bedge.extend([node(a, j + 1), node(a + 1, j + 1)]);
        becell.push(cell(a, j));
        bound.push(2);
    }
    for b in (1..=j).rev() {
        bedge.extend([node(1, b), node(1, b + 1)]);
        becell.push(cell(1, b));
        bound.push(2);
    }

    Mesh {
        x,
        cell: cells,
        edge,
        ecell,
        bedge,
        becell,
        bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmark_mesh_has_op2_sizes() {
        let m = generate(400, 600);
        assert_eq!(
            (m.nnode(), m.ncell(), m.nedge(), m.nbedge()),
            (721_801, 720_000, 1_438_600, 2_800)
        );
    }

    #[test]
    fn every_cell_has_positive_area_and_edges_touch_their_cells() {
        let m = generate(30, 20);
        let p = |n: i32| (m.x[2 * n as usize], m.x[2 * n as usize + 1]);
        for c in m.cell.chunks(4) {
            let mut area = 0.0;
            for k in 0..4 {
                let (a, b) = (p(c[k]), p(c[(k + 1) % 4]));
                area += a.0 * b.1 - b.0 * a.1;
            }
            assert!(area > 0.0, "cell {c:?} is not counter-clockwise");
        }
        for (e, ends) in m.edge.chunks(2).enumerate() {
            for &c in &m.ecell[2 * e..2 * e + 2] {
                let nodes = &m.cell[4 * c as usize..4 * c as usize + 4];
                // The wake cut joins coincident nodes with different ids.
                let touch = ends
                    .iter()
                    .all(|n| nodes.contains(n) || nodes.iter().any(|&k| p(k) == p(*n)));
                assert!(touch, "edge {e} does not border cell {c}");
            }
        }
    }

    #[test]
    fn coordinates_are_rounded_to_six_decimals() {
        let m = generate(10, 8);
        for v in &m.x {
            assert_eq!(format!("{v:.6}").parse::<f64>().unwrap(), *v);
        }
    }

    #[test]
    fn principal_square_root() {
        let (re, im) = csqrt(-4.0, 0.0);
        assert_eq!((re, im), (0.0, 2.0));
        let (re, im) = csqrt(3.0, 4.0);
        assert!((re - 2.0).abs() < 1e-15 && (im - 1.0).abs() < 1e-15);
    }
}
