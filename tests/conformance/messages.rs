//! Message lists in the conformance suite: neighbours found through spatial
//! bins (2-D and 3-D, clamped and periodic, with points outside the bounds
//! and on bin edges) equal those found by brute force in plain Rust, on
//! every backend; the visiting order (a hash of the ids in the order the
//! kernel sees them) equals `seq`'s; optional output sends only what was
//! flagged.

use op2::prelude::*;

/// The query's sum over its messages within `r` (not itself): how many,
/// the sum of their ids, and an order-sensitive hash of the ids.
#[op2::kernel]
fn near_3d(
    p: &[f64; 3],
    me: &i64,
    found: &mut [i64; 3],
    ps: &[[f64; 3]],
    ids: &[i64],
    msgs: &Spatial3d,
    box_r: &[f64; 2],
) {
    let side = box_r[0];
    let r = box_r[1];
    let mut f = [0i64; 3];
    for j in msgs.near(p[0], p[1], p[2]) {
        let mut d2 = 0.0;
        for c in 0..3 {
            let mut d = ps[j][c] - p[c];
            // Periodic runs (side > 0): the nearest image.
            if side > 0.0 {
                if d > 0.5 * side {
                    d -= side;
                }
                if d < -0.5 * side {
                    d += side;
                }
            }
            d2 += d * d;
        }
        if ids[j] != *me && d2 < r * r {
            f[0] += 1;
            f[1] += ids[j];
            f[2] = (f[2] * 31 + ids[j]) % 1000000007;
        }
    }
    *found = f;
}

/// As `near_3d` in 2-D.
#[op2::kernel]
fn near_2d(
    p: &[f64; 2],
    me: &i64,
    found: &mut [i64; 3],
    ps: &[[f64; 2]],
    ids: &[i64],
    msgs: &Spatial2d,
    box_r: &[f64; 2],
) {
    let side = box_r[0];
    let r = box_r[1];
    let mut f = [0i64; 3];
    for j in msgs.near(p[0], p[1]) {
        let mut d2 = 0.0;
        for c in 0..2 {
            let mut d = ps[j][c] - p[c];
            if side > 0.0 {
                if d > 0.5 * side {
                    d -= side;
                }
                if d < -0.5 * side {
                    d += side;
                }
            }
            d2 += d * d;
        }
        if ids[j] != *me && d2 < r * r {
            f[0] += 1;
            f[1] += ids[j];
            f[2] = (f[2] * 31 + ids[j]) % 1000000007;
        }
    }
    *found = f;
}

/// Brute force through a brute-force list: every message, in sender order.
#[op2::kernel]
fn near_all(p: &[f64; 2], me: &i64, found: &mut [i64; 3], ps: &[[f64; 2]], ids: &[i64], r: &f64) {
    let mut f = [0i64; 3];
    for j in 0..ps.len() {
        let dx = ps[j][0] - p[0];
        let dy = ps[j][1] - p[1];
        if ids[j] != *me && dx * dx + dy * dy < *r * *r {
            f[0] += 1;
            f[1] += ids[j];
            f[2] = (f[2] * 31 + ids[j]) % 1000000007;
        }
    }
    *found = f;
}

/// Agents at random positions in `[lo, hi)` per axis, some exactly on bin
/// edges (multiples of `edge`), some outside when `outside` is set.
fn positions(n: usize, dims: usize, lo: f64, hi: f64, edge: f64, outside: bool, seed: u64) -> Vec<f64> {
    let mut s = Philox::new(seed, 0, 0);
    let mut p = Vec::with_capacity(n * dims);
    for i in 0..n {
        for _ in 0..dims {
            let u = s.uniform_f64();
            p.push(match i % 7 {
                0 => lo + (u * (hi - lo) / edge).floor() * edge,
                1 if outside => lo - 3.0 + u * (hi - lo + 6.0),
                _ => lo + u * (hi - lo),
            });
        }
    }
    p
}

/// What `near_*` must find for agent `e`, by brute force over `senders`;
/// the hash is left to the backends' comparison with seq.
fn brute(p: &[f64], dims: usize, side: f64, r: f64, e: usize, senders: &[usize]) -> [i64; 2] {
    let mut f = [0i64; 2];
    for &j in senders {
        let mut d2 = 0.0;
        for c in 0..dims {
            let mut d = p[j * dims + c] - p[e * dims + c];
            if side > 0.0 {
                if d > 0.5 * side {
                    d -= side;
                }
                if d < -0.5 * side {
                    d += side;
                }
            }
            d2 += d * d;
        }
        if j != e && d2 < r * r {
            f[0] += 1;
            f[1] += j as i64;
        }
    }
    f
}

