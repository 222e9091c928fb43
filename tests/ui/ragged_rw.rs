use op2::prelude::*;

#[op2::kernel]
fn push(x: &mut [f64]) {
    for j in 0..x.len() {
        x[j] += 1.0;
    }
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let nodes = Set::new("nodes", 3).unwrap();
    let r = RaggedMap::new("r", &nodes, &nodes, vec![0, 1, 2, 3], vec![1, 2, 0]).unwrap();
    let y = Dat::<f64>::zeros("y", &nodes, 1).unwrap();
    // Through a ragged map: READ or INC only.
    par_loop!(rt, push, nodes, y(RW, r[..])).unwrap();
}
