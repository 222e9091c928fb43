//! Loops that gather through maps run their elements in groups on the host
//! backends: those that write through no map in the native body
//! `par_loop!` expands to (eight lanes), and also those that increment
//! through maps, natively on the lane path (four lanes through the
//! kernel's lane copy) and in `jit`'s `#pragma omp simd` wrapper (four
//! lanes, with a second copy of the kernel whose parameters are
//! lane-strided). Gathered
//! for the whole group, computed across the lanes, scattered in element
//! order: that must give the bits of one element at a time. The reference
//! is the same loop over a `Subset` of every element on `seq`, whose native
//! body runs one element at a time; set sizes around the group widths
//! exercise whole groups, the leftover elements, and sets smaller than a
//! group.

use op2::prelude::*;
use op2::RuntimeOptions;

/// Square roots, divisions and absolute values of values gathered through a
/// map of arity 4 (all entries and one entry), a direct READ, a direct
/// WRITE, a Global READ and a Global INC: what vector lanes compute.
#[op2::kernel]
fn corner_speed(
    corners: &[[f64; 2]; 4],
    first: &[f64; 2],
    q: &[f64; 3],
    speed: &mut [f64; 2],
    scale: &f64,
    total: &mut f64,
) {
    let ri = 1.0 / q[0];
    let u = ri * q[1];
    let v = ri * q[2];
    let c = (*scale * (q[0] + 0.5 * (u * u + v * v))).sqrt();
    let mut s = 0.0;
    for k in 0..4 {
        let dx = corners[k][0] - first[0];
        let dy = corners[k][1] - first[1];
        s += (u * dy - v * dx).abs() + c * (dx * dx + dy * dy).sqrt();
    }
    speed[0] = s / *scale;
    speed[1] = ri * s;
    *total += s;
}

/// Flux-like increments through a map of arity 2, many elements of a group
/// hitting the same targets: rows of four `f64`s through each entry (the
/// vector scatter), one value through one entry, and a Global of two; read from a Global of three
/// values, a direct value and a kernel-local array copied from a parameter,
/// and written whole to a direct pair from a local array.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
fn edge_flux(
    a: &[f64; 4],
    b: &[f64; 4],
    w: &f64,
    coef: &[f64; 3],
    ra: &mut [f64; 4],
    rb: &mut [f64; 4],
    count: &mut f64,
    out: &mut [f64; 2],
    total: &mut [f64; 2],
) {
    let mut d: [f64; 4] = [0.5; 4];
    let half = d[1];
    d = *b;
    let ri = half / a[0];
    for c in 0..4 {
        let f = coef[0] * (a[c] - d[c]) * ri + coef[1] * *w * (a[c] * d[c]).sqrt();
        ra[c] += f;
        rb[c] -= f * coef[2];
    }
    *count += 1.0;
    let pair = [ri, d[3]];
    *out = pair;
    total[0] += ri;
    total[1] += d[3];
}

/// `edge_flux` in the forms a kernel's lane copy runs itself (`p[c]` for
/// arrays, `*p` for scalars): `par_loop!`'s lane path stages every
/// argument component-major and runs this body across four lanes.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
fn edge_flux_on_lanes(
    a: &[f64; 4],
    b: &[f64; 4],
    w: &f64,
    coef: &[f64; 3],
    ra: &mut [f64; 4],
    rb: &mut [f64; 4],
    count: &mut f64,
    out: &mut [f64; 2],
    total: &mut [f64; 2],
) {
    let ri = 0.5 / a[0];
    for c in 0..4 {
        let f = coef[0] * (a[c] - b[c]) * ri + coef[1] * *w * (a[c] * b[c]).sqrt();
        ra[c] += f;
        rb[c] -= f * coef[2];
    }
    *count += 1.0;
    out[0] = ri;
    out[1] = b[3];
    total[0] += ri;
    total[1] += b[3];
}

/// Which flux kernel a loop runs, and how its entries are written.
#[derive(Clone, Copy, Debug)]
enum Flux {
    /// `edge_flux`: no lane copy, so one element at a time.
    Copies,
    /// `edge_flux_on_lanes`, every entry a literal (the loop body's AVX2
    /// copy is made of the lane path too).
    Lanes,
    /// `edge_flux_on_lanes` with one entry computed at run time (no AVX2
    /// copy: the baseline lane path).
    LanesComputedEntry,
}

