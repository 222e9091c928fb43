//! Misuse of the agent layer that once crashed, leaked or gave wrong
//! answers without an error, on every backend: each case is now refused
//! with an error that says what to do, or computed right, and leaves the
//! data as it was.

use op2::prelude::*;
use op2::Error;

/// Sums every message of a brute-force list.
#[op2::kernel]
fn sum_messages(out: &mut f64, m: &[f64]) {
    let mut s = 0.0;
    for j in 0..m.len() {
        s += m[j];
    }
    *out = s;
}

/// A Dat carried after the list's last build holds no messages yet: a loop
/// reading it is refused until the list is built again, then reads them.
pub fn carried_after_build_is_refused_until_built(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let senders = Set::new("senders", 4).unwrap();
    let a = Dat::from_vec("a", &senders, 1, vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let b = Dat::from_vec("b", &senders, 1, vec![10.0, 20.0, 50.0, 70.0]).unwrap();
    let out = Dat::<f64>::zeros("out", &senders, 1).unwrap();
    let list = MessageList::brute_force("l", &senders).unwrap();
    let ma = list.carry(&a).unwrap();
    list.build_on(rt).unwrap();
    let mb = list.carry(&b).unwrap();
    // What the list carried at its build reads as before.
    par_loop!(rt, sum_messages, senders, out(WRITE), ma(READ, list[..])).unwrap();
    assert_eq!(out.to_vec(), [10.0; 4]);
    let e = par_loop!(rt, sum_messages, senders, out(WRITE), mb(READ, list[..])).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("`l.b` was carried by message list `l` after the list's last build")
            && msg.contains("`l.build()`"),
        "{msg}"
    );
    assert_eq!(out.to_vec(), [10.0; 4], "the refused loop wrote nothing");
    list.build_on(rt).unwrap();
    par_loop!(rt, sum_messages, senders, out(WRITE), mb(READ, list[..])).unwrap();
    assert_eq!(out.to_vec(), [150.0; 4]);
}

/// Kills its agent through one of two Fates.
#[op2::kernel]
fn two_fates(x: &f64, f1: &mut Fate, f2: &mut Fate) {
    if *x >= 0.0 {
        f1.die();
    } else {
        f2.die();
    }
}

