//! The device backends' lazy transfers (counted per Dat, Global and Map),
//! written once and run on OpenCL (PoCL in CI) and CUDA (on a GPU; without one
//! the CUDA tests print why they skip, unless `OP2_REQUIRE_GPU=1`), each with
//! colouring and with atomics.
#![cfg(any(feature = "opencl", feature = "cuda"))]

#[path = "device_transfers/loopback.rs"]
mod loopback;

mod cases {
    pub use super::loopback::halos_are_packed_and_unpacked_on_the_device_without_mpi;
    use op2::prelude::*;
    use op2::{DeviceLayout, RuntimeOptions, TransferStats};
    use op2_airfoil::{generate, AirfoilDsl, Constants};

    #[op2::kernel]
    fn axpy(y: &mut f64, x: &f64) {
        *y += 2.0 * *x;
    }

    #[op2::kernel]
    fn fill(out: &mut f64, x: &f64) {
        *out = *x + 1.0;
    }

    #[op2::kernel]
    fn gather_sum(out: &mut f64, v: &[[f64; 1]; 2]) {
        *out = v[0][0] + v[1][0];
    }

    #[op2::kernel]
    fn scale_pair(p: &mut [f64; 2], k: &f64) {
        p[0] *= *k;
        p[1] += *k;
    }

    #[op2::kernel]
    fn neighbour_pairs(out: &mut f64, ps: &[[f64; 2]]) {
        for q in ps {
            *out += q[0] - q[1];
        }
    }

    #[op2::kernel]
    fn add_to_ends(ends: &mut [[f64; 1]; 2], w: &f64) {
        ends[0][0] += *w;
        ends[1][0] += *w;
    }

    fn ups(s: TransferStats) -> u64 {
        s.uploads
    }

    #[op2::kernel]
    fn drift(p: &mut [f64; 2], dx: &f64) {
        p[0] += *dx;
        p[1] -= 0.5 * *dx;
    }

    #[op2::kernel]
    fn count_near(p: &[f64; 2], found: &mut i32, ps: &[[f64; 2]], msgs: &Spatial2d) {
        let mut n = 0;
        for j in msgs.near(p[0], p[1]) {
            let dx = ps[j][0] - p[0];
            let dy = ps[j][1] - p[1];
            if dx * dx + dy * dy < 1.0 {
                n += 1;
            }
        }
        *found = n;
    }

    #[op2::kernel]
    fn split_or_die(w: &mut f64, child_w: &mut f64, id: &i64, fate: &mut Fate) {
        if *id % 3 == 0 {
            fate.die();
        } else if *id % 3 == 1 {
            fate.spawn();
            *w *= 0.5;
            *child_w = *w + 0.25;
        }
    }

    /// A model with states and conditions (the lattice SIR: `infect`
    /// runs on the susceptible whose condition draws an infection and
    /// moves them to I, `recover` likewise from I to R) picks its agents
    /// and moves them on the device: after the first step neither the
    /// states nor anything else about the agents crosses the bus, and the
    /// states are the plain model's.
    pub fn states_and_conditions_stay_on_the_device(rt: Runtime) {
        let (size, rates, infected, seed, steps) = ((24, 16), (0.25, 0.2), [0u64, 200, 383], 5, 12);
        let mut sim = op2_sir::lattice_sir(&rt, size, rates, &infected, seed, (0, 1)).unwrap();
        sim.step().unwrap();
        let after_first = sim.states("person").unwrap().transfer_stats();
        for _ in 1..steps {
            sim.step().unwrap();
        }
        let moved = sim.states("person").unwrap().transfer_stats();
        assert_eq!(
            (moved.uploads, moved.downloads),
            (after_first.uploads, 0),
            "the states stay on the device: {moved:?}"
        );
        let want = op2_sir::lattice_sir_by_hand(size, rates, &infected, seed, steps);
        let ids = sim.population("person").unwrap().global_ids().to_vec();
        let states = sim.states("person").unwrap().to_vec();
        let mut got = vec![-1; want.len()];
        for (&id, &s) in ids.iter().zip(&states) {
            got[id as usize] = s;
        }
        assert_eq!(got, want, "the plain model's states after {steps} steps");
        assert!(got.contains(&2) && got.contains(&0), "an epidemic under way: {got:?}");
    }