/// Every output of `flux`'s kernel over `edges` edges on `rt`: the Dats,
/// then the Global.
fn run_flux(rt: &Runtime, edges: usize, as_subset: bool, flux: Flux) -> (Vec<Vec<f64>>, Vec<f64>) {
    let cells = edges / 3 + 2;
    let eset = Set::new("edges", edges).unwrap();
    let cset = Set::new("cells", cells).unwrap();
    // Runs of three edges share a left cell; right cells hop.
    let table: Vec<i32> = (0..edges)
        .flat_map(|e| [((e / 3) % cells) as i32, ((e * 5 + 1) % cells) as i32])
        .collect();
    let ends = Map::new("ends", &eset, &cset, 2, table).unwrap();
    let q = Dat::from_vec("q", &cset, 4, (0..4 * cells).map(value).collect()).unwrap();
    let w = Dat::from_vec("w", &eset, 1, (0..edges).map(|k| value(k + 7)).collect()).unwrap();
    let coef = Global::new("coef", vec![0.7, 1.3, 0.9]).unwrap();
    let res = Dat::from_vec("res", &cset, 4, (0..4 * cells).map(|k| value(k + 3)).collect()).unwrap();
    let count = Dat::<f64>::zeros("count", &cset, 1).unwrap();
    let out = Dat::<f64>::zeros("out", &eset, 2).unwrap();
    let total = Global::<f64>::zeros("total", 2).unwrap();
    let right = usize::from(edges > 0);
    // `$second` as a token tree: a literal entry stays a literal for
    // `par_loop!` (whose AVX2 copy takes literal entries only).
    macro_rules! flux_with {
        ($space:expr, $kernel:ident, $second:tt) => {
            par_loop!(
                rt,
                $kernel,
                $space,
                q(READ, ends[0]),
                q(READ, ends[$second]),
                w(READ),
                coef(READ),
                res(INC, ends[0]),
                res(INC, ends[1]),
                count(INC, ends[0]),
                out(WRITE),
                total(INC)
            )
            .unwrap()
        };
    }
    macro_rules! flux_over {
        ($space:expr) => {
            match flux {
                Flux::Copies => flux_with!($space, edge_flux, 1),
                Flux::Lanes => flux_with!($space, edge_flux_on_lanes, 1),
                Flux::LanesComputedEntry => flux_with!($space, edge_flux_on_lanes, right),
            }
        };
    }
    if as_subset {
        let all = Subset::new("all", &eset, (0..edges).collect()).unwrap();
        flux_over!(all);
    } else {
        flux_over!(eset);
    }
    let dats = [&res, &count, &out].map(|d| d.data_ro().to_vec());
    let sums = total.data_ro().to_vec();
    (dats.to_vec(), sums)
}

