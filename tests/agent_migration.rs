//! Agents moving between two dynamic sets of the same shape, in one
//! process (what a migration between ranks does at each end): packing by
//! Dat name, the exchange that keeps some agents and appends arrivals with
//! their ids, every Dat moving with its agent, and the errors that keep a
//! set as it was.

use op2::prelude::*;
use op2::{AgentPack, Error};

/// A set of agents with a position, a counter and a lifecycle (whose fates
/// and ids Dats travel too), made in a different order each time to show
/// that Dats are matched by name.
struct Agents {
    set: Set,
    pos: Dat<f64>,
    hits: Dat<i32>,
    life: Lifecycle,
}

fn agents(name: &str, n: usize, capacity: usize, reversed: bool) -> Agents {
    let set = Set::dynamic(name, n, capacity).unwrap();
    let pos_values: Vec<f64> = (0..2 * n).map(|i| i as f64 * 0.5).collect();
    let hits_values: Vec<i32> = (0..n as i32).map(|i| 100 + i).collect();
    let (pos, hits) = if reversed {
        let hits = Dat::from_vec("hits", &set, 1, hits_values).unwrap();
        (Dat::from_vec("pos", &set, 2, pos_values).unwrap(), hits)
    } else {
        let pos = Dat::from_vec("pos", &set, 2, pos_values).unwrap();
        (pos, Dat::from_vec("hits", &set, 1, hits_values).unwrap())
    };
    let life = Lifecycle::new(&set).unwrap();
    Agents { set, pos, hits, life }
}

