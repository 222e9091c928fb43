//! Moving agents across ranks (the `mpi` test's agent section): Circles
//! in a periodic box with every agent drifting along x, so that agents
//! cross every boundary between ranks and wrap around the box; each rank's
//! agents match, bit for bit, the same run on one process.

use op2::mpi::{AgentDomain, DomainOptions, DomainStats, Mpi};
use op2::prelude::*;
use op2::TransferStats;

/// Circles' repulsion with distances measured the periodic way, then a
/// drift along x; the position wraps into the box.
#[op2::kernel]
#[allow(clippy::approx_constant)] // 3.141 is the model's constant
pub fn drift_apart(me: &u32, p: &mut [f32; 3], ids: &[u32], ps: &[[f32; 3]], msgs: &Spatial3d, params: &[f32; 4]) {
    let r = params[0];
    let repulse = params[1];
    let drift = params[2];
    let side = params[3];
    let mut f = [0.0f32; 3];
    let mut n = 0;
    for j in msgs.near(p[0], p[1], p[2]) {
        if ids[j] != *me {
            let mut d = [0.0f32; 3];
            for c in 0..3 {
                d[c] = ps[j][c] - p[c];
                if d[c] > 0.5 * side {
                    d[c] -= side;
                } else if d[c] < -0.5 * side {
                    d[c] += side;
                }
            }
            let s = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if s > 0.0 && s < r {
                let k = ((s / r) * 3.141f32 * -2.0f32).sin() * repulse;
                for c in 0..3 {
                    f[c] += k * d[c] / s;
                }
                n += 1;
            }
        }
    }
    for c in 0..3 {
        if n > 0 {
            p[c] += f[c] / (n as f32);
        }
        if c == 0 {
            p[c] += drift;
        }
        if p[c] >= side {
            p[c] -= side;
        }
        if p[c] < 0.0 {
            p[c] += side;
        }
    }
}

const SIDE: f32 = 10.0;

/// Agents with the ids `ids` in a periodic box, their spatial list (bins
/// of width 1) and the model's constants.
struct Drifting {
    agents: Set,
    id: Dat<u32>,
    pos: Dat<f32>,
    list: MessageList,
    m_id: Dat<u32>,
    m_pos: Dat<f32>,
    /// Whether each agent sends this step (some steps build from those
    /// that send alone).
    sent: Dat<i32>,
    params: Global<f32>,
    /// Agents the loop ran over while the ghosts travelled.
    interior: std::cell::Cell<u64>,
}

impl Drifting {
    fn new(ids: &[u64], start: impl Fn(u64) -> [f32; 3]) -> Drifting {
        let agents = Set::dynamic_with_ids("agents", ids.to_vec(), ids.len()).unwrap();
        let id = Dat::from_vec("id", &agents, 1, ids.iter().map(|&i| i as u32).collect()).unwrap();
        let pos = Dat::from_vec("pos", &agents, 3, ids.iter().flat_map(|&i| start(i)).collect()).unwrap();
        let side = SIDE as f64;
        let grid = SpatialGrid::new_3d("near", [0.0; 3], [side; 3], 1.0, Boundary::Wrap).unwrap();
        let list = MessageList::spatial("near", grid, &pos).unwrap();
        let (m_id, m_pos) = (list.carry(&id).unwrap(), list.carry(&pos).unwrap());
        let params = Global::new("params", vec![1.0f32, 0.05, 0.35, SIDE]).unwrap();
        let sent = Dat::zeros("sent", &agents, 1).unwrap();
        Drifting {
            sent,
            agents,
            id,
            pos,
            list,
            m_id,
            m_pos,
            params,
            interior: std::cell::Cell::new(0),
        }
    }

