use op2::prelude::*;

#[op2::kernel]
fn scale(x: &mut [f64; 2]) {
    x[0] *= 2.0;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let s = Set::new("s", 4).unwrap();
    let x = Dat::<f32>::zeros("x", &s, 2).unwrap();
    let _ = par_loop!(rt, scale, s, x(RW));
}