/// Two `life(FATE)` arguments of one Lifecycle: the second Fate's store
/// would overwrite the first's deaths. Refused; nothing changes.
pub fn two_fates_of_one_lifecycle_are_refused(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let agents = Set::dynamic("agents", 4, 8).unwrap();
    let x = Dat::from_vec("x", &agents, 1, vec![1.0, 2.0, -1.0, -2.0]).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    let e = par_loop!(rt, two_fates, agents, x(READ), life(FATE), life(FATE)).unwrap_err();
    assert!(matches!(e, Error::RepeatedArg { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("argument 2") && msg.contains("`life(FATE)` of set `agents`'s Lifecycle is given twice"),
        "{msg}"
    );
    assert_eq!(agents.size(), 4);
    assert_eq!(x.to_vec(), [1.0, 2.0, -1.0, -2.0]);
    assert_eq!(life.fates().to_vec(), [0; 4], "no fate pending");
}

/// Two parameters drawing from streams.
#[op2::kernel]
fn two_draws(out: &mut [f64; 2], r1: &mut Philox, r2: &mut Philox) {
    out[0] = r1.uniform_f64();
    out[1] = r2.uniform_f64();
}

/// One `RandomStreams` given twice would give both parameters the same
/// stream: refused, the counter unmoved; two streams are fine.
pub fn one_streams_given_twice_is_refused(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let agents = Set::new("agents", 5).unwrap();
    let out = Dat::<f64>::zeros("out", &agents, 2).unwrap();
    let s = RandomStreams::new("rng", 3);
    let e = par_loop!(rt, two_draws, agents, out(WRITE), s(DRAW), s(DRAW)).unwrap_err();
    assert!(matches!(e, Error::RepeatedArg { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("random streams `rng` are given twice (argument 1 too)") && msg.contains("another seed"),
        "{msg}"
    );
    assert_eq!(s.loops(), 0, "the refused loop used no counter");
    assert_eq!(out.to_vec(), [0.0; 10]);
    let t = RandomStreams::new("other", 4);
    par_loop!(rt, two_draws, agents, out(WRITE), s(DRAW), t(DRAW)).unwrap();
    let want: Vec<f64> = (0..5u64)
        .flat_map(|e| [Philox::new(3, e, 0).uniform_f64(), Philox::new(4, e, 0).uniform_f64()])
        .collect();
    assert_eq!(out.to_vec(), want);
}

/// One draw per element.
#[op2::kernel]
fn one_draw(out: &mut u32, rng: &mut Philox) {
    *out = rng.next_u32();
}

/// The loop counter does not wrap: the loop with counter `u32::MAX` runs,
/// the next is refused (it would reuse loop 0's streams) until the counter
/// is set again.
pub fn stream_counters_do_not_wrap(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let agents = Set::new("agents", 3).unwrap();
    let out = Dat::<u32>::zeros("out", &agents, 1).unwrap();
    let s = RandomStreams::new("rng", 11);
    s.set_loops(u32::MAX - 1);
    for n in [u32::MAX - 1, u32::MAX] {
        par_loop!(rt, one_draw, agents, out(WRITE), s(DRAW)).unwrap();
        let want: Vec<u32> = (0..3).map(|e| Philox::new(11, e, n).next_u32()).collect();
        assert_eq!(out.to_vec(), want, "counter {n}");
    }
    let before = out.to_vec();
    let e = par_loop!(rt, one_draw, agents, out(WRITE), s(DRAW)).unwrap_err();
    assert!(matches!(e, Error::StreamsExhausted { .. }), "{e:?}");
    assert!(e.to_string().contains("all 4294967296 loop counters are used"), "{e}");
    assert_eq!(out.to_vec(), before, "the refused loop wrote nothing");
    s.set_loops(7);
    par_loop!(rt, one_draw, agents, out(WRITE), s(DRAW)).unwrap();
    let want: Vec<u32> = (0..3).map(|e| Philox::new(11, e, 7).next_u32()).collect();
    assert_eq!(out.to_vec(), want);
}

/// Streams drawn over many short-lived sets keep only the sets still in
/// use (each set's ids Dat went with it).
pub fn streams_forget_dropped_sets(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let s = RandomStreams::new("rng", 5);
    let kept = Set::new("kept", 4).unwrap();
    let out = Dat::<u32>::zeros("out", &kept, 1).unwrap();
    par_loop!(rt, one_draw, kept, out(WRITE), s(DRAW)).unwrap();
    // A second streams drawing over the same brief sets: each keeps the
    // set's ids, and neither may keep the other's alive.
    let t = RandomStreams::new("other", 6);
    for step in 0..40 {
        let brief = Set::new("brief", 10 + step).unwrap();
        let d = Dat::<u32>::zeros("d", &brief, 1).unwrap();
        par_loop!(rt, one_draw, brief, d(WRITE), s(DRAW)).unwrap();
        par_loop!(rt, one_draw, brief, d(WRITE), t(DRAW)).unwrap();
        assert!(s.sets_kept() <= 2, "step {step}: {} sets kept", s.sets_kept());
        assert!(
            t.sets_kept() <= 1,
            "step {step}: {} sets kept by the second",
            t.sets_kept()
        );
    }
    par_loop!(rt, one_draw, kept, out(WRITE), s(DRAW)).unwrap();
    assert_eq!(s.sets_kept(), 1, "only the set still in use");
    let want: Vec<u32> = (0..4).map(|e| Philox::new(5, e, 41).next_u32()).collect();
    assert_eq!(out.to_vec(), want);
}

/// Has one child.
#[op2::kernel]
fn spawn_one(x: &f64, fate: &mut Fate) {
    if *x > 0.0 {
        fate.spawn();
    }
}

/// Children's ids stop at `i64::MAX` (kernels see ids as `i64`): a birth
/// past it is refused and nothing changes; up to it, it is fine.
pub fn child_ids_stop_at_i64_max(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let top = i64::MAX as u64;
    let agents = Set::dynamic_with_ids("agents", vec![3, top - 1], 4).unwrap();
    let x = Dat::from_vec("x", &agents, 1, vec![0.0, 1.0]).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    // The child of the agent with id top - 1 gets id top: the last one.
    par_loop!(rt, spawn_one, agents, x(READ), life(FATE)).unwrap();
    assert_eq!(agents.global_ids().to_vec(), [3, top - 1, top]);
    assert_eq!(life.ids().to_vec(), [3, i64::MAX - 1, i64::MAX]);
    let e = par_loop!(rt, spawn_one, agents, x(READ), life(FATE)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("past the largest agent id 9223372036854775807") && msg.contains("the id space is used up"),
        "{msg}"
    );
    assert_eq!(agents.global_ids().to_vec(), [3, top - 1, top], "nobody was born");
    assert_eq!(x.to_vec(), [0.0, 1.0, 1.0]);
}

/// Every entry of a stencil, read through the map.
#[op2::kernel]
fn far_neighbours(out: &mut [i64; 4], n0: &i64, n1: &i64, n2: &i64, n3: &i64) {
    out[0] = *n0;
    out[1] = *n1;
    out[2] = *n2;
    out[3] = *n3;
}

/// Offsets near the ends of `isize` are residues like any others: every
/// backend (native views and the tables generated code reads) finds the
/// same neighbours as exact arithmetic.
pub fn stencil_offsets_near_isize_limits(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let (w, h) = (5usize, 3usize);
    let offsets = [
        (isize::MAX, 0),
        (isize::MIN, 1),
        (0, isize::MAX),
        (isize::MIN + 1, isize::MIN),
    ];
    let cells = Set::new("cells", w * h).unwrap();
    let s = Stencil::torus("far", &cells, (w, h), &offsets).unwrap();
    let site = Dat::from_vec("site", &cells, 1, (0..(w * h) as i64).collect()).unwrap();
    let out = Dat::<i64>::zeros("out", &cells, 4).unwrap();
    par_loop!(
        rt,
        far_neighbours,
        cells,
        out(WRITE),
        site(READ, s[0]),
        site(READ, s[1]),
        site(READ, s[2]),
        site(READ, s[3])
    )
    .unwrap();
    let want: Vec<i64> = (0..w * h)
        .flat_map(|e| {
            offsets.map(|(dx, dy)| {
                let x = ((e % w) as i128 + dx as i128).rem_euclid(w as i128);
                let y = ((e / w) as i128 + dy as i128).rem_euclid(h as i128);
                (y * w as i128 + x) as i64
            })
        })
        .collect();
    assert_eq!(out.to_vec(), want);
}

/// Spreads each agent's weight over its neighbours.
#[op2::kernel]
fn spread(w: &f64, acc: &mut [f64], fate: &mut Fate) {
    for j in 0..acc.len() {
        acc[j] += *w;
    }
    if *w > 2.5 {
        fate.die();
    } else if *w < 0.5 {
        fate.spawn();
    }
}

/// Ages every agent's weight.
#[op2::kernel]
fn drift(w: &mut f64, acc: &f64) {
    *w = (*w + 0.37 + 0.001 * *acc) % 3.0;
}

/// A model that rebuilds its ragged map after every round of births and
/// deaths (the normal case) leaves a bounded number of plans behind.
pub fn plans_of_rebuilt_maps_are_dropped(new_rt: &dyn Fn() -> Runtime) {
    let rt = &new_rt();
    let n = 60;
    let agents = Set::dynamic("agents", n, 4 * n).unwrap();
    let w = Dat::from_vec("w", &agents, 1, (0..n).map(|i| (i % 30) as f64 * 0.1).collect()).unwrap();
    let acc = Dat::<f64>::zeros("acc", &agents, 1).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    for step in 0..40 {
        let size = agents.size();
        let ids = agents.global_ids();
        // Each agent to the 1 to 3 agents after it (by place), by its id.
        let mut offsets = vec![0];
        let mut targets = Vec::new();
        for e in 0..size {
            let degree = 1 + (ids[e] % 3) as usize;
            targets.extend((1..=degree).map(|k| ((e + k) % size) as i32));
            offsets.push(targets.len());
        }
        let links = RaggedMap::new("links", &agents, &agents, offsets, targets).unwrap();
        acc.data_mut().fill(0.0);
        par_loop!(rt, spread, agents, w(READ), acc(INC, links[..]), life(FATE)).unwrap();
        par_loop!(rt, drift, agents, w(RW), acc(READ)).unwrap();
        assert!(rt.plans_held() <= 2, "step {step}: {} plans held", rt.plans_held());
    }
}