    /// Hens lay eggs and eggs hatch into hens (children of the other
    /// type): the parents are selected and the children's values
    /// gathered on the device, so neither the spawn flags nor the staged
    /// values ever come to the host, and the populations are seq's.
    pub fn births_of_another_type_stay_on_the_device(rt: Runtime) {
        use op2_predator_prey::{hens_and_eggs, initial_hens, HenParams};
        let p = HenParams::default();
        let run = |rt: &Runtime| {
            let mut sim = hens_and_eggs(rt, p, initial_hens(60, p.size, 3), 5).unwrap();
            let mut sizes = Vec::new();
            for _ in 0..12 {
                sim.step().unwrap();
                sizes.push((
                    sim.population("hen").unwrap().size(),
                    sim.population("egg").unwrap().size(),
                ));
            }
            let ages = |t: &str| {
                let set = sim.population(t).unwrap();
                let age = sim.variable::<i32>(t, "age").unwrap().to_vec();
                let mut v: Vec<(u64, i32)> = set.global_ids().iter().copied().zip(age).collect();
                v.sort_unstable();
                v
            };
            (sizes, ages("hen"), ages("egg"))
        };
        let got = run(&rt);
        let summary = rt.timing_summary();
        let staged: Vec<_> = (summary.transfers.iter())
            .filter(|(n, _)| n.contains(".spawn") || n.contains(".child."))
            .collect();
        assert!(
            staged.len() >= 3,
            "the flags and staged values listed: {:?}",
            summary.transfers
        );
        for (name, stats) in staged {
            assert_eq!(stats.downloads, 0, "{name} stays on the device: {stats:?}");
        }
        let seq = Runtime::new(Backend::Seq).unwrap();
        assert_eq!(got, run(&seq), "the populations seq has");
        assert!(got.0.iter().any(|&(_, eggs)| eggs > 0), "eggs were laid: {:?}", got.0);
    }

    /// Agents that drift, build a spatial list and count their
    /// neighbours, sorted in memory once: their positions never come back
    /// to the host, and the list's Dats never move at all.
    pub fn message_builds_and_sorts_keep_the_agents_on_the_device(rt: Runtime) {
        let n = 600;
        let agents = Set::dynamic("agents", n, n).unwrap();
        let start: Vec<f64> = (0..n)
            .flat_map(|i| [((i * 37) % 100) as f64 * 0.1, ((i * 53) % 97) as f64 * 0.1])
            .collect();
        let pos = Dat::from_vec("pos", &agents, 2, start).unwrap();
        let found = Dat::<i32>::zeros("found", &agents, 1).unwrap();
        // Each agent's id, to follow the agents through the sorts.
        let tag = Dat::from_vec("tag", &agents, 1, (0..n as i64).collect()).unwrap();
        let grid = SpatialGrid::new_2d("g", [0.0; 2], [10.0; 2], 1.0, Boundary::Clamp).unwrap();
        let list = MessageList::spatial("loc", grid, &pos).unwrap();
        let m_pos = list.carry(&pos).unwrap();
        let dx = Global::new("dx", vec![0.125]).unwrap();
        for step in 0..3 {
            par_loop!(rt, drift, agents, pos(RW), dx(READ)).unwrap();
            assert_eq!(list.build_on(&rt).unwrap(), n);
            par_loop!(
                rt,
                count_near,
                agents,
                pos(READ),
                found(WRITE),
                m_pos(READ, list[..]),
                list(NEAR)
            )
            .unwrap();
            if step > 0 {
                list.sort_senders_on(&rt).unwrap();
            }
        }
        let moved = pos.transfer_stats();
        assert_eq!((moved.uploads, moved.downloads), (1, 0), "positions: {moved:?}");
        // The sorts stayed on the device, ids included: the first took up
        // the ids and `tag` (in no loop before), its two waits; the second
        // waited for nothing.
        let sort = rt
            .timings()
            .into_iter()
            .find(|r| r.name == "sort loc")
            .expect("a sort row");
        assert_eq!(sort.calls, 2);
        assert_eq!(sort.device.host_waits, 2, "{sort:?}");
        assert!(sort.device.launches >= 2 * 3, "{sort:?}");
        let tagged = tag.transfer_stats();
        assert_eq!((tagged.uploads, tagged.downloads), (1, 0), "tag: {tagged:?}");
        let ids: Vec<i64> = agents.global_ids().iter().map(|&i| i as i64).collect();
        assert_eq!(ids, tag.to_vec(), "the ids moved with their agents");
        assert!(ids.windows(2).any(|w| w[0] > w[1]), "the sorts mixed the agents");
        // The builds ran on the device: their launches and waits are in
        // their timing row (what a build still waits for is what to remove).
        let build = rt
            .timings()
            .into_iter()
            .find(|r| r.name == "build loc")
            .expect("a build row");
        assert_eq!(build.calls, 3);
        assert!(build.device.launches >= 3 * 5, "{build:?}");
        // One count read each, and the grid's parameters going up once: the
        // sorted ids reach the builds from device to device.
        assert_eq!(build.device.host_waits, 3 + 1, "{build:?}");
        assert_eq!(
            m_pos.transfer_stats(),
            TransferStats::default(),
            "the messages never moved"
        );
        // The counts are those of brute force on the final positions.
        let (p, f) = (pos.to_vec(), found.to_vec());
        for e in 0..n {
            let near = (0..n)
                .filter(|&j| {
                    let (dx, dy) = (p[2 * j] - p[2 * e], p[2 * j + 1] - p[2 * e + 1]);
                    dx * dx + dy * dy < 1.0
                })
                .count();
            assert_eq!(f[e] as usize, near, "agent {e}");
        }
    }

