//! Kernels the conformance suite runs on every backend.

use op2::Philox;

#[op2::kernel]
pub fn copy2(dst: &mut [f64; 2], src: &[f64; 2]) {
    dst[0] = src[0];
    dst[1] = src[1];
}

#[op2::kernel]
pub fn affine_rw(x: &mut [f64; 2]) {
    x[0] = 2.0 * x[0] + 1.0;
    x[1] = -x[1];
}

#[op2::kernel]
pub fn inc_by_index(x: &mut f64, w: &f64) {
    *x += *w;
    *x += 0.5;
}

#[op2::kernel]
pub fn min_with(target: &mut f64, v: &f64) {
    *target = target.min(*v);
}

#[op2::kernel]
pub fn max_with(target: &mut f64, v: &f64) {
    *target = f64::max(*target, *v);
}

#[op2::kernel]
pub fn edge_diff(out: &mut f64, a: &f64, b: &f64) {
    *out = *b - *a;
}

#[op2::kernel]
pub fn edge_spread(w: &f64, a: &mut f64, b: &mut f64) {
    *a += *w;
    *b -= 2.0 * *w;
}

#[op2::kernel]
pub fn cell_sum(out: &mut [f64; 2], v: &[[f64; 2]; 3]) {
    for k in 0..3 {
        out[0] += v[k][0];
        out[1] += v[k][1];
    }
}

#[op2::kernel]
pub fn cell_scatter(w: &f64, v: &mut [[f64; 2]; 3]) {
    for k in 0..3 {
        v[k][0] += *w * (k as f64 + 1.0);
        v[k][1] += 1.0;
    }
}

#[op2::kernel]
pub fn node_write_via_map(src: &f64, dst: &mut f64) {
    *dst = 10.0 * *src;
}

#[op2::kernel]
pub fn node_rw_via_map(v: &mut [f64; 2]) {
    v[0] += 1.0;
    v[1] *= 2.0;
}

#[op2::kernel]
pub fn node_min_via_map(v: &f64, target: &mut f64) {
    *target = target.min(*v);
}

#[op2::kernel]
pub fn node_max_via_map(v: &f64, target: &mut f64) {
    *target = target.max(*v);
}

#[op2::kernel]
pub fn all_min_via_map(v: &f64, targets: &mut [[f64; 1]; 3]) {
    for k in 0..3 {
        targets[k][0] = targets[k][0].min(*v);
    }
}

#[op2::kernel]
pub fn reduce_all(x: &[f64; 2], sum: &mut [f64; 2], lo: &mut f64, hi: &mut f64) {
    sum[0] += x[0];
    sum[1] += x[0] * x[1];
    *lo = lo.min(x[1]);
    *hi = hi.max(x[0]);
}

#[op2::kernel]
pub fn scale_by_const(x: &mut f64, c: &[f64; 2]) {
    *x = *x * c[0] + c[1];
}

#[op2::kernel]
pub fn int_ops(x: &mut i32, count: &mut i32, biggest: &mut i32) {
    *x = *x * 3 - 1;
    *count += 1;
    *biggest = (*biggest).max(*x);
}

#[op2::kernel]
pub fn f32_ops(x: &mut [f32; 2], total: &mut f32) {
    x[0] *= 0.5f32;
    x[1] += x[0];
    *total += x[1];
}

#[op2::kernel]
pub fn u32_i64_ops(a: &u32, b: &mut i64) {
    *b += (*a as i64) * 1000000000000;
}

#[op2::kernel]
pub fn self_and_next(own: &mut f64, next: &mut f64) {
    *own += 1.0;
    *next += 10.0;
}

#[op2::kernel]
pub fn sum_of_two(a: &f64, b: &f64, out: &mut f64) {
    *out = *a + *b;
}

/// Locals typed by literals alone, whose uses give them their types as
/// Rust infers them: an f32 sum, a u32 above i32::MAX, an i64 chain.
#[op2::kernel]
pub fn inferred_types(x: &[f32; 10], q: &mut u32, w: &mut i64, o: &mut f32) {
    let mut acc = 0.0;
    for j in 0..10 {
        acc += x[j];
    }
    *o = acc;
    let big = 3_000_000_000;
    *q = big / 2;
    let t = 5_000_000_000;
    let u = t + 1;
    *w = u * 2;
}

/// Inclusive ranges up to the largest value of their type, one of them
/// with a `continue`: C's `i <= MAX; ++i` would never stop.
#[op2::kernel]
pub fn inclusive_to_the_top(from: &u32, top: &i32, count: &mut [u32; 2]) {
    for _i in *from..=u32::MAX {
        count[0] += 1;
    }
    for j in *top..=i32::MAX {
        if j % 2 == 0 {
            continue;
        }
        count[1] += 1;
    }
}