    /// One step; in a domain, steps take turns to exchange then build, to
    /// build while the ghosts travel (`AgentDomain::build_on`), to run
    /// the loop over the agents that read no ghost while they travel
    /// (`AgentDomain::build_overlapped_on`), and to build from the agents
    /// that send alone (`AgentDomain::build_sent_on`, one in three does
    /// not): the same results every way.
    fn step(&self, rt: &Runtime, domain: Option<&mut AgentDomain>, step: u64) -> op2::Result<()> {
        let sending = step % 4 == 3;
        match domain {
            Some(d) if sending => {
                d.migrate_on(rt)?;
                self.flag_senders(step);
                d.build_sent_on(&self.list, &self.sent, rt)?;
            }
            None if sending => {
                self.flag_senders(step);
                self.list.build_sent_on(&self.sent, rt)?;
            }
            Some(d) if step % 4 == 2 => {
                d.migrate_on(rt)?;
                let mut first = true;
                d.build_overlapped_on(&self.list, &self.agents, rt, &mut |part| {
                    if std::mem::take(&mut first) {
                        self.interior.set(self.interior.get() + part.len() as u64);
                    }
                    self.drift(rt, part)
                })?;
                return Ok(());
            }
            Some(d) if step % 4 == 1 => {
                d.migrate_on(rt)?;
                d.build_on(&self.list, rt)?;
            }
            Some(d) => {
                d.exchange_on(rt)?;
                self.list.build_on(rt)?;
            }
            None => {
                self.list.build_on(rt)?;
            }
        }
        self.drift(rt, &self.agents)
    }

    /// Agents whose id plus `step` is a multiple of 3 send nothing.
    fn flag_senders(&self, step: u64) {
        let ids = self.agents.global_ids();
        let mut sent = self.sent.data_mut();
        for (f, &id) in sent.iter_mut().zip(ids.iter()) {
            *f = i32::from((id + step) % 3 != 0);
        }
    }

    /// The loop over the agents, or over a part of them.
    fn drift(&self, rt: &Runtime, over: &impl op2::IterationSpace) -> op2::Result<()> {
        let (list, m_id, m_pos, params) = (&self.list, &self.m_id, &self.m_pos, &self.params);
        par_loop!(
            rt,
            drift_apart,
            over,
            self.id(READ),
            self.pos(RW),
            m_id(READ, list[..]),
            m_pos(READ, list[..]),
            list(NEAR),
            params(READ)
        )
    }

    /// (id, position bits) of each agent here, by id.
    fn by_id(&self) -> Vec<(u64, [u32; 3])> {
        let ids = self.agents.global_ids();
        let p = self.pos.to_vec();
        let mut v: Vec<_> = (0..self.agents.size())
            .map(|i| (ids[i], [0, 1, 2].map(|c| p[3 * i + c].to_bits())))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }
}

fn uniform(id: u64) -> [f32; 3] {
    let mut s = Philox::new(5, id, 0);
    [0; 3].map(|_| ((s.uniform_f64() * SIDE as f64) as f32).min(SIDE * (1.0 - f32::EPSILON)))
}

/// Every agent within one bin's corner: the cuts cannot share them out.
fn clustered(id: u64) -> [f32; 3] {
    let mut s = Philox::new(6, id, 0);
    [0; 3].map(|_| 0.2 + 0.6 * s.uniform_f64() as f32)
}

/// On a device, between two snapshots (`moved`, `sent`) and `now` (a step
/// but the first, when the Dats first go up; with a new cut or without: a
/// cut counts the agents on the device): of the positions, only
/// packed ones came back to the host (agents that left, ghost messages
/// sent; those packed while the host copy was valid, after the test read
/// it, need none), and exactly the arrivals went up (all ranks together):
/// never the whole Dat. Returns the bytes brought back.
fn assert_moved_only_what_was_sent(
    mpi: &Mpi,
    model: &Drifting,
    moved: TransferStats,
    sent: DomainStats,
    now: DomainStats,
) -> u64 {
    if sent.exchanges == 0 {
        return 0;
    }
    let after = model.pos.transfer_stats();
    let bytes = 3 * 4;
    let packed = (now.agents_sent - sent.agents_sent) + (now.ghosts_sent - sent.ghosts_sent);
    let down = after.bytes_down - moved.bytes_down;
    assert!(
        down <= bytes * packed,
        "positions brought back: {down} bytes for {packed} packed"
    );
    let mut up = [
        after.bytes_up - moved.bytes_up,
        bytes * (now.agents_sent - sent.agents_sent),
    ];
    mpi.sum_u64(&mut up);
    assert_eq!(up[0], up[1], "positions sent up: the arrivals'");
    down
}

/// The agents of every rank together are `0..n`, each once.
fn assert_whole(mpi: &Mpi, model: &Drifting, n: u64, what: &str) {
    let ids = model.agents.global_ids();
    let mut sums = [ids.len() as u64, ids.iter().sum(), ids.iter().map(|i| i * i).sum()];
    mpi.sum_u64(&mut sums);
    let want = [n, n * (n - 1) / 2, (0..n).map(|i| i * i).sum()];
    assert_eq!(sums, want, "{what}: agents lost or repeated across ranks");
}

