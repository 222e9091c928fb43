use op2::prelude::*;

// A whole-map argument needs one row per map entry: `&[[f64; 1]; 3]`.
#[op2::kernel]
fn sum3(out: &mut f64, v: &[f64; 3]) {
    *out = v[0] + v[1] + v[2];
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let cells = Set::new("cells", 1).unwrap();
    let nodes = Set::new("nodes", 3).unwrap();
    let c2n = Map::new("c2n", &cells, &nodes, 3, vec![0, 1, 2]).unwrap();
    let out = Dat::<f64>::zeros("out", &cells, 1).unwrap();
    let v = Dat::<f64>::zeros("v", &nodes, 1).unwrap();
    let _ = par_loop!(rt, sum3, cells, out(WRITE), v(READ, c2n));
}