    /// A population after some steps: each Dat's values, the ids, the
    /// lifecycle's ids Dat, and the transfers of `w` and `tag` before the
    /// host read them.
    type Population = (Vec<f64>, Vec<i32>, Vec<u64>, Vec<i64>, [TransferStats; 2]);

    /// The population after `steps` steps of `split_or_die` on `rt`.
    fn split_population(rt: &Runtime, steps: usize) -> Population {
        // A capacity below the population's growth: device buffers grow.
        let agents = Set::dynamic("agents", 40, 40).unwrap();
        let w = Dat::from_vec("w", &agents, 1, (0..40).map(f64::from).collect()).unwrap();
        // In no loop: it follows its agents all the same.
        let tag = Dat::from_vec("tag", &agents, 2, (0..80).collect()).unwrap();
        let life = Lifecycle::new(&agents).unwrap();
        let child_w = life.offspring(&w).unwrap();
        let ids = life.ids().clone();
        for _ in 0..steps {
            par_loop!(rt, split_or_die, agents, w(RW), child_w(WRITE), ids(READ), life(FATE)).unwrap();
        }
        let stats = [w.transfer_stats(), tag.transfer_stats()];
        (
            w.to_vec(),
            tag.to_vec(),
            agents.global_ids().into_owned(),
            ids.to_vec(),
            stats,
        )
    }

    /// Births and deaths compact the agents in device memory: nothing comes
    /// back to the host until it reads, and the result is `seq`'s.
    pub fn births_and_deaths_keep_the_agents_on_the_device(rt: Runtime) {
        let seq = Runtime::new(Backend::Seq).unwrap();
        let (w, tag, ids, id_dat, [w_moved, tag_moved]) = split_population(&rt, 5);
        let (w_seq, tag_seq, ids_seq, id_dat_seq, _) = split_population(&seq, 5);
        assert_eq!(w_moved.downloads, 0, "w: {w_moved:?}");
        assert_eq!((tag_moved.uploads, tag_moved.downloads), (1, 0), "tag: {tag_moved:?}");
        assert!(ids.len() > 40, "the population grew past its capacity: {}", ids.len());
        assert_eq!(ids, ids_seq);
        assert_eq!(id_dat, id_dat_seq);
        assert_eq!(id_dat, ids.iter().map(|&i| i as i64).collect::<Vec<_>>());
        assert_eq!(w, w_seq);
        assert_eq!(tag, tag_seq);
    }

    pub fn a_dat_only_read_in_ten_loops_is_uploaded_once(rt: Runtime) {
        let s = Set::new("s", 100).unwrap();
        let x = Dat::from_vec("x", &s, 1, (0..100).map(f64::from).collect()).unwrap();
        let y = Dat::<f64>::zeros("y", &s, 1).unwrap();
        for _ in 0..10 {
            par_loop!(rt, axpy, s, y(INC), x(READ)).unwrap();
        }
        assert_eq!(ups(x.transfer_stats()), 1);
        assert_eq!(x.transfer_stats().downloads, 0);
        assert_eq!(y.data_ro()[7], 10.0 * 2.0 * 7.0);
    }

