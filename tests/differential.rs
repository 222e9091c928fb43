//! Differential fuzzer: proptest draws random loops (random sets, maps of
//! arity 1-4 with repeated entries, every access mode, direct and indirect
//! arguments on one Dat, two maps into one Dat, Globals, i32/f32/f64) and runs
//! each on every backend compiled in, with small blocks so that even small sets
//! get many blocks and colours. Every backend must give what `seq` gives, or
//! the same error.
//!
//! Values stay small integers and kernels only add, take minima and maxima or
//! store constants, so every result is exact in every type whatever order the
//! backends combine contributions in: outcomes are compared exactly, floats
//! too. A race shows up as a lost or doubled contribution.
//!
//! The same random loops also run over random subsets of their iteration set
//! (indices unsorted and repeated, any density, empty included); random
//! ragged graphs, stencils, births and deaths, message lists (spatial and
//! discrete, with agents sorted in memory or not), and agent rounds (births
//! and deaths with a ragged map rebuilt every round, two random streams in
//! one loop, Dats carried at random rounds) get their own tests.
//!
//! `OP2_FUZZ_CASES` sets the number of cases (default 64).

// The RW kernels spell out read-modify-write (`*b = *b + *r`) on purpose.
#![allow(clippy::assign_op_pattern)]

use op2::prelude::*;
use op2::RuntimeOptions;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Kernels of the "mix" shape: one direct argument, two map entries (through
/// two maps) and a READ through the first map, all on Dats of dim 1, plus an
/// INC, a MIN and a MAX Global; one kernel per access mode.
macro_rules! mix_kernels {
    ($ty:ident, $one:literal, $five:literal; $inc:ident, $rw:ident, $write:ident, $min:ident, $max:ident) => {
        #[op2::kernel]
        fn $inc(a: &mut $ty, b: &mut $ty, c: &mut $ty, r: &$ty, s: &mut $ty, lo: &mut $ty, hi: &mut $ty) {
            *a += *r + $one;
            *b += *r;
            *c += $one;
            *s += *r;
            *lo = (*lo).min(*r);
            *hi = (*hi).max(*r);
        }

        #[op2::kernel]
        fn $rw(a: &mut $ty, b: &mut $ty, c: &mut $ty, r: &$ty, s: &mut $ty, lo: &mut $ty, hi: &mut $ty) {
            *a = *a + *r + $one;
            *b = *b + *r;
            *c = *c + $one;
            // What an RW argument holds on entry depends on which elements
            // sharing its target ran before: Globals take only READ data.
            *s += *r;
            *lo = (*lo).min(*r);
            *hi = (*hi).max(*r);
        }

        // Writers through maps store one constant: which element writes last
        // is the schedule's choice, so only an order-free value is comparable.
        #[op2::kernel]
        fn $write(a: &mut $ty, b: &mut $ty, c: &mut $ty, r: &$ty, s: &mut $ty, lo: &mut $ty, hi: &mut $ty) {
            *a = $five;
            *b = $five;
            *c = $five;
            *s += $one;
            *lo = (*lo).min(*r);
            *hi = (*hi).max(*r);
        }

        #[op2::kernel]
        fn $min(a: &mut $ty, b: &mut $ty, c: &mut $ty, r: &$ty, s: &mut $ty, lo: &mut $ty, hi: &mut $ty) {
            *a = (*a).min(*r);
            *b = (*b).min(*r + $one);
            *c = (*c).min(*r);
            *s += *r;
            *lo = (*lo).min(*r);
            *hi = (*hi).max(*r);
        }

        #[op2::kernel]
        fn $max(a: &mut $ty, b: &mut $ty, c: &mut $ty, r: &$ty, s: &mut $ty, lo: &mut $ty, hi: &mut $ty) {
            *a = (*a).max(*r);
            *b = (*b).max(*r + $one);
            *c = (*c).max(*r);
            *s += *r;
            *lo = (*lo).min(*r);
            *hi = (*hi).max(*r);
        }
    };
}

mix_kernels!(f64, 1.0, 5.0; mix_inc_f64, mix_rw_f64, mix_write_f64, mix_min_f64, mix_max_f64);
mix_kernels!(f32, 1.0f32, 5.0f32; mix_inc_f32, mix_rw_f32, mix_write_f32, mix_min_f32, mix_max_f32);
mix_kernels!(i32, 1, 5; mix_inc_i32, mix_rw_i32, mix_write_i32, mix_min_i32, mix_max_i32);

/// Kernels of the "whole" shape: a direct Dat of dim 2 and every entry of a
/// map of arity `$a` (both INC or both RW), a direct READ, an INC Global.
macro_rules! whole_kernels {
    ($ty:ident, $one:literal, $a:literal; $inc:ident, $rw:ident) => {
        #[op2::kernel]
        fn $inc(a: &mut [$ty; 2], v: &mut [[$ty; 2]; $a], r: &[$ty; 2], s: &mut $ty) {
            a[0] += r[0];
            a[1] += $one;
            for k in 0..$a {
                v[k][0] += r[1];
                v[k][1] += r[0] + $one;
            }
            *s += r[1];
        }

        #[op2::kernel]
        fn $rw(a: &mut [$ty; 2], v: &mut [[$ty; 2]; $a], r: &[$ty; 2], s: &mut $ty) {
            a[0] = a[0] + r[0];
            a[1] = a[1] + $one;
            for k in 0..$a {
                v[k][0] = v[k][0] + r[1];
                v[k][1] = v[k][1] + $one;
            }
            *s += r[0];
        }
    };
}

whole_kernels!(f64, 1.0, 1; whole_inc_f64_1, whole_rw_f64_1);
whole_kernels!(f64, 1.0, 2; whole_inc_f64_2, whole_rw_f64_2);
whole_kernels!(f64, 1.0, 3; whole_inc_f64_3, whole_rw_f64_3);
whole_kernels!(f64, 1.0, 4; whole_inc_f64_4, whole_rw_f64_4);
whole_kernels!(i32, 1, 1; whole_inc_i32_1, whole_rw_i32_1);
whole_kernels!(i32, 1, 2; whole_inc_i32_2, whole_rw_i32_2);
whole_kernels!(i32, 1, 3; whole_inc_i32_3, whole_rw_i32_3);
whole_kernels!(i32, 1, 4; whole_inc_i32_4, whole_rw_i32_4);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    I32,
    F32,
    F64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Acc {
    Inc,
    Rw,
    Write,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// `a(ACC), b(ACC, m[i]), c(ACC, m2[j]), r(READ, m[k])` and three Globals.
    Mix,
    /// `a(ACC), v(ACC, m), r(READ), s(INC)` with dim 2 (INC and RW only).
    Whole,
}

/// One random loop. Tables and values come from `seed`, so a printed case
/// stays short however large its sets are.
#[derive(Clone, Debug)]
struct Case {
    shape: Shape,
    ty: Ty,
    acc: Acc,
    /// Size of the iteration set.
    n: usize,
    /// Size of the maps' target set; `None`: the maps go into the iteration
    /// set itself (so one Dat can be given directly and through a map).
    target: Option<usize>,
    arity: usize,
    arity2: usize,
    /// Entry used by `m[i]`, `m2[j]`, `m[k]` (taken modulo the arity).
    entries: [usize; 3],
    /// Which Dat of its pool each Dat argument gets (equal picks alias).
    picks: [usize; 4],
    /// Times the loop runs (on the same data).
    reps: usize,
    /// Pass the "direct" Dat through `Map::identity` instead (what a loop
    /// must do to write one Dat directly and through a map).
    via_identity: bool,
    /// Percentage of the iteration set in the subset the subset test loops
    /// over (0: empty, 100: every element).
    density: u64,
    seed: u64,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Case {
    fn target_size(&self) -> usize {
        self.target.unwrap_or(self.n)
    }

    /// A map table: random targets, and with some probability runs of one
    /// target repeated (repeated entries within and across elements).
    fn table(&self, salt: u64, arity: usize) -> Vec<i32> {
        let t = self.target_size() as u64;
        (0..self.n * arity)
            .map(|i| {
                let h = splitmix(self.seed ^ salt.wrapping_mul(0x1000_0001) ^ i as u64);
                let target = if h % 5 == 0 {
                    (i / arity) as u64 % t
                } else {
                    (h >> 8) % t
                };
                target as i32
            })
            .collect()
    }

    /// The index list of the subset the subset test loops over: about
    /// `density` percent of the elements, in descending order, every third
    /// one given twice (the subset sorts them and keeps each once).
    fn subset_indices(&self) -> Vec<usize> {
        let kept = (0..self.n)
            .rev()
            .filter(|&e| splitmix(self.seed ^ 0x5b5b_0000 ^ e as u64) % 100 < self.density);
        kept.enumerate()
            .flat_map(|(k, e)| if k % 3 == 0 { vec![e, e] } else { vec![e] })
            .collect()
    }

    /// Initial value `i` of Dat `which`: a small integer.
    fn value(&self, which: u64, i: usize) -> i16 {
        (splitmix(self.seed ^ (which << 40) ^ i as u64) % 41) as i16 - 20
    }
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let shape = prop_oneof![Just(Shape::Mix), Just(Shape::Whole)];
    let ty = prop_oneof![Just(Ty::I32), Just(Ty::F32), Just(Ty::F64)];
    let acc = prop_oneof![
        Just(Acc::Inc),
        Just(Acc::Rw),
        Just(Acc::Write),
        Just(Acc::Min),
        Just(Acc::Max)
    ];
    // Mostly small sets; sometimes large ones, where threads really overlap.
    let n = prop_oneof![3 => 1usize..64, 1 => 2000usize..12000];
    let target = prop_oneof![Just(None), (1usize..48).prop_map(Some)];
    (
        shape,
        ty,
        acc,
        n,
        target,
        1usize..=4,
        1usize..=4,
        [0usize..4, 0usize..4, 0usize..4],
        [0usize..2, 0usize..3, 0usize..3, 0usize..3],
        (
            1usize..=3,
            any::<bool>(),
            prop_oneof![1 => Just(0u64), 1 => Just(100), 4 => 1u64..100],
        ),
        any::<u64>(),
    )
        .prop_map(
            |(shape, ty, acc, n, target, arity, arity2, entries, picks, (reps, via_identity, density), seed)| {
                // The whole-map kernels exist for INC and RW, in f64 and i32.
                let (acc, ty) = match shape {
                    Shape::Mix => (acc, ty),
                    Shape::Whole => (
                        if acc == Acc::Inc { Acc::Inc } else { Acc::Rw },
                        if ty == Ty::F32 { Ty::F64 } else { ty },
                    ),
                };
                Case {
                    shape,
                    ty,
                    acc,
                    n,
                    target,
                    arity,
                    arity2,
                    entries,
                    picks,
                    reps,
                    via_identity,
                    density,
                    seed,
                }
            },
        )
}

/// What a loop left behind: every Dat and Global of the case (exact values as
/// f64, which holds every i32 and f32 exactly), or the error it returned.
type Outcome = Result<Vec<Vec<f64>>, String>;

trait Value: op2::Scalar + From<i16> {
    fn exact(self) -> f64;
}
impl Value for i32 {
    fn exact(self) -> f64 {
        self as f64
    }
}
impl Value for f32 {
    fn exact(self) -> f64 {
        self as f64
    }
}
impl Value for f64 {
    fn exact(self) -> f64 {
        self
    }
}

/// The carriers of one case, built fresh for every backend.
struct World<T: Value> {
    iter: Set,
    /// The subset of `iter` the subset test loops over.
    subset: Subset,
    m: Map,
    m2: Map,
    /// Dats on the iteration set.
    direct: Vec<Dat<T>>,
    /// Dats on the target set (the same handles as `direct`, plus one, when
    /// the maps go into the iteration set).
    targets: Vec<Dat<T>>,
    globals: Vec<Global<T>>,
}

impl<T: Value> World<T> {
    fn new(case: &Case, dim: usize) -> World<T> {
        let iter = Set::new("iter", case.n).unwrap();
        let to = match case.target {
            None => iter.clone(),
            Some(t) => Set::new("to", t).unwrap(),
        };
        let m = Map::new("m", &iter, &to, case.arity, case.table(1, case.arity)).unwrap();
        let m2 = Map::new("m2", &iter, &to, case.arity2, case.table(2, case.arity2)).unwrap();
        let dat = |name: &str, set: &Set, which: u64| {
            let values = (0..set.size() * dim).map(|i| T::from(case.value(which, i))).collect();
            Dat::from_vec(name, set, dim, values).unwrap()
        };
        let direct: Vec<Dat<T>> = (0..2).map(|k| dat(&format!("d{k}"), &iter, k)).collect();
        let targets = match case.target {
            None => direct.iter().cloned().chain([dat("d2", &iter, 2)]).collect(),
            Some(_) => (0..3).map(|k| dat(&format!("t{k}"), &to, 10 + k)).collect(),
        };
        let globals = vec![
            Global::scalar("s", T::from(0)),
            Global::scalar("lo", T::from(1000)),
            Global::scalar("hi", T::from(-1000)),
        ];
        World {
            subset: Subset::new("subset", &iter, case.subset_indices()).unwrap(),
            iter,
            m,
            m2,
            direct,
            targets,
            globals,
        }
    }

    fn outcome(&self) -> Vec<Vec<f64>> {
        let dats = self.direct.iter().chain(&self.targets);
        let mut out: Vec<Vec<f64>> = dats.map(|d| d.to_vec().into_iter().map(T::exact).collect()).collect();
        out.extend(self.globals.iter().map(|g| vec![g.value().exact()]));
        out
    }
}

/// Runs a "mix" loop over `w.$over`: the whole iteration set (`iter`) or the
/// case's subset of it (`subset`).
macro_rules! run_mix {
    ($rt:expr, $case:expr, $over:ident, $ty:ident, $kernel:ident, $acc:ident) => {{
        let case: &Case = $case;
        let w = World::<$ty>::new(case, 1);
        let [pa, pb, pc, pr] = case.picks;
        let (a, b, c, r) = (&w.direct[pa], &w.targets[pb], &w.targets[pc], &w.targets[pr]);
        let (i, j, k) = (
            case.entries[0] % case.arity,
            case.entries[1] % case.arity2,
            case.entries[2] % case.arity,
        );
        let (s, lo, hi) = (&w.globals[0], &w.globals[1], &w.globals[2]);
        let (m, m2) = (&w.m, &w.m2);
        let id = Map::identity("id", &w.iter);
        for _ in 0..case.reps {
            if case.via_identity {
                par_loop!(
                    $rt,
                    $kernel,
                    w.$over,
                    a($acc, id[0]),
                    b($acc, m[i]),
                    c($acc, m2[j]),
                    r(READ, m[k]),
                    s(INC),
                    lo(MIN),
                    hi(MAX)
                )
            } else {
                par_loop!(
                    $rt,
                    $kernel,
                    w.$over,
                    a($acc),
                    b($acc, m[i]),
                    c($acc, m2[j]),
                    r(READ, m[k]),
                    s(INC),
                    lo(MIN),
                    hi(MAX)
                )
            }
            .map_err(|e| e.to_string())?;
        }
        Ok(w.outcome())
    }};
}

/// Runs a "whole" loop over `w.$over` (as `run_mix!`).
macro_rules! run_whole {
    ($rt:expr, $case:expr, $over:ident, $ty:ident, $kernel:ident, $acc:ident) => {{
        let case: &Case = $case;
        let w = World::<$ty>::new(case, 2);
        let [pa, pv, pr, _] = case.picks;
        let (a, v, r) = (&w.direct[pa], &w.targets[pv], &w.direct[pr % 2]);
        let (s, m) = (&w.globals[0], &w.m);
        let id = Map::identity("id", &w.iter);
        for _ in 0..case.reps {
            if case.via_identity {
                par_loop!($rt, $kernel, w.$over, a($acc, id[0]), v($acc, m), r(READ), s(INC))
            } else {
                par_loop!($rt, $kernel, w.$over, a($acc), v($acc, m), r(READ), s(INC))
            }
            .map_err(|e| e.to_string())?;
        }
        Ok(w.outcome())
    }};
}

/// The loop of `case` over `w.$over` (see `run_mix!`), by shape, type,
/// access mode and arity.
macro_rules! dispatch {
    ($rt:expr, $case:expr, $over:ident) => {{
        use Acc::*;
        match ($case.shape, $case.ty, $case.acc, $case.arity) {
            (Shape::Mix, Ty::F64, Inc, _) => run_mix!($rt, $case, $over, f64, mix_inc_f64, INC),
            (Shape::Mix, Ty::F64, Rw, _) => run_mix!($rt, $case, $over, f64, mix_rw_f64, RW),
            (Shape::Mix, Ty::F64, Write, _) => run_mix!($rt, $case, $over, f64, mix_write_f64, WRITE),
            (Shape::Mix, Ty::F64, Min, _) => run_mix!($rt, $case, $over, f64, mix_min_f64, MIN),
            (Shape::Mix, Ty::F64, Max, _) => run_mix!($rt, $case, $over, f64, mix_max_f64, MAX),
            (Shape::Mix, Ty::F32, Inc, _) => run_mix!($rt, $case, $over, f32, mix_inc_f32, INC),
            (Shape::Mix, Ty::F32, Rw, _) => run_mix!($rt, $case, $over, f32, mix_rw_f32, RW),
            (Shape::Mix, Ty::F32, Write, _) => run_mix!($rt, $case, $over, f32, mix_write_f32, WRITE),
            (Shape::Mix, Ty::F32, Min, _) => run_mix!($rt, $case, $over, f32, mix_min_f32, MIN),
            (Shape::Mix, Ty::F32, Max, _) => run_mix!($rt, $case, $over, f32, mix_max_f32, MAX),
            (Shape::Mix, Ty::I32, Inc, _) => run_mix!($rt, $case, $over, i32, mix_inc_i32, INC),
            (Shape::Mix, Ty::I32, Rw, _) => run_mix!($rt, $case, $over, i32, mix_rw_i32, RW),
            (Shape::Mix, Ty::I32, Write, _) => run_mix!($rt, $case, $over, i32, mix_write_i32, WRITE),
            (Shape::Mix, Ty::I32, Min, _) => run_mix!($rt, $case, $over, i32, mix_min_i32, MIN),
            (Shape::Mix, Ty::I32, Max, _) => run_mix!($rt, $case, $over, i32, mix_max_i32, MAX),
            (Shape::Whole, Ty::F64, Inc, 1) => run_whole!($rt, $case, $over, f64, whole_inc_f64_1, INC),
            (Shape::Whole, Ty::F64, Inc, 2) => run_whole!($rt, $case, $over, f64, whole_inc_f64_2, INC),
            (Shape::Whole, Ty::F64, Inc, 3) => run_whole!($rt, $case, $over, f64, whole_inc_f64_3, INC),
            (Shape::Whole, Ty::F64, Inc, _) => run_whole!($rt, $case, $over, f64, whole_inc_f64_4, INC),
            (Shape::Whole, Ty::F64, _, 1) => run_whole!($rt, $case, $over, f64, whole_rw_f64_1, RW),
            (Shape::Whole, Ty::F64, _, 2) => run_whole!($rt, $case, $over, f64, whole_rw_f64_2, RW),
            (Shape::Whole, Ty::F64, _, 3) => run_whole!($rt, $case, $over, f64, whole_rw_f64_3, RW),
            (Shape::Whole, Ty::F64, _, _) => run_whole!($rt, $case, $over, f64, whole_rw_f64_4, RW),
            (Shape::Whole, _, Inc, 1) => run_whole!($rt, $case, $over, i32, whole_inc_i32_1, INC),
            (Shape::Whole, _, Inc, 2) => run_whole!($rt, $case, $over, i32, whole_inc_i32_2, INC),
            (Shape::Whole, _, Inc, 3) => run_whole!($rt, $case, $over, i32, whole_inc_i32_3, INC),
            (Shape::Whole, _, Inc, _) => run_whole!($rt, $case, $over, i32, whole_inc_i32_4, INC),
            (Shape::Whole, _, _, 1) => run_whole!($rt, $case, $over, i32, whole_rw_i32_1, RW),
            (Shape::Whole, _, _, 2) => run_whole!($rt, $case, $over, i32, whole_rw_i32_2, RW),
            (Shape::Whole, _, _, 3) => run_whole!($rt, $case, $over, i32, whole_rw_i32_3, RW),
            (Shape::Whole, _, _, _) => run_whole!($rt, $case, $over, i32, whole_rw_i32_4, RW),
        }
    }};
}

fn run(rt: &Runtime, case: &Case) -> Outcome {
    dispatch!(rt, case, iter)
}

/// The same loop over the case's subset of the iteration set.
fn run_over_subset(rt: &Runtime, case: &Case) -> Outcome {
    dispatch!(rt, case, subset)
}

/// Every backend compiled in (with its hardware present), small blocks.
#[allow(clippy::vec_init_then_push)] // pushes depend on the features
fn backends() -> Vec<(&'static str, Runtime)> {
    let small = || RuntimeOptions::default().block_size(4);
    #[allow(unused_mut)]
    let mut out = Vec::new();
    #[cfg(feature = "rayon")]
    out.push((
        "rayon",
        Runtime::with_options(Backend::Rayon, small().threads(2)).unwrap(),
    ));
    #[cfg(feature = "jit")]
    out.push((
        "jit",
        Runtime::with_options(
            Backend::Jit,
            small()
                .threads(2)
                .cache_dir(concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache")),
        )
        .unwrap(),
    ));
    #[cfg(feature = "opencl")]
    {
        // Dats in columns (as on GPUs), and with atomics in rows.
        let columns = small().device_layout(op2::DeviceLayout::StructOfArrays);
        out.push((
            "opencl, columns",
            Runtime::with_options(Backend::OpenCl, columns).unwrap(),
        ));
        let atomics = small()
            .increments(op2::Increments::Atomics)
            .device_layout(op2::DeviceLayout::ArrayOfStructs);
        out.push((
            "opencl atomics, rows",
            Runtime::with_options(Backend::OpenCl, atomics).unwrap(),
        ));
    }
    #[cfg(feature = "cuda")]
    for (name, options) in [
        ("cuda", small()),
        ("cuda atomics", small().increments(op2::Increments::Atomics)),
    ] {
        match Runtime::with_options(Backend::Cuda, options) {
            Ok(rt) => out.push((name, rt)),
            Err(e) => {
                assert!(
                    std::env::var_os("OP2_REQUIRE_GPU").is_none(),
                    "OP2_REQUIRE_GPU is set: {e}"
                );
                eprintln!("differential fuzzer: {name} skipped: {e}");
            }
        }
    }
    out
}

fn first_difference(want: &[Vec<f64>], got: &[Vec<f64>]) -> String {
    for (k, (w, g)) in want.iter().zip(got).enumerate() {
        if let Some(i) = (0..w.len()).find(|&i| w[i] != g[i]) {
            return format!("carrier {k}, entry {i}: seq {} vs {}", w[i], g[i]);
        }
    }
    "carrier count differs".to_string()
}

/// A proptest runner for `OP2_FUZZ_CASES` cases (`default_cases` unset),
/// failures not persisted.
fn fuzz_runner(default_cases: u32) -> TestRunner {
    let cases = std::env::var("OP2_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// Fails the case, saying `what` and where, unless `got` equals `want`.
fn same_outcome(want: &Outcome, got: &Outcome, what: &str) -> Result<(), TestCaseError> {
    if got == want {
        return Ok(());
    }
    let detail = match (want, got) {
        (Ok(w), Ok(g)) => first_difference(w, g),
        _ => format!("{got:?}"),
    };
    Err(TestCaseError::fail(format!("{what}: {detail}")))
}

/// Runs `cases` random cases through `run` on `seq` and on every backend,
/// and fails on the first case where a backend's outcome differs.
fn every_backend_matches_seq(run: fn(&Runtime, &Case) -> Outcome, default_cases: u32) {
    let seq = Runtime::new(Backend::Seq).unwrap();
    let backends = backends();
    let mut runner = fuzz_runner(default_cases);
    let result = runner.run(&case_strategy(), |case| {
        let want = run(&seq, &case);
        for (name, rt) in &backends {
            let got = run(rt, &case);
            match (&want, &got) {
                (Ok(w), Ok(g)) if w == g => {}
                (Err(w), Err(g)) if w == g => {}
                (Ok(w), Ok(g)) => {
                    return Err(TestCaseError::fail(format!(
                        "{name} differs from seq: {}",
                        first_difference(w, g)
                    )))
                }
                _ => {
                    return Err(TestCaseError::fail(format!(
                        "{name} and seq disagree on success: seq {:?}, {name} {:?}",
                        want.as_ref().err(),
                        got.as_ref().err()
                    )))
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Runs random cases of `strategy` through `run` on `seq` (which must
/// succeed) and on every backend, failing on the first difference.
fn every_backend_matches_seq_on<C: std::fmt::Debug>(
    strategy: impl Strategy<Value = C>,
    run: fn(&Runtime, &C) -> Outcome,
    default_cases: u32,
) {
    let seq = Runtime::new(Backend::Seq).unwrap();
    let backends = backends();
    let mut runner = fuzz_runner(default_cases);
    let result = runner.run(&strategy, |case| {
        let want = run(&seq, &case);
        prop_assert!(want.is_ok(), "seq failed: {want:?}");
        for (name, rt) in &backends {
            same_outcome(&want, &run(rt, &case), &format!("{name} differs from seq"))?;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn every_backend_matches_seq_on_random_loops() {
    every_backend_matches_seq(run, 64);
}

/// The random loops over random subsets: each position must reach its
/// element's data and map rows, and the planner must keep apart the
/// subset's elements that share targets.
#[test]
fn every_backend_matches_seq_on_random_subsets() {
    every_backend_matches_seq(run_over_subset, 48);
}

/// Ragged kernels: read the targets (sum, count), add to them, and add to
/// one target of a fixed map into the same Dat (one conflict group, two
/// kinds of map).
#[op2::kernel]
fn ragged_fuzz_f64(src: &[f64], w: &f64, out: &mut [[f64; 2]], one: &mut [f64; 2], seen: &mut [f64; 2]) {
    let mut s = 0.0;
    for &v in src {
        s += v;
    }
    seen[0] = s;
    seen[1] = src.len() as f64;
    for j in 0..out.len() {
        out[j][0] += *w;
        out[j][1] -= j as f64;
    }
    one[0] += s;
    one[1] += 1.0;
}

#[op2::kernel]
fn ragged_fuzz_i32(src: &[i32], out: &mut [i32], seen: &mut i32) {
    let mut s = 0;
    for j in 0..src.len() {
        s += src[j] * (j as i32 + 1);
    }
    *seen = s;
    for j in 0..out.len() {
        out[j] += s + 1;
    }
}

/// A random ragged loop: iteration set size, target set size, each
/// element's targets (degree 0 to 50, repeats allowed), repetitions.
fn ragged_case() -> impl Strategy<Value = (usize, Vec<Vec<i32>>, usize)> {
    (0usize..90, 1usize..70, 1usize..3).prop_flat_map(|(n, targets, reps)| {
        let rows = prop::collection::vec(
            prop_oneof![
                1 => prop::collection::vec(0..targets as i32, 0..51),
                3 => prop::collection::vec(0..targets as i32, 0..6),
            ],
            n,
        );
        (Just(targets), rows, Just(reps))
    })
}

fn run_ragged(rt: &Runtime, (targets, rows, reps): &(usize, Vec<Vec<i32>>, usize)) -> Outcome {
    let from = Set::new("from", rows.len()).unwrap();
    let to = Set::new("to", *targets).unwrap();
    let mut offsets = vec![0];
    for r in rows {
        offsets.push(offsets.last().unwrap() + r.len());
    }
    let r = RaggedMap::new("r", &from, &to, offsets, rows.concat()).unwrap();
    let first = Map::new(
        "first",
        &from,
        &to,
        1,
        (0..rows.len()).map(|e| (e * 7 % targets) as i32).collect(),
    )
    .unwrap();
    let src = Dat::from_vec("src", &to, 1, (0..*targets).map(|i| (i % 5) as f64).collect()).unwrap();
    let w = Dat::from_vec("w", &from, 1, (0..rows.len()).map(|i| (i % 3) as f64).collect()).unwrap();
    let out = Dat::<f64>::zeros("out", &to, 2).unwrap();
    let seen = Dat::<f64>::zeros("seen", &from, 2).unwrap();
    let isrc = Dat::from_vec("isrc", &to, 1, (0..*targets).map(|i| (i % 4) as i32 - 1).collect()).unwrap();
    let iout = Dat::<i32>::zeros("iout", &to, 1).unwrap();
    let iseen = Dat::<i32>::zeros("iseen", &from, 1).unwrap();
    for _ in 0..*reps {
        par_loop!(
            rt,
            ragged_fuzz_f64,
            from,
            src(READ, r[..]),
            w(READ),
            out(INC, r[..]),
            out(INC, first[0]),
            seen(WRITE)
        )
        .map_err(|e| e.to_string())?;
        par_loop!(
            rt,
            ragged_fuzz_i32,
            from,
            isrc(READ, r[..]),
            iout(INC, r[..]),
            iseen(WRITE)
        )
        .map_err(|e| e.to_string())?;
    }
    let mut outcome = vec![out.to_vec(), seen.to_vec()];
    outcome.push(iout.to_vec().into_iter().map(f64::from).collect());
    outcome.push(iseen.to_vec().into_iter().map(f64::from).collect());
    Ok(outcome)
}

#[test]
fn every_backend_matches_seq_on_random_ragged_graphs() {
    every_backend_matches_seq_on(ragged_case(), run_ragged, 48);
}

/// A stencil kernel: reads the five entries (weighted by entry), stores a
/// value per site and adds to one entry's site.
#[op2::kernel]
fn stencil_fuzz(src: &[[f64; 1]; 5], w: &f64, out: &mut f64, spill: &mut f64) {
    let mut s = 0.0;
    for k in 0..5 {
        s += src[k][0] * (k as f64 + 1.0);
    }
    *out = s;
    *spill += *w;
}

/// A random lattice (1 to 23 sites a side), five random offsets (mostly
/// within 3, sometimes reaching across the lattice), the INC's entry, and
/// whether the loop runs over a random subset (each site kept by its bit).
type StencilCase = ((usize, usize), Vec<(isize, isize)>, usize, Option<u64>);

fn stencil_case() -> impl Strategy<Value = StencilCase> {
    let offset = prop_oneof![4 => -3isize..=3, 1 => -60isize..=60];
    (
        (1usize..24, 1usize..24),
        prop::collection::vec((offset.clone(), offset), 5),
        0usize..5,
        prop::option::of(any::<u64>()),
    )
}

/// Runs the stencil case through the Stencil itself (`table: false`) or
/// through a plain Map holding the stencil's table.
fn run_stencil(rt: &Runtime, ((w, h), offsets, k, keep): &StencilCase, table: bool) -> Outcome {
    let cells = Set::new("cells", w * h).unwrap();
    let s = Stencil::torus("s", &cells, (*w, *h), offsets).unwrap();
    let m = Map::new("m", &cells, &cells, 5, s.values().to_vec()).unwrap();
    let src = Dat::from_vec("src", &cells, 1, (0..w * h).map(|i| (i % 7) as f64).collect()).unwrap();
    let wt = Dat::from_vec("wt", &cells, 1, (0..w * h).map(|i| (i % 3) as f64 + 1.0).collect()).unwrap();
    let out = Dat::<f64>::filled("out", &cells, 1, -1.0).unwrap();
    let spill = Dat::<f64>::zeros("spill", &cells, 1).unwrap();
    let subset = keep.map(|bits| Subset::filter("some", &cells, |e| bits >> (e % 64) & 1 == 1).unwrap());
    let result = match (table, &subset) {
        (false, None) => par_loop!(
            rt,
            stencil_fuzz,
            cells,
            src(READ, s),
            wt(READ),
            out(WRITE),
            spill(INC, s[*k])
        ),
        (true, None) => par_loop!(
            rt,
            stencil_fuzz,
            cells,
            src(READ, m),
            wt(READ),
            out(WRITE),
            spill(INC, m[*k])
        ),
        (false, Some(sub)) => par_loop!(
            rt,
            stencil_fuzz,
            sub,
            src(READ, s),
            wt(READ),
            out(WRITE),
            spill(INC, s[*k])
        ),
        (true, Some(sub)) => par_loop!(
            rt,
            stencil_fuzz,
            sub,
            src(READ, m),
            wt(READ),
            out(WRITE),
            spill(INC, m[*k])
        ),
    };
    result.map_err(|e| e.to_string())?;
    Ok(vec![out.to_vec(), spill.to_vec()])
}

/// Stencils: on every backend, and on seq through the stencil's own view,
/// the same as seq through a plain map of the stencil's table.
#[test]
fn every_backend_matches_seq_on_random_stencils() {
    let seq = Runtime::new(Backend::Seq).unwrap();
    let backends = backends();
    let mut runner = fuzz_runner(48);
    let result = runner.run(&stencil_case(), |case| {
        let want = run_stencil(&seq, &case, true);
        prop_assert!(want.is_ok(), "seq failed: {want:?}");
        for (name, rt) in std::iter::once(("seq", &seq)).chain(backends.iter().map(|(n, rt)| (*n, rt))) {
            let what = format!("{name} through the stencil differs from seq through its table");
            same_outcome(&want, &run_stencil(rt, &case, false), &what)?;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Births and deaths: agent `e` in round `k` dies when `(code + k) % 4` is
/// 1, has a child when it is 2, both when 3 (the child's `v` is twice the
/// parent's), and every agent's `v` grows by its code.
#[op2::kernel]
fn fate_fuzz(code: &i32, v: &mut f64, child_v: &mut f64, round: &i32, fate: &mut Fate) {
    let c = (*code + *round) % 4;
    *v += *code as f64;
    if c == 1 || c == 3 {
        fate.die();
    }
    if c >= 2 {
        fate.spawn();
        *child_v = 2.0 * *v;
    }
}

/// Initial codes, the initial capacity, the rounds and whether the first
/// round runs over every other agent only.
type FateCase = (Vec<i32>, usize, usize, bool);

fn fate_case() -> impl Strategy<Value = FateCase> {
    (
        prop::collection::vec(0i32..4, 0..60),
        1usize..80,
        1usize..5,
        any::<bool>(),
    )
}

fn run_fates(rt: &Runtime, (codes, capacity, rounds, subset): &FateCase) -> Outcome {
    let n = codes.len();
    let agents = Set::dynamic("agents", n, *capacity).unwrap();
    let code = Dat::from_vec("code", &agents, 1, codes.clone()).unwrap();
    let v = Dat::from_vec("v", &agents, 1, (0..n).map(|i| i as f64).collect()).unwrap();
    // In no loop: children copy their parent's.
    let tag = Dat::from_vec("tag", &agents, 2, (0..2 * n as i64).collect()).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    let child_v = life.offspring(&v).unwrap();
    let mut sizes = Vec::new();
    for k in 0..*rounds {
        let round = Global::scalar("round", k as i32);
        if k == 0 && *subset {
            let every_other = Subset::new("every_other", &agents, (0..n).step_by(2).collect()).unwrap();
            par_loop!(
                rt,
                fate_fuzz,
                every_other,
                code(READ),
                v(RW),
                child_v(WRITE),
                round(READ),
                life(FATE)
            )
        } else {
            par_loop!(
                rt,
                fate_fuzz,
                agents,
                code(READ),
                v(RW),
                child_v(WRITE),
                round(READ),
                life(FATE)
            )
        }
        .map_err(|e| e.to_string())?;
        let c = life.last_census();
        if c.after != c.before - c.deaths + c.births || c.after != agents.size() {
            return Err(format!("round {k}: census {c:?} but {} agents", agents.size()));
        }
        sizes.push(agents.size() as f64);
    }
    let ids: Vec<f64> = agents.global_ids().iter().map(|&id| id as f64).collect();
    if ids.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("ids not unique and ascending: {ids:?}"));
    }
    Ok(vec![
        sizes,
        ids,
        code.to_vec().into_iter().map(f64::from).collect(),
        v.to_vec(),
        tag.to_vec().into_iter().map(|t| t as f64).collect(),
    ])
}

#[test]
fn every_backend_matches_seq_on_random_births_and_deaths() {
    every_backend_matches_seq_on(fate_case(), run_fates, 32);
}

/// Messages, read through bins: an order-sensitive fold (halve, then add)
/// of the values of the messages within `r`, so that any change in which
/// messages a backend visits, or in their order, changes the bits.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
fn near_fuzz(
    p: &[f64; 2],
    me: &i64,
    acc: &mut f64,
    ps: &[[f64; 2]],
    vs: &[f64],
    ids: &[i64],
    msgs: &Spatial2d,
    r: &f64,
) {
    let mut a = 0.0;
    for j in msgs.near(p[0], p[1]) {
        let dx = ps[j][0] - p[0];
        let dy = ps[j][1] - p[1];
        if ids[j] != *me && dx * dx + dy * dy < *r * *r {
            a = a * 0.5 + vs[j];
        }
    }
    *acc = a;
}

/// As `near_fuzz` over the cells within `r` of a discrete list.
#[op2::kernel]
fn within_fuzz(c: &[i32; 2], me: &i64, acc: &mut f64, vs: &[f64], ids: &[i64], msgs: &Discrete2d, r: &i32) {
    let mut a = 0.0;
    for j in msgs.within(c[0], c[1], *r) {
        if ids[j] != *me {
            a = a * 0.5 + vs[j];
        }
    }
    *acc = a;
}

/// Moves the agents: continuous positions by their fold (in steps of 1/8,
/// so that squared distances stay exact and no backend's contraction of
/// `a * b + c` can move a neighbour across the radius), cells by one.
#[op2::kernel]
fn message_move(acc: &f64, p: &mut [f64; 2], c: &mut [i32; 2]) {
    let k = (*acc as i32) as f64;
    p[0] += 0.25 * k;
    p[1] -= 0.125 * k;
    c[0] += (*acc as i32) % 3 - 1;
    c[1] += 1;
}

/// Agents' cells (also their positions, plus an offset), whether each
/// sends, periodic or clamped, the radius in cells, rounds, and whether to
/// sort the agents by bin after each round.
type MessageCase = (Vec<(i32, i32, bool)>, bool, i32, usize, bool);

fn message_case() -> impl Strategy<Value = MessageCase> {
    (
        prop::collection::vec((-2i32..9, -2i32..7, any::<bool>()), 0..70),
        any::<bool>(),
        -1i32..4,
        1usize..4,
        any::<bool>(),
    )
}

fn run_messages(rt: &Runtime, (agents_at, wrap, radius, rounds, sort): &MessageCase) -> Outcome {
    let n = agents_at.len();
    let agents = Set::dynamic("agents", n, n).unwrap();
    let cells: Vec<i32> = agents_at.iter().flat_map(|&(x, y, _)| [x, y]).collect();
    let c = Dat::from_vec("c", &agents, 2, cells.clone()).unwrap();
    let p = Dat::from_vec("p", &agents, 2, cells.iter().map(|&v| v as f64 * 0.75 + 0.25).collect()).unwrap();
    let sent = Dat::from_vec("sent", &agents, 1, agents_at.iter().map(|a| i32::from(a.2)).collect()).unwrap();
    let id = Dat::from_vec("id", &agents, 1, (0..n as i64).collect()).unwrap();
    let v = Dat::from_vec("v", &agents, 1, (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.375).collect()).unwrap();
    let (near_acc, within_acc) = (
        Dat::<f64>::zeros("near_acc", &agents, 1).unwrap(),
        Dat::<f64>::zeros("within_acc", &agents, 1).unwrap(),
    );
    let boundary = if *wrap { Boundary::Wrap } else { Boundary::Clamp };
    let near = MessageList::spatial(
        "near",
        SpatialGrid::new_2d("g", [0.0; 2], [6.0, 4.5], 1.5, boundary).unwrap(),
        &p,
    )
    .unwrap();
    let (near_p, near_v, near_id) = (
        near.carry(&p).unwrap(),
        near.carry(&v).unwrap(),
        near.carry(&id).unwrap(),
    );
    let cells_list =
        MessageList::spatial("cells", SpatialGrid::discrete_2d("g", [7, 5], boundary).unwrap(), &c).unwrap();
    let (cells_v, cells_id) = (cells_list.carry(&v).unwrap(), cells_list.carry(&id).unwrap());
    let (r, rc) = (Global::scalar("r", 1.5 * *radius as f64), Global::scalar("rc", *radius));
    let mut out = Vec::new();
    for _ in 0..*rounds {
        near.build_sent_on(&sent, rt).map_err(|e| e.to_string())?;
        cells_list.build_sent_on(&sent, rt).map_err(|e| e.to_string())?;
        par_loop!(
            rt,
            near_fuzz,
            agents,
            p(READ),
            id(READ),
            near_acc(WRITE),
            near_p(READ, near[..]),
            near_v(READ, near[..]),
            near_id(READ, near[..]),
            near(NEAR),
            r(READ)
        )
        .map_err(|e| e.to_string())?;
        par_loop!(
            rt,
            within_fuzz,
            agents,
            c(READ),
            id(READ),
            within_acc(WRITE),
            cells_v(READ, cells_list[..]),
            cells_id(READ, cells_list[..]),
            cells_list(NEAR),
            rc(READ)
        )
        .map_err(|e| e.to_string())?;
        if *sort {
            near.sort_senders_on(rt).map_err(|e| e.to_string())?;
        }
        par_loop!(rt, message_move, agents, near_acc(READ), p(RW), c(RW)).map_err(|e| e.to_string())?;
        for d in [&near_acc, &within_acc] {
            out.push(d.to_vec());
        }
    }
    out.push(id.to_vec().into_iter().map(|i| i as f64).collect());
    out.push(p.to_vec());
    Ok(out)
}

/// Spatial and discrete message lists (clamped and periodic, some senders,
/// agents sorted in memory or not) on every backend against seq.
#[test]
fn every_backend_matches_seq_on_random_messages() {
    every_backend_matches_seq_on(message_case(), run_messages, 32);
}

/// One round of an agent model: every agent adds its code to each of its
/// neighbours (a ragged map rebuilt every round), draws from two streams,
/// grows `v` by the second draw, and dies, has a child or both by the
/// first draw and its code. Integers only: every backend's sums are exact.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
fn agent_round_fuzz(
    code: &i32,
    v: &mut f64,
    child_v: &mut f64,
    acc: &mut [f64],
    fates: &mut Philox,
    growth: &mut Philox,
    fate: &mut Fate,
) {
    for j in 0..acc.len() {
        acc[j] += *code as f64;
    }
    let c = (fates.next_u32() % 4) as i32;
    *v += (growth.next_u32() % 3) as f64;
    let k = (c + *code) % 4;
    if k == 1 || k == 3 {
        fate.die();
    }
    if k >= 2 {
        fate.spawn();
        *child_v = *v + 1.0;
    }
}

/// The sum of every message.
#[op2::kernel]
fn message_sum_fuzz(out: &mut f64, m: &[f64]) {
    let mut s = 0.0;
    for j in 0..m.len() {
        s += m[j];
    }
    *out = s;
}

/// Initial codes, neighbours per agent (by id), rounds, and the round
/// after whose build the list carries `acc` too.
type AgentCase = (Vec<i32>, Vec<usize>, usize, usize);

fn agent_case() -> impl Strategy<Value = AgentCase> {
    (
        prop::collection::vec(0i32..4, 1..48),
        prop::collection::vec(0usize..4, 1..5),
        1usize..6,
        0usize..6,
    )
}

/// Births and deaths with a ragged map rebuilt every round, two random
/// streams in one loop, and a message list that carries a second Dat from
/// some round on: a loop reading it before the next build is refused.
fn run_agent_rounds(rt: &Runtime, (codes, degrees, rounds, carry_at): &AgentCase) -> Outcome {
    let agents = Set::dynamic("agents", codes.len(), 4).unwrap();
    let code = Dat::from_vec("code", &agents, 1, codes.clone()).unwrap();
    let v = Dat::from_vec("v", &agents, 1, (0..codes.len()).map(|i| i as f64).collect()).unwrap();
    let acc = Dat::<f64>::zeros("acc", &agents, 1).unwrap();
    let sums = Dat::<f64>::zeros("sums", &agents, 1).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    let child_v = life.offspring(&v).unwrap();
    let (draws, growth) = (RandomStreams::new("draws", 5), RandomStreams::new("growth", 6));
    let list = MessageList::brute_force("list", &agents).unwrap();
    let mv = list.carry(&v).unwrap();
    let mut macc = None;
    let mut out = vec![Vec::new(); 4];
    for round in 0..*rounds {
        let n = agents.size();
        if n == 0 {
            break;
        }
        let ids = agents.global_ids();
        let mut offsets = vec![0];
        let mut targets = Vec::new();
        for e in 0..n {
            let degree = degrees[ids[e] as usize % degrees.len()];
            targets.extend((0..degree).map(|k| ((e + 3 * k + 1) % n) as i32));
            offsets.push(targets.len());
        }
        let links = RaggedMap::new("links", &agents, &agents, offsets, targets).unwrap();
        acc.data_mut().fill(0.0);
        par_loop!(
            rt,
            agent_round_fuzz,
            agents,
            code(READ),
            v(RW),
            child_v(WRITE),
            acc(INC, links[..]),
            draws(DRAW),
            growth(DRAW),
            life(FATE)
        )
        .map_err(|e| e.to_string())?;
        list.build_on(rt).map_err(|e| e.to_string())?;
        if round == *carry_at {
            let m = list.carry(&acc).unwrap();
            // Carried after the build: refused until the next.
            if par_loop!(rt, message_sum_fuzz, agents, sums(WRITE), m(READ, list[..])).is_ok() {
                return Err(format!("round {round}: a Dat carried after the build was read"));
            }
            out[3].push(round as f64);
            list.build_on(rt).map_err(|e| e.to_string())?;
            macc = Some(m);
        }
        par_loop!(rt, message_sum_fuzz, agents, sums(WRITE), mv(READ, list[..])).map_err(|e| e.to_string())?;
        out[0].push(sums.to_vec().first().copied().unwrap_or(0.0));
        if let Some(m) = &macc {
            par_loop!(rt, message_sum_fuzz, agents, sums(WRITE), m(READ, list[..])).map_err(|e| e.to_string())?;
            out[1].push(sums.to_vec().first().copied().unwrap_or(0.0));
        }
        out[2].push(agents.size() as f64);
    }
    out.push(agents.global_ids().iter().map(|&id| id as f64).collect());
    out.push(v.to_vec());
    out.push(acc.to_vec());
    out.push(vec![f64::from(draws.loops()), f64::from(growth.loops())]);
    Ok(out)
}

#[test]
fn every_backend_matches_seq_on_random_agent_rounds() {
    every_backend_matches_seq_on(agent_case(), run_agent_rounds, 24);
}
