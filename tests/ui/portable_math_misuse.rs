// `portable_math` is the one argument `#[op2::kernel]` takes, and a
// portable kernel may not call a function op2 has no version of yet.

#[op2::kernel(fast_math)]
fn fast(x: &mut f64) {
    *x = x.sin();
}

#[op2::kernel(portable_math)]
fn damped(x: &mut f64) {
    *x = x.tanh() + x.sin();
}

fn main() {}
