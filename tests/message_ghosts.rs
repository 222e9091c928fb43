//! Ghost messages, in one process (what a distributed run does across
//! ranks): agents split into two sets, one reading the other's messages as
//! ghosts, compute bitwise what they compute as one set; the errors that
//! keep a list from mixing layouts or ids.

use op2::prelude::*;
use op2::{AgentPack, Error};

/// Each agent's sum over the messages near it of a weight times the
/// offset: a float sum whose bits depend on the order of the messages.
#[op2::kernel]
pub fn pull(me: &u32, p: &[f32; 3], f: &mut [f32; 3], ids: &[u32], ps: &[[f32; 3]], msgs: &Spatial3d) {
    let mut acc = [0.0f32; 3];
    for j in msgs.near(p[0], p[1], p[2]) {
        if ids[j] != *me {
            let d = [ps[j][0] - p[0], ps[j][1] - p[1], ps[j][2] - p[2]];
            let w = 1.0f32 / (1.0f32 + d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            for c in 0..3 {
                acc[c] += w * d[c];
            }
        }
    }
    *f = acc;
}

const SIDE: f64 = 8.0;

fn runtimes() -> Vec<Runtime> {
    let mut v = vec![Runtime::new(Backend::Seq).unwrap()];
    #[cfg(feature = "rayon")]
    v.push(Runtime::with_options(Backend::Rayon, op2::RuntimeOptions::default().threads(2)).unwrap());
    #[cfg(feature = "opencl")]
    v.push(Runtime::new(Backend::OpenCl).unwrap());
    v
}

fn position(id: u64) -> [f32; 3] {
    let mut s = Philox::new(11, id, 0);
    [0; 3].map(|_| (s.uniform_f64() * SIDE) as f32)
}

/// Agents with ids `ids` (in that order), their user ids and positions,
/// and a periodic spatial list carrying both.
struct Agents {
    set: Set,
    id: Dat<u32>,
    pos: Dat<f32>,
    force: Dat<f32>,
    list: MessageList,
    m_id: Dat<u32>,
    m_pos: Dat<f32>,
}

fn agents(name: &str, ids: &[u64]) -> Agents {
    let set = Set::dynamic_with_ids(name, ids.to_vec(), ids.len()).unwrap();
    let id = Dat::from_vec("id", &set, 1, ids.iter().map(|&i| i as u32).collect()).unwrap();
    let pos = Dat::from_vec("pos", &set, 3, ids.iter().flat_map(|&i| position(i)).collect()).unwrap();
    let force = Dat::<f32>::zeros("force", &set, 3).unwrap();
    let grid = SpatialGrid::new_3d("near", [0.0; 3], [SIDE; 3], 2.0, Boundary::Wrap).unwrap();
    let list = MessageList::spatial("near", grid, &pos).unwrap();
    let m_id = list.carry(&id).unwrap();
    let m_pos = list.carry(&pos).unwrap();
    Agents {
        set,
        id,
        pos,
        force,
        list,
        m_id,
        m_pos,
    }
}

impl Agents {
    fn pull(&self, rt: &Runtime) {
        let (list, m_id, m_pos) = (&self.list, &self.m_id, &self.m_pos);
        par_loop!(
            rt,
            pull,
            self.set,
            self.id(READ),
            self.pos(READ),
            self.force(WRITE),
            m_id(READ, list[..]),
            m_pos(READ, list[..]),
            list(NEAR)
        )
        .unwrap();
    }

    /// Each agent's force, by id.
    fn forces(&self) -> Vec<(u64, [u32; 3])> {
        let ids = self.set.global_ids();
        let f = self.force.to_vec();
        let mut v: Vec<_> = (0..self.set.size())
            .map(|i| (ids[i], [0, 1, 2].map(|c| f[3 * i + c].to_bits())))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }
}

/// 600 agents: ids 0..600 in one set, or split in two by a plane (ids
/// shuffled in memory) with each half reading the other's messages near
/// the plane as ghosts.
#[test]
fn agents_split_in_two_with_ghosts_compute_what_one_set_computes() {
    let n = 600u64;
    for rt in runtimes() {
        let whole = agents("whole", &(0..n).collect::<Vec<_>>());
        whole.list.build_on(&rt).unwrap();
        whole.pull(&rt);
        let want = whole.forces();
        assert!(
            want.iter().filter(|f| f.1 != [0; 3]).count() > 500,
            "most agents feel others"
        );

        // Ownership by bin column (x < 4 or not): whole bins on each side.
        let left_of = |id: &u64| position(*id)[0] < 4.0;
        let mut left: Vec<u64> = (0..n).filter(left_of).collect();
        let right: Vec<u64> = (0..n).filter(|i| !left_of(i)).collect();
        left.reverse();
        let (l, r) = (agents("left", &left), agents("right", &right));
        // Every message goes to the other side (a superset of the ring of
        // bins next to the plane, periodic: harmless, and simple).
        let mut to_right = AgentPack::new(&l.list.message_layout().unwrap());
        let mut to_left = AgentPack::new(&r.list.message_layout().unwrap());
        let all = |a: &Agents| (0..a.set.size() as u32).collect::<Vec<_>>();
        l.list.pack_messages(&all(&l), &mut to_right).unwrap();
        r.list.pack_messages(&all(&r), &mut to_left).unwrap();
        l.list.set_ghosts(&[&to_left]).unwrap();
        r.list.set_ghosts(&[&to_right]).unwrap();
        assert_eq!(l.list.ghost_count(), right.len());
        for a in [&l, &r] {
            assert_eq!(a.list.build_on(&rt).unwrap(), n as usize);
            a.pull(&rt);
        }
        let mut got = l.forces();
        got.extend(r.forces());
        got.sort_by_key(|x| x.0);
        assert!(got == want, "{}: split forces differ from one set's", rt.backend());
        // On a device the builds with ghosts ran there: the positions never
        // came back to the host, the messages never left the device.
        for a in [&l, &r] {
            assert_eq!(a.pos.transfer_stats().downloads, 0, "{}", rt.backend());
            assert_eq!(a.m_pos.transfer_stats(), op2::TransferStats::default());
        }

        // Sorting the senders keeps the ghosts out of the permutation.
        l.list.sort_senders_on(&rt).unwrap();
        assert_eq!(l.set.size(), left.len());
        l.list.build_on(&rt).unwrap();
        l.pull(&rt);
        let mut sorted = l.forces();
        sorted.extend(r.forces());
        sorted.sort_by_key(|x| x.0);
        assert!(sorted == want, "{}: sorted senders", rt.backend());

        // Without ghosts the halves see fewer neighbours.
        l.list.set_ghosts(&[]).unwrap();
        assert_eq!(l.list.build_on(&rt).unwrap(), left.len());
        l.pull(&rt);
        assert!(l.forces().iter().any(|f| !want.contains(f)));
    }
}

/// The messages of a built list in its order: ids and position bits.
fn listed(a: &Agents, count: usize) -> Vec<(u32, [u32; 3])> {
    let (ids, pos) = (a.m_id.to_vec(), a.m_pos.to_vec());
    (0..count)
        .map(|j| (ids[j], [0, 1, 2].map(|c| pos[3 * j + c].to_bits())))
        .collect()
}

/// Ghosts merged into a list built without them (what a distributed run
/// does to read its list while the ghosts travel) give the list a build
/// with them gives, message for message: split by a plane (ghosts in bins
/// of their own) and by id parity (every bin mixes senders and ghosts,
/// interleaved by id).
#[test]
fn ghosts_merged_after_a_build_give_the_list_a_build_with_them_gives() {
    let n = 600u64;
    type Mine = fn(u64) -> bool;
    let splits: [(&str, Mine); 2] = [
        ("by a plane", |id| position(id)[0] < 4.0),
        ("by id parity", |id| id % 2 == 0),
    ];
    for rt in runtimes() {
        let whole = agents("whole", &(0..n).collect::<Vec<_>>());
        whole.list.build_on(&rt).unwrap();
        whole.pull(&rt);
        let want = whole.forces();
        for (how, mine) in splits {
            let what = format!("{} split {how}", rt.backend());
            let mut here: Vec<u64> = (0..n).filter(|&i| mine(i)).collect();
            here.reverse();
            let there: Vec<u64> = (0..n).filter(|&i| !mine(i)).collect();
            let (l, r) = (agents("here", &here), agents("there", &there));
            let mut pack = AgentPack::new(&r.list.message_layout().unwrap());
            r.list
                .pack_messages(&(0..there.len() as u32).collect::<Vec<_>>(), &mut pack)
                .unwrap();
            // A sender id past i64::MAX (ids are i64s where kernels read
            // them) is refused, not ordered one way here and another there.
            let mut bytes = pack.as_bytes().to_vec();
            bytes[..8].copy_from_slice(&u64::MAX.to_ne_bytes());
            let huge = AgentPack::from_bytes("there", &r.list.message_layout().unwrap(), bytes).unwrap();
            let e = l.list.set_ghosts(&[&huge]).unwrap_err();
            assert!(e.to_string().contains("past the largest agent id"), "{what}: {e}");

            l.list.set_ghosts(&[&pack]).unwrap();
            assert_eq!(l.list.build_on(&rt).unwrap(), n as usize);
            let built = listed(&l, n as usize);

            l.list.clear_ghosts();
            assert_eq!(l.list.build_on(&rt).unwrap(), here.len(), "{what}");
            // Messages permuted since the build no longer match its bins.
            let k = l.list.set().size() as u32;
            l.list.set().permute(&(0..k).rev().collect::<Vec<_>>()).unwrap();
            l.list.set_ghosts(&[&pack]).unwrap();
            let e = l.list.merge_ghosts_on(&rt).unwrap_err();
            assert!(e.to_string().contains("or the messages last changed"), "{what}: {e}");
            l.list.clear_ghosts();
            assert_eq!(l.list.build_on(&rt).unwrap(), here.len(), "{what}");
            l.list.set_ghosts(&[&pack]).unwrap();
            assert_eq!(l.list.merge_ghosts_on(&rt).unwrap(), n as usize, "{what}");
            l.pull(&rt);
            // On a device the merge ran there: no position came back.
            assert_eq!(l.pos.transfer_stats().downloads, 0, "{what}");
            assert!(
                listed(&l, n as usize) == built,
                "{what}: merged messages differ from a build's"
            );
            let got = l.forces();
            assert!(
                got.iter().all(|f| want.contains(f)),
                "{what}: forces differ from one set's"
            );

            // A list holding ghosts takes no more; a build makes it whole again.
            let e = l.list.merge_ghosts_on(&rt).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains("already")),
                "{what}: {e}"
            );
            // The merged order sorts the senders (ghosts left out), as a build's.
            l.list.sort_senders_on(&rt).unwrap();
            l.list.clear_ghosts();
            l.list.build_on(&rt).unwrap();
            l.list.set_ghosts(&[&pack]).unwrap();
            l.list.merge_ghosts_on(&rt).unwrap();
            l.pull(&rt);
            assert!(l.forces() == got, "{what}: after a sort of the senders");
        }
    }
}

