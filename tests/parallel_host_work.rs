//! The work around loops runs on the backend's threads (`build_on`,
//! `sort_senders_on`, `permute_on`, `apply_on`): on sets large enough to
//! be cut into parts, every thread count gives the same bits as one
//! thread, and the one-thread results are checked against plain Rust.

use op2::prelude::*;
use op2::{Runtime, ScopedThreads, Workers};

/// Enough agents that builds and compactions cut their work into parts.
const N: usize = 60_000;

/// A small counter-based generator (splitmix64): the same numbers on
/// every run.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A value in `[-1, 11)`: some positions outside the `[0, 10)` box.
fn coordinate(i: u64) -> f64 {
    (mix(i) >> 11) as f64 / (1u64 << 53) as f64 * 12.0 - 1.0
}

/// The threads to compare: one, a few, more than the machine has, and a
/// rayon runtime's.
fn worker_sets() -> Vec<(String, Box<dyn Workers>)> {
    let rayon = Runtime::with_options(Backend::Rayon, op2::RuntimeOptions::default().threads(3)).unwrap();
    vec![
        ("1 thread".into(), Box::new(ScopedThreads::one())),
        ("2 threads".into(), Box::new(ScopedThreads::new(2))),
        ("7 threads".into(), Box::new(ScopedThreads::new(7))),
        ("rayon, 3 threads".into(), Box::new(rayon)),
    ]
}

/// What a spatial list's build gives: the count and the message Dats,
/// after two builds with a sort of the senders between them.
fn build_messages(workers: &dyn Workers) -> (usize, Vec<f64>, Vec<i64>) {
    let agents = Set::dynamic("agents", N, N).unwrap();
    let pos = Dat::from_vec(
        "pos",
        &agents,
        3,
        (0..3 * N as u64).map(coordinate).collect::<Vec<f64>>(),
    )
    .unwrap();
    let id = Dat::from_vec("id", &agents, 1, (0..N as i64).collect()).unwrap();
    let sent = Dat::from_vec(
        "sent",
        &agents,
        1,
        (0..N as u64).map(|e| i32::from(mix(e) % 5 != 0)).collect(),
    )
    .unwrap();
    let grid = SpatialGrid::new_3d("g", [0.0; 3], [10.0; 3], 0.5, Boundary::Clamp).unwrap();
    let list = MessageList::spatial("near", grid, &pos).unwrap();
    let (m_pos, m_id) = (list.carry(&pos).unwrap(), list.carry(&id).unwrap());
    list.build_sent_on(&sent, workers).unwrap();
    // Ids no longer ascend after the sort: bins are then ordered by id.
    list.sort_senders_on(workers).unwrap();
    let count = list.build_sent_on(&sent, workers).unwrap();
    let (mut p, mut i) = (m_pos.to_vec(), m_id.to_vec());
    p.truncate(3 * count);
    i.truncate(count);
    (count, p, i)
}

#[test]
fn spatial_builds_are_the_same_on_every_thread_count() {
    let mut reference = None;
    for (name, workers) in worker_sets() {
        let got = build_messages(&*workers);
        match &reference {
            None => {
                // One thread: every sender with a flag, bin by bin, each bin in id order.
                let (count, p, ids) = &got;
                assert_eq!(*count, (0..N as u64).filter(|&e| mix(e) % 5 != 0).count());
                let bin = |k: usize| {
                    let axis = |x: f64| (x / 0.5).floor().clamp(0.0, 19.0) as usize;
                    axis(p[3 * k]) + 20 * (axis(p[3 * k + 1]) + 20 * axis(p[3 * k + 2]))
                };
                for k in 1..*count {
                    assert!(
                        (bin(k - 1), ids[k - 1]) < (bin(k), ids[k]),
                        "messages {} and {k} out of order",
                        k - 1
                    );
                }
                // Each message carries its sender's position.
                for (k, &id) in ids.iter().enumerate() {
                    let want: Vec<f64> = (0..3).map(|c| coordinate(3 * id as u64 + c)).collect();
                    assert_eq!(&p[3 * k..3 * k + 3], &want[..], "message {k}");
                }
                reference = Some(got);
            }
            Some(want) => assert!(&got == want, "{name} differs from 1 thread"),
        }
    }
}

/// What births and deaths leave: the Dats and the ids, after three rounds.
fn compact(workers: &dyn Workers) -> (Vec<f64>, Vec<i32>, Vec<u64>) {
    let agents = Set::dynamic("agents", N, N / 2).unwrap();
    let x = Dat::from_vec("x", &agents, 1, (0..N as u64).map(coordinate).collect::<Vec<f64>>()).unwrap();
    let tag = Dat::from_vec("tag", &agents, 2, (0..2 * N as i32).collect()).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    let child_x = life.offspring(&x).unwrap();
    for round in 0..3u64 {
        let n = agents.size();
        {
            let mut fates = life.fates().try_data_mut().unwrap();
            let mut cx = child_x.try_data_mut().unwrap();
            for e in 0..n {
                let r = mix(round << 32 | e as u64);
                fates[e] = (r % 4) as i32; // live, die, spawn, or both
                cx[e] = -(e as f64);
            }
        }
        let census = life.apply_on(workers).unwrap();
        assert_eq!(census.after, census.before - census.deaths + census.births);
        assert_eq!(agents.size(), census.after);
        if round == 1 {
            // A permutation between compactions: reversed.
            let order: Vec<u32> = (0..agents.size() as u32).rev().collect();
            agents.permute_on(&order, workers).unwrap();
        }
    }
    (x.to_vec(), tag.to_vec(), agents.global_ids().to_vec())
}

#[test]
fn births_deaths_and_permutations_are_the_same_on_every_thread_count() {
    let mut reference = None;
    for (name, workers) in worker_sets() {
        let got = compact(&*workers);
        match &reference {
            None => {
                let (x, tag, ids) = &got;
                assert_eq!(x.len(), ids.len());
                assert_eq!(tag.len(), 2 * ids.len());
                let mut unique = ids.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(unique.len(), ids.len(), "ids repeat");
                // Agents of the first generation kept their values with their ids.
                for (k, &id) in ids.iter().enumerate() {
                    if id < N as u64 {
                        assert_eq!(x[k], coordinate(id), "agent {id}");
                        assert_eq!(tag[2 * k], 2 * id as i32, "agent {id}");
                    }
                }
                reference = Some(got);
            }
            Some(want) => assert!(&got == want, "{name} differs from 1 thread"),
        }
    }
}
