//! Airfoil in plain Rust loops, no op2: the same arithmetic in the same order
//! as the kernels, written independently of them. The correctness baseline
//! (bit for bit against the `seq` backend) and the speed baseline.

use crate::{Constants, Mesh};

/// The hand-written Airfoil state.
pub struct Handwritten {
    mesh: Mesh,
    c: Constants,
    /// Flow state, 4 per cell.
    pub q: Vec<f64>,
    qold: Vec<f64>,
    /// Residual, 4 per cell.
    pub res: Vec<f64>,
    /// Local time step per cell.
    pub adt: Vec<f64>,
}

fn quad(v: &[f64], i: i32) -> [f64; 4] {
    let i = 4 * i as usize;
    [v[i], v[i + 1], v[i + 2], v[i + 3]]
}

fn point(x: &[f64], n: i32) -> [f64; 2] {
    [x[2 * n as usize], x[2 * n as usize + 1]]
}

impl Handwritten {
    /// The initial state (`q = qinf`).
    pub fn new(mesh: &Mesh, c: &Constants) -> Handwritten {
        let n = mesh.ncell();
        Handwritten {
            mesh: mesh.clone(),
            c: *c,
            q: c.qinf.iter().copied().cycle().take(4 * n).collect(),
            qold: vec![0.0; 4 * n],
            res: vec![0.0; 4 * n],
            adt: vec![0.0; n],
        }
    }

    /// One iteration; returns `sqrt(rms / ncell)`.
    pub fn iteration(&mut self) -> f64 {
        self.qold.copy_from_slice(&self.q);
        let mut rms = 0.0;
        for _ in 0..2 {
            self.adt_calc();
            self.res_calc();
            self.bres_calc();
            rms = self.update();
        }
        (rms / self.mesh.ncell() as f64).sqrt()
    }

    fn adt_calc(&mut self) {
        let Constants { gam, gm1, cfl, .. } = self.c;
        for (cell, nodes) in self.mesh.cell.chunks_exact(4).enumerate() {
            let q = quad(&self.q, cell as i32);
            let ri = 1.0 / q[0];
            let u = ri * q[1];
            let v = ri * q[2];
            let c = (gam * gm1 * (ri * q[3] - 0.5 * (u * u + v * v))).sqrt();
            let mut adt = 0.0;
            for k in 0..4 {
                let a = point(&self.mesh.x, nodes[k]);
                let b = point(&self.mesh.x, nodes[(k + 1) % 4]);
                let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                let side = (u * dy - v * dx).abs() + c * (dx * dx + dy * dy).sqrt();
                adt = if k == 0 { side } else { adt + side };
            }
            self.adt[cell] = adt / cfl;
        }
    }

    fn res_calc(&mut self) {
        let Constants { gm1, eps, .. } = self.c;
        let m = &self.mesh;
        for (nodes, cells) in m.edge.chunks_exact(2).zip(m.ecell.chunks_exact(2)) {
            let (x1, x2) = (point(&m.x, nodes[0]), point(&m.x, nodes[1]));
            let (c1, c2) = (cells[0], cells[1]);
            let (q1, q2) = (quad(&self.q, c1), quad(&self.q, c2));
            let dx = x1[0] - x2[0];
            let dy = x1[1] - x2[1];
            let ri1 = 1.0 / q1[0];
            let p1 = gm1 * (q1[3] - 0.5 * ri1 * (q1[1] * q1[1] + q1[2] * q1[2]));
            let vol1 = ri1 * (q1[1] * dy - q1[2] * dx);
            let ri2 = 1.0 / q2[0];
            let p2 = gm1 * (q2[3] - 0.5 * ri2 * (q2[1] * q2[1] + q2[2] * q2[2]));
            let vol2 = ri2 * (q2[1] * dy - q2[2] * dx);
            let mu = 0.5 * (self.adt[c1 as usize] + self.adt[c2 as usize]) * eps;
            let f = [
                0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]),
                0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]),
                0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]),
                0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]),
            ];
            for (k, fk) in f.iter().enumerate() {
                self.res[4 * c1 as usize + k] += fk;
            }
            for (k, fk) in f.iter().enumerate() {
                self.res[4 * c2 as usize + k] -= fk;
            }
        }
    }

    fn bres_calc(&mut self) {
        let Constants { gm1, eps, qinf, .. } = self.c;
        let m = &self.mesh;
        for (b, nodes) in m.bedge.chunks_exact(2).enumerate() {
            let (x1, x2) = (point(&m.x, nodes[0]), point(&m.x, nodes[1]));
            let c1 = m.becell[b];
            let q1 = quad(&self.q, c1);
            let r = &mut self.res[4 * c1 as usize..4 * c1 as usize + 4];
            let dx = x1[0] - x2[0];
            let dy = x1[1] - x2[1];
            let ri1 = 1.0 / q1[0];
            let p1 = gm1 * (q1[3] - 0.5 * ri1 * (q1[1] * q1[1] + q1[2] * q1[2]));
            if m.bound[b] == 1 {
                r[1] += p1 * dy;
                r[2] += -p1 * dx;
            } else {
                let vol1 = ri1 * (q1[1] * dy - q1[2] * dx);
                let ri2 = 1.0 / qinf[0];
                let p2 = gm1 * (qinf[3] - 0.5 * ri2 * (qinf[1] * qinf[1] + qinf[2] * qinf[2]));
                let vol2 = ri2 * (qinf[1] * dy - qinf[2] * dx);
                let mu = self.adt[c1 as usize] * eps;
                r[0] += 0.5 * (vol1 * q1[0] + vol2 * qinf[0]) + mu * (q1[0] - qinf[0]);
                r[1] += 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * qinf[1] + p2 * dy) + mu * (q1[1] - qinf[1]);
                r[2] += 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * qinf[2] - p2 * dx) + mu * (q1[2] - qinf[2]);
                r[3] += 0.5 * (vol1 * (q1[3] + p1) + vol2 * (qinf[3] + p2)) + mu * (q1[3] - qinf[3]);
            }
        }
    }

    fn update(&mut self) -> f64 {
        let mut rms = 0.0;
        let cells = self.q.chunks_exact_mut(4).zip(self.qold.chunks_exact(4));
        for ((q, qold), (res, adt)) in cells.zip(self.res.chunks_exact_mut(4).zip(&self.adt)) {
            let adti = 1.0 / adt;
            let mut rmsl = 0.0;
            for n in 0..4 {
                let del = adti * res[n];
                q[n] = qold[n] - del;
                res[n] = 0.0;
                rmsl += del * del;
            }
            rms += rmsl;
        }
        rms
    }
}
