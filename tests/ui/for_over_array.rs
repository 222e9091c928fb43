#[op2::kernel]
fn sum(v: &[f64; 3], out: &mut f64) {
    for a in v {
        *out += *a;
    }
}

fn main() {}
