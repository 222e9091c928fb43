//! Distributed runs: run under `mpirun -n P` (CI uses P = 1, 2, 3, 4 with
//! `OP2_EXPECTED_RANKS=P`); plain `cargo test` runs it on one rank. MPI
//! starts once per process, so this is one test that checks, in the same order
//! on every rank: the world size, the suite's indirect loops against a
//! single-process `seq` run, halo exchange counts, moving agents (`mpi/agents.rs`),
//! models run by the model layer's `Simulation` (`mpi/model.rs`),
//! OP2's HDF5 files read in parallel (`mpi/hdf5.rs`, feature `hdf5`),
//! checkpoints written by every rank and resumed on any rank count
//! (`mpi/checkpoint.rs`), ensembles shared among the ranks
//! (`mpi/ensemble.rs`) and
//! Airfoil against one rank.
#![cfg(feature = "mpi")]

#[path = "mpi/agents.rs"]
mod agents;
#[path = "mpi/allocations.rs"]
mod allocations;
#[path = "mpi/blocks.rs"]
mod blocks;
#[cfg(feature = "hdf5")]
#[path = "mpi/checkpoint.rs"]
mod checkpoint;
#[cfg(feature = "opencl")]
#[path = "mpi/device_halos.rs"]
mod device_halos;
#[path = "mpi/ensemble.rs"]
mod ensemble;
#[cfg(feature = "hdf5")]
#[path = "mpi/hdf5.rs"]
mod hdf5;
#[path = "mpi/model.rs"]
mod model;
#[path = "support/sir_ensemble.rs"]
mod sir_ensemble;

use op2::mpi::{Mpi, Partitioner};

/// Records allocation sizes for `blocks::no_rank_allocates_a_whole_set`.
#[global_allocator]
static ALLOCATOR: allocations::Recording = allocations::Recording;
use op2::prelude::*;
use op2_airfoil::{generate, AirfoilDsl, Constants};

#[op2::kernel]
fn spread(w: &f64, a: &mut f64, b: &mut f64) {
    *a += *w;
    *b -= 0.5 * *w;
}

#[op2::kernel]
fn node_stats(x: &f64, lo: &mut f64, hi: &mut f64, total: &mut f64) {
    *lo = lo.min(*x);
    *hi = hi.max(*x);
    *total += *x;
}

#[op2::kernel]
fn unsigned_bounds(low: &u32, high: &u32, lo: &mut u32, hi: &mut u32) {
    *lo = (*lo).min(*low);
    *hi = (*hi).max(*high);
}

#[op2::kernel]
fn draw(u: &mut f64, k: &mut u32, id: &i64, key: &[i64; 2]) {
    let mut rng = op2::Philox::new(key[0] as u64, *id as u64, key[1] as u32);
    *u = rng.uniform_f64();
    *k = rng.below(1000);
}

#[op2::kernel]
fn spread_pair(a: &f64, b: &f64, na: &mut f64, nb: &mut f64) {
    *na += 0.5 * *b;
    *nb += 0.5 * *a;
}

#[op2::kernel]
fn edge_mean(out: &mut f64, a: &f64, b: &f64) {
    *out = 0.5 * (*a + *b);
}

#[op2::kernel]
fn relax(v: &mut f64, e: &[f64; 1]) {
    *v = 0.5 * *v + e[0];
}

/// A ring of nodes with chords, edges between them.
struct Mesh {
    nodes: Set,
    edges: Set,
    e2n: Map,
    x: Dat<f64>,
    w: Dat<f64>,
}

/// Distribution numbers elements in 32 bits: a set beyond `i32::MAX`, or
/// a 64-bit table behind a `Map` view, is refused by name on every rank,
/// before any rank waits for another.
fn long_sets_and_maps_are_refused(mpi: &Mpi) {
    let huge = Set::new_long("huge", i32::MAX as usize + 64).unwrap();
    let small = Set::new("small", 4).unwrap();
    let Err(e) = mpi.distribute_graph(&[&small, &huge], &[], &[], &small) else {
        panic!("a set past i32::MAX was distributed");
    };
    assert!(
        matches!(&e, op2::Error::LongSetUnsupported { set, .. } if set == "huge"),
        "{e:?}"
    );
    let nodes = Set::new("nodes", 3).unwrap();
    let cells = Set::new("cells", 1).unwrap();
    let c2n = LongMap::new("c2n", &cells, &nodes, 1, vec![2]).unwrap();
    let as_map: &Map = op2::__private::IndirectArg::map(&c2n);
    let Err(e) = mpi.distribute_graph(&[&cells, &nodes], &[as_map], &[], &cells) else {
        panic!("a 64-bit table was distributed");
    };
    assert!(
        matches!(&e, op2::Error::LongMapUnsupported { map, what } if map == "c2n" && what.contains("MPI")),
        "{e:?}"
    );
}

