use op2::prelude::*;

#[op2::kernel]
fn spread(v: &f64, r: &f64) {
    let s = *v + *r;
    let _t = s;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let edges = Set::new("edges", 4).unwrap();
    let nodes = Set::new("nodes", 2).unwrap();
    let m = Map::new("m", &edges, &nodes, 1, vec![0, 1, 1, 0]).unwrap();
    let v = Dat::<f64>::zeros("v", &edges, 1).unwrap();
    let r = Dat::<f64>::zeros("r", &nodes, 1).unwrap();
    let _ = par_loop!(rt, spread, edges, v(READ), r(INC, m[0]));
}