/// A value in [0.5, 1.5) from `k`, different for every `k` (a hash).
fn value(k: usize) -> f64 {
    let h = (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
    0.5 + (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Runs `corner_speed` over `cells` cells on `rt`, over the whole set or
/// over a subset holding every element; returns `speed` and `total`.
fn run(rt: &Runtime, cells: usize, as_subset: bool) -> (Vec<f64>, f64) {
    let nodes = cells + 3;
    let nset = Set::new("nodes", nodes).unwrap();
    let cset = Set::new("cells", cells).unwrap();
    // Scattered corners: every cell's four nodes far apart.
    let table: Vec<i32> = (0..cells * 4).map(|k| ((k * 7919) % nodes) as i32).collect();
    let corners = Map::new("corners", &cset, &nset, 4, table).unwrap();
    let x = Dat::from_vec("x", &nset, 2, (0..2 * nodes).map(value).collect()).unwrap();
    let q = Dat::from_vec("q", &cset, 3, (0..3 * cells).map(|k| value(k + 99)).collect()).unwrap();
    let speed = Dat::<f64>::zeros("speed", &cset, 2).unwrap();
    let scale = Global::scalar("scale", 1.4);
    let total = Global::scalar("total", 0.0);
    if as_subset {
        let all = Subset::new("all", &cset, (0..cells).collect()).unwrap();
        par_loop!(
            rt,
            corner_speed,
            all,
            x(READ, corners),
            x(READ, corners[2]),
            q(READ),
            speed(WRITE),
            scale(READ),
            total(INC)
        )
        .unwrap();
    } else {
        par_loop!(
            rt,
            corner_speed,
            cset,
            x(READ, corners),
            x(READ, corners[2]),
            q(READ),
            speed(WRITE),
            scale(READ),
            total(INC)
        )
        .unwrap();
    }
    let out = speed.data_ro().to_vec();
    (out, total.value())
}

/// The host backends, each with bounds checks on or off (jit's checked
/// loops run one element at a time; the native bodies are the same either
/// way).
fn host_backends(checked: bool) -> Vec<(&'static str, Runtime)> {
    let options = || RuntimeOptions::default().threads(2).block_size(20).checked(checked);
    let mut out = vec![("seq", Runtime::with_options(Backend::Seq, options()).unwrap())];
    #[cfg(feature = "rayon")]
    out.push(("rayon", Runtime::with_options(Backend::Rayon, options()).unwrap()));
    #[cfg(feature = "jit")]
    out.push((
        "jit",
        Runtime::with_options(
            Backend::Jit,
            options().cache_dir(concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache")),
        )
        .unwrap(),
    ));
    out
}

#[test]
fn groups_give_the_bits_of_one_element_at_a_time() {
    let reference = Runtime::new(Backend::Seq).unwrap();
    for cells in [0, 1, 7, 8, 9, 16, 23, 1003] {
        let (want, want_total) = run(&reference, cells, true);
        assert!(
            cells == 0 || want.iter().all(|v| v.is_finite() && *v != 0.0),
            "{want:?}"
        );
        for (name, rt) in host_backends(false) {
            for as_subset in [false, true] {
                let (got, total) = run(&rt, cells, as_subset);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{name}, {cells} cells, subset {as_subset}: speed differs from one element at a time"
                );
                // seq adds the Global's contributions in element order as the
                // reference does; the threaded backends add per-block partials.
                if name == "seq" {
                    assert_eq!(total.to_bits(), want_total.to_bits(), "{name}, {cells} cells: total");
                } else {
                    assert!(
                        (total - want_total).abs() <= 1e-12 * want_total.abs(),
                        "{name}, {cells} cells: total {total} vs {want_total}"
                    );
                }
            }
        }
    }
}

/// Increments through maps from blocks of different colours reach a target
/// in colour order, not element order, so each backend's reference is its
/// own run over a subset of every element with checks on (same plan, one
/// element at a time: natively a subset takes neither groups nor lanes, and
/// jit's checked loops take no groups).
#[test]
fn groups_that_increment_through_maps_give_the_bits_of_one_element_at_a_time() {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let references = host_backends(true);
    let fluxes = [Flux::Copies, Flux::Lanes, Flux::LanesComputedEntry];
    for (edges, flux) in [0, 1, 3, 4, 5, 8, 13, 1001]
        .into_iter()
        .flat_map(|n| fluxes.map(|f| (n, f)))
    {
        for ((name, rt), (_, reference)) in host_backends(false).iter().zip(&references) {
            let (want, want_total) = run_flux(reference, edges, true, flux);
            assert!(edges == 0 || want[0].iter().all(|v| v.is_finite()), "{want:?}");
            for as_subset in [false, true] {
                let (got, total) = run_flux(rt, edges, as_subset, flux);
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        bits(g) == bits(w),
                        "{name}, {edges} edges, {flux:?}, subset {as_subset}: Dat {k} differs from one element at a time:\n{g:?}\n{w:?}"
                    );
                }
                for (t, w) in total.iter().zip(&want_total) {
                    assert!(
                        (t - w).abs() <= 1e-12 * w.abs(),
                        "{name}, {edges} edges: total {total:?} vs {want_total:?}"
                    );
                }
            }
        }
    }
}

// Which kernels run their own body on lane views (checked as this file
// compiles): those that index their arrays and dereference their scalars
// only; `edge_flux` reads `*b` whole, so it has no lane copy and its
// loops keep the scalar path.
const _: () = assert!(edge_flux_on_lanes::__OP2_LANES);
const _: () = assert!(!edge_flux::__OP2_LANES);

/// The lengths of `spread_pair`'s parameters, named constants.
mod lengths {
    pub const PAIR: usize = 2;
}
use lengths::PAIR;

/// A kernel whose array lengths are named constants, one through a
/// module: its lane copy's staging names them too (this file compiles).
#[op2::kernel]
fn spread_pair(v: &[f64; PAIR], r: &mut [f64; lengths::PAIR]) {
    for c in 0..2 {
        r[c] += v[c];
    }
}
const _: () = assert!(spread_pair::__OP2_LANES);

#[test]
fn named_lengths_run_on_lanes() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let edges = Set::new("edges", 11).unwrap();
    let nodes = Set::new("nodes", 4).unwrap();
    let ends = Map::new("ends", &edges, &nodes, 1, (0..11).map(|e| e * 3 % 4).collect()).unwrap();
    let v = Dat::from_vec("v", &edges, 2, (0..22).map(value).collect()).unwrap();
    let run = |as_subset: bool| {
        let r = Dat::<f64>::zeros("r", &nodes, 2).unwrap();
        if as_subset {
            let all = Subset::new("all", &edges, (0..11).collect()).unwrap();
            par_loop!(rt, spread_pair, all, v(READ), r(INC, ends[0])).unwrap();
        } else {
            par_loop!(rt, spread_pair, edges, v(READ), r(INC, ends[0])).unwrap();
        }
        r.to_vec().iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    };
    let want = run(true);
    assert!(want.iter().all(|&b| f64::from_bits(b) > 1.0), "{want:?}");
    assert_eq!(run(false), want);
}

