const GAMMA: f64 = 1.4;

#[op2::kernel]
fn pressure(q: &[f64; 4], p: &mut f64) {
    *p = (GAMMA - 1.0) * q[3];
}

fn main() {}
