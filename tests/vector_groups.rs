//! Loops that gather through maps and write through none run their elements
//! in groups of eight on the host backends (the native body `par_loop!`
//! expands to, and `jit`'s `#pragma omp simd` wrapper): gathered for the
//! whole group, computed across the lanes, scattered in element order. That
//! must give the bits of one element at a time. The reference is the same
//! loop over a `Subset` of every element on `seq`, whose native body runs
//! one element at a time; set sizes around the group width exercise whole
//! groups, the leftover elements, and sets smaller than a group.

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

fn host_backends() -> Vec<(&'static str, Runtime)> {
    let mut out = vec![("seq", Runtime::new(Backend::Seq).unwrap())];
    #[cfg(feature = "rayon")]
    out.push((
        "rayon",
        Runtime::with_options(Backend::Rayon, RuntimeOptions::default().threads(2).block_size(20)).unwrap(),
    ));
    #[cfg(feature = "jit")]
    out.push((
        "jit",
        Runtime::with_options(
            Backend::Jit,
            RuntimeOptions::default()
                .threads(2)
                .block_size(20)
                .cache_dir(concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache")),
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
        for (name, rt) in host_backends() {
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