/// One case: `dims`-D agents on `grid` (periodic of side `side` if > 0),
/// sending all or every third; returns what every agent found.
fn run_case(rt: &Runtime, grid: SpatialGrid, p: &[f64], side: f64, some: bool) -> Vec<i64> {
    let dims = grid.dims();
    let n = p.len() / dims;
    let agents = Set::new("agents", n).unwrap();
    let pos = Dat::from_vec("pos", &agents, dims, p.to_vec()).unwrap();
    let id = Dat::from_vec("id", &agents, 1, (0..n as i64).collect()).unwrap();
    let sent = Dat::from_vec(
        "sent",
        &agents,
        1,
        (0..n as i32).map(|e| i32::from(e % 3 == 1)).collect(),
    )
    .unwrap();
    let found = Dat::<i64>::zeros("found", &agents, 3).unwrap();
    let list = MessageList::spatial("location", grid, &pos).unwrap();
    let (m_pos, m_id) = (list.carry(&pos).unwrap(), list.carry(&id).unwrap());
    let count = if some {
        list.build_sent_on(&sent, rt)
    } else {
        list.build_on(rt)
    }
    .unwrap();
    let senders: Vec<usize> = (0..n).filter(|e| !some || e % 3 == 1).collect();
    assert_eq!(count, senders.len());
    let box_r = Global::new("box_r", vec![side, grid.radius()]).unwrap();
    if dims == 3 {
        par_loop!(
            rt,
            near_3d,
            agents,
            pos(READ),
            id(READ),
            found(WRITE),
            m_pos(READ, list[..]),
            m_id(READ, list[..]),
            list(NEAR),
            box_r(READ)
        )
        .unwrap();
    } else {
        par_loop!(
            rt,
            near_2d,
            agents,
            pos(READ),
            id(READ),
            found(WRITE),
            m_pos(READ, list[..]),
            m_id(READ, list[..]),
            list(NEAR),
            box_r(READ)
        )
        .unwrap();
    }
    let got = found.to_vec();
    for e in 0..n {
        let want = brute(p, dims, side, grid.radius(), e, &senders);
        assert_eq!(
            [got[3 * e], got[3 * e + 1]],
            want,
            "agent {e} at {:?}",
            &p[e * dims..e * dims + dims]
        );
    }
    got
}

/// The cases: 3-D and 2-D, clamped with points outside, periodic.
fn cases() -> Vec<(SpatialGrid, Vec<f64>, f64)> {
    vec![
        (
            SpatialGrid::new_3d("g", [0.0; 3], [6.0, 5.0, 4.5], 1.0, Boundary::Clamp).unwrap(),
            positions(400, 3, 0.0, 6.0, 1.0, true, 1),
            0.0,
        ),
        (
            SpatialGrid::new_3d("g", [0.0; 3], [6.0; 3], 1.5, Boundary::Wrap).unwrap(),
            positions(400, 3, 0.0, 6.0, 1.5, false, 2),
            6.0,
        ),
        (
            SpatialGrid::new_2d("g", [-2.0, 1.0], [5.0, 6.0], 0.75, Boundary::Clamp).unwrap(),
            positions(300, 2, -2.0, 5.0, 0.75, true, 3),
            0.0,
        ),
        (
            SpatialGrid::new_2d("g", [0.0, 0.0], [4.0, 4.0], 2.0, Boundary::Wrap).unwrap(),
            positions(200, 2, 0.0, 4.0, 2.0, false, 4),
            4.0,
        ),
    ]
}

pub fn spatial_messages_match_brute_force(new_rt: &dyn Fn() -> Runtime) {
    let (rt, seq) = (new_rt(), Runtime::new(Backend::Seq).unwrap());
    for (grid, p, side) in cases() {
        for some in [false, true] {
            let got = run_case(&rt, grid, &p, side, some);
            // The order each agent saw its messages in is seq's.
            assert_eq!(
                got,
                run_case(&seq, grid, &p, side, some),
                "{grid:?}, some senders: {some}"
            );
        }
    }
}

