#[op2::kernel]
fn with_closure(x: &mut f64) {
    let twice = |v: f64| v * 2.0;
    *x = twice(*x);
}

fn main() {}
