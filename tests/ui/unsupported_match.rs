#[op2::kernel]
fn with_match(flag: &i32, x: &mut f64) {
    match *flag {
        1 => *x = 0.0,
        _ => *x = 1.0,
    }
}

fn main() {}
