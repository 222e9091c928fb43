// The metadata type and the function of a kernel must not come apart: here a
// glob import brings kernel `a::scale` (type and function), and a local
// function of the same name with another signature shadows the function only.
use op2::prelude::*;

mod a {
    #[op2::kernel]
    pub fn scale(x: &mut [f64; 2]) {
        x[0] *= 2.0;
    }
}

use a::*;

fn scale(x: &mut [f64; 8]) {
    x[7] = 0.0;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let s = Set::new("s", 4).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 2).unwrap();
    let _ = par_loop!(rt, scale, s, x(RW));
}