#[op2::kernel]
pub fn add_five(x: &mut i32) {
    *x += 5;
}

/// Kernel constants: values computed from others, sizing an array, and of
/// types other than `i32` (C's enum constants are `int`).
#[op2::kernel]
pub fn with_constants(x: &f64, out: &mut [f64; 4]) {
    const K: i32 = 2 * 3;
    const S: usize = 1 << 2;
    const N: usize = 100_000;
    const M: i32 = -K;
    let mut a: [f64; S] = [1.5; S];
    a[S - 1] = *x;
    out[0] = (N * N) as f64;
    out[1] = a[S - 1] * K as f64;
    out[2] = (K * M) as f64;
    out[3] = (N / S) as f64 + a[0];
}

/// Integer arithmetic that overflows, and shifts by the type's width or
/// more: Rust's release builds wrap and mask; C leaves both undefined.
#[op2::kernel]
pub fn overflowing(a: &i32, b: &i64, s: &u32, small: &mut [i32; 8], wide: &mut [i64; 4], unsigned: &mut [u32; 2]) {
    let x = *a;
    small[0] = x + 1;
    small[1] = x * 3;
    small[2] = -x;
    small[3] = if x + 1 > x { 1 } else { 2 };
    small[4] = x << *s;
    small[5] = x >> *s;
    small[6] = x.abs();
    small[7] = x - 2;
    let mut y = *b;
    y *= 7;
    wide[0] = *b + *b;
    wide[1] = y;
    wide[2] = *b << *s;
    wide[3] = (-*b) - 1;
    unsigned[0] = *s << *s;
    unsigned[1] = (*s + 1) >> *s;
}

#[op2::kernel]
pub fn casts(x: &f64, y: &f32, a: &mut i32, b: &mut i64, c: &mut u32, d: &mut i32) {
    *a = *x as i32;
    *b = *x as i64;
    *c = *x as u32;
    *d = *y as i32;
}

#[op2::kernel]
pub fn halve(next: &mut f64, cur: &f64) {
    *next = 0.5 * *cur;
}

#[op2::kernel]
pub fn share_quarters(na: &mut f64, nb: &mut f64, a: &f64, b: &f64) {
    *na += 0.25 * *b;
    *nb += 0.25 * *a;
}

/// Draws of every kind from the element's own stream: keyed by the seed and
/// call in `key`, numbered by the element's global id.
#[op2::kernel]
pub fn random_draws(words: &mut [u32; 3], values: &mut [f64; 6], id: &i64, key: &[i64; 2]) {
    let mut rng = Philox::new(key[0] as u64, *id as u64, key[1] as u32);
    words[0] = rng.next_u32();
    words[1] = rng.below(6);
    words[2] = rng.below(1000000007);
    values[0] = rng.uniform_f64();
    values[1] = rng.uniform_f32() as f64;
    values[2] = if rng.bernoulli(0.3) { 1.0 } else { 0.0 };
    values[3] = (rng.next_u64() >> 11) as f64;
    values[4] = rng.normal_f64();
    values[5] = rng.normal_f32() as f64;
}

/// Reads the targets of a ragged map every way a kernel can: `.len()`,
/// iteration (`for v in x.iter()`, `for &v in x`, rows of `&[[T; D]]`) and
/// indexing.
#[op2::kernel]
pub fn ragged_read(vals: &[f64], pos: &[[f64; 2]], sum: &mut f64, moments: &mut [f64; 3], count: &mut i32) {
    let mut s = 0.0;
    for v in vals.iter() {
        s += *v;
    }
    let mut largest = -1.0e300;
    for &v in vals {
        if v > largest {
            largest = v;
        }
    }
    *sum = s + largest;
    let mut weighted = 0.0;
    for j in 0..pos.len() {
        weighted += pos[j][0] * (j as f64 + 1.0);
    }
    let mut squares = 0.0;
    for p in pos {
        squares += p[1] * p[1];
    }
    moments[0] = weighted;
    moments[1] = squares;
    moments[2] = if vals.len() > 0 { vals[vals.len() - 1] } else { 0.0 };
    *count = vals.len() as i32;
}

/// Increments through a ragged map, dim 1 and dim 2, `+=` and `-=`.
#[op2::kernel]
pub fn ragged_spread(share: &f64, out: &mut [f64], out2: &mut [[f64; 2]]) {
    for j in 0..out.len() {
        out[j] += *share * (j as f64 + 1.0);
    }
    for j in 0..out2.len() {
        out2[j][0] += *share;
        out2[j][1] -= 1.0;
    }
}

/// An integer count through a ragged map.
#[op2::kernel]
pub fn ragged_count(hits: &mut [i32]) {
    for j in 0..hits.len() {
        hits[j] += 1;
    }
}

