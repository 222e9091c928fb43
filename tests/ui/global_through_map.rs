use op2::prelude::*;

#[op2::kernel]
fn read_one(g: &f64, out: &mut f64) {
    *out = *g;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let cells = Set::new("cells", 1).unwrap();
    let nodes = Set::new("nodes", 2).unwrap();
    let c2n = Map::new("c2n", &cells, &nodes, 2, vec![0, 1]).unwrap();
    let g = Global::scalar("g", 1.0);
    let out = Dat::<f64>::zeros("out", &cells, 1).unwrap();
    let _ = par_loop!(rt, read_one, cells, g(READ, c2n[0]), out(WRITE));
}
