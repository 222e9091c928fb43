//! The flow constants, computed exactly as OP2's Airfoil does (the
//! single-precision literals matter for bit-matching the reference).

/// Constants of the Airfoil run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constants {
    /// Ratio of specific heats.
    pub gam: f64,
    /// `gam - 1`.
    pub gm1: f64,
    /// CFL number.
    pub cfl: f64,
    /// Artificial dissipation coefficient.
    pub eps: f64,
    /// Free-stream Mach number.
    pub mach: f64,
    /// Free-stream state `[r, r*u, 0, r*e]`.
    pub qinf: [f64; 4],
}

impl Default for Constants {
    fn default() -> Self {
        let gam = 1.4f32 as f64;
        let gm1 = gam - 1.0;
        let cfl = 0.9f32 as f64;
        let eps = 0.05f32 as f64;
        let mach = 0.4f32 as f64;
        let p = 1.0f64;
        let r = 1.0f64;
        let u = (gam * p / r).sqrt() * mach;
        let e = p / (r * gm1) + 0.5 * u * u;
        Constants {
            gam,
            gm1,
            cfl,
            eps,
            mach,
            qinf: [r, r * u, 0.0, r * e],
        }
    }
}
