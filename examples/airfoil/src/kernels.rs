//! The five Airfoil kernels, written as op2 kernels. The arithmetic follows
//! OP2's `airfoil` sources operation by operation; the flow constants arrive
//! as READ Globals (PyOP2's `Constant`).

/// `qold = q`.
#[op2::kernel]
pub fn save_soln(q: &[f64; 4], qold: &mut [f64; 4]) {
    for n in 0..4 {
        qold[n] = q[n];
    }
}

/// The local time step of a cell from its four corners and its state.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
pub fn adt_calc(
    x1: &[f64; 2],
    x2: &[f64; 2],
    x3: &[f64; 2],
    x4: &[f64; 2],
    q: &[f64; 4],
    adt: &mut f64,
    gam: &f64,
    gm1: &f64,
    cfl: &f64,
) {
    let ri = 1.0 / q[0];
    let u = ri * q[1];
    let v = ri * q[2];
    let c = (*gam * *gm1 * (ri * q[3] - 0.5 * (u * u + v * v))).sqrt();

    let mut dx = x2[0] - x1[0];
    let mut dy = x2[1] - x1[1];
    *adt = (u * dy - v * dx).abs() + c * (dx * dx + dy * dy).sqrt();

    dx = x3[0] - x2[0];
    dy = x3[1] - x2[1];
    *adt += (u * dy - v * dx).abs() + c * (dx * dx + dy * dy).sqrt();

    dx = x4[0] - x3[0];
    dy = x4[1] - x3[1];
    *adt += (u * dy - v * dx).abs() + c * (dx * dx + dy * dy).sqrt();

    dx = x1[0] - x4[0];
    dy = x1[1] - x4[1];
    *adt += (u * dy - v * dx).abs() + c * (dx * dx + dy * dy).sqrt();

    *adt /= *cfl;
}

/// The flux across an interior edge, added to one cell and taken from the other.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
pub fn res_calc(
    x1: &[f64; 2],
    x2: &[f64; 2],
    q1: &[f64; 4],
    q2: &[f64; 4],
    adt1: &f64,
    adt2: &f64,
    res1: &mut [f64; 4],
    res2: &mut [f64; 4],
    gm1: &f64,
    eps: &f64,
) {
    let dx = x1[0] - x2[0];
    let dy = x1[1] - x2[1];

    let mut ri = 1.0 / q1[0];
    let p1 = *gm1 * (q1[3] - 0.5 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));
    let vol1 = ri * (q1[1] * dy - q1[2] * dx);

    ri = 1.0 / q2[0];
    let p2 = *gm1 * (q2[3] - 0.5 * ri * (q2[1] * q2[1] + q2[2] * q2[2]));
    let vol2 = ri * (q2[1] * dy - q2[2] * dx);

    let mu = 0.5 * (*adt1 + *adt2) * *eps;

    let mut f = 0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]);
    res1[0] += f;
    res2[0] -= f;
    f = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]);
    res1[1] += f;
    res2[1] -= f;
    f = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]);
    res1[2] += f;
    res2[2] -= f;
    f = 0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]);
    res1[3] += f;
    res2[3] -= f;
}

/// The flux across a boundary edge: wall pressure, or far-field flux
/// against `qinf`.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
pub fn bres_calc(
    x1: &[f64; 2],
    x2: &[f64; 2],
    q1: &[f64; 4],
    adt1: &f64,
    res1: &mut [f64; 4],
    bound: &i32,
    gm1: &f64,
    eps: &f64,
    qinf: &[f64; 4],
) {
    let dx = x1[0] - x2[0];
    let dy = x1[1] - x2[1];

    let mut ri = 1.0 / q1[0];
    let p1 = *gm1 * (q1[3] - 0.5 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));

    if *bound == 1 {
        res1[1] += p1 * dy;
        res1[2] += -p1 * dx;
    } else {
        let vol1 = ri * (q1[1] * dy - q1[2] * dx);

        ri = 1.0 / qinf[0];
        let p2 = *gm1 * (qinf[3] - 0.5 * ri * (qinf[1] * qinf[1] + qinf[2] * qinf[2]));
        let vol2 = ri * (qinf[1] * dy - qinf[2] * dx);

        let mu = *adt1 * *eps;

        let mut f = 0.5 * (vol1 * q1[0] + vol2 * qinf[0]) + mu * (q1[0] - qinf[0]);
        res1[0] += f;
        f = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * qinf[1] + p2 * dy) + mu * (q1[1] - qinf[1]);
        res1[1] += f;
        f = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * qinf[2] - p2 * dx) + mu * (q1[2] - qinf[2]);
        res1[2] += f;
        f = 0.5 * (vol1 * (q1[3] + p1) + vol2 * (qinf[3] + p2)) + mu * (q1[3] - qinf[3]);
        res1[3] += f;
    }
}

/// `q = qold - res/adt`, `res = 0`, and the squared update summed into `rms`.
#[op2::kernel]
pub fn update(qold: &[f64; 4], q: &mut [f64; 4], res: &mut [f64; 4], adt: &f64, rms: &mut f64) {
    let mut rmsl = 0.0;
    let adti = 1.0 / *adt;
    for n in 0..4 {
        let del = adti * res[n];
        q[n] = qold[n] - del;
        res[n] = 0.0;
        rmsl += del * del;
    }
    *rms += rmsl;
}