pub fn brute_force_messages_match_rust(new_rt: &dyn Fn() -> Runtime) {
    let rt = new_rt();
    let p = positions(150, 2, 0.0, 3.0, 0.5, false, 9);
    let n = p.len() / 2;
    let agents = Set::new("agents", n).unwrap();
    let pos = Dat::from_vec("pos", &agents, 2, p.clone()).unwrap();
    let id = Dat::from_vec("id", &agents, 1, (0..n as i64).collect()).unwrap();
    let sent = Dat::from_vec(
        "sent",
        &agents,
        1,
        (0..n as i32).map(|e| i32::from(e % 2 == 0)).collect(),
    )
    .unwrap();
    let found = Dat::<i64>::zeros("found", &agents, 3).unwrap();
    let list = MessageList::brute_force("all", &agents).unwrap();
    let (m_pos, m_id) = (list.carry(&pos).unwrap(), list.carry(&id).unwrap());
    let r = Global::scalar("r", 0.6);
    for (step, some) in [false, true, false].into_iter().enumerate() {
        let count = if some {
            list.build_sent_on(&sent, &rt)
        } else {
            list.build_on(&rt)
        }
        .unwrap();
        let senders: Vec<usize> = (0..n).filter(|e| !some || e % 2 == 0).collect();
        assert_eq!((count, list.len()), (senders.len(), senders.len()));
        par_loop!(
            rt,
            near_all,
            agents,
            pos(READ),
            id(READ),
            found(WRITE),
            m_pos(READ, list[..]),
            m_id(READ, list[..]),
            r(READ)
        )
        .unwrap();
        let got = found.to_vec();
        for e in 0..n {
            let want = brute(&p, 2, 0.0, 0.6, e, &senders);
            let hash = senders
                .iter()
                .filter(|&&j| j != e && brute(&p, 2, 0.0, 0.6, e, &[j])[0] == 1)
                .fold(0i64, |h, &j| (h * 31 + j as i64) % 1_000_000_007);
            assert_eq!(
                got[3 * e..3 * e + 3],
                [want[0], want[1], hash],
                "step {step}, agent {e}"
            );
        }
    }
}

/// Runs `near_3d` over dynamic agents at `p` (sending all, or every third
/// by id), with the agents first sorted by bin `sorts` times at other
/// positions (so that memory order is neither id nor bin order); returns
/// what each agent found, by id.
fn sorted_case(rt: &Runtime, grid: SpatialGrid, p: &[f64], sorts: usize, some: bool) -> Vec<i64> {
    let n = p.len() / 3;
    let agents = Set::dynamic("agents", n, n).unwrap();
    let pos = Dat::from_vec("pos", &agents, 3, positions(n, 3, 0.0, 6.0, 1.0, true, 77)).unwrap();
    let id = Dat::from_vec("id", &agents, 1, (0..n as i64).collect()).unwrap();
    let sent = Dat::from_vec(
        "sent",
        &agents,
        1,
        (0..n as i32).map(|e| i32::from(e % 3 == 1)).collect(),
    )
    .unwrap();
    let found = Dat::<i64>::zeros("found", &agents, 3).unwrap();
    let list = MessageList::spatial("location", grid, &pos).unwrap();
    let (m_pos, m_id) = (list.carry(&pos).unwrap(), list.carry(&id).unwrap());
    let build = || {
        if some {
            list.build_sent_on(&sent, &rt)
        } else {
            list.build_on(&rt)
        }
        .unwrap()
    };
    for _ in 0..sorts {
        build();
        list.sort_senders_on(rt).unwrap();
    }
    {
        let ids = id.to_vec();
        let mut at = pos.try_data_mut().unwrap();
        for (k, &i) in ids.iter().enumerate() {
            at[3 * k..3 * k + 3].copy_from_slice(&p[3 * i as usize..3 * i as usize + 3]);
        }
    }
    build();
    let box_r = Global::new("box_r", vec![0.0, grid.radius()]).unwrap();
    par_loop!(
        rt,
        near_3d,
        agents,
        pos(READ),
        id(READ),
        found(WRITE),
        m_pos(READ, list[..]),
        m_id(READ, list[..]),
        list(NEAR),
        box_r(READ)
    )
    .unwrap();
    // Every Dat moved with its agent: the ids still say where each came from.
    let (ids, got, moved) = (id.to_vec(), found.to_vec(), pos.to_vec());
    let mut by_id = vec![0i64; 3 * n];
    for (k, &i) in ids.iter().enumerate() {
        let i = i as usize;
        assert_eq!(agents.global_id(k), Some(i as u64), "the set's id of element {k}");
        assert_eq!(agents.index_of(i as u64), Some(k), "index of id {i}");
        assert_eq!(moved[3 * k..3 * k + 3], p[3 * i..3 * i + 3], "position of id {i}");
        by_id[3 * i..3 * i + 3].copy_from_slice(&got[3 * k..3 * k + 3]);
    }
    by_id
}

pub fn sorting_senders_changes_no_result(new_rt: &dyn Fn() -> Runtime) {
    let rt = new_rt();
    let grid = SpatialGrid::new_3d("g", [0.0; 3], [6.0, 5.0, 4.5], 1.0, Boundary::Clamp).unwrap();
    let p = positions(400, 3, 0.0, 6.0, 1.0, true, 5);
    for some in [false, true] {
        let unsorted = sorted_case(&rt, grid, &p, 0, some);
        // The counts and sums are brute force's; the visiting order (the
        // hash) does not depend on where the agents are in memory.
        let senders: Vec<usize> = (0..p.len() / 3).filter(|e| !some || e % 3 == 1).collect();
        for e in 0..p.len() / 3 {
            assert_eq!(
                unsorted[3 * e..3 * e + 2],
                brute(&p, 3, 0.0, 1.0, e, &senders),
                "agent {e}"
            );
        }
        for sorts in [1, 2] {
            assert_eq!(
                sorted_case(&rt, grid, &p, sorts, some),
                unsorted,
                "{sorts} sorts, some: {some}"
            );
        }
    }
}