pub fn moving_agents_match_one_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank() as u64, mpi.size() as u64);
    let n = 1200u64;
    let mut backends = vec![Backend::Seq, Backend::Rayon, Backend::Jit];
    // A device: agents move, and ghosts go, from and to device memory.
    #[cfg(feature = "opencl")]
    backends.push(Backend::OpenCl);
    for backend in backends {
        let Ok(rt) = Runtime::new(backend) else { continue };
        let (mut steps_run, mut agents_sent, mut ghosts_sent, mut packed_on_device) = (0, 0, 0, 0);
        let mut recuts = 0;
        for (start, steps, cluster) in [(uniform as fn(u64) -> [f32; 3], 30, false), (clustered, 4, true)] {
            let one = Drifting::new(&(0..n).collect::<Vec<_>>(), start);
            // Each rank starts with every size-th agent, wherever it is:
            // the first exchange moves most of them (a burst past the
            // buffers' first size).
            let mine: Vec<u64> = (0..n).filter(|i| i % size == rank).collect();
            let spread = Drifting::new(&mine, start);
            // Cut again at the least imbalance: cuts after the first, on
            // every backend (a device counts the agents per bin there).
            let options = DomainOptions::default().rebalance_above(1.01);
            let mut domain = AgentDomain::new(mpi, &spread.list, options).unwrap();
            for step in 1..=steps {
                one.step(&rt, None, step).unwrap();
                let (moved, sent) = (spread.pos.transfer_stats(), domain.stats());
                spread.step(&rt, Some(&mut domain), step).unwrap();
                if backend == Backend::OpenCl {
                    packed_on_device += assert_moved_only_what_was_sent(mpi, &spread, moved, sent, domain.stats());
                }
                recuts += u64::from(sent.exchanges > 0 && domain.stats().rebalances > sent.rebalances);
                let want = one.by_id();
                for (id, bits) in spread.by_id() {
                    let at = want.binary_search_by_key(&id, |x| x.0).unwrap();
                    assert_eq!(bits, want[at].1, "{backend}: agent {id} at step {step}");
                }
                assert_whole(mpi, &spread, n, &format!("{backend} step {step}"));
            }
            let stats = domain.stats();
            (steps_run, agents_sent, ghosts_sent) = (
                steps_run + steps,
                agents_sent + stats.agents_sent,
                ghosts_sent + stats.ghosts_sent,
            );
            let mut sent = [stats.agents_sent, stats.ghosts_sent, stats.buffer_growths];
            mpi.sum_u64(&mut sent);
            if size > 1 {
                assert!(sent[0] >= n / 2, "{backend}: {} agents moved", sent[0]);
                assert!(sent[2] > 0, "{backend}: the buffers grew for the burst");
                if steps > 4 {
                    assert!(sent[1] > 0, "{backend}: ghost messages were sent");
                }
            } else {
                assert_eq!(sent, [0, 0, 0], "one rank sends nothing");
            }
            let mut interior = [spread.interior.get(), spread.agents.size() as u64];
            mpi.sum_u64(&mut interior);
            if !cluster {
                // Most agents read no ghost: the loop ran over them while
                // the ghosts travelled.
                assert!(
                    interior[0] > 0,
                    "{backend}: no agent read its own rank's messages alone"
                );
            }
            if cluster {
                // All in one bin: one rank holds them, the others none and
                // keep stepping.
                let mut held = [u64::from(spread.agents.size() > 0)];
                mpi.sum_u64(&mut held);
                assert_eq!(held, [1], "one rank holds the cluster");
            }
        }
        if backend == Backend::OpenCl && size > 1 {
            let mut packed = [packed_on_device];
            mpi.sum_u64(&mut packed);
            assert!(packed[0] > 0, "some positions were packed on the device");
        }
        if size > 1 {
            assert!(recuts > 0, "{backend}: the domain was cut again after the first step");
        }
        // The runtime's summary shows the domain's work: every exchange,
        // what this rank sent, every build (one rank's and the shared
        // model's), and the domain's balance.
        let summary = rt.timing_summary();
        let row = |name: &str| summary.exchanges.iter().find(|r| r.name == name).cloned();
        let migrated = row("migrate agents").expect("migrations timed");
        assert_eq!(
            (migrated.calls, migrated.records_sent),
            (steps_run, agents_sent),
            "{backend}"
        );
        let ghosts = row("ghosts near").expect("ghosts timed");
        assert_eq!(
            (ghosts.calls, ghosts.records_sent),
            (steps_run, ghosts_sent),
            "{backend}"
        );
        let builds = summary
            .loops
            .iter()
            .find(|r| r.name == "build near")
            .expect("builds timed");
        assert_eq!(builds.calls, 2 * steps_run, "{backend}");
        let text = summary.to_string();
        assert!(
            text.contains(&format!("agent domain of `agents` on {size} ranks")) && text.contains("imbalance"),
            "{backend}: {text}"
        );
    }

    // A rank that fails fails the exchange on every rank, and nothing
    // moved: it goes on afterwards. Its positions borrowed for writing stop
    // it binning; borrowed for reading, they let it pack the leavers but
    // not take in arrivals, which it finds out before anything is sent.
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mine: Vec<u64> = (0..n).filter(|i| i % size == rank).collect();
    let spread = Drifting::new(&mine, uniform);
    let mut domain = AgentDomain::new(mpi, &spread.list, DomainOptions::default()).unwrap();
    let failing = rank + 1 == size;
    for writing in [true, false] {
        let e = {
            let _write = (failing && writing).then(|| spread.pos.data_mut());
            let _read = (failing && !writing).then(|| spread.pos.data_ro());
            domain.exchange_on(&rt).unwrap_err()
        };
        if failing {
            assert!(matches!(e, op2::Error::HostBorrow { .. }), "{e}");
        } else {
            assert!(e.to_string().contains(&format!("rank {} failed", size - 1)), "{e}");
        }
        assert_eq!(spread.agents.size(), mine.len(), "nothing moved");
        assert_eq!(spread.list.ghost_count(), 0, "no ghosts of an earlier step");
        assert_whole(mpi, &spread, n, "after a failed exchange");
    }
    domain.exchange_on(&rt).unwrap();
    assert_whole(mpi, &spread, n, "after the failed exchanges");

    // A domain needs a spatial list of dynamic agents and a sane ratio.
    let brute = MessageList::brute_force("all", &spread.agents).unwrap();
    assert!(AgentDomain::new(mpi, &brute, DomainOptions::default()).is_err());
    let cells = SpatialGrid::discrete_2d("cells", [10, 10], Boundary::Wrap).unwrap();
    let at = Dat::<i32>::zeros("at", &spread.agents, 2).unwrap();
    let discrete = MessageList::spatial("cells", cells, &at).unwrap();
    let e = AgentDomain::new(mpi, &discrete, DomainOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("discrete"), "{e}");
    let e = AgentDomain::new(mpi, &spread.list, DomainOptions::default().rebalance_above(0.5))
        .err()
        .unwrap();
    assert!(e.to_string().contains("at least 1"), "{e}");
    // Refused or chosen differently on one rank: an error on every rank,
    // before any rank waits in the domain's first collective.
    if mpi.size() > 1 {
        let last = mpi.size() - 1;
        let ratio = if mpi.rank() == last { 0.5 } else { 2.0 };
        let e = AgentDomain::new(mpi, &spread.list, DomainOptions::default().rebalance_above(ratio))
            .err()
            .expect("one rank's ratio is refused");
        assert!(
            e.to_string().contains("at least 1") || e.to_string().contains(&format!("rank {last}")),
            "{e}"
        );
        let ratio = if mpi.rank() == last { 3.0 } else { 2.0 };
        let e = AgentDomain::new(mpi, &spread.list, DomainOptions::default().rebalance_above(ratio))
            .err()
            .expect("ratios differ");
        assert!(
            e.to_string().contains("agent domains (options and lists) differ"),
            "{e}"
        );
    }
    // The lists of one domain share their box; ghosts go only to a
    // domain's own lists, after a migration.
    let e = AgentDomain::of_lists(mpi, &[], DomainOptions::default()).err().unwrap();
    assert!(e.to_string().contains("at least one message list"), "{e}");
    let smaller = SpatialGrid::new_3d("smaller", [0.0; 3], [5.0; 3], 1.0, Boundary::Wrap).unwrap();
    let other = MessageList::spatial("smaller", smaller, &spread.pos).unwrap();
    let e = AgentDomain::of_lists(mpi, &[&spread.list, &other], DomainOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("another box"), "{e}");
    let elsewhere = Dat::<f32>::zeros("elsewhere", &spread.agents, 3).unwrap();
    let grid = *spread.list.grid().unwrap();
    let by_elsewhere = MessageList::spatial("by elsewhere", grid, &elsewhere).unwrap();
    let e = AgentDomain::of_lists(mpi, &[&spread.list, &by_elsewhere], DomainOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("different positions"), "{e}");
    let mut fresh = AgentDomain::new(mpi, &spread.list, DomainOptions::default()).unwrap();
    let e = fresh.send_ghosts_on(&spread.list, &rt).unwrap_err();
    assert!(e.to_string().contains("migrate the agents first"), "{e}");
    let e = fresh.build_on(&spread.list, &rt).unwrap_err();
    assert!(e.to_string().contains("migrate the agents first"), "{e}");
    fresh.migrate_on(&rt).unwrap();
    let e = fresh.send_ghosts_on(&other, &rt).unwrap_err();
    assert!(e.to_string().contains("not one of this domain's lists"), "{e}");
    let e = fresh.build_on(&other, &rt).unwrap_err();
    assert!(e.to_string().contains("not one of this domain's lists"), "{e}");
    fresh.send_ghosts_on(&spread.list, &rt).unwrap();
    // A build that exchanges, with the positions borrowed on the last
    // rank: it cannot bin, and every rank stops the exchange.
    let e = {
        let _write = (rank + 1 == size).then(|| spread.pos.data_mut());
        fresh.build_on(&spread.list, &rt).unwrap_err()
    };
    let failed = format!("rank {} failed while packing ghost messages", size - 1);
    assert!(
        matches!(e, op2::Error::HostBorrow { .. }) || e.to_string().contains(&failed),
        "{e}"
    );
    fresh.build_on(&spread.list, &rt).unwrap();
    // Sent flags that are not one per sender, on the last rank alone: its
    // build refuses them, and every rank stops the exchange.
    let wide = Dat::<i32>::zeros("wide", &spread.agents, 2).unwrap();
    let flags = if rank + 1 == size { &wide } else { &spread.sent };
    let e = fresh.build_sent_on(&spread.list, flags, &rt).unwrap_err();
    match rank + 1 == size {
        true => assert!(e.to_string().contains("dim-1 Dat of the senders"), "{e}"),
        false => assert!(e.to_string().contains(&failed), "{e}"),
    }
    fresh.build_sent_on(&spread.list, &spread.sent, &rt).unwrap();
    assert_whole(mpi, &spread, n, "after a second domain's migration");
}