fn mesh() -> Mesh {
    let n = 997;
    let nodes = Set::new("nodes", n).unwrap();
    let mut table = Vec::new();
    for i in 0..n as i32 {
        table.extend([i, (i + 1) % n as i32]);
        table.extend([i, (i * 31 + 7) % n as i32]);
    }
    let edges = Set::new("edges", table.len() / 2).unwrap();
    let e2n = Map::new("e2n", &edges, &nodes, 2, table).unwrap();
    let x = Dat::from_vec("x", &nodes, 1, (0..n).map(|i| ((i * 17) % 101) as f64 - 50.0).collect()).unwrap();
    let w = Dat::from_vec(
        "w",
        &edges,
        1,
        (0..edges.size()).map(|e| (e % 13) as f64 * 0.25).collect(),
    )
    .unwrap();
    Mesh {
        nodes,
        edges,
        e2n,
        x,
        w,
    }
}

/// The loops under test, on whichever carriers (global or local) are given.
fn run_loops(rt: &Runtime, m: &Mesh, acc: &Dat<f64>, mean: &Dat<f64>) -> (f64, f64, f64) {
    par_loop!(rt, spread, m.edges, m.w(READ), acc(INC, m.e2n[0]), acc(INC, m.e2n[1])).unwrap();
    par_loop!(
        rt,
        edge_mean,
        m.edges,
        mean(WRITE),
        m.x(READ, m.e2n[0]),
        m.x(READ, m.e2n[1])
    )
    .unwrap();
    // Reads through the map what the first loop incremented: needs a fresh halo.
    let from_acc = Dat::<f64>::zeros("from_acc", &m.edges, 1).unwrap();
    par_loop!(
        rt,
        edge_mean,
        m.edges,
        from_acc(WRITE),
        acc(READ, m.e2n[0]),
        acc(READ, m.e2n[1])
    )
    .unwrap();
    par_loop!(rt, relax, m.edges, mean(RW), from_acc(READ)).unwrap();
    let lo = Global::scalar("lo", f64::INFINITY);
    let hi = Global::scalar("hi", f64::NEG_INFINITY);
    let total = Global::scalar("total", 1.0);
    par_loop!(rt, node_stats, m.nodes, acc(READ), lo(MIN), hi(MAX), total(INC)).unwrap();
    // One Global incremented through two arguments: reduced across the
    // ranks once, as one process adds both.
    let twice = Global::scalar("twice", 2.0);
    par_loop!(rt, add_both, m.nodes, acc(READ), twice(INC), twice(INC)).unwrap();
    // It starts 1 above `total` and adds 1 for each of the mesh's 997 nodes.
    assert!(
        (twice.value() - (total.value() + 998.0)).abs() <= 1e-9 * total.value().abs().max(1.0),
        "twice {} against total {}",
        twice.value(),
        total.value()
    );
    par_loop!(rt, relax, m.edges, m.w(RW), mean(READ)).unwrap();
    (lo.value(), hi.value(), total.value())
}

#[op2::kernel]
fn pick_sum(i: &i32, total: &mut f64) {
    let v = [1.0, 2.0, 3.0];
    *total += v[*i as usize];
}

#[op2::kernel]
fn add_both(x: &f64, a: &mut f64, b: &mut f64) {
    *a += *x;
    *b += 1.0;
}

/// Runs `iterations` Airfoil iterations of `one` (one process, `one_rt`)
/// and `local` (this rank's part, `rt`), asserting each distributed rms
/// within 1e-12 of one process's.
fn airfoil_matches_one_rank(one: &AirfoilDsl, one_rt: &Runtime, local: &AirfoilDsl, rt: &Runtime, iterations: usize) {
    for iter in 0..iterations {
        let (want, got) = (one.iteration(one_rt).unwrap(), local.iteration(rt).unwrap());
        assert!(
            ((got - want) / want).abs() <= 1e-12,
            "iteration {iter}: rms {got:e} vs one rank {want:e}"
        );
    }
}

/// A number every rank agrees on and other runs do not: rank 0's process
/// id, for names of shared temporary files.
fn run_tag(mpi: &Mpi) -> u64 {
    let mut tag = [if mpi.rank() == 0 {
        u64::from(std::process::id())
    } else {
        0
    }];
    mpi.sum_u64(&mut tag);
    tag[0]
}

fn close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{what}[{i}]: {x} vs {y}");
    }
}

