//! The benchmark's baseline: a Circles step written directly in Rust, the
//! way one would without op2 (a cell list rebuilt each step by a counting
//! sort, then the agents in parallel on rayon, in cell order so that
//! neighbouring agents read the same cells while they are in cache, each
//! reading the 27 cells around it). Same arithmetic as the op2 kernel.

use rayon::prelude::*;

use crate::Params;

/// A cell list: agents sorted by cell (x fastest), with each cell's start.
#[derive(Default)]
pub struct CellList {
    starts: Vec<u32>,
    sorted: Vec<[f32; 3]>,
    ids: Vec<u32>,
    cells: Vec<u32>,
    moved: Vec<[f32; 3]>,
}

impl CellList {
    /// Sorts `pos` into cells of width `r` over `[0, side)^3` (clamped),
    /// reusing the buffers.
    fn build(&mut self, pos: &[[f32; 3]], side: f64, r: f64) {
        let n = (side / r).ceil().max(1.0) as usize;
        let inv = 1.0 / r;
        let axis = |x: f32| (((x as f64) * inv).floor().clamp(0.0, (n - 1) as f64)) as usize;
        self.cells.clear();
        self.cells.extend(
            pos.iter()
                .map(|p| (axis(p[0]) + n * (axis(p[1]) + n * axis(p[2]))) as u32),
        );
        self.starts.clear();
        self.starts.resize(n * n * n + 1, 0);
        for &c in &self.cells {
            self.starts[c as usize + 1] += 1;
        }
        for i in 0..n * n * n {
            self.starts[i + 1] += self.starts[i];
        }
        self.sorted.resize(pos.len(), [0.0; 3]);
        self.ids.resize(pos.len(), 0);
        let mut next = self.starts.clone();
        for (i, &c) in self.cells.iter().enumerate() {
            let at = &mut next[c as usize];
            self.sorted[*at as usize] = pos[i];
            self.ids[*at as usize] = i as u32;
            *at += 1;
        }
    }
}

/// One step of `pos` (agent `i` has id `i`) in a box of side `side`.
#[allow(clippy::approx_constant)] // 3.141 is the model's constant
pub fn step_by_hand(pos: &mut [[f32; 3]], side: f64, params: Params, cells: &mut CellList) {
    let (r, repulse) = (params.radius, params.repulse);
    cells.build(pos, side, r as f64);
    let n = (side / r as f64).ceil().max(1.0) as i64;
    let inv = 1.0 / r as f64;
    let axis = |x: f32| (((x as f64) * inv).floor().clamp(0.0, (n - 1) as f64)) as i64;
    let CellList {
        starts,
        sorted,
        ids,
        moved,
        ..
    } = cells;
    moved.resize(sorted.len(), [0.0; 3]);
    // Agents in cell order: agent `ids[i]` at `sorted[i]` moves to `moved[i]`.
    moved.par_iter_mut().enumerate().for_each(|(i, out)| {
        let p = sorted[i];
        let me = ids[i];
        let (cx, cy, cz) = (axis(p[0]), axis(p[1]), axis(p[2]));
        let mut f = [0.0f32; 3];
        let mut count = 0;
        let (x0, x1) = ((cx - 1).max(0), (cx + 1).min(n - 1));
        for z in (cz - 1).max(0)..=(cz + 1).min(n - 1) {
            for y in (cy - 1).max(0)..=(cy + 1).min(n - 1) {
                let row = n * (y + n * z);
                let (a, b) = (
                    starts[(row + x0) as usize] as usize,
                    starts[(row + x1 + 1) as usize] as usize,
                );
                for j in a..b {
                    if ids[j] == me {
                        continue;
                    }
                    let q = sorted[j];
                    let (dx, dy, dz) = (q[0] - p[0], q[1] - p[1], q[2] - p[2]);
                    let s = (dx * dx + dy * dy + dz * dz).sqrt();
                    if s > 0.0 && s < r {
                        let k = ((s / r) * 3.141f32 * -2.0f32).sin() * repulse;
                        f[0] += k * dx / s;
                        f[1] += k * dy / s;
                        f[2] += k * dz / s;
                        count += 1;
                    }
                }
            }
        }
        *out = p;
        if count > 0 {
            for c in 0..3 {
                out[c] += f[c] / count as f32;
            }
        }
    });
    for (&id, m) in ids.iter().zip(moved.iter()) {
        pos[id as usize] = *m;
    }
}
