#[op2::kernel]
fn sign(x: &mut f64) {
    *x = x.signum();
}

fn main() {}
