use op2::prelude::*;

// A spatial message parameter is read only.
#[op2::kernel]
fn count(n: &mut i32, msgs: &mut Spatial3d) {
    *n = 0;
}

// So is a discrete one.
#[op2::kernel]
fn cells(n: &mut i32, msgs: &mut Discrete2d) {
    *n = 0;
}

#[op2::kernel]
fn count_2d(p: &[f64; 2], n: &mut i32, msgs: &Spatial2d) {
    let mut c = 0;
    for j in msgs.near(p[0], p[1]) {
        c += 1;
    }
    *n = c;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let agents = Set::new("agents", 4).unwrap();
    let p = Dat::<f64>::zeros("p", &agents, 2).unwrap();
    let n = Dat::<i32>::zeros("n", &agents, 1).unwrap();
    let list = MessageList::brute_force("all", &agents).unwrap();
    // A list through a map.
    let _ = par_loop!(rt, count_2d, agents, p(READ), n(WRITE), list(NEAR, m));
    // A Dat where the kernel takes a list.
    let _ = par_loop!(rt, count_2d, agents, p(READ), n(WRITE), p(READ));
}