/// The lane copy gives each lane the scalar kernel's results,
/// from staging that holds a different element in every lane.
#[test]
fn a_lane_copy_computes_each_lane_as_the_kernel_does() {
    use op2::__private::{LaneArray, LaneScalar, LaneStage, LANES};
    let row = |k: usize| [value(k), value(k + 1), value(k + 2), value(k + 3)];
    let lanes = |f: &dyn Fn(usize) -> [f64; 4]| std::array::from_fn(f);
    let a = LaneArray::from_rows(&lanes(&|l| row(10 * l)));
    let b = LaneArray::from_rows(&lanes(&|l| row(10 * l + 5)));
    let w = LaneScalar::from_rows(&std::array::from_fn(value));
    let coef = LaneArray::from_rows(&[[0.7, 1.3, 0.9]; LANES]);
    let mut ra = LaneArray::from_rows(&lanes(&|l| row(100 + l)));
    let mut rb = LaneArray::<f64, 4>::zero();
    let mut count = LaneScalar::<f64>::zero();
    let (mut out, mut total) = (LaneArray::<f64, 2>::zero(), LaneArray::<f64, 2>::zero());
    for l in 0..LANES {
        edge_flux_on_lanes::__op2_lane(
            a.lane(l),
            b.lane(l),
            w.lane(l),
            coef.lane(l),
            ra.lane_mut(l),
            rb.lane_mut(l),
            count.lane_mut(l),
            out.lane_mut(l),
            total.lane_mut(l),
        );
    }
    for l in 0..LANES {
        let (mut want_ra, mut want_rb, mut want_count) = (row(100 + l), [0.0; 4], 0.0);
        let (mut want_out, mut want_total) = ([0.0; 2], [0.0; 2]);
        edge_flux_on_lanes(
            &row(10 * l),
            &row(10 * l + 5),
            &value(l),
            &[0.7, 1.3, 0.9],
            &mut want_ra,
            &mut want_rb,
            &mut want_count,
            &mut want_out,
            &mut want_total,
        );
        assert_eq!(ra.rows()[l], want_ra, "lane {l}");
        assert_eq!(rb.rows()[l], want_rb, "lane {l}");
        assert_eq!(count.rows()[l], want_count, "lane {l}");
        assert_eq!((out.rows()[l], total.rows()[l]), (want_out, want_total), "lane {l}");
    }
}

/// `*r += *v * *w`: a kernel on lanes for the tests of shared entries.
#[op2::kernel]
fn lift(v: &f64, w: &f64, r: &mut f64) {
    *r += *v * *w;
}
const _: () = assert!(lift::__OP2_LANES);

