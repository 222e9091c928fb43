use op2::prelude::*;

#[op2::kernel]
fn bump(x: &mut f64) {
    *x += 1.0;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let s = Set::new("s", 4).unwrap();
    let m = Map::identity("m", &s);
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let _ = par_loop!(rt, bump, m, x(RW));
}