/// Agents in a line of 30 bins (clamped): on 3 or more ranks the cut
/// gives slabs, and the first and last are not neighbours. Headers go to
/// neighbours alone unless an agent jumps past them, which every rank
/// learns: the jumpers arrive, and nothing is lost either way.
pub fn agents_that_jump_past_the_neighbours_arrive(mpi: &Mpi) {
    let (rank, size) = (mpi.rank() as u64, mpi.size() as u64);
    let n = 300u64;
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mine: Vec<u64> = (0..n).filter(|i| i % size == rank).collect();
    let agents = Set::dynamic_with_ids("line", mine.clone(), mine.len()).unwrap();
    // Agent i at x = i / 10 + 0.05: ten per bin, the bins evenly held.
    let x = |i: u64| (i as f32) / 10.0 + 0.05;
    let pos = Dat::from_vec("pos", &agents, 2, mine.iter().flat_map(|&i| [x(i), 0.5]).collect()).unwrap();
    let grid = SpatialGrid::new_2d("line", [0.0; 2], [30.0, 1.0], 1.0, Boundary::Clamp).unwrap();
    let list = MessageList::spatial("line", grid, &pos).unwrap();
    // No cut after the first: the jumpers keep their slabs' owners apart.
    let options = DomainOptions::default().rebalance_above(1e9);
    let mut domain = AgentDomain::new(mpi, &list, options).unwrap();
    let mut move_by = |dx: &dyn Fn(f32) -> f32, what: &str| {
        {
            let mut p = pos.data_mut();
            for c in p.chunks_exact_mut(2) {
                c[0] = dx(c[0]);
            }
        }
        domain.exchange_on(&rt).unwrap();
        let cut = domain.decomposition().unwrap();
        for (k, c) in pos.to_vec().chunks_exact(2).enumerate() {
            let b = grid.bin_of([f64::from(c[0]), f64::from(c[1]), 0.0]);
            assert_eq!(cut.owner(b) as u64, rank, "{what}: agent {k} at x = {}", c[0]);
        }
        let ids = agents.global_ids();
        let mut sums = [ids.len() as u64, ids.iter().sum()];
        mpi.sum_u64(&mut sums);
        assert_eq!(sums, [n, n * (n - 1) / 2], "{what}: agents lost or repeated");
        domain.stats().migrations_beyond_neighbours
    };
    // The first exchange sends agents from anywhere to anywhere.
    let first = move_by(&|x| x, "first");
    // A step within a bin's width: to neighbours at most.
    let step = move_by(&|x| (x + 0.3).min(29.99), "step");
    assert_eq!(step, first, "a step crossed only into neighbours");
    // Every agent in the first slab jumps to the last.
    let jump = move_by(&|x| if x < 5.0 { x + 25.0 } else { x }, "jump");
    let apart = domain.decomposition().unwrap().boxes().len() >= 3;
    assert_eq!(
        jump,
        step + u64::from(apart),
        "a jump past the neighbours on {size} ranks"
    );
    if size >= 3 {
        assert_eq!(first, 1, "the first exchange on {size} ranks");
    }
}

