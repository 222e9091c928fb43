#[op2::kernel]
fn noisy(x: &mut f64) {
    println!("{}", *x);
}

fn main() {}