/// Arguments through one map entry look it up once per element on the lane
/// path, when their views show one source of entries: `v(READ, m[1])` and
/// `r(INC, m[1])` share the right neighbour on a torus, a bijection, so
/// every target gets one increment and the result is known in any order.
/// Through the stencil itself the loop takes the stencil's runs instead,
/// with the same result.
#[test]
fn arguments_through_one_map_entry_share_it() {
    let (width, height) = (7, 3);
    let cells = Set::new("cells", width * height).unwrap();
    let s = Stencil::torus("s", &cells, (width, height), &[(0, 0), (1, 0)]).unwrap();
    let m = Map::new("m", &cells, &cells, 2, s.values().to_vec()).unwrap();
    let v = Dat::from_vec("v", &cells, 1, (0..width * height).map(value).collect()).unwrap();
    let w = Dat::from_vec("w", &cells, 1, (0..width * height).map(|k| value(k + 5)).collect()).unwrap();
    let right = |e: usize| e - e % width + (e % width + 1) % width;
    let start = || (0..width * height).map(|k| value(k + 9)).collect::<Vec<_>>();
    let mut want = start();
    for e in 0..width * height {
        want[right(e)] += value(right(e)) * value(e + 5);
    }
    for (name, rt) in host_backends(false) {
        let (through_map, through_stencil) = (
            Dat::from_vec("r", &cells, 1, start()).unwrap(),
            Dat::from_vec("r", &cells, 1, start()).unwrap(),
        );
        par_loop!(rt, lift, cells, v(READ, m[1]), w(READ), through_map(INC, m[1])).unwrap();
        par_loop!(rt, lift, cells, v(READ, s[1]), w(READ), through_stencil(INC, s[1])).unwrap();
        assert_eq!(through_map.to_vec(), want, "{name}, through the map");
        assert_eq!(through_stencil.to_vec(), want, "{name}, through the stencil");
    }
}

/// Two maps behind one place: each `Deref` after the first answers the
/// second map, so `flip.ends` is written alike for both arguments and
/// names two maps.
struct Flip {
    first: Ends,
    second: Ends,
    derefs: std::cell::Cell<usize>,
}

struct Ends {
    ends: Map,
}

impl std::ops::Deref for Flip {
    type Target = Ends;
    fn deref(&self) -> &Ends {
        let n = self.derefs.get();
        self.derefs.set(n + 1);
        if n == 0 {
            &self.first
        } else {
            &self.second
        }
    }
}

/// Arguments whose maps are written alike but are two maps do not share
/// entries: the views' sources differ, so the loop takes its other path and
/// gives what the two maps written apart give.
#[test]
fn arguments_written_alike_through_two_maps_keep_their_own_entries() {
    let edges = Set::new("edges", 13).unwrap();
    let cells = Set::new("cells", 5).unwrap();
    let map = |name, step: usize| {
        Map::new(
            name,
            &edges,
            &cells,
            1,
            (0..13).map(|e| (e * step % 5) as i32).collect(),
        )
    };
    let flip = Flip {
        first: Ends {
            ends: map("a", 1).unwrap(),
        },
        second: Ends {
            ends: map("b", 2).unwrap(),
        },
        derefs: std::cell::Cell::new(0),
    };
    let (a, b) = (&flip.first.ends, &flip.second.ends);
    let v = Dat::from_vec("v", &cells, 1, (0..5).map(value).collect()).unwrap();
    let w = Dat::from_vec("w", &edges, 1, (0..13).map(|k| value(k + 5)).collect()).unwrap();
    for (name, rt) in host_backends(false) {
        let run = |r: &Dat<f64>| r.to_vec().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let fresh = || Dat::<f64>::zeros("r", &cells, 1).unwrap();
        let (apart, alike, shared) = (fresh(), fresh(), fresh());
        par_loop!(rt, lift, edges, v(READ, a[0]), w(READ), apart(INC, b[0])).unwrap();
        flip.derefs.set(0);
        par_loop!(
            rt,
            lift,
            edges,
            v(READ, flip.ends[0]),
            w(READ),
            alike(INC, flip.ends[0])
        )
        .unwrap();
        assert_eq!(flip.derefs.get(), 2, "{name}: one deref per argument");
        par_loop!(rt, lift, edges, v(READ, a[0]), w(READ), shared(INC, a[0])).unwrap();
        assert_ne!(
            run(&shared),
            run(&apart),
            "{name}: the two maps must differ for this test"
        );
        assert_eq!(run(&alike), run(&apart), "{name}");
    }
}