/// A merge needs a build since the senders changed (or a Dat was
/// carried), and refuses a ghost with a sender's id.
#[test]
fn a_merge_without_a_fresh_build_or_with_a_repeated_id_is_refused() {
    for rt in runtimes() {
        let a = agents("a", &[0, 1, 2]);
        let b = agents("b", &[2, 3]);
        let mut pack = AgentPack::new(&b.list.message_layout().unwrap());
        b.list.pack_messages(&[0, 1], &mut pack).unwrap();
        let refused = |why: &str| {
            let e = a.list.merge_ghosts_on(&rt).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains(why)),
                "{}: {e}",
                rt.backend()
            );
        };
        let build_then_set_ghosts = || {
            a.list.clear_ghosts();
            a.list.build_on(&rt).unwrap();
            a.list.set_ghosts(&[&pack]).unwrap();
        };
        a.list.set_ghosts(&[&pack]).unwrap();
        refused("needs a build");
        build_then_set_ghosts();
        refused("sender id 2");
        // A failed merge leaves the list to build again; a Dat carried
        // since the build has no value for the messages built.
        refused("needs a build");
        build_then_set_ghosts();
        a.list.carry(&a.force).unwrap();
        refused("its build carried 2");
    }
}

/// Each sender's bin is the bin its position falls in.
#[test]
fn sender_bins_are_the_bins_of_the_positions() {
    let a = agents("a", &[5, 3, 9]);
    let mut bins = Vec::new();
    a.list.sender_bins(&mut bins).unwrap();
    let grid = *a.list.grid().unwrap();
    let want: Vec<u32> = [5u64, 3, 9]
        .iter()
        .map(|&i| {
            let p = position(i);
            grid.bin_of([p[0] as f64, p[1] as f64, p[2] as f64]) as u32
        })
        .collect();
    assert_eq!(bins, want);
    let brute = MessageList::brute_force("all", &a.set).unwrap();
    assert!(matches!(
        brute.sender_bins(&mut bins),
        Err(Error::InvalidMessages { .. })
    ));
}