/// The messages in the cells within `r` of the agent's cell (not its own):
/// how many, the sum of their ids, and an order-sensitive hash.
#[op2::kernel]
fn within_cells(p: &[i32; 2], me: &i64, found: &mut [i64; 3], ids: &[i64], msgs: &Discrete2d, r: &i32) {
    let mut f = [0i64; 3];
    for j in msgs.within(p[0], p[1], *r) {
        if ids[j] != *me {
            f[0] += 1;
            f[1] += ids[j];
            f[2] = (f[2] * 31 + ids[j]) % 1000000007;
        }
    }
    *found = f;
}

/// Cell of integer coordinate `x` on an axis of `n` cells, and whether two
/// cells are within `r` (the periodic way when wrapping).
fn cell(x: i64, n: i64, wrap: bool) -> i64 {
    if wrap {
        x.rem_euclid(n)
    } else {
        x.clamp(0, n - 1)
    }
}

fn cells_within(a: i64, b: i64, n: i64, r: i64, wrap: bool) -> bool {
    let d = (a - b).abs();
    if wrap {
        d.min(n - d) <= r
    } else {
        d <= r
    }
}

pub fn discrete_messages_match_brute_force(new_rt: &dyn Fn() -> Runtime) {
    let (rt, seq) = (new_rt(), Runtime::new(Backend::Seq).unwrap());
    let cases = [
        ([9usize, 7usize], Boundary::Clamp, [0, 1, 2, 4]),
        ([8, 6], Boundary::Wrap, [0, 1, 2, 3]),
        ([3, 2], Boundary::Wrap, [1, 2, 5, -1]),
    ];
    for (size, boundary, radii) in cases {
        let (w, h) = (size[0] as i64, size[1] as i64);
        let wrap = boundary == Boundary::Wrap;
        let n = 240;
        // Several agents per cell, some outside the grid.
        let mut s = Philox::new(size[0] as u64, 1, 0);
        let p: Vec<i32> = (0..n)
            .flat_map(|_| {
                let x = (s.uniform_f64() * (w + 6) as f64) as i32 - 3;
                let y = (s.uniform_f64() * (h + 6) as f64) as i32 - 3;
                [x, y]
            })
            .collect();
        let run = |rt: &Runtime, r: i32, some: bool| {
            let agents = Set::new("agents", n).unwrap();
            let pos = Dat::from_vec("pos", &agents, 2, p.clone()).unwrap();
            let id = Dat::from_vec("id", &agents, 1, (0..n as i64).collect()).unwrap();
            let sent = Dat::from_vec(
                "sent",
                &agents,
                1,
                (0..n as i32).map(|e| i32::from(e % 4 != 2)).collect(),
            )
            .unwrap();
            let found = Dat::<i64>::zeros("found", &agents, 3).unwrap();
            let grid = SpatialGrid::discrete_2d("cells", size, boundary).unwrap();
            let list = MessageList::spatial("cells", grid, &pos).unwrap();
            let m_id = list.carry(&id).unwrap();
            if some {
                list.build_sent_on(&sent, rt)
            } else {
                list.build_on(rt)
            }
            .unwrap();
            let r = Global::scalar("r", r);
            par_loop!(
                rt,
                within_cells,
                agents,
                pos(READ),
                id(READ),
                found(WRITE),
                m_id(READ, list[..]),
                list(NEAR),
                r(READ)
            )
            .unwrap();
            found.to_vec()
        };
        for r in radii {
            for some in [false, true] {
                let got = run(&rt, r, some);
                for e in 0..n {
                    let (ex, ey) = (cell(p[2 * e] as i64, w, wrap), cell(p[2 * e + 1] as i64, h, wrap));
                    let mut want = [0i64; 2];
                    for j in (0..n).filter(|&j| j != e && (!some || j % 4 != 2)) {
                        let (jx, jy) = (cell(p[2 * j] as i64, w, wrap), cell(p[2 * j + 1] as i64, h, wrap));
                        let r = r as i64;
                        if r >= 0 && cells_within(ex, jx, w, r, wrap) && cells_within(ey, jy, h, r, wrap) {
                            want[0] += 1;
                            want[1] += j as i64;
                        }
                    }
                    assert_eq!(
                        got[3 * e..3 * e + 2],
                        want,
                        "{size:?} {boundary:?} r {r} some {some}: agent {e}"
                    );
                }
                assert_eq!(
                    got,
                    run(&seq, r, some),
                    "{size:?} {boundary:?} r {r}: the order differs from seq"
                );
            }
        }
    }
}
