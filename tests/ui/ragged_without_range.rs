use op2::prelude::*;

#[op2::kernel]
fn sum_all(vals: &[[f64; 1]; 2], out: &mut f64) {
    *out = vals[0][0] + vals[1][0];
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let nodes = Set::new("nodes", 2).unwrap();
    let r = RaggedMap::new("r", &nodes, &nodes, vec![0, 1, 2], vec![1, 0]).unwrap();
    let vals = Dat::<f64>::zeros("vals", &nodes, 1).unwrap();
    let out = Dat::<f64>::zeros("out", &nodes, 1).unwrap();
    // A ragged map is not a Map: its targets are taken with `r[..]`.
    let _ = par_loop!(rt, sum_all, nodes, vals(READ, r), out(WRITE));
}
