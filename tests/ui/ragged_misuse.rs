use op2::prelude::*;

#[op2::kernel]
fn fixed(x: &[f64; 2], out: &mut f64) {
    *out = x[0] + x[1];
}

#[op2::kernel]
fn pulls(x: &[f64], out: &mut f64) {
    *out = x.len() as f64;
}

#[op2::kernel]
fn reads_an_inc(x: &mut [f64], out: &mut f64) {
    *out = x[0];
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let nodes = Set::new("nodes", 3).unwrap();
    let r = RaggedMap::new("r", &nodes, &nodes, vec![0, 1, 2, 3], vec![1, 2, 0]).unwrap();
    let x = Dat::<f64>::zeros("x", &nodes, 2).unwrap();
    let y = Dat::<f64>::zeros("y", &nodes, 1).unwrap();
    let out = Dat::<f64>::zeros("out", &nodes, 1).unwrap();
    // A ragged argument needs a slice parameter.
    par_loop!(rt, fixed, nodes, x(READ, r[..]), out(WRITE)).unwrap();
    // A slice parameter needs a ragged argument.
    par_loop!(rt, pulls, nodes, y(READ), out(WRITE)).unwrap();
    // Only all targets.
    par_loop!(rt, pulls, nodes, y(READ, r[1..]), out(WRITE)).unwrap();
}
