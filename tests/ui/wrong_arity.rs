use op2::prelude::*;

#[op2::kernel]
fn axpy(y: &mut f64, x: &f64, a: &f64) {
    *y += *a * *x;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let s = Set::new("s", 4).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let y = Dat::<f64>::zeros("y", &s, 1).unwrap();
    let _ = par_loop!(rt, axpy, s, y(INC), x(READ));
}