/// Agents whose id is a multiple of 3 have a child; `g` is read only so
/// that a rank can make the loop fail by holding it.
#[op2::kernel]
fn every_third_spawns(me: &i64, g: &[f64; 1], fate: &mut Fate) {
    if *me % 3 == 0 && g[0] >= 0.0 {
        fate.spawn();
    }
}

/// Children are numbered across ranks as on one rank (by their parents'
/// ids), and a rank whose birth loop fails makes every rank's fail
/// instead of leaving them waiting.
pub fn births_are_numbered_as_on_one_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank() as u64, mpi.size() as u64);
    let n = 300u64;
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mine: Vec<u64> = (0..n).filter(|i| i % size == rank).collect();
    let spread = Drifting::new(&mine, uniform);
    let life = Lifecycle::new(&spread.agents).unwrap();
    let mut domain = AgentDomain::new(mpi, &spread.list, DomainOptions::default()).unwrap();
    let g = Global::new("g", vec![1.0f64]).unwrap();
    domain.exchange_on(&rt).unwrap();
    let me = life.ids();
    par_loop!(rt, every_third_spawns, spread.agents, me(READ), g(READ), life(FATE)).unwrap();
    // A child copies its parent's `id`; on one rank the child of parent
    // 3k would be agent n + k.
    let ids = spread.agents.global_ids();
    let parent = spread.id.to_vec();
    let mut children = [0u64];
    for (i, &id) in ids.iter().enumerate().filter(|(_, &id)| id >= n) {
        assert_eq!(id, n + u64::from(parent[i]) / 3, "rank {rank}: child of {}", parent[i]);
        children[0] += 1;
    }
    mpi.sum_u64(&mut children);
    assert_eq!(children[0], n.div_ceil(3), "every third agent had one child");
    assert_eq!(spread.agents.next_id(), Some(n + n.div_ceil(3)), "every rank's next id");

    // The last rank fails: its loop cannot read `g`, or (the loop run) its
    // set cannot change with `pos` borrowed. The others' numbering learns
    // it and fails too; nobody is born anywhere, every rank forgets the
    // round's fates, and the ranks go on together.
    let failing = rank + 1 == size;
    let before = spread.agents.size();
    for in_the_loop in [true, false] {
        let e = {
            let _g = (failing && in_the_loop).then(|| g.data_mut());
            let _pos = (failing && !in_the_loop).then(|| spread.pos.data_ro());
            par_loop!(rt, every_third_spawns, spread.agents, me(READ), g(READ), life(FATE)).unwrap_err()
        };
        let why = if in_the_loop { "`g` is borrowed" } else { "`pos`" };
        if failing {
            assert!(e.to_string().contains(why), "{e}");
        } else {
            assert!(e.to_string().contains(&format!("rank {} failed", size - 1)), "{e}");
        }
        assert_eq!(spread.agents.size(), before, "rank {rank}: nobody was born");
        assert!(
            life.fates().to_vec().iter().all(|&f| f == 0),
            "rank {rank}: fates forgotten"
        );
    }
    domain.exchange_on(&rt).unwrap();
    par_loop!(rt, every_third_spawns, spread.agents, me(READ), g(READ), life(FATE)).unwrap();
    let mut counts = [spread.agents.size() as u64];
    mpi.sum_u64(&mut counts);
    // Ids 0..400 now: those divisible by 3 have a child each.
    let alive = n + n.div_ceil(3);
    assert_eq!(counts[0], alive + alive.div_ceil(3), "the next round is whole");
}

