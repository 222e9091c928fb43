#[op2::kernel]
fn halve(x: &mut f64) {
    *x = *x / 2;
}

fn main() {}