    pub fn a_write_only_argument_is_not_uploaded(rt: Runtime) {
        let s = Set::new("s", 50).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let out = Dat::<f64>::filled("out", &s, 1, -5.0).unwrap();
        par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
        assert_eq!(ups(out.transfer_stats()), 0);
        assert_eq!(out.data_ro()[49], 2.0);
    }

    pub fn host_reads_after_a_device_write_download_once(rt: Runtime) {
        let s = Set::new("s", 50).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let out = Dat::<f64>::zeros("out", &s, 1).unwrap();
        par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
        assert_eq!(
            out.transfer_stats().downloads,
            0,
            "nothing downloaded before the host asks"
        );
        assert_eq!(out.data_ro()[0], 2.0);
        assert_eq!(out.data_ro()[1], 2.0);
        assert_eq!(out.transfer_stats().downloads, 1, "two reads, one download");
        assert_eq!(out.transfer_stats().bytes_down, 50 * 8);
    }

    pub fn a_host_write_makes_the_next_loop_upload_again(rt: Runtime) {
        let s = Set::new("s", 20).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let out = Dat::<f64>::zeros("out", &s, 1).unwrap();
        par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
        x.data_mut()[3] = 10.0;
        par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
        assert_eq!(ups(x.transfer_stats()), 2);
        assert_eq!(out.data_ro()[3], 11.0, "the loop saw the host's change");
    }

    /// A pair Dat asked to lie in columns; asking for rows (or a ragged
    /// use) moves it through the host once, with the device's newer values,
    /// and the host always sees rows.
    pub fn dats_change_device_layout_through_the_host_only_when_needed(rt: Runtime) {
        let s = Set::new("s", 5).unwrap();
        let p = Dat::from_vec("p", &s, 2, (0..10).map(f64::from).collect()).unwrap();
        let k = Global::new("k", vec![2.0]).unwrap();
        let expect = |scale: f64, add: f64| -> Vec<f64> {
            (0..10)
                .map(|i| {
                    if i % 2 == 0 {
                        f64::from(i) * scale
                    } else {
                        f64::from(i) + add
                    }
                })
                .collect()
        };
        p.set_device_layout(DeviceLayout::StructOfArrays);
        par_loop!(rt, scale_pair, s, p(RW), k(READ)).unwrap();
        par_loop!(rt, scale_pair, s, p(RW), k(READ)).unwrap();
        let before = p.transfer_stats();
        assert_eq!((before.uploads, before.downloads), (1, 0));
        // Asked for rows while the device holds the newer values: one
        // download (from columns) and one upload (in rows).
        p.set_device_layout(DeviceLayout::ArrayOfStructs);
        assert_eq!(p.device_layout(), DeviceLayout::ArrayOfStructs);
        par_loop!(rt, scale_pair, s, p(RW), k(READ)).unwrap();
        par_loop!(rt, scale_pair, s, p(RW), k(READ)).unwrap();
        let after = p.transfer_stats();
        assert_eq!((after.uploads, after.downloads), (2, 1));
        assert_eq!(p.to_vec(), expect(16.0, 8.0));
        // Columns again, once.
        p.set_device_layout(DeviceLayout::StructOfArrays);
        par_loop!(rt, scale_pair, s, p(RW), k(READ)).unwrap();
        assert_eq!(p.to_vec(), expect(32.0, 10.0));
        assert_eq!(ups(p.transfer_stats()), 3);
        // A ragged use needs rows, and the runtime's choice keeps them after.
        p.set_device_layout(DeviceLayout::Auto);
        let r = RaggedMap::new("r", &s, &s, vec![0, 2, 2, 3, 5, 5], vec![1, 4, 0, 2, 3]).unwrap();
        let out = Dat::<f64>::zeros("out", &s, 1).unwrap();
        par_loop!(rt, neighbour_pairs, s, out(INC), p(READ, r[..])).unwrap();
        par_loop!(rt, scale_pair, s, p(RW), k(READ)).unwrap();
        let pairs = expect(32.0, 10.0);
        let diff = |j: usize| pairs[2 * j] - pairs[2 * j + 1];
        assert_eq!(
            out.to_vec(),
            vec![diff(1) + diff(4), 0.0, diff(0), diff(2) + diff(3), 0.0]
        );
        assert_eq!(p.to_vec(), expect(64.0, 12.0));
        // One upload in rows for the ragged loop (the host's copy was
        // current: no download first), none after; a download per `to_vec`.
        let last = p.transfer_stats();
        assert_eq!((last.uploads, last.downloads), (4, 4), "{last:?}");
    }