/// Routes are the senders whose bin has a value, ascending, with it: the
/// same on the host and on a device (where the positions are); in the
/// list's grid or another of its box; a table of another size, a grid of
/// other dimensions and a brute-force list are refused.
#[test]
fn senders_are_routed_by_their_bins_alike_on_every_runtime() {
    let ids: Vec<u64> = (0..300).collect();
    let a = agents("a", &ids);
    let own = *a.list.grid().unwrap();
    let coarse = SpatialGrid::new_3d("coarse", [0.0; 3], [SIDE; 3], 4.0, Boundary::Wrap).unwrap();
    for grid in [own, coarse] {
        let table = op2::BinTable::new((0..grid.bin_count() as i32).map(|b| (b % 3) * (b + 1)).collect());
        let want: Vec<(u32, i32)> = ids
            .iter()
            .map(|&i| {
                let p = position(i);
                table.values()[grid.bin_of([p[0] as f64, p[1] as f64, p[2] as f64])]
            })
            .enumerate()
            .filter(|&(_, v)| v != 0)
            .map(|(e, v)| (e as u32, v))
            .collect();
        assert!(want.len() > 100 && want.len() < 300, "{} routed", want.len());
        for rt in runtimes() {
            let mut routes = op2::Routes::default();
            a.list.route_senders_on(Some(&grid), &table, &mut routes, &rt).unwrap();
            let got: Vec<(u32, i32)> = routes
                .senders()
                .iter()
                .copied()
                .zip(routes.values().iter().copied())
                .collect();
            assert_eq!(got, want, "{}", rt.backend());
        }
        let short = op2::BinTable::new(vec![1; grid.bin_count() - 1]);
        for rt in runtimes() {
            let e = a
                .list
                .route_senders_on(Some(&grid), &short, &mut op2::Routes::default(), &rt)
                .unwrap_err();
            assert!(e.to_string().contains("a table of"), "{}: {e}", rt.backend());
        }
    }
    let flat = SpatialGrid::new_2d("flat", [0.0; 2], [SIDE; 2], 2.0, Boundary::Wrap).unwrap();
    let table = op2::BinTable::new(vec![1; flat.bin_count()]);
    let brute = MessageList::brute_force("all", &a.set).unwrap();
    for rt in runtimes() {
        let mut routes = op2::Routes::default();
        let e = a
            .list
            .route_senders_on(Some(&flat), &table, &mut routes, &rt)
            .unwrap_err();
        assert!(e.to_string().contains("coordinates"), "{}: {e}", rt.backend());
        let e = brute.route_senders_on(None, &table, &mut routes, &rt).unwrap_err();
        assert!(matches!(e, Error::InvalidMessages { .. }), "{}: {e}", rt.backend());
    }
}

