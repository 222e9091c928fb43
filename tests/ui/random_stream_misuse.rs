use op2::prelude::*;

#[op2::kernel]
fn coin(heads: &mut i32, rng: &mut Philox) {
    *heads = if rng.bernoulli(0.5) { 1 } else { 0 };
}

#[op2::kernel]
fn copy(dst: &mut i32, src: &i32) {
    *dst = *src;
}

// A stream is advanced by every draw: it is `&mut`.
#[op2::kernel]
fn shared_stream(x: &mut f64, rng: &Philox) {
    *x = 1.0;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let agents = Set::new("agents", 4).unwrap();
    let heads = Dat::<i32>::zeros("heads", &agents, 1).unwrap();
    let src = Dat::<i32>::zeros("src", &agents, 1).unwrap();
    let streams = RandomStreams::new("coins", 7);
    // A Dat where the kernel takes a stream.
    let _ = par_loop!(rt, coin, agents, heads(WRITE), src(READ));
    // Streams where the kernel takes data.
    let _ = par_loop!(rt, copy, agents, heads(WRITE), streams(DRAW));
    // Streams through a map.
    let _ = par_loop!(rt, coin, agents, heads(WRITE), streams(DRAW, m));
}