/// Predators and prey shared among the ranks: every prey and predator
/// (position, energy, id) matches the run on one process, step by step,
/// through births, deaths and migration.
pub fn predator_prey_matches_one_rank(mpi: &Mpi) {
    use op2_predator_prey::{Params, PredatorPrey};
    let size = mpi.size() as u64;
    let params = Params::default();
    let (prey, predators, seed, steps) = (900, 70, 11, 25);
    let mut backends = vec![Backend::Seq, Backend::Rayon, Backend::Jit];
    // Births and deaths on a device too, their children numbered across
    // ranks.
    #[cfg(feature = "opencl")]
    backends.push(Backend::OpenCl);
    for backend in backends {
        let Ok(rt) = Runtime::new(backend) else { continue };
        let mut one = PredatorPrey::new(params, prey, predators, seed).unwrap();
        let mut shared = PredatorPrey::shared(mpi, params, prey, predators, seed, DomainOptions::default()).unwrap();
        let mut born = [0u64; 2];
        for step in 1..=steps {
            let (p1, q1) = one.step(&rt).unwrap();
            // Every other step the prey that see no other rank's predator
            // choose while the predators' ghosts travel: readers that are
            // not the list's senders.
            shared.set_overlap(step % 2 == 0);
            shared.step(&rt).unwrap();
            // As many agents, each found in the one-rank run below, with ids
            // summing (and squares summing) as there: none on two ranks.
            let ids = |v: Vec<u64>| [v.len() as u64, v.iter().sum(), v.iter().map(|i| i * i).sum()];
            let mut here: Vec<u64> = ids(shared.prey_agents().iter().map(|a| a.0).collect()).to_vec();
            here.extend(ids(shared.predator_agents().iter().map(|a| a.0).collect()));
            mpi.sum_u64(&mut here);
            let mut want = ids(one.prey_agents().iter().map(|a| a.0).collect()).to_vec();
            want.extend(ids(one.predator_agents().iter().map(|a| a.0).collect()));
            assert_eq!(here, want, "{backend}: agents and their ids at step {step}");
            assert_eq!((here[0], here[3]), (p1 as u64, q1 as u64));
            let (cp, cq) = shared.last_census();
            born[0] += cp.births as u64;
            born[1] += cq.births as u64;
            let want = one.prey_agents();
            for (id, at) in shared.prey_agents() {
                let k = want.binary_search_by_key(&id, |a| a.0);
                assert_eq!(k.map(|k| want[k].1), Ok(at), "{backend}: prey {id} at step {step}");
            }
            let want = one.predator_agents();
            for (id, at, energy) in shared.predator_agents() {
                let k = want.binary_search_by_key(&id, |a| a.0);
                assert_eq!(
                    k.map(|k| (want[k].1, want[k].2)),
                    Ok((at, energy)),
                    "{backend}: predator {id} at step {step}"
                );
            }
        }
        mpi.sum_u64(&mut born);
        assert!(
            born[0] > 0 && born[1] > 0,
            "{backend}: prey and predators were born: {born:?}"
        );
        let stats = shared.domain().unwrap().stats();
        let mut sent = [stats.agents_sent, stats.ghosts_sent];
        mpi.sum_u64(&mut sent);
        if size > 1 {
            assert!(
                sent[0] > 0 && sent[1] > 0,
                "{backend}: agents and ghosts moved: {sent:?}"
            );
        }
        // The overlapped steps ran prey while ghosts travelled.
        let chose = rt.timing_summary();
        let chose = chose.loops.iter().find(|r| r.name == "choose_eater").map(|r| r.calls);
        assert!(
            chose > Some(2 * steps),
            "{backend}: the prey chose in two parts on the overlapped steps ({chose:?} loops)"
        );
    }
}