/// One step over a subset: a direct update from the element's ragged
/// neighbours, an increment through a map and a reduction.
#[op2::kernel]
pub fn subset_step(x: &mut f64, nbrs: &[f64], next: &mut f64, total: &mut f64) {
    let mut s = 0.0;
    for &v in nbrs {
        s += v;
    }
    *x = 0.5 * *x + s;
    *next += *x;
    *total += s;
}

/// Reads a whole Moore stencil (dim 2, weighted by entry) and one entry of it.
#[op2::kernel]
pub fn stencil_gather(out: &mut [f64; 2], around: &[[f64; 2]; 8], right: &f64) {
    let mut a = 0.0;
    let mut b = 0.0;
    for k in 0..8 {
        a += around[k][0] * (k as f64 + 1.0);
        b += around[k][1];
    }
    out[0] = a + *right;
    out[1] = b;
}

/// Increments one entry of a stencil and all of another's entries.
#[op2::kernel]
pub fn stencil_spread(w: &f64, up: &mut f64, all: &mut [[f64; 1]; 4]) {
    *up += *w;
    for k in 0..4 {
        all[k][0] += *w * (k as f64 + 1.0);
    }
}

/// Draws of every kind from the element's stream, given as a parameter
/// (`streams(DRAW)`), around a plain argument on each side.
#[op2::kernel]
pub fn stream_draws(words: &mut [u32; 3], rng: &mut Philox, values: &mut [f64; 6]) {
    words[0] = rng.next_u32();
    words[1] = rng.below(6);
    words[2] = rng.below(1000000007);
    values[0] = rng.uniform_f64();
    values[1] = rng.uniform_f32() as f64;
    values[2] = if rng.bernoulli(0.3) { 1.0 } else { 0.0 };
    values[3] = (rng.next_u64() >> 11) as f64;
    values[4] = rng.normal_f64();
    values[5] = rng.normal_f32() as f64;
}

/// Two streams in one kernel, and an increment through a map beside them.
#[op2::kernel]
pub fn two_streams(a: &mut Philox, hits: &mut f64, b: &mut Philox, out: &mut [u32; 2]) {
    out[0] = a.next_u32();
    out[1] = b.next_u32();
    *hits += 1.0;
}

/// Counts the messages with a positive id in the bins around an agent (a
/// spatial message list) and sums all messages' ids (brute force). Used by
/// the catalogue (jit and CUDA snapshots, the PTX check).
#[op2::kernel]
#[allow(dead_code)]
pub fn near_count(p: &[f32; 2], n: &mut i32, ids: &[u32], msgs: &op2::Spatial2d) {
    let mut c = 0;
    for j in msgs.near(p[0], p[1]) {
        if ids[j] > 0 {
            c += 1;
        }
    }
    for j in 0..ids.len() {
        c += ids[j] as i32;
    }
    *n = c;
}

/// Counts the messages from positive ids in the cells within 1 of an
/// integer cell (a discrete message list). Used by the catalogue.
#[op2::kernel]
#[allow(dead_code)]
pub fn within_count(cell: &[i32; 2], n: &mut i32, ids: &[u32], msgs: &op2::Discrete2d) {
    let mut c = 0;
    for j in msgs.within(cell[0], cell[1], 1) {
        if ids[j] > 0 {
            c += 1;
        }
    }
    *n = c;
}

/// An agent of negative mass dies; one above 1 splits in two (the
/// catalogue's; the conformance suite has its own).
#[op2::kernel]
#[allow(dead_code)]
pub fn split_or_die(mass: &mut f64, child: &mut f64, fate: &mut op2::Fate) {
    if *mass < 0.0 {
        fate.die();
    } else if *mass > 1.0 {
        fate.spawn();
        *mass *= 0.5;
        *child = *mass;
    }
}

/// op2's own math functions: the same bits on every backend, sums of
/// products included (no contraction into fused multiply-adds).
#[op2::kernel(portable_math)]
pub fn portable_waves(x: &mut [f64; 2], y: &mut f32, n: &i32) {
    let a = x[0];
    x[0] =
        a.sin() * a.cos() + f64::exp(a * 0.25) * a.ln().abs() + a.powf(1.37) - a.powi(*n) * 1e-3 + a.tan() * a.log10();
    x[1] = x[1] * a + f64::powf(a + 1.0, -0.5);
    let b = *y;
    *y = b.sin() * b + b.exp() * 0.5 + b.powi(*n) + f32::ln(b + 4.0) * b.cos();
}

/// `a * b + c` in both precisions: one rounding after the multiply and one
/// after the add, as Rust computes it; a fused multiply-add rounds once.
#[op2::kernel]
pub fn multiply_add(f: &[f32; 3], d: &[f64; 3], out_f: &mut f32, out_d: &mut f64) {
    *out_f = f[0] * f[1] + f[2];
    *out_d = d[0] * d[1] + d[2];
}