    /// `Increments::Auto`: a loop with increments through a map runs both
    /// ways and in blocks of several sizes at its first calls, right each
    /// time, then keeps one and says which in the timing summary.
    pub fn automatic_increments_measure_both_and_keep_one(rt: Runtime) {
        // A cache of this call's own: no earlier run's record.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cache = std::env::temp_dir().join(format!("op2-tuning-test-{}-{call}", std::process::id()));
        let _ = std::fs::remove_dir_all(&cache);
        let options = || {
            // Unchecked: the host waits only where trials time calls.
            RuntimeOptions::default()
                .increments(op2::Increments::Auto)
                .cache_dir(&cache)
                .checked(false)
                .sync_loops(false)
        };
        let auto = Runtime::with_options(rt.backend(), options()).unwrap();
        let nodes = Set::new("nodes", 60).unwrap();
        let edges = Set::new("edges", 59).unwrap();
        let ends: Vec<i32> = (0..59).flat_map(|e| [e, e + 1]).collect();
        let e2n = Map::new("e2n", &edges, &nodes, 2, ends).unwrap();
        let w = Dat::<f64>::filled("w", &edges, 1, 1.0).unwrap();
        let n = Dat::<f64>::zeros("n", &nodes, 1).unwrap();
        // Two forms and three block sizes: six warm-up calls, twelve timed.
        for call in 1..=20 {
            par_loop!(auto, add_to_ends, edges, n(INC, e2n), w(READ)).unwrap();
            let got = n.to_vec();
            let c = f64::from(call);
            assert_eq!((got[0], got[1], got[59]), (c, 2.0 * c, c), "call {call}");
        }
        let notes = auto.timing_summary().fallbacks;
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("loop `add_to_ends`: ")
                && notes[0].contains(" threads a block (")
                && notes[0].contains("measured"),
            "{}",
            notes[0]
        );
        assert!(!auto.is_deterministic(), "atomics may win");
        let measured = auto
            .timings()
            .into_iter()
            .find(|r| r.name == "add_to_ends")
            .expect("a row");
        assert!(measured.device.host_waits >= 2 * 12, "timed calls wait: {measured:?}");

