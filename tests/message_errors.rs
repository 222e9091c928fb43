//! Message lists refuse what they cannot do with an error naming the list
//! (or the loop and argument), never a panic or a wrong answer. An output
//! overflow cannot happen: a list has one slot per sender and a sender
//! sends at most one message per build (the conformance suite checks that
//! every flagged sender's message arrives).

use op2::prelude::*;
use op2::Error;

#[op2::kernel]
fn count_3d(p: &[f64; 3], n: &mut i32, ps: &[[f64; 3]], msgs: &Spatial3d) {
    let mut c = 0;
    for j in msgs.near(p[0], p[1], p[2]) {
        if ps[j][0] >= 0.0 {
            c += 1;
        }
    }
    *n = c;
}

#[op2::kernel]
fn count_2d(p: &[f64; 2], n: &mut i32, msgs: &Spatial2d) {
    let mut c = 0;
    for _j in msgs.near(p[0], p[1]) {
        c += 1;
    }
    *n = c;
}

#[op2::kernel]
fn count_cells(p: &[i32; 2], n: &mut i32, msgs: &Discrete2d) {
    let mut c = 0;
    for _j in msgs.within(p[0], p[1], 2) {
        c += 1;
    }
    *n = c;
}

#[op2::kernel]
fn count_all(n: &mut i32, ps: &[f64]) {
    *n = ps.len() as i32;
}

#[op2::kernel]
fn add_all(ps: &mut [f64]) {
    for j in 0..ps.len() {
        ps[j] += 1.0;
    }
}

struct World {
    agents: Set,
    pos: Dat<f64>,
    n: Dat<i32>,
}

fn world(dims: usize) -> World {
    let agents = Set::new("agents", 5).unwrap();
    let pos = Dat::from_vec("pos", &agents, dims, (0..5 * dims).map(|i| i as f64 * 0.3).collect()).unwrap();
    let n = Dat::zeros("n", &agents, 1).unwrap();
    World { agents, pos, n }
}

fn grid3() -> SpatialGrid {
    SpatialGrid::new_3d("g", [0.0; 3], [4.0; 3], 1.0, Boundary::Clamp).unwrap()
}

fn message_arg(e: Error) -> String {
    match e {
        Error::MessageArg { at, reason } => format!("{at}: {reason}"),
        other => panic!("expected Error::MessageArg, got {other:?}"),
    }
}

#[test]
fn a_list_read_before_its_first_build_is_an_error() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world(3);
    let list = MessageList::spatial("location", grid3(), &w.pos).unwrap();
    let m_pos = list.carry(&w.pos).unwrap();
    let (agents, pos, n) = (&w.agents, &w.pos, &w.n);
    let count = || {
        par_loop!(
            rt,
            count_3d,
            agents,
            pos(READ),
            n(WRITE),
            m_pos(READ, list[..]),
            list(NEAR)
        )
    };
    let msg = message_arg(count().unwrap_err());
    assert!(
        msg.contains("loop `count_3d`") && msg.contains("read before it was built"),
        "{msg}"
    );
    assert!(!list.is_built() && list.is_empty());
    list.build().unwrap();
    count().unwrap();
    assert!(n.to_vec().iter().all(|&c| c >= 1), "each agent finds at least itself");

    // A build that fails part way (a carried message Dat held on the host)
    // leaves the list unreadable until a build succeeds, not half rebuilt.
    let held = m_pos.data_ro();
    assert!(list.build().is_err(), "the build cannot write what is held");
    drop(held);
    assert!(message_arg(count().unwrap_err()).contains("after a build that failed"));
    // A count past the Dat (set through the list's hidden count) is
    // refused, never read past the Dat's end.
    list.whole_count().record_build(1 << 30, list.set());
    assert!(message_arg(count().unwrap_err()).contains("counts 1073741824 messages, more than"));
    list.build().unwrap();
    count().unwrap();
}

#[test]
fn reading_a_dat_that_is_not_the_lists_is_an_error() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world(1);
    let list = MessageList::brute_force("all", &w.agents).unwrap();
    list.build().unwrap();
    let (agents, pos, n) = (&w.agents, &w.pos, &w.n);
    let msg = message_arg(par_loop!(rt, count_all, agents, n(WRITE), pos(READ, list[..])).unwrap_err());
    assert!(
        msg.contains("not a variable of message list `all`") && msg.contains("carry"),
        "{msg}"
    );
}