/// Each agent as (id, pos, hits), sorted by id.
fn by_id(a: &Agents) -> Vec<(u64, [f64; 2], i32)> {
    let ids = a.set.global_ids();
    let (pos, hits) = (a.pos.to_vec(), a.hits.to_vec());
    let mut v: Vec<_> = (0..a.set.size())
        .map(|i| (ids[i], [pos[2 * i], pos[2 * i + 1]], hits[i]))
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

fn assert_ids_dat_follows(a: &Agents) {
    let ids: Vec<i64> = a.set.global_ids().iter().map(|&i| i as i64).collect();
    assert_eq!(a.life.ids().to_vec(), ids, "the lifecycle's ids Dat follows its agents");
}

#[test]
fn agents_move_with_every_dat_and_their_ids() {
    let a = agents("a", 10, 10, false);
    // Made empty, with its Dats in another order.
    let b = agents("b", 0, 4, true);
    assert_eq!(a.set.agent_layout().unwrap(), b.set.agent_layout().unwrap());
    let before = by_id(&a);
    let leaving = [1u32, 4, 5, 9];
    let mut pack = AgentPack::new(&a.set.agent_layout().unwrap());
    a.set.pack_agents(&leaving, &mut pack).unwrap();
    assert_eq!(pack.len(), 4);
    assert_eq!(pack.ids().collect::<Vec<_>>(), vec![1, 4, 5, 9]);
    let keep: Vec<u32> = (0..10).filter(|e| !leaving.contains(e)).collect();
    let generation = a.set.generation();
    a.set.exchange_agents(&keep, &[]).unwrap();
    b.set.exchange_agents(&[], &[&pack]).unwrap();
    assert!(a.set.generation() > generation, "a change renumbers the set");
    assert_eq!((a.set.size(), b.set.size()), (6, 4));
    // Kept in order, arrivals in pack order.
    assert_eq!(a.set.global_ids().to_vec(), vec![0, 2, 3, 6, 7, 8]);
    assert_eq!(b.set.global_ids().to_vec(), vec![1, 4, 5, 9]);
    let mut together = by_id(&a);
    together.extend(by_id(&b));
    together.sort_by_key(|x| x.0);
    assert_eq!(together, before, "every agent kept its values");
    assert_ids_dat_follows(&a);
    assert_ids_dat_follows(&b);
    // And back: the same agents, past b's capacity of 4 on the way.
    let mut back = AgentPack::new(&b.set.agent_layout().unwrap());
    b.set.pack_agents(&[0, 1, 2, 3], &mut back).unwrap();
    b.set.exchange_agents(&[], &[]).unwrap();
    a.set.exchange_agents(&(0..6).collect::<Vec<_>>(), &[&back]).unwrap();
    assert_eq!(by_id(&a), before);
    assert_eq!(b.set.size(), 0, "a set left without agents keeps working");
    assert_ids_dat_follows(&a);
}

#[test]
fn arrivals_from_several_packs_append_in_pack_order_past_the_capacity() {
    let a = agents("a", 6, 6, false);
    let c = agents("c", 0, 2, false);
    let layout = a.set.agent_layout().unwrap();
    let (mut first, mut second) = (AgentPack::new(&layout), AgentPack::new(&layout));
    a.set.pack_agents(&[5, 0], &mut first).unwrap();
    a.set.pack_agents(&[3], &mut second).unwrap();
    a.set.pack_agents(&[1, 2], &mut second).unwrap();
    c.set.exchange_agents(&[], &[&first, &second]).unwrap();
    assert_eq!(c.set.global_ids().to_vec(), vec![5, 0, 3, 1, 2]);
    assert_eq!(c.hits.to_vec(), vec![105, 100, 103, 101, 102]);
    assert_eq!(c.pos.to_vec()[..4], [5.0, 5.5, 0.0, 0.5]);
    // A pack can be sent as bytes and rebuilt at the other end.
    let copy = AgentPack::from_bytes("c", &layout, first.as_bytes().to_vec()).unwrap();
    assert_eq!(copy, first);
    // Cleared packs keep their buffer for the next step.
    first.clear();
    assert!(first.is_empty());
}

#[test]
fn children_born_after_arrivals_get_ids_no_agent_had() {
    let a = agents("a", 8, 8, false);
    let b = agents("b", 0, 8, false);
    let mut pack = AgentPack::new(&a.set.agent_layout().unwrap());
    a.set.pack_agents(&[7], &mut pack).unwrap();
    b.set.exchange_agents(&[], &[&pack]).unwrap();
    b.life.fates().data_mut()[0] = op2_core::FATE_SPAWNS;
    b.life.apply().unwrap();
    let ids = b.set.global_ids().to_vec();
    assert_eq!(ids[0], 7);
    assert!(
        ids[1] > 7,
        "the child's id {} is above every id the set has seen",
        ids[1]
    );
    assert_ids_dat_follows(&b);
}

#[test]
fn bad_migrations_are_errors_that_change_nothing() {
    let a = agents("a", 5, 5, false);
    let before = by_id(&a);
    let layout = a.set.agent_layout().unwrap();
    let mut pack = AgentPack::new(&layout);
    a.set.pack_agents(&[0, 1], &mut pack).unwrap();
    let refused = |e: Error, words: &[&str]| {
        assert!(matches!(e, Error::InvalidMigration { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("set `a`"), "{text}");
        for w in words {
            assert!(text.contains(w), "`{w}` not in: {text}");
        }
    };
    // Ids 0 and 1 are still here.
    refused(
        a.set.exchange_agents(&[0, 1, 2, 3, 4], &[&pack]).unwrap_err(),
        &["id 0", "twice"],
    );
    refused(a.set.exchange_agents(&[2, 1], &[]).unwrap_err(), &["ascend"]);
    refused(a.set.exchange_agents(&[5], &[]).unwrap_err(), &["agent 5", "past"]);
    refused(a.set.pack_agents(&[9], &mut pack).unwrap_err(), &["agent 9", "past"]);
    // Another shape: a Dat of another type under the same name.
    let other = Set::dynamic("other", 1, 1).unwrap();
    let _pos = Dat::<f32>::zeros("pos", &other, 2).unwrap();
    let _hits = Dat::<i32>::zeros("hits", &other, 1).unwrap();
    let _life = Lifecycle::new(&other).unwrap();
    let mut foreign = AgentPack::new(&other.agent_layout().unwrap());
    other.pack_agents(&[0], &mut foreign).unwrap();
    let e = a.set.exchange_agents(&[0, 1, 2, 3, 4], &[&foreign]).unwrap_err();
    refused(
        e,
        &[
            "arrival 0: its 1 agents were packed from a set with other Dats",
            "`pos`: 2 x double",
            "`*.fates` (the fates of the set's Lifecycle)",
        ],
    );
    // A pack never packed holds no agent: zero arrivals, not an error.
    a.set
        .exchange_agents(&[0, 1, 2, 3, 4], &[&AgentPack::default()])
        .unwrap();
    refused(a.set.pack_agents(&[0], &mut foreign).unwrap_err(), &["other Dats"]);
    let e = AgentPack::from_bytes("a", &layout, vec![0; layout.record_bytes() + 3]).unwrap_err();
    refused(e, &["whole number"]);
    // Ids are i64 in Dats: one past i64::MAX cannot arrive.
    let mut huge = vec![0u8; layout.record_bytes()];
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    let huge = AgentPack::from_bytes("a", &layout, huge).unwrap();
    let e = a.set.exchange_agents(&[0, 1, 2, 3, 4], &[&huge]).unwrap_err();
    refused(e, &["past the largest id"]);
    assert_eq!(by_id(&a), before, "nothing changed");
    // Two Dats of one name cannot be told apart.
    let _twin = Dat::<i32>::zeros("hits", &a.set, 1).unwrap();
    refused(a.set.agent_layout().unwrap_err(), &["two Dats", "`hits`"]);
    drop(_twin);
    // Dats op2 made are said to be so: two random streams of one name
    // drawing over the set each keep its ids.
    let (r1, r2) = (RandomStreams::new("rng", 1), RandomStreams::new("rng", 2));
    let rt = Runtime::new(Backend::Seq).unwrap();
    par_loop!(rt, roll, a.set, a.hits(WRITE), r1(DRAW)).unwrap();
    par_loop!(rt, roll, a.set, a.hits(WRITE), r2(DRAW)).unwrap();
    refused(
        a.set.agent_layout().unwrap_err(),
        &["`rng.stream_ids` (the ids random streams `rng` keep for the set"],
    );
    // A fixed set has no agents that move.
    let fixed = Set::new("fixed", 3).unwrap();
    let e = fixed.agent_layout().unwrap_err();
    assert!(e.to_string().contains("dynamic"), "{e}");
}

#[op2::kernel]
fn roll(hits: &mut i32, rng: &mut Philox) {
    *hits = rng.next_u32() as i32;
}

#[cfg(feature = "opencl")]
#[op2::kernel]
fn bump(hits: &mut i32) {
    *hits += 1;
}

/// Agents whose Dats live on a device (OpenCL, PoCL in CI): packing reads
/// them without making the device copies stale, and agents that arrive
/// are seen by the next loop there.
#[cfg(feature = "opencl")]
#[test]
fn agents_on_a_device_move_and_keep_their_values() {
    let rt = Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)");
    let a = agents("a", 6, 6, false);
    let b = agents("b", 0, 2, false);
    par_loop!(rt, bump, a.set, a.hits(RW)).unwrap();
    let uploads = a.hits.transfer_stats().uploads;
    let mut pack = AgentPack::new(&a.set.agent_layout().unwrap());
    a.set.pack_agents(&[1, 4], &mut pack).unwrap();
    par_loop!(rt, bump, a.set, a.hits(RW)).unwrap();
    assert_eq!(
        a.hits.transfer_stats().uploads,
        uploads,
        "packing left the device copy valid"
    );
    a.set.exchange_agents(&[0, 2, 3, 5], &[]).unwrap();
    b.set.exchange_agents(&[], &[&pack]).unwrap();
    par_loop!(rt, bump, b.set, b.hits(RW)).unwrap();
    par_loop!(rt, bump, a.set, a.hits(RW)).unwrap();
    // Packed after one bump, then bumped once at b; a's stayed for three.
    assert_eq!(b.hits.to_vec(), vec![103, 106]);
    assert_eq!(a.hits.to_vec(), vec![103, 105, 106, 108]);
}

#[cfg(feature = "opencl")]
#[op2::kernel]
fn count_hit(hits: &mut i32) {
    *hits += 3;
}

/// One migration's story on `rt`: agents leave `a` for an empty `b`
/// (past its capacity), are counted on both sides, and some come back.
/// Returns both sets as (id, pos, hits), their ids, and `a`'s `hits`
/// transfers before the host read anything.
#[cfg(feature = "opencl")]
#[allow(clippy::type_complexity)]
fn migration_story(
    rt: &Runtime,
) -> (
    Vec<(u64, [f64; 2], i32)>,
    Vec<(u64, [f64; 2], i32)>,
    [Vec<u64>; 2],
    op2::TransferStats,
) {
    let a = agents("a", 12, 12, false);
    let b = agents("b", 0, 2, true);
    par_loop!(rt, count_hit, a.set, a.hits(RW)).unwrap();
    let leaving = [1u32, 4, 5, 11];
    let mut pack = AgentPack::new(&a.set.agent_layout().unwrap());
    a.set.pack_agents_on(&leaving, &mut pack, rt).unwrap();
    a.set.move_agents_on(&leaving, &[], rt).unwrap();
    b.set.move_agents_on(&[], &[&pack], rt).unwrap();
    par_loop!(rt, count_hit, a.set, a.hits(RW)).unwrap();
    par_loop!(rt, count_hit, b.set, b.hits(RW)).unwrap();
    // Two come back, appended after a's kept (all of them).
    let mut back = AgentPack::new(&b.set.agent_layout().unwrap());
    b.set.pack_agents_on(&[0, 2], &mut back, rt).unwrap();
    b.set.move_agents_on(&[0, 2], &[], rt).unwrap();
    let all: Vec<u32> = (0..a.set.size() as u32).collect();
    a.set.exchange_agents_on(&all, &[&back], rt).unwrap();
    par_loop!(rt, count_hit, a.set, a.hits(RW)).unwrap();
    // Bad leaving lists change nothing.
    for bad in [&[3u32, 2][..], &[1, 1], &[40]] {
        let e = a.set.move_agents_on(bad, &[], rt).unwrap_err();
        assert!(matches!(e, Error::InvalidMigration { .. }), "{e}");
    }
    let moved = a.hits.transfer_stats();
    assert_ids_dat_follows(&a);
    assert_ids_dat_follows(&b);
    let ids = [a.set.global_ids().to_vec(), b.set.global_ids().to_vec()];
    (by_id(&a), by_id(&b), ids, moved)
}

/// Agents whose Dats live on a device (OpenCL, PoCL in CI) move as on the
/// host, in device memory: packing brings back only the packed agents'
/// elements of a Dat the device alone holds, and the exchange brings back
/// nothing.
#[cfg(feature = "opencl")]
#[test]
fn agents_move_in_device_memory_as_on_the_host() {
    let seq = Runtime::new(Backend::Seq).unwrap();
    let cl = Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)");
    let (a, b, ids, host_moved) = migration_story(&seq);
    assert_eq!(host_moved, op2::TransferStats::default());
    assert_eq!(ids[0], vec![0, 2, 3, 6, 7, 8, 9, 10, 1, 5]);
    assert_eq!(ids[1], vec![4, 11]);
    let (a_cl, b_cl, ids_cl, moved) = migration_story(&cl);
    assert_eq!((a_cl, b_cl, ids_cl), (a, b, ids));
    // Up: the whole Dat once (the first loop), then the two that came back
    // (4 bytes each). Down: the four leaving, nothing else (b's two were
    // b's Dat's).
    assert_eq!((moved.uploads, moved.bytes_up), (2, 12 * 4 + 2 * 4), "{moved:?}");
    assert_eq!((moved.downloads, moved.bytes_down), (1, 4 * 4), "{moved:?}");
}
