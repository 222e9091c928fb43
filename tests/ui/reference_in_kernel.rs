#[op2::kernel]
fn alias(x: &mut [f64; 2]) {
    let first = &x[0];
    x[1] = *first;
}

fn main() {}
