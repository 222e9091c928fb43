use op2::prelude::*;

#[op2::kernel]
fn maybe_die(x: &mut f64, fate: &mut Fate) {
    if *x < 0.0 {
        fate.die();
    }
}

#[op2::kernel]
fn copy(dst: &mut f64, src: &f64) {
    *dst = *src;
}

// A fate is decided by the kernel: it is `&mut`.
#[op2::kernel]
fn shared_fate(x: &mut f64, fate: &Fate) {
    *x = 1.0;
}

// A fate offers `.die()` and `.spawn()` only.
#[op2::kernel]
fn resurrect(x: &mut f64, fate: &mut Fate) {
    fate.revive();
}

// A fate is op2's to make: only the parameter decides the agent's.
#[op2::kernel]
fn own_fate(x: &mut f64) {
    let mut f = Fate::new();
    f.die();
    *x = 0.0;
}

fn main() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let agents = Set::dynamic("agents", 4, 4).unwrap();
    let x = Dat::<f64>::zeros("x", &agents, 1).unwrap();
    let y = Dat::<f64>::zeros("y", &agents, 1).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    // A Dat where the kernel takes a fate.
    let _ = par_loop!(rt, maybe_die, agents, x(RW), y(WRITE));
    // A lifecycle where the kernel takes data.
    let _ = par_loop!(rt, copy, agents, x(WRITE), life(FATE));
    // A lifecycle through a map.
    let _ = par_loop!(rt, maybe_die, agents, x(RW), life(FATE, m));
}
