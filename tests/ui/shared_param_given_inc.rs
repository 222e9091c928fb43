use op2::prelude::*;

#[op2::kernel]
fn look(x: &f64, out: &mut f64) {
    *out = *x;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let s = Set::new("s", 4).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let out = Dat::<f64>::zeros("out", &s, 1).unwrap();
    let _ = par_loop!(rt, look, s, x(INC), out(WRITE));
}