        // A later run on the same device finds the choice: no trial.
        let later = Runtime::with_options(rt.backend(), options()).unwrap();
        n.data_mut().fill(0.0);
        for _ in 0..20 {
            par_loop!(later, add_to_ends, edges, n(INC, e2n), w(READ)).unwrap();
        }
        assert_eq!(n.to_vec()[1], 2.0 * 20.0);
        let notes = later.timing_summary().fallbacks;
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("loop `add_to_ends`: ") && notes[0].contains("as an earlier run measured"),
            "{}",
            notes[0]
        );
        let row = later
            .timings()
            .into_iter()
            .find(|r| r.name == "add_to_ends")
            .expect("a row");
        // Only the first call's uploads to this runtime's device (the map,
        // `w`, `n`, and a plan if colouring won): a trial's twelve timed
        // calls would wait twice each.
        assert!(row.device.host_waits < 2 * 12, "no timed call: {row:?}");
        let _ = std::fs::remove_dir_all(&cache);
    }

    /// Halo records pass through page-locked host memory the device's API
    /// allocates: it round-trips through device memory unchanged.
    pub fn pinned_memory_round_trips_through_the_device(rt: Runtime) {
        use op2::Workers;
        let work = rt.device_work().expect("a device backend lends its device");
        let mut out = work
            .pinned_memory(1000)
            .unwrap()
            .expect("pinned memory on a device backend");
        assert!(out.pinned());
        assert!(out.bytes().len() >= 1000);
        let pattern: Vec<u8> = (0..1000).map(|i| (i * 7 % 251) as u8).collect();
        out.bytes_mut()[..1000].copy_from_slice(&pattern);
        let on_device = work.new_buffer("pinned test", 1000).unwrap();
        on_device.upload(&out.bytes()[..1000]).unwrap();
        let mut back = work.pinned_memory(1000).unwrap().expect("pinned memory");
        on_device.download(&mut back.bytes_mut()[..1000]).unwrap();
        assert_eq!(&back.bytes()[..1000], &pattern[..]);
    }

    pub fn maps_are_uploaded_once(rt: Runtime) {
        let nodes = Set::new("nodes", 4).unwrap();
        let edges = Set::new("edges", 3).unwrap();
        let e2n = Map::new("e2n", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3]).unwrap();
        let x = Dat::from_vec("x", &nodes, 1, vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let out = Dat::<f64>::zeros("out", &edges, 1).unwrap();
        for _ in 0..5 {
            par_loop!(rt, gather_sum, edges, out(WRITE), x(READ, e2n)).unwrap();
        }
        assert_eq!(e2n.device().stats().uploads, 1);
        assert_eq!(out.to_vec(), vec![3.0, 5.0, 7.0]);
    }

    pub fn a_native_loop_after_a_device_loop_sees_the_device_data(cl: Runtime) {
        let seq = Runtime::new(Backend::Seq).unwrap();
        let s = Set::new("s", 10).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let y = Dat::<f64>::zeros("y", &s, 1).unwrap();
        par_loop!(cl, axpy, s, y(INC), x(READ)).unwrap(); // y = 2 on the device
        par_loop!(seq, axpy, s, y(INC), x(READ)).unwrap(); // downloads y first: 4
        par_loop!(cl, axpy, s, y(INC), x(READ)).unwrap(); // uploads y again: 6
        assert_eq!(y.to_vec(), vec![6.0; 10]);
    }

    pub fn airfoil_steps_download_nothing_until_the_host_reads(rt: Runtime) {
        let a = AirfoilDsl::new(&generate(8, 6), &Constants::default()).unwrap();
        let seq = Runtime::new(Backend::Seq).unwrap();
        let reference = AirfoilDsl::new(&generate(8, 6), &Constants::default()).unwrap();
        a.iteration(&rt).unwrap();
        let dats = [&a.x, &a.q, &a.qold, &a.adt, &a.res];
        let before: Vec<TransferStats> = dats.iter().map(|d| d.transfer_stats()).collect();
        let consts_before: Vec<TransferStats> = [&a.gam, &a.gm1, &a.cfl, &a.eps, &a.qinf]
            .iter()
            .map(|g| g.transfer_stats())
            .collect();
        let rms_before = a.rms.transfer_stats();
        for _ in 0..3 {
            a.step(&rt).unwrap();
        }
        let after: Vec<TransferStats> = dats.iter().map(|d| d.transfer_stats()).collect();
        let consts_after: Vec<TransferStats> = [&a.gam, &a.gm1, &a.cfl, &a.eps, &a.qinf]
            .iter()
            .map(|g| g.transfer_stats())
            .collect();
        assert_eq!(before, after, "no Dat moves after the first iteration");
        assert_eq!(consts_before, consts_after, "constants stay on the device");
        // The reduction finishes on the device, its reset is a fill there,
        // and nothing moves until the host reads the value.
        let rms_steps = a.rms.transfer_stats();
        assert_eq!(rms_steps, rms_before, "the rms moves nothing while the steps run");
        let rms = a.rms();
        assert_eq!(a.rms.transfer_stats().downloads, rms_before.downloads + 1);
        for _ in 0..4 {
            reference.iteration(&seq).unwrap();
        }
        let want = reference.rms();
        assert!(
            ((rms - want) / want).abs() < 1e-12,
            "rms on the device {rms:e}, on seq {want:e}"
        );
        // Every Dat of the mesh was uploaded at most once, and bound once.
        assert!(after.iter().all(|s| s.uploads <= 1), "{after:?}");
    }

    #[op2::kernel]
    fn sum_and_max(x: &f64, total: &mut f64, top: &mut f64) {
        *total += *x;
        if *x > *top {
            *top = *x;
        }
    }

    /// Launches and host waits per call, in the timing rows and summary: a
    /// reduction adds one launch per Global (its fold on the device). Each
    /// loop's first call waits for its two uploads (x and y; total and
    /// top); after that unchecked loops wait for nothing unless
    /// `sync_loops` asks (one finish), and checked ones three times (the
    /// report's upload, the finish, the report's download). Reading the
    /// Globals downloads them once, outside the loops, with the right
    /// values either way.
    pub fn launches_and_host_waits_are_counted_per_loop(rt: Runtime) {
        for (checked, sync, waits) in [(false, false, 0), (false, true, 1), (true, false, 3)] {
            let options = RuntimeOptions::default().checked(checked).sync_loops(sync);
            let rt = Runtime::with_options(rt.backend(), options).unwrap();
            let s = Set::new("s", 1000).unwrap();
            let x = Dat::from_vec("x", &s, 1, (0..1000).map(f64::from).collect()).unwrap();
            let y = Dat::<f64>::zeros("y", &s, 1).unwrap();
            let total = Global::scalar("total", 0.0);
            let top = Global::scalar("top", -1.0);
            for _ in 0..3 {
                par_loop!(rt, axpy, s, y(INC), x(READ)).unwrap();
                par_loop!(rt, sum_and_max, s, x(READ), total(INC), top(MAX)).unwrap();
            }
            let row = |name: &str| rt.timings().into_iter().find(|r| r.name == name).expect("a row");
            let (plain, reducing) = (row("axpy"), row("sum_and_max"));
            let case = format!("checked {checked}, sync_loops {sync}");
            let counts = |r: &op2::LoopTiming| (r.calls, r.device.launches, r.device.host_waits);
            assert_eq!(counts(&plain), (3, 3, 2 + 3 * waits), "{case}");
            assert_eq!(counts(&reducing), (3, 9, 2 + 3 * waits), "{case}");
            assert_eq!(total.transfer_stats().downloads, 0, "nothing read yet ({case})");
            assert_eq!((total.value(), top.value()), (3.0 * 499_500.0, 999.0), "{case}");
            assert_eq!(total.transfer_stats().downloads, 1, "{case}");
            let want: Vec<f64> = (0..1000).map(|i| 6.0 * i as f64).collect();
            assert_eq!(y.to_vec(), want, "{case}");
            let text = rt.timing_summary().to_string();
            assert!(
                text.contains("launches/call") && text.contains("host waits/call"),
                "{text}"
            );
            assert_eq!(text.contains("return once launched"), waits == 0, "{text}");
        }
    }

    /// A reset between reductions fills the Global's device copy (or, where
    /// the backend cannot fill with that value, uploads it): the next loop
    /// starts from the new value, and nothing is downloaded between the
    /// reset and the loop.
    pub fn a_global_filled_between_reductions_is_filled_on_the_device(rt: Runtime) {
        let s = Set::new("s", 100).unwrap();
        let x = Dat::from_vec("x", &s, 1, (0..100).map(f64::from).collect()).unwrap();
        let total = Global::scalar("total", 0.0);
        let top = Global::scalar("top", 0.0);
        for (k, reset) in [0.0, 1.5, -2.25, 500.0, 0.0].into_iter().enumerate() {
            total.fill(reset);
            top.fill(reset);
            par_loop!(rt, sum_and_max, s, x(READ), total(INC), top(MAX)).unwrap();
            let downloads = k as u64;
            assert_eq!(total.transfer_stats().downloads, downloads, "reset {reset}");
            assert_eq!(total.value(), reset + 4950.0, "reset {reset}");
            assert_eq!(top.value(), reset.max(99.0), "reset {reset}");
            assert_eq!(total.transfer_stats().downloads, downloads + 1, "reset {reset}");
        }
        total.fill(0.5);
        assert_eq!(total.value(), 0.5, "the host holds the value filled");
    }

    #[op2::kernel]
    fn spread(x: &[f32; 3], lo: &mut [f32; 3], hi: &mut [f32; 3], sums: &mut [i32; 3]) {
        for c in 0..3 {
            lo[c] = lo[c].min(x[c]);
            hi[c] = hi[c].max(x[c]);
            sums[c] += x[c] as i32;
        }
    }

    /// Folds of many blocks (more than one fold thread each), 4-byte
    /// types, dim 3 and three Globals in one loop give exactly `seq`'s
    /// results, twice in a row (the second starting from the first's).
    pub fn folds_of_many_blocks_match_seq(rt: Runtime) {
        let options = RuntimeOptions::default().block_size(7).checked(false);
        let rt = Runtime::with_options(rt.backend(), options).unwrap();
        let seq = Runtime::new(Backend::Seq).unwrap();
        let n = 5003;
        let s = Set::new("s", n).unwrap();
        let values = (0..n * 3).map(|i| ((i * 7919) % 2003) as f32 - 1000.0).collect();
        let x = Dat::from_vec("x", &s, 3, values).unwrap();
        let run = |rt: &Runtime| {
            let lo = Global::new("lo", vec![0.0f32; 3]).unwrap();
            let hi = Global::new("hi", vec![0.0f32; 3]).unwrap();
            let sums = Global::new("sums", vec![7i32, 0, -7]).unwrap();
            for _ in 0..2 {
                par_loop!(rt, spread, s, x(READ), lo(MIN), hi(MAX), sums(INC)).unwrap();
            }
            let values = (lo.data_ro().to_vec(), hi.data_ro().to_vec(), sums.data_ro().to_vec());
            values
        };
        assert_eq!(run(&rt), run(&seq));
    }

    pub fn the_timing_summary_shows_transfers(rt: Runtime) {
        let s = Set::new("s", 10).unwrap();
        let x = Dat::<f64>::filled("xvalues", &s, 1, 1.0).unwrap();
        let y = Dat::<f64>::zeros("yvalues", &s, 1).unwrap();
        par_loop!(rt, axpy, s, y(INC), x(READ)).unwrap();
        let _ = y.data_ro();
        let summary = rt.timing_summary();
        let y_row = summary
            .transfers
            .iter()
            .find(|(n, _)| n == "yvalues")
            .expect("y listed");
        assert_eq!((y_row.1.uploads, y_row.1.downloads), (1, 1));
        let text = summary.to_string();
        assert!(text.contains("transfers") && text.contains("xvalues"), "{text}");
    }
}

