use op2::prelude::*;

#[op2::kernel]
fn corners(t: &[[f64; 2]; 2], r: &mut f64) {
    *r += t[0][0] + t[1][1];
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let edges = Set::new("edges", 4).unwrap();
    let nodes = Set::new("nodes", 2).unwrap();
    let m = Map::new("m", &edges, &nodes, 2, vec![0, 1, 1, 0, 0, 1, 1, 0]).unwrap();
    let x = Dat::<f64>::zeros("x", &nodes, 2).unwrap();
    let r = Dat::<f64>::zeros("r", &nodes, 1).unwrap();
    let _ = par_loop!(rt, corners, edges, x(READ, m[0]), r(INC, m[0]));
}
