#[op2::kernel]
fn takes_vec(x: Vec<f64>, y: &mut [usize; 2]) {
    y[0] = x.len();
}

fn main() {}