/// Moves each agent by a quarter along x, wrapped.
#[op2::kernel]
pub fn shift(p: &mut [f32; 3]) {
    p[0] += 0.25;
    if p[0] >= 8.0 {
        p[0] -= 8.0;
    }
}

/// Senders counted per bin of a grid, the same on every runtime; on a
/// device, where a loop just moved them, without the positions coming
/// back; counts of another length and a grid of other dimensions refused.
#[test]
fn senders_are_counted_by_bin_alike_on_every_runtime() {
    let ids: Vec<u64> = (0..500).collect();
    let coarse = SpatialGrid::new_3d("coarse", [0.0; 3], [SIDE; 3], 3.0, Boundary::Wrap).unwrap();
    for rt in runtimes() {
        let a = agents("a", &ids);
        for grid in [*a.list.grid().unwrap(), coarse] {
            par_loop!(rt, shift, a.set, a.pos(RW)).unwrap();
            let before = a.pos.transfer_stats().bytes_down;
            // Counts add to what is there.
            let mut counts = vec![1u64; grid.bin_count()];
            a.list.count_senders_in_on(&grid, &mut counts, &rt).unwrap();
            assert_eq!(
                a.pos.transfer_stats().bytes_down,
                before,
                "{}: the positions stayed where they were",
                rt.backend()
            );
            let mut want = vec![1u64; grid.bin_count()];
            for p in a.pos.to_vec().chunks_exact(3) {
                want[grid.bin_of([p[0] as f64, p[1] as f64, p[2] as f64])] += 1;
            }
            assert_eq!(counts, want, "{}", rt.backend());
        }
        let e = a.list.count_senders_in_on(&coarse, &mut [0; 3], &rt).unwrap_err();
        assert!(e.to_string().contains("3 counts"), "{}: {e}", rt.backend());
        let flat = SpatialGrid::new_2d("flat", [0.0; 2], [SIDE; 2], 2.0, Boundary::Wrap).unwrap();
        let mut counts = vec![0; flat.bin_count()];
        let e = a.list.count_senders_in_on(&flat, &mut counts, &rt).unwrap_err();
        assert!(e.to_string().contains("coordinates"), "{}: {e}", rt.backend());
    }
}