#[test]
fn distributed_runs_match_one_process() {
    let mpi = Mpi::init().expect("MPI starts");
    if let Some(expected) = std::env::var("OP2_EXPECTED_RANKS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        assert_eq!(
            mpi.size(),
            expected,
            "mpirun was asked for {expected} ranks, MPI sees {}",
            mpi.size()
        );
    }
    // Waits sleep between polls where a node's ranks outnumber its CPUs (by
    // default; OP2_MPI_WAIT forces either way), alike on every rank. On one
    // machine whose ranks are not bound to CPUs, the node's CPUs are this
    // process's.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let sleeps = match std::env::var("OP2_MPI_WAIT")
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
        .as_str()
    {
        "spin" => false,
        "sleep" => true,
        _ => mpi.size() > cores,
    };
    assert_eq!(
        mpi.sleeps_while_waiting(),
        sleeps,
        "{} ranks, {cores} cores",
        mpi.size()
    );
    let mut sleeping = [u64::from(mpi.sleeps_while_waiting())];
    mpi.sum_u64(&mut sleeping);
    assert!(
        sleeping[0] == 0 || sleeping[0] == mpi.size() as u64,
        "ranks disagree: {sleeping:?}"
    );
    // One machine: every rank's node rank is its rank. The node's CPUs are
    // the union of the ranks' affinity masks, which a quota
    // (`available_parallelism`) may not show: only their range is certain.
    let node = op2::node_rank().expect("MPI has started");
    assert_eq!((node.rank, node.ranks), (mpi.rank(), mpi.size()));
    assert!(node.cpus >= 1, "{node:?}");
    // `rayon`'s shared team takes this rank's share of them (unless
    // RAYON_NUM_THREADS says otherwise): one thread each where ranks
    // outnumber CPUs, so that no rank's threads spin against another's.
    let threads_of = |backend| op2::Workers::threads(&Runtime::new(backend).unwrap());
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        assert_eq!(
            threads_of(Backend::Rayon),
            node.cpu_share(cores),
            "{node:?}, {cores} cores"
        );
        if mpi.size() >= node.cpus {
            assert_eq!(threads_of(Backend::Rayon), 1, "{node:?}");
        }
    }
    // So does `jit`'s OpenMP, unless OMP_NUM_THREADS says otherwise.
    #[cfg(feature = "jit")]
    if std::env::var_os("OMP_NUM_THREADS").is_none() {
        assert_eq!(
            threads_of(Backend::Jit),
            node.cpu_share(cores),
            "{node:?}, {cores} cores"
        );
    }
    // A device runtime takes device (node rank modulo the devices) and says
    // so.
    #[cfg(feature = "opencl")]
    {
        let rt = Runtime::new(Backend::OpenCl).unwrap();
        let notes = rt.timing_summary().fallbacks;
        let placed = format!("for node rank {} (node rank modulo", mpi.rank());
        assert!(notes.iter().any(|n| n.contains(&placed)), "{notes:?}");
    }
    let seq = Runtime::new(Backend::Seq).unwrap();

    agents::moving_agents_match_one_rank(&mpi);
    agents::births_are_numbered_as_on_one_rank(&mpi);
    agents::agents_that_jump_past_the_neighbours_arrive(&mpi);
    agents::predator_prey_matches_one_rank(&mpi);
    model::described_models_match_one_rank(&mpi);
    model::network_sir_matches_one_rank(&mpi);
    model::network_states_match_one_rank(&mpi);
    model::networks_and_mobile_agents_match_one_rank(&mpi);
    model::brute_force_lists_reach_every_rank(&mpi);
    model::discrete_lists_match_one_rank(&mpi);
    ensemble::ensembles_over_ranks_give_every_lone_run(&mpi);
    blocks::blocks_distribute_as_the_in_memory_path(&mpi);
    blocks::dats_read_after_the_cut_distribute_alike(&mpi);
    blocks::bad_blocks_are_an_error_on_every_rank(&mpi);
    blocks::choices_and_failures_of_one_rank_fail_every_rank(&mpi);
    blocks::no_rank_allocates_a_whole_set(&mpi);
    long_sets_and_maps_are_refused(&mpi);
    #[cfg(feature = "opencl")]
    device_halos::airfoil_on_a_device_moves_only_halos(&mpi);
    #[cfg(feature = "opencl")]
    device_halos::device_buffers_that_cannot_be_had_are_refused(&mpi);
    #[cfg(feature = "opencl")]
    device_halos::a_halo_through_the_host_survives_an_overlapped_write(&mpi);
    #[cfg(feature = "hdf5")]
    {
        hdf5::blocks_read_in_parallel_tile_the_file(&mpi);
        hdf5::airfoil_from_hdf5_matches_one_rank(&mpi);
        hdf5::airfoil_read_in_blocks_matches_one_rank(&mpi);
        checkpoint::checkpoints_resume_on_any_rank_count(&mpi);
        checkpoint::vtk_pieces_hold_one_ranks_agents(&mpi);
        checkpoint::populations_gathered_equal_one_process(&mpi);
    }

    // Reference: one process, global carriers.
    let g = mesh();
    let g_acc = Dat::<f64>::zeros("acc", &g.nodes, 1).unwrap();
    let g_mean = Dat::<f64>::zeros("mean", &g.edges, 1).unwrap();
    let want = run_loops(&seq, &g, &g_acc, &g_mean);

    // Distributed: the same loops on local carriers.
    let fresh = mesh();
    let d = mpi
        .distribute(&[&fresh.nodes, &fresh.edges], &[&fresh.e2n], &fresh.nodes)
        .unwrap();
    let l = Mesh {
        nodes: d.set(&fresh.nodes).unwrap(),
        edges: d.set(&fresh.edges).unwrap(),
        e2n: d.map(&fresh.e2n).unwrap(),
        x: d.dat(&fresh.x).unwrap(),
        w: d.dat(&fresh.w).unwrap(),
    };
    let acc = Dat::<f64>::zeros("acc", &l.nodes, 1).unwrap();
    let mean = Dat::<f64>::zeros("mean", &l.edges, 1).unwrap();
    // Every host backend in this build (the jit's ranks compile into one cache at once).
    let backends: Vec<Backend> = [Backend::Seq, Backend::Rayon, Backend::Jit, Backend::OpenCl]
        .into_iter()
        .filter(|b| Runtime::new(*b).is_ok())
        .collect();
    for (round, &backend) in backends.iter().enumerate() {
        let rt = Runtime::new(backend).unwrap();
        if round > 0 {
            // Second round: start again from the initial values.
            acc.data_mut().fill(0.0);
            let w0 = d.dat(&fresh.w).unwrap();
            l.w.data_mut().copy_from_slice(&w0.data_ro());
        }
        let got = run_loops(&rt, &l, &acc, &mean);
        assert_eq!((got.0, got.1), (want.0, want.1), "MIN/MAX on {backend}");
        assert!(
            (got.2 - want.2).abs() <= 1e-12 * want.2.abs(),
            "INC {} vs {} on {backend}",
            got.2,
            want.2
        );
        let acc_all = d.gather(&acc).unwrap();
        let mean_all = d.gather(&mean).unwrap();
        let w_all = d.gather(&l.w).unwrap();
        if let (Some(a), Some(m), Some(w)) = (acc_all, mean_all, w_all) {
            close(&a, &g_acc.to_vec(), "acc");
            close(&m, &g_mean.to_vec(), "mean");
            close(&w, &g.w.to_vec(), "w");
        }
    }

    // MIN and MAX of u32 Globals across ranks compare as unsigned: rank 0
    // offers 5 to MIN and 2^31 + 2^28 to MAX, the others the other way round
    // (MPICH 4.0's MIN and MAX on unsigned types compare them as signed,
    // where 2^31 + 2^28 is below 5).
    let rt = Runtime::new(Backend::Seq).unwrap();
    let big = 0x9000_0000u32;
    let (mine_low, mine_high) = if mpi.rank() == 0 { (5, big) } else { (big, 5) };
    let low = Dat::<u32>::from_vec("low", &l.nodes, 1, vec![mine_low; l.nodes.total_size()]).unwrap();
    let high = Dat::<u32>::from_vec("high", &l.nodes, 1, vec![mine_high; l.nodes.total_size()]).unwrap();
    let lo = Global::scalar("lo", u32::MAX);
    let hi = Global::scalar("hi", 0u32);
    par_loop!(rt, unsigned_bounds, l.nodes, low(READ), high(READ), lo(MIN), hi(MAX)).unwrap();
    assert_eq!((lo.value(), hi.value()), (5, big), "u32 MIN and MAX over the ranks");

    // A Dat read twice with no write in between is exchanged once.
    let y = d.dat(&fresh.x).unwrap();
    let before = y.halo_exchanges();
    par_loop!(rt, relax, l.edges, l.w(RW), mean(READ)).unwrap();
    let out = Dat::<f64>::zeros("out", &l.edges, 1).unwrap();
    par_loop!(rt, edge_mean, l.edges, out(WRITE), y(READ, l.e2n[0]), y(READ, l.e2n[1])).unwrap();
    par_loop!(rt, edge_mean, l.edges, out(WRITE), y(READ, l.e2n[0]), y(READ, l.e2n[1])).unwrap();
    assert_eq!(
        y.halo_exchanges(),
        before,
        "a freshly distributed Dat's halo is current"
    );
    let z = d.dat(&fresh.x).unwrap();
    par_loop!(rt, spread, l.edges, l.w(READ), z(INC, l.e2n[0]), z(INC, l.e2n[1])).unwrap();
    par_loop!(rt, edge_mean, l.edges, out(WRITE), z(READ, l.e2n[0]), z(READ, l.e2n[1])).unwrap();
    par_loop!(rt, edge_mean, l.edges, out(WRITE), z(READ, l.e2n[0]), z(READ, l.e2n[1])).unwrap();
    let exchanged = z.halo_exchanges();
    assert_eq!(exchanged, 1, "written once, then read twice: one exchange");
    assert_eq!(mpi.max_f64(exchanged as f64), 1.0, "on every rank");

    // Host writes make the halo stale, as a writing loop does; host reads do
    // not. Each rank changes its owned values of `h` on the host (leaving, or
    // spoiling, its halo copies); a loop reading `h` through the map must see
    // the owners' new values, as one process does.
    let changed = |x: f64, g: usize| 3.0 * x + (g % 11) as f64;
    let n = fresh.nodes.size();
    let g_ids = Dat::from_vec("gid", &fresh.nodes, 1, (0..n).map(|g| g as f64).collect()).unwrap();
    let one_h = Dat::from_vec("h", &fresh.nodes, 1, fresh.x.to_vec()).unwrap();
    for (g, v) in one_h.data_mut().iter_mut().enumerate() {
        *v = changed(*v, g);
    }
    let one_out = Dat::<f64>::zeros("h_mean", &fresh.edges, 1).unwrap();
    par_loop!(
        seq,
        edge_mean,
        fresh.edges,
        one_out(WRITE),
        one_h(READ, fresh.e2n[0]),
        one_h(READ, fresh.e2n[1])
    )
    .unwrap();
    let ids = d.dat(&g_ids).unwrap();
    let h = d.dat(&fresh.x).unwrap();
    let h_out = Dat::<f64>::zeros("h_mean", &l.edges, 1).unwrap();
    let owned = l.nodes.size();
    let x0 = fresh.x.to_vec();
    for backend in [Backend::Seq, Backend::Rayon] {
        let rt = Runtime::new(backend).unwrap();
        let exchanges = h.halo_exchanges();
        {
            let ids = ids.data_ro();
            let mut values = h.data_mut();
            let (mine, halo) = values.split_at_mut(owned);
            for (v, &g) in mine.iter_mut().zip(ids.iter()) {
                *v = changed(x0[g as usize], g as usize);
            }
            // Halo copies written on the host are replaced by the owners' values.
            halo.fill(1.0e300);
        }
        par_loop!(
            rt,
            edge_mean,
            l.edges,
            h_out(WRITE),
            h(READ, l.e2n[0]),
            h(READ, l.e2n[1])
        )
        .unwrap();
        let after_write = h.halo_exchanges();
        // Only reads now: through the guard, a copy, and a loop.
        assert!(h.data_ro().iter().all(|v| *v < 1.0e300), "on {backend}: halo refreshed");
        let _ = h.to_vec();
        par_loop!(
            rt,
            edge_mean,
            l.edges,
            h_out(WRITE),
            h(READ, l.e2n[0]),
            h(READ, l.e2n[1])
        )
        .unwrap();
        let exchanged = h.halo_exchanges() - exchanges;
        let after_reads = h.halo_exchanges() - after_write;
        assert_eq!(
            exchanged, 1,
            "on {backend}: a host write, then loops read: one exchange"
        );
        assert_eq!(after_reads, 0, "on {backend}: host reads leave the halo current");
        if let Some(all) = d.gather(&h_out).unwrap() {
            close(
                &all,
                &one_out.to_vec(),
                &format!("h_mean after a host write on {backend}"),
            );
        }
    }

    // Errors found before any communication, the same on every rank.
    let stray = Set::new("stray", 3).unwrap();
    let into_stray = Map::new("into_stray", &fresh.nodes, &stray, 1, vec![0; fresh.nodes.size()]).unwrap();
    let e = mpi
        .distribute(&[&fresh.nodes], &[&into_stray], &fresh.nodes)
        .err()
        .expect("a map into a set not given");
    assert!(
        e.to_string()
            .contains("map `into_stray` points into set `stray` is not among"),
        "{e}"
    );
    let e = d.set(&stray).expect_err("a set that was not distributed");
    assert!(e.to_string().contains("set `stray` was not distributed"), "{e}");
    let e = d.map(&into_stray).expect_err("a map that was not distributed");
    assert!(e.to_string().contains("map `into_stray` was not distributed"), "{e}");
    let on_stray = Dat::<f64>::zeros("on_stray", &stray, 1).unwrap();
    assert!(d.dat(&on_stray).is_err(), "a Dat on a set that was not distributed");
    let e = d
        .gather(&on_stray)
        .expect_err("gathering a Dat that is not distributed");
    assert!(
        e.to_string().contains("dat `on_stray` is not on a distributed set"),
        "{e}"
    );

    // A gather the ranks disagree on fails on every rank: rank 0 would
    // read past a shorter message, or wait for one that never comes.
    if mpi.size() > 1 {
        let one = Dat::<f64>::zeros("one", &l.nodes, 1).unwrap();
        let two = Dat::<f64>::zeros("two", &l.nodes, 2).unwrap();
        let e = d
            .gather(if mpi.rank() == 1 { &two } else { &one })
            .expect_err("dims differ");
        assert!(e.to_string().contains("gathered dats (set, dim, type)"), "{e}");
        let e = d
            .gather(if mpi.rank() == 1 { &on_stray } else { &one })
            .expect_err("one rank's dat is not distributed");
        assert!(
            e.to_string().contains("dat `on_stray` is not on a distributed set"),
            "{e}"
        );
        assert!(
            d.gather(&one).unwrap().is_some() == (mpi.rank() == 0),
            "a gather after them"
        );
    }

    // A failure of one rank's, or a mesh or partitioner that differs on one
    // rank, fails every rank before the partitioner's broadcast.
    if mpi.size() > 1 {
        let last = mpi.size() - 1;
        let sets: &[&Set] = if mpi.rank() == last {
            &[&fresh.edges]
        } else {
            &[&fresh.nodes, &fresh.edges]
        };
        let e = mpi
            .distribute(sets, &[], &fresh.nodes)
            .err()
            .expect("one rank left out its primary set");
        assert!(
            e.to_string()
                .contains("primary set `nodes` is not among the sets given"),
            "{e}"
        );
        let mut values = fresh.e2n.values().to_vec();
        if mpi.rank() == last {
            values.swap(0, 5);
        }
        let other = Map::new("e2n", &fresh.edges, &fresh.nodes, 2, values).unwrap();
        let e = mpi
            .distribute(&[&fresh.nodes, &fresh.edges], &[&other], &fresh.nodes)
            .err()
            .expect("one rank's map differs");
        assert!(
            e.to_string()
                .contains("meshes to distribute differ from another rank's"),
            "{e}"
        );
        let owners = |r: u32| Partitioner::Given((0..fresh.nodes.size() as u32).map(|e| (e + r) % 2).collect());
        let mine = owners(u32::from(mpi.rank() == last));
        let e = mpi
            .distribute_with(&[&fresh.nodes, &fresh.edges], &[&fresh.e2n], &[], &fresh.nodes, &mine)
            .err()
            .expect("one rank's owners differ");
        assert!(
            e.to_string()
                .contains("meshes to distribute differ from another rank's"),
            "{e}"
        );
    }
    if mpi.size() == 2 {
        // Rank 1 owns c1, which reads f0 (rank 0's) in its halo; f0's row
        // points into `t`, of which rank 1 reaches nothing.
        let c = Set::new("c", 2).unwrap();
        let f = Set::new("f", 1).unwrap();
        let t = Set::new("t", 1).unwrap();
        let c2f = Map::new("c2f", &c, &f, 1, vec![0, 0]).unwrap();
        let f2t = Map::new("f2t", &f, &t, 1, vec![0]).unwrap();
        let e = mpi
            .distribute_with(&[&c, &f, &t], &[&c2f, &f2t], &[], &c, &Partitioner::Given(vec![0, 1]))
            .err()
            .expect("a rank holds no element of `t`");
        assert!(
            e.to_string().contains("map `f2t`: rank 1 holds 1 element of `f`")
                && e.to_string().contains("cannot be distributed yet"),
            "{e}"
        );
    }

    // A loop that fails on one rank only (a checked kernel's index out of
    // bounds in that rank's elements) after its Global's reduction began:
    // an error on every rank, the Global as it was, and the next loop runs.
    #[cfg(feature = "jit")]
    {
        let options = op2::RuntimeOptions::default()
            .checked(true)
            .threads(1)
            .cache_dir(concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache"));
        if let Ok(rt) = Runtime::with_options(Backend::Jit, options) {
            let owned = l.nodes.regions().owned_size();
            let idx = Dat::<i32>::zeros("idx", &l.nodes, 1).unwrap();
            if mpi.rank() == mpi.size() - 1 && owned > 0 {
                idx.data_mut()[owned - 1] = 7;
            }
            let total = Global::scalar("picked", 5.0);
            let e = par_loop!(rt, pick_sum, l.nodes, idx(READ), total(INC)).unwrap_err();
            let mine = mpi.rank() == mpi.size() - 1;
            assert_eq!(
                matches!(e, op2::Error::KernelCheck { .. }),
                mine,
                "rank {}: {e}",
                mpi.rank()
            );
            assert_eq!(total.value(), 5.0, "rank {}: the Global as it was", mpi.rank());
            idx.data_mut().fill(1);
            par_loop!(rt, pick_sum, l.nodes, idx(READ), total(INC)).unwrap();
            assert_eq!(total.value(), 5.0 + 2.0 * 997.0, "rank {}", mpi.rank());
        }
    }

    // Fewer primary elements than ranks: a clear error on every rank.
    if mpi.size() > 1 {
        let tiny = Set::new("tiny", 1).unwrap();
        let e = mpi
            .distribute(&[&tiny], &[], &tiny)
            .err()
            .expect("an empty rank is an error");
        assert!(e.to_string().contains("would own no element of `tiny`"), "{e}");
    }

    // Global ids survive distribution: every local element (halos included)
    // keeps the id its global element was given.
    let agents = Set::with_global_ids("agents", (0..997u64).map(|i| i * 1_000_003 + 11).collect()).unwrap();
    let n_links = 2 * 997;
    let links = Set::new("links", n_links).unwrap();
    let table: Vec<i32> = (0..997i32)
        .flat_map(|i| [i, (i + 1) % 997, i, (i * 31 + 7) % 997])
        .collect();
    let l2a = Map::new("l2a", &links, &agents, 2, table).unwrap();
    let id_of = Dat::from_vec(
        "id_of",
        &agents,
        1,
        (0..997u64).map(|i| (i * 1_000_003 + 11) as i64).collect(),
    )
    .unwrap();
    let da = mpi.distribute(&[&agents, &links], &[&l2a], &agents).unwrap();
    let local_agents = da.set(&agents).unwrap();
    let local_ids = da.dat(&id_of).unwrap();
    for (i, &id) in local_ids.data_ro().iter().enumerate() {
        assert_eq!(local_agents.global_id(i), Some(id as u64), "local element {i}");
        assert_eq!(local_agents.index_of(id as u64), Some(i));
    }
    assert_eq!(local_agents.index_of(12), None, "an id no agent has");

    // Double buffering on a distributed set: each step reads `cur` through
    // the map (so its halo must be current) and writes `next`, then swaps;
    // the result matches one process, whose halo state moved with the values.
    let steps = |rt: &Runtime, links: &Set, l2a: &Map, cur: &Dat<f64>, next: &Dat<f64>| {
        for _ in 0..4 {
            next.data_mut().fill(0.0);
            par_loop!(
                rt,
                spread_pair,
                links,
                cur(READ, l2a[0]),
                cur(READ, l2a[1]),
                next(INC, l2a[0]),
                next(INC, l2a[1])
            )
            .unwrap();
            cur.swap(next).unwrap();
        }
    };
    let start: Vec<f64> = (0..997).map(|i| ((i * 7) % 13) as f64).collect();
    let g_cur = Dat::from_vec("cur", &agents, 1, start.clone()).unwrap();
    let g_next = Dat::<f64>::zeros("next", &agents, 1).unwrap();
    steps(&seq, &links, &l2a, &g_cur, &g_next);
    let l_cur = da.dat(&Dat::from_vec("cur", &agents, 1, start).unwrap()).unwrap();
    let l_next = Dat::<f64>::zeros("next", &local_agents, 1).unwrap();
    let l_links = da.set(&links).unwrap();
    let l_l2a = da.map(&l2a).unwrap();
    steps(
        &Runtime::new(Backend::Rayon).unwrap(),
        &l_links,
        &l_l2a,
        &l_cur,
        &l_next,
    );
    if let Some(all) = da.gather(&l_cur).unwrap() {
        close(&all, &g_cur.to_vec(), "double-buffered steps");
    }

    // Random streams keyed by global ids: the same draws on every rank count.
    let key = Global::new("key", vec![2024i64, 5]).unwrap();
    let g_u = Dat::<f64>::zeros("u", &agents, 1).unwrap();
    let g_k = Dat::<u32>::zeros("k", &agents, 1).unwrap();
    par_loop!(seq, draw, agents, g_u(WRITE), g_k(WRITE), id_of(READ), key(READ)).unwrap();
    let l_u = Dat::<f64>::zeros("u", &local_agents, 1).unwrap();
    let l_k = Dat::<u32>::zeros("k", &local_agents, 1).unwrap();
    for backend in [Backend::Rayon, Backend::Jit, Backend::OpenCl] {
        let Ok(rt) = Runtime::new(backend) else { continue };
        l_u.data_mut().fill(-1.0);
        par_loop!(
            rt,
            draw,
            local_agents,
            l_u(WRITE),
            l_k(WRITE),
            local_ids(READ),
            key(READ)
        )
        .unwrap();
        if let (Some(u), Some(k)) = (da.gather(&l_u).unwrap(), da.gather(&l_k).unwrap()) {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&u), bits(&g_u.to_vec()), "uniform draws on {backend}");
            assert_eq!(k, g_k.to_vec(), "integer draws on {backend}");
        }
    }

    // Game of Life: a glider and a blinker on a 12x10 torus, distributed in
    // strips of rows with the neighbourhood still computed, cell for cell as
    // on one process, on every host backend; and a 6x4 torus, one row per
    // rank on 4 ranks (the halo rows above and below meet).
    for (w, h, alive) in [
        (
            12,
            10,
            &[(1, 0), (2, 1), (0, 2), (1, 2), (2, 2), (7, 6), (8, 6), (9, 6)][..],
        ),
        (6, 4, &[(1, 1), (2, 1), (3, 1), (4, 3)][..]),
    ] {
        for backend in [Backend::Seq, Backend::Rayon, Backend::Jit, Backend::OpenCl] {
            let Ok(rt_life) = Runtime::new(backend) else { continue };
            let mut one = op2_life::Life::new(w, h, alive).unwrap();
            let (mut spread, dl) = op2_life::Life::new(w, h, alive).unwrap().distribute(&mpi).unwrap();
            for generation in 1..=8 {
                one.step(&seq).unwrap();
                spread.step(&rt_life).unwrap();
                assert_eq!(
                    spread.population(&rt_life).unwrap(),
                    one.population(&seq).unwrap(),
                    "{w}x{h} on {backend}"
                );
                if let Some(all) = dl.gather(spread.current()).unwrap() {
                    assert_eq!(all, one.states(), "{w}x{h} generation {generation} on {backend}");
                }
            }
        }
    }

    // A stencil stays computed only on whole rows: a lattice cut column by
    // column is refused (use the stencil's map there), and a stencil cannot
    // be built on a distributed set directly.
    let cells = Set::new("cells", 8 * 6).unwrap();
    let moore = Stencil::torus("moore", &cells, (8, 6), &Stencil::MOORE).unwrap();
    let by_column: Vec<u32> = (0..48).map(|e| (e % mpi.size()) as u32).collect();
    let dc = mpi
        .distribute_with(&[&cells], &[moore.map()], &[], &cells, &Partitioner::Given(by_column))
        .unwrap();
    match dc.stencil(&moore) {
        Ok(local) if mpi.size() == 1 => assert_eq!(local.size(), (8, 6)),
        Ok(_) => panic!("a stencil on part of a row on {} ranks", mpi.size()),
        Err(e) => assert!(
            mpi.size() > 1 && e.to_string().contains("holds part of a row of `cells`"),
            "{e}"
        ),
    }
    assert!(dc.map(moore.map()).is_ok(), "the stencil's map is distributed");
    let elsewhere = Set::new("elsewhere", 4).unwrap();
    let e = dc
        .stencil(&Stencil::torus("s", &elsewhere, (2, 2), &Stencil::VON_NEUMANN).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("set `elsewhere` was not distributed"), "{e}");
    let local_cells = dc.set(&cells).unwrap();
    let e = Stencil::torus("moore", &local_cells, (8, 6), &Stencil::MOORE).unwrap_err();
    assert!(e.to_string().contains("is distributed"), "{e}");
    let e = mpi
        .distribute_with(&[&cells], &[moore.map()], &[], &cells, &Partitioner::Given(vec![0; 3]))
        .err()
        .expect("too few owners");
    assert!(
        e.to_string()
            .contains("3 owners given for the 48 elements of the primary set"),
        "{e}"
    );

    // SIR on a random network: distributed, the same states tick by tick as
    // one process (each node's random stream is keyed by its global id).
    let n = 150;
    let mut rng = op2::Philox::new(23, 0, 0);
    let mut edges = Vec::new();
    while edges.len() < 400 {
        let (a, b) = (rng.below(n as u32) as usize, rng.below(n as u32) as usize);
        if a != b {
            edges.push((a, b));
        }
    }
    let ids: Vec<u64> = (0..n as u64).map(|i| 7 * i + 5).collect();
    // A stochastic run, and p = q = 1: a breadth-first wave.
    for (pq, backend) in [(0.4, 0.25), (1.0, 1.0)]
        .into_iter()
        .flat_map(|pq| [Backend::Seq, Backend::Rayon, Backend::Jit, Backend::OpenCl].map(|b| (pq, b)))
    {
        let Ok(rt) = Runtime::new(backend) else { continue };
        let mut one = op2_sir::Sir::new(n, Some(ids.clone()), &edges, 0, pq, 11).unwrap();
        let (mut spread, ds) = op2_sir::Sir::new(n, Some(ids.clone()), &edges, 0, pq, 11)
            .unwrap()
            .distribute(&mpi)
            .unwrap();
        for tick in 1..=25 {
            let want = one.step(&seq).unwrap();
            let got = spread.step(&rt).unwrap();
            assert_eq!(got, want, "p, q = {pq:?} on {backend}: counts at tick {tick}");
            if let Some(all) = ds.gather(spread.state()).unwrap() {
                assert_eq!(all, one.states(), "p, q = {pq:?} on {backend}: states at tick {tick}");
            }
        }
    }

    // Airfoil on a small mesh: distributed against one process.
    let mesh = generate(30, 20);
    let c = Constants::default();
    let one = AirfoilDsl::new(&mesh, &c).unwrap();
    let global = AirfoilDsl::new(&mesh, &c).unwrap();
    let (local, _) = global.distribute(&mpi).unwrap();
    let rt_local = Runtime::new(Backend::Rayon).unwrap();
    airfoil_matches_one_rank(&one, &seq, &local, &rt_local, 20);
    // Its flow for ParaView, one piece per rank and their index: read back
    // with vtkio, every cell once, its density one rank's.
    let dir = std::env::temp_dir().join(format!("op2-mpi-vtk-{}", run_tag(&mpi)));
    std::fs::create_dir_all(&dir).unwrap();
    let index = local
        .write_vtk_piece(dir.join("flow.vtu"), mpi.rank(), mpi.size())
        .unwrap();
    // Every piece is written (a collective as a barrier).
    mpi.sum_u64(&mut [0]);
    if mpi.rank() == 0 {
        use vtkio::model::{Attribute, DataSet};
        let vtk = vtkio::Vtk::import(&index).expect("vtkio reads the index");
        let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
            panic!("not an UnstructuredGrid")
        };
        assert_eq!(pieces.len(), mpi.size());
        let q = one.q.to_vec();
        let mut seen = vec![false; mesh.ncell()];
        for piece in &pieces {
            let piece = piece.load_piece_data(Some(&index)).expect("a piece");
            let arrays: Vec<Vec<f64>> = (piece.data.cell.iter())
                .map(|a| match a {
                    Attribute::DataArray(d) => d.data.clone().cast_into().unwrap(),
                    other => panic!("unexpected attribute {other:?}"),
                })
                .collect();
            for (&id, &density) in arrays[0].iter().zip(&arrays[1]) {
                let id = id as usize;
                assert!(!std::mem::replace(&mut seen[id], true), "cell {id} in two pieces");
                let want = q[4 * id];
                assert!(
                    ((density - want) / want).abs() <= 1e-12,
                    "cell {id}: density {density} vs {want}"
                );
            }
        }
        assert!(seen.iter().all(|&s| s), "every cell in some piece");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
