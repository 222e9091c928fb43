//! Births and deaths refuse what they cannot do with an error naming the
//! set (or the map, subset, loop or Dat), never a panic, a wrong answer or
//! lost data: lifecycles of fixed sets, offspring of foreign Dats, maps,
//! ragged maps and subsets made before the set changed, a change while a
//! Dat of the set is borrowed or a loop holds the set, a fate loop over
//! another set.

use op2::prelude::*;
use op2::Error;

/// Agents with a negative `x` die; those above 10 have a child.
#[op2::kernel]
fn judge(x: &f64, fate: &mut Fate) {
    if *x < 0.0 {
        fate.die();
    }
    if *x > 10.0 {
        fate.spawn();
    }
}

#[op2::kernel]
fn bump(y: &mut f64) {
    *y += 1.0;
}

struct World {
    agents: Set,
    x: Dat<f64>,
    life: Lifecycle,
}

/// Five agents; agent 1 dies and agent 3 has a child on the first judgement.
fn world() -> World {
    let agents = Set::dynamic("agents", 5, 5).unwrap();
    let x = Dat::from_vec("x", &agents, 1, vec![1.0, -1.0, 2.0, 11.0, 3.0]).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    World { agents, x, life }
}

#[test]
fn lifecycle_needs_a_dynamic_set_and_its_own_dats() {
    let fixed = Set::new("fixed", 3).unwrap();
    let e = Lifecycle::new(&fixed).unwrap_err();
    assert!(matches!(e, Error::InvalidLifecycle { .. }), "{e:?}");
    assert!(
        e.to_string().contains("fixed") && e.to_string().contains("Set::dynamic"),
        "{e}"
    );

    let w = world();
    let elsewhere = Dat::<f64>::zeros("elsewhere", &fixed, 1).unwrap();
    let e = w.life.offspring(&elsewhere).unwrap_err();
    assert!(e.to_string().contains("`elsewhere` is on set `fixed`"), "{e}");
    // Asking twice gives the same Dat.
    assert!(w.life.offspring(&w.x).unwrap().same(&w.life.offspring(&w.x).unwrap()));
}