/// Whether to skip: the backend cannot start here (printed), unless the
/// run demands a GPU.
#[allow(dead_code)]
fn missing(made: &op2::Result<op2::Runtime>, optional: bool) -> bool {
    match made {
        Ok(_) => false,
        Err(e) => {
            assert!(
                optional && std::env::var_os("OP2_REQUIRE_GPU").is_none(),
                "backend unavailable: {e}"
            );
            eprintln!("skipped: {e}");
            true
        }
    }
}

macro_rules! device_cases {
    ($module:ident, $backend:expr, $increments:expr, $optional:expr) => {
        mod $module {
            use op2::{Backend, Increments, Runtime, RuntimeOptions};

            fn rt() -> Option<Runtime> {
                let made = Runtime::with_options($backend, RuntimeOptions::default().increments($increments));
                (!super::missing(&made, $optional)).then(|| made.unwrap())
            }

            device_cases!(@tests
                a_dat_only_read_in_ten_loops_is_uploaded_once,
                a_write_only_argument_is_not_uploaded,
                host_reads_after_a_device_write_download_once,
                a_host_write_makes_the_next_loop_upload_again,
                maps_are_uploaded_once,
                automatic_increments_measure_both_and_keep_one,
                dats_change_device_layout_through_the_host_only_when_needed,
                a_native_loop_after_a_device_loop_sees_the_device_data,
                airfoil_steps_download_nothing_until_the_host_reads,
                the_timing_summary_shows_transfers,
                launches_and_host_waits_are_counted_per_loop,
                a_global_filled_between_reductions_is_filled_on_the_device,
                folds_of_many_blocks_match_seq,
                message_builds_and_sorts_keep_the_agents_on_the_device,
                pinned_memory_round_trips_through_the_device,
                halos_are_packed_and_unpacked_on_the_device_without_mpi,
                births_and_deaths_keep_the_agents_on_the_device,
                states_and_conditions_stay_on_the_device,
                births_of_another_type_stay_on_the_device
            );
        }
    };
    (@tests $($test:ident),*) => {
        $(
            #[test]
            fn $test() {
                if let Some(rt) = rt() {
                    super::cases::$test(rt);
                }
            }
        )*
    };
}

#[cfg(feature = "opencl")]
device_cases!(opencl_colouring, Backend::OpenCl, Increments::Colouring, false);
#[cfg(feature = "opencl")]
device_cases!(opencl_atomics, Backend::OpenCl, Increments::Atomics, false);
#[cfg(feature = "cuda")]
device_cases!(cuda_colouring, Backend::Cuda, Increments::Colouring, true);
#[cfg(feature = "cuda")]
device_cases!(cuda_atomics, Backend::Cuda, Increments::Atomics, true);