#[test]
fn writing_a_message_variable_is_an_error() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world(1);
    let list = MessageList::brute_force("all", &w.agents).unwrap();
    let m = list.carry(&w.pos).unwrap();
    list.build().unwrap();
    let before = m.to_vec();
    let agents = &w.agents;
    let msg = message_arg(par_loop!(rt, add_all, agents, m(INC, list[..])).unwrap_err());
    assert!(msg.contains("read only") && msg.contains("not Inc"), "{msg}");
    assert_eq!(m.to_vec(), before, "nothing ran");
}

#[test]
fn near_needs_a_spatial_list_of_the_kernels_dimension() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world(3);
    let brute = MessageList::brute_force("all", &w.agents).unwrap();
    let m_pos = brute.carry(&w.pos).unwrap();
    brute.build().unwrap();
    let (agents, pos, n) = (&w.agents, &w.pos, &w.n);
    match par_loop!(
        rt,
        count_3d,
        agents,
        pos(READ),
        n(WRITE),
        m_pos(READ, brute[..]),
        brute(NEAR)
    ) {
        Err(Error::InvalidMessages { list, reason }) => {
            assert_eq!(list, "all");
            assert!(reason.contains("needs a spatial list"), "{reason}");
        }
        other => panic!("expected InvalidMessages, got {:?}", other.err()),
    }
    // A 2-D list for a `Spatial3d` parameter.
    let flat = world(2);
    let grid2 = SpatialGrid::new_2d("g", [0.0; 2], [4.0; 2], 1.0, Boundary::Clamp).unwrap();
    let list2 = MessageList::spatial("flat", grid2, &flat.pos).unwrap();
    list2.build().unwrap();
    let msg = message_arg(
        par_loop!(
            rt,
            count_3d,
            agents,
            pos(READ),
            n(WRITE),
            m_pos(READ, brute[..]),
            list2(NEAR)
        )
        .unwrap_err(),
    );
    assert!(
        msg.contains("`flat` is a 2-D spatial list") && msg.contains("parameter is `Spatial3d`"),
        "{msg}"
    );
    // A continuous 2-D list for a `Discrete2d` parameter, and a discrete one
    // for a `Spatial2d` parameter.
    let cells = Set::new("cells", 4).unwrap();
    let at = Dat::from_vec("at", &cells, 2, vec![0, 0, 1, 2, 3, 3, -1, 5]).unwrap();
    let discrete = MessageList::spatial(
        "grid",
        SpatialGrid::discrete_2d("g", [4, 4], Boundary::Wrap).unwrap(),
        &at,
    )
    .unwrap();
    discrete.build().unwrap();
    let count = Dat::<i32>::zeros("count", &cells, 1).unwrap();
    let msg = message_arg(par_loop!(rt, count_cells, cells, at(READ), count(WRITE), list2(NEAR)).unwrap_err());
    assert!(
        msg.contains("`flat` is a 2-D spatial list") && msg.contains("`Discrete2d`, which needs a discrete 2-D list"),
        "{msg}"
    );
    let (fpos, fn_) = (&flat.pos, &flat.n);
    let msg = message_arg(par_loop!(rt, count_2d, flat.agents, fpos(READ), fn_(WRITE), discrete(NEAR)).unwrap_err());
    assert!(
        msg.contains("`grid` is a discrete 2-D list") && msg.contains("`Spatial2d`"),
        "{msg}"
    );
    // The right pairs run.
    par_loop!(rt, count_cells, cells, at(READ), count(WRITE), discrete(NEAR)).unwrap();
    assert_eq!(count.to_vec(), [4, 4, 4, 4]);
}

#[test]
fn bad_lists_and_builds_are_errors_naming_the_list() {
    let w = world(3);
    let other = Set::new("other", 5).unwrap();
    let stray = Dat::<f64>::zeros("stray", &other, 1).unwrap();
    let list = MessageList::spatial("location", grid3(), &w.pos).unwrap();
    let reason = |e: Error| match e {
        Error::InvalidMessages { list, reason } => format!("{list}: {reason}"),
        other => panic!("expected InvalidMessages, got {other:?}"),
    };
    let msg = reason(list.carry(&stray).unwrap_err());
    assert!(
        msg.starts_with("location:") && msg.contains("not on the senders `agents`"),
        "{msg}"
    );
    let flags = Dat::<i32>::zeros("flags", &other, 1).unwrap();
    assert!(reason(list.build_sent(&flags).unwrap_err()).contains("dim-1 Dat of the senders"));
    let wide = Dat::<i32>::zeros("wide", &w.agents, 2).unwrap();
    assert!(reason(list.build_sent(&wide).unwrap_err()).contains("dim 2"));
    let flat = Dat::<f64>::zeros("flat", &w.agents, 2).unwrap();
    let msg = reason(MessageList::spatial("x", grid3(), &flat).err().unwrap());
    assert!(msg.contains("dim 2 but the grid is 3-D"), "{msg}");
    // A build while a carried Dat is borrowed: an error, the list unchanged.
    let guard = w.pos.data_mut();
    assert!(matches!(list.build(), Err(Error::HostBorrow { .. })));
    drop(guard);
    assert!(!list.is_built());
    assert_eq!(list.build().unwrap(), 5);
}