#[test]
fn maps_and_subsets_made_before_a_change_are_refused() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world();
    let cells = Set::new("cells", 2).unwrap();
    let y = Dat::<f64>::zeros("y", &cells, 1).unwrap();
    let to_cells = Map::new("to_cells", &w.agents, &cells, 1, vec![0, 1, 0, 1, 0]).unwrap();
    let ragged = RaggedMap::new("nbrs", &w.agents, &cells, vec![0, 1, 1, 2, 2, 3], vec![0, 1, 1]).unwrap();
    let some = Subset::new("some", &w.agents, vec![0, 4]).unwrap();
    let (life, x) = (&w.life, &w.x);
    par_loop!(rt, judge, w.agents, x(READ), life(FATE)).unwrap();
    assert_eq!(w.agents.size(), 5, "one died, one was born");
    assert_eq!(w.agents.generation(), 1);

    let e = par_loop!(rt, bump, w.agents, y(RW, to_cells[0])).unwrap_err();
    assert!(matches!(e, Error::StaleIndices { what: "map", .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("to_cells") && msg.contains("agents") && msg.contains("rebuild"),
        "{msg}"
    );
    let e = ragged.check_current().unwrap_err();
    assert!(matches!(e, Error::StaleIndices { what: "ragged map", .. }), "{e:?}");
    let e = par_loop!(rt, judge, some, x(READ), life(FATE)).unwrap_err();
    assert!(matches!(e, Error::StaleIndices { what: "subset", .. }), "{e:?}");

    // Rebuilt for the new numbering, they work.
    let to_cells = Map::new("to_cells", &w.agents, &cells, 1, vec![0; 5]).unwrap();
    par_loop!(rt, bump, w.agents, y(RW, to_cells[0])).unwrap();
    assert_eq!(&*y.data_ro(), &[5.0, 0.0]);
}

#[test]
fn a_change_under_a_borrow_is_refused_and_loses_nothing() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world();
    let other = Dat::from_vec("other", &w.agents, 1, vec![10i32, 11, 12, 13, 14]).unwrap();
    let (life, x) = (&w.life, &w.x);
    let guard = other.data_ro();
    let e = par_loop!(rt, judge, w.agents, x(READ), life(FATE)).unwrap_err();
    let Error::FatesNotApplied {
        fates: op2::FatesLeft::Kept,
        source,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert!(matches!(**source, Error::HostBorrow { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains(
            "loop `judge` ran, but applying its births and deaths to set `agents` failed: `other` is already borrowed"
        ) && msg.contains("the fates are kept")
            && msg.contains("do not run the loop again"),
        "{msg}"
    );
    drop(guard);
    // Nothing moved, and the fates wait for another apply.
    assert_eq!(w.agents.size(), 5);
    assert_eq!(&*life.fates().data_ro(), &[0, 1, 0, 2, 0]);
    let c = life.apply().unwrap();
    assert_eq!((c.before, c.deaths, c.births, c.after), (5, 1, 1, 5));
    assert_eq!(&*other.data_ro(), &[10, 12, 13, 14, 13]);
    assert_eq!(&*x.data_ro(), &[1.0, 2.0, 11.0, 3.0, 11.0]);
    assert_eq!(&*w.agents.global_ids(), &[0, 2, 3, 4, 5]);
    assert_eq!(&*life.ids().data_ro(), &[0, 2, 3, 4, 5]);

    // A set held by a loop cannot change.
    assert!(w.agents.try_use().unwrap());
    life.fates().data_mut()[0] = 1;
    let e = life.apply().unwrap_err();
    w.agents.release_use();
    assert!(matches!(e, Error::SetInUse { .. }), "{e:?}");
    assert_eq!(life.apply().unwrap().after, 4);
}

#[test]
fn a_fate_loop_over_another_set_is_refused() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world();
    let others = Set::dynamic("others", 5, 5).unwrap();
    let z = Dat::<f64>::zeros("z", &others, 1).unwrap();
    let life = &w.life;
    let e = par_loop!(rt, judge, others, z(READ), life(FATE)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("agents.fates")
            && msg.contains("decides births and deaths of set `agents`, but the loop runs over `others`")
            && !msg.contains("through a map"),
        "{msg}"
    );
    assert_eq!(w.agents.size(), 5);
}

/// As `judge`, given a spatial message list it does not read.
#[op2::kernel]
fn judge_near(x: &f64, _near: &Spatial2d, fate: &mut Fate) {
    if *x > 10.0 {
        fate.spawn();
    }
}

#[test]
fn a_loop_that_ends_before_it_runs_forgets_its_fates() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let w = world();
    let (life, x) = (&w.life, &w.x);
    // Fates left over (a kernel's of a loop that failed elsewhere).
    life.fates().data_mut()[0] = 2;
    // A brute-force list has no bins: the loop ends before it runs.
    let list = MessageList::brute_force("all", &w.agents).unwrap();
    let e = par_loop!(rt, judge_near, w.agents, x(READ), list(NEAR), life(FATE)).unwrap_err();
    assert!(matches!(e, Error::InvalidMessages { .. }), "{e:?}");
    // Forgotten: a later apply has nothing to do.
    assert_eq!(&*life.fates().data_ro(), &[0; 5]);
    assert_eq!(life.apply().unwrap().births, 0);
    assert_eq!(w.agents.size(), 5);
}

/// A second Lifecycle on a set would apply its fates to the first's
/// children (four agents spawning through both ended as 16, not 12): it is
/// refused while the first is in use, and allowed once it is dropped.
#[test]
fn one_lifecycle_per_set() {
    let w = world();
    let e = Lifecycle::new(&w.agents).unwrap_err();
    assert!(matches!(e, Error::InvalidLifecycle { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("lifecycle of set `agents`: the set already has a Lifecycle; use that one (its handle clones)"),
        "{e}"
    );
    // A clone is the same Lifecycle: no second one was made.
    let again = w.life.clone();
    let rt = Runtime::new(Backend::Seq).unwrap();
    par_loop!(rt, judge, w.agents, w.x(READ), again(FATE)).unwrap();
    assert_eq!(w.agents.size(), 5, "agent 1 died, agent 3 had one child");
    drop((w.life, again));
    let other = Lifecycle::new(&w.agents).unwrap();
    assert_eq!(other.set().size(), 5);
}
