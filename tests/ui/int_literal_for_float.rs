#[op2::kernel]
fn two(x: &mut f64) {
    *x = 2;
}

fn main() {}