#[test]
fn bad_grids_are_errors() {
    let bad = |g: op2::Result<SpatialGrid>| match g {
        Err(Error::InvalidMessages { reason, .. }) => reason,
        other => panic!("expected InvalidMessages, got {other:?}"),
    };
    let clamp = Boundary::Clamp;
    assert!(bad(SpatialGrid::new_3d("g", [0.0; 3], [1.0; 3], 0.0, clamp)).contains("radius"));
    assert!(bad(SpatialGrid::new_3d("g", [0.0; 3], [1.0; 3], f64::NAN, clamp)).contains("radius"));
    assert!(bad(SpatialGrid::new_2d("g", [0.0; 2], [0.0, 1.0], 0.5, clamp)).contains("axis 0"));
    assert!(bad(SpatialGrid::new_2d("g", [0.0; 2], [1.0, f64::INFINITY], 0.5, clamp)).contains("axis 1"));
    assert!(bad(SpatialGrid::new_3d("g", [0.0; 3], [1e6; 3], 1e-3, clamp)).contains("bins"));
    let msg = bad(SpatialGrid::new_2d("g", [0.0; 2], [10.0, 7.0], 2.0, Boundary::Wrap));
    assert!(msg.contains("one width"), "{msg}");
    let ok = SpatialGrid::new_2d("g", [0.0; 2], [10.0, 6.0], 2.0, Boundary::Wrap).unwrap();
    assert_eq!(ok.bins_per_axis(), [5, 3, 1]);
    let msg = bad(SpatialGrid::discrete_2d("g", [4, 0], clamp));
    assert!(msg.contains("at least one cell per axis"), "{msg}");
    let msg = bad(SpatialGrid::discrete_2d("g", [1 << 20, 1 << 20], clamp));
    assert!(msg.contains("bins"), "{msg}");
    let cells = SpatialGrid::discrete_2d("g", [5, 3], Boundary::Wrap).unwrap();
    assert_eq!((cells.bins_per_axis(), cells.is_discrete()), ([5, 3, 1], true));
    // Extreme floats are printed short, and a box too wide for an f64 is
    // named as such, not as "inf bins".
    let msg = bad(SpatialGrid::new_2d("g", [-f64::MAX; 2], [f64::MAX; 2], 1.0, clamp));
    assert!(
        msg.contains("the box [-1.7976931348623157e308, 1.7976931348623157e308) is wider than an f64 holds")
            && !msg.contains("inf"),
        "{msg}"
    );
    let msg = bad(SpatialGrid::new_2d("g", [0.0; 2], [1.0; 2], 5e-324, clamp));
    assert!(
        msg.contains("bins of width 5e-324 needs more than 2147483646 bins")
            && msg.contains("use a radius of at least 4.657e-10")
            && msg.len() < 250,
        "{msg}"
    );
    let msg = bad(SpatialGrid::new_2d("g", [0.0; 2], [1e300, 1.0], 1.0, clamp));
    assert!(msg.contains("[0.0, 1e300)") && msg.len() < 250, "{msg}");
}

/// An exchange that lets a build go on whatever routing said (a careless
/// one-process stand-in for MPI's).
struct Careless(op2::BinTable);

impl op2_agents::GhostExchange for Careless {
    fn read_bins(&self) -> &op2::BinTable {
        &self.0
    }
    fn exchange(
        &mut self,
        _: &MessageList,
        _: op2::Result<&op2::Routes>,
        meanwhile: &mut dyn FnMut(),
    ) -> op2::Result<()> {
        meanwhile();
        Ok(())
    }
}

/// Flags of another set refused by routing stay refused when the exchange
/// ignores the failure: an error, not flags read past their end.
#[test]
fn a_build_whose_routing_failed_stops_whatever_the_exchange_says() {
    let w = world(6);
    let list = MessageList::brute_force("all", &w.agents).unwrap();
    list.carry(&w.pos).unwrap();
    let few = Set::new("few", 2).unwrap();
    let flags = Dat::<i32>::filled("sent", &few, 1, 1).unwrap();
    let mut careless = Careless(op2::BinTable::new(Vec::new()));
    let e = list
        .build_sent_exchanging_on(&flags, &mut careless, &op2::ScopedThreads::available())
        .unwrap_err();
    assert!(e.to_string().contains("routing the senders failed"), "{e}");
}