#[test]
fn ghosts_of_another_layout_a_repeated_id_or_a_bad_sender_are_refused() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let a = agents("a", &[0, 1, 2]);
    let b = agents("b", &[2, 3]);
    let mut pack = AgentPack::new(&b.list.message_layout().unwrap());
    // Sender 2 is past b's two agents: nothing is packed.
    let e = b.list.pack_messages(&[0, 2], &mut pack).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains("past")),
        "{e}"
    );
    assert!(pack.is_empty());

    // Agent id 2 is on both sides: its messages would be in the list twice
    // (on the host and on a device).
    b.list.pack_messages(&[0, 1], &mut pack).unwrap();
    a.list.set_ghosts(&[&pack]).unwrap();
    for rt in runtimes() {
        let e = a.list.build_on(&rt).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains("sender id 2")),
            "{}: {e}",
            rt.backend()
        );
    }

    // Ghosts carry no sent flags: a build of the senders that sent is refused.
    let flags = Dat::from_vec("sent", &a.set, 1, vec![1, 0, 1]).unwrap();
    let e = a.list.build_sent_on(&flags, &rt).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains("ghost")),
        "{e}"
    );
    a.list.clear_ghosts();
    assert_eq!(a.list.ghost_count(), 0);
    assert_eq!(a.list.build_sent_on(&flags, &rt).unwrap(), 2);

    // A pack with no layout takes no bytes.
    let e = AgentPack::default().receive("a", 16).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidMigration { reason, .. } if reason.contains("no layout")),
        "{e}"
    );

    // A pack of the agents' own layout (all their Dats) is not a message pack.
    let agent_pack = AgentPack::new(&b.set.agent_layout().unwrap());
    let e = a.list.set_ghosts(&[&agent_pack]).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains("other Dats")),
        "{e}"
    );

    // Carrying one more Dat after the ghosts were set changes the layout.
    let c = agents("c", &[0, 1]);
    let mut ok = AgentPack::new(&b.list.message_layout().unwrap());
    b.list.pack_messages(&[1], &mut ok).unwrap();
    c.list.set_ghosts(&[&ok]).unwrap();
    c.list.carry(&c.force).unwrap();
    let e = c.list.build_on(&rt).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains("carried since")),
        "{e}"
    );

    // Fixed senders have a fixed message set: no room for ghosts.
    let fixed = Set::new("fixed", 2).unwrap();
    let fpos = Dat::from_vec("pos", &fixed, 3, vec![0.5f32; 6]).unwrap();
    let grid = SpatialGrid::new_3d("g", [0.0; 3], [SIDE; 3], 2.0, Boundary::Wrap).unwrap();
    let flist = MessageList::spatial("g", grid, &fpos).unwrap();
    let fpack = AgentPack::new(&flist.message_layout().unwrap());
    flist.set_ghosts(&[&fpack]).unwrap();
    let mut one = fpack.clone();
    let other = Set::dynamic("other", 1, 1).unwrap();
    let opos = Dat::from_vec("pos", &other, 3, vec![1.0f32; 3]).unwrap();
    let olist = MessageList::spatial("g", grid, &opos).unwrap();
    olist.pack_messages(&[0], &mut one).unwrap();
    let e = flist.set_ghosts(&[&one]).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidMessages { reason, .. } if reason.contains("dynamic")),
        "{e}"
    );
}

#[test]
fn dynamic_sets_with_given_ids_refuse_repeats_and_ids_past_i64() {
    let s = Set::dynamic_with_ids("s", vec![7, 3, 12], 8).unwrap();
    assert_eq!(&*s.global_ids(), &[7, 3, 12]);
    assert_eq!(s.index_of(12), Some(2));
    assert_eq!(s.next_id(), Some(13));
    let e = Set::dynamic_with_ids("s", vec![1, 4, 1], 8).unwrap_err();
    assert!(matches!(e, Error::InvalidGlobalIds { .. }), "{e}");
    let e = Set::dynamic_with_ids("s", vec![1 << 63], 8).unwrap_err();
    assert!(matches!(e, Error::InvalidGlobalIds { .. }), "{e}");
    assert_eq!(Set::dynamic_with_ids("e", vec![], 0).unwrap().next_id(), Some(0));
}
