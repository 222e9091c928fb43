//! Permuting a dynamic set (`Set::permute`) and sorting a message list's
//! senders (`MessageList::sort_senders`): every Dat moves with its agent,
//! ids follow and are still found, births after a sort get fresh ids, maps
//! made before are refused, and bad orders or sorts are errors that move
//! nothing.

use op2::prelude::*;
use op2::Error;

/// Agents with `x > 10` have a child; those below 0 die.
#[op2::kernel]
fn judge(x: &f64, fate: &mut Fate) {
    if *x < 0.0 {
        fate.die();
    }
    if *x > 10.0 {
        fate.spawn();
    }
}

#[test]
fn a_permutation_moves_every_dat_and_the_ids() {
    let agents = Set::dynamic("agents", 5, 5).unwrap();
    let x = Dat::from_vec("x", &agents, 1, vec![0.0, 1.0, 2.0, 3.0, 4.0]).unwrap();
    let v = Dat::from_vec("v", &agents, 2, (0..10).collect::<Vec<i32>>()).unwrap();
    let before = agents.generation();
    agents.permute(&[3, 0, 4, 1, 2]).unwrap();
    assert_eq!(x.to_vec(), [3.0, 0.0, 4.0, 1.0, 2.0]);
    assert_eq!(v.to_vec(), [6, 7, 0, 1, 8, 9, 2, 3, 4, 5]);
    assert_eq!(agents.global_ids().to_vec(), [3, 0, 4, 1, 2]);
    for id in 0..5 {
        let k = agents.index_of(id).unwrap();
        assert_eq!(x.to_vec()[k], id as f64, "id {id}");
    }
    assert_eq!(agents.index_of(5), None);
    assert_eq!(agents.generation(), before + 1);
    // The identity moves nothing and keeps maps current.
    agents.permute(&[0, 1, 2, 3, 4]).unwrap();
    assert_eq!(agents.generation(), before + 1);
    assert_eq!(x.to_vec(), [3.0, 0.0, 4.0, 1.0, 2.0]);
}

/// Every backend built in (the device ones renumber in device memory).
fn runtimes() -> Vec<Runtime> {
    #[allow(unused_mut)]
    let mut v = vec![Runtime::new(Backend::Seq).unwrap()];
    #[cfg(feature = "rayon")]
    v.push(Runtime::new(Backend::Rayon).unwrap());
    #[cfg(feature = "opencl")]
    v.push(Runtime::new(Backend::OpenCl).unwrap());
    v
}

#[test]
fn births_and_deaths_after_a_permutation_number_children_by_parent_id() {
    for rt in runtimes() {
        let agents = Set::dynamic("agents", 4, 4).unwrap();
        let x = Dat::from_vec("x", &agents, 1, vec![11.0, -1.0, 2.0, 12.0]).unwrap();
        let life = Lifecycle::new(&agents).unwrap();
        agents.permute(&[3, 2, 1, 0]).unwrap();
        par_loop!(rt, judge, agents, x(READ), life(FATE)).unwrap();
        // Survivors keep their order (ids 3, 2, 0); the children of ids 3
        // and 0 follow in that order, numbered by their parents' ids: the
        // child of 0 gets 4, the child of 3 gets 5, wherever they sit.
        let on = rt.backend();
        assert_eq!(x.to_vec(), [12.0, 2.0, 11.0, 12.0, 11.0], "{on:?}");
        assert_eq!(agents.global_ids().to_vec(), [3, 2, 0, 5, 4], "{on:?}");
        assert_eq!(life.ids().to_vec(), [3, 2, 0, 5, 4], "{on:?}");
        assert_eq!(agents.index_of(0), Some(2));
        assert_eq!(agents.index_of(1), None);
        assert_eq!(agents.index_of(5), Some(3));
        assert_eq!(agents.next_id(), Some(6));
        // A second round: parents 3, 0, 5, 4 in memory, children 7, 6, 9, 8.
        par_loop!(rt, judge, agents, x(READ), life(FATE)).unwrap();
        assert_eq!(agents.global_ids().to_vec(), [3, 2, 0, 5, 4, 7, 6, 9, 8], "{on:?}");
        assert_eq!(life.ids().to_vec(), [3, 2, 0, 5, 4, 7, 6, 9, 8], "{on:?}");
    }
}

#[test]
fn bad_permutations_are_errors_that_move_nothing() {
    let agents = Set::dynamic("agents", 3, 3).unwrap();
    let x = Dat::from_vec("x", &agents, 1, vec![0.0, 1.0, 2.0]).unwrap();
    for (order, says) in [
        (&[0u32, 1][..], "2 entries for 3 elements"),
        (&[0, 1, 3][..], "entry 2 is 3, past the last element 2"),
        (&[0, 1, 1][..], "element 1 appears twice"),
    ] {
        let e = agents.permute(order).unwrap_err();
        assert!(matches!(e, Error::InvalidPermutation { .. }), "{e:?}");
        assert!(
            e.to_string().contains("`agents`") && e.to_string().contains(says),
            "{e}"
        );
    }
    let fixed = Set::new("fixed", 3).unwrap();
    let e = fixed.permute(&[2, 1, 0]).unwrap_err();
    assert!(e.to_string().contains("Set::dynamic"), "{e}");
    // A borrowed Dat: the whole permutation is refused.
    {
        let _guard = x.try_data_ro().unwrap();
        let e = agents.permute(&[2, 1, 0]).unwrap_err();
        assert!(matches!(e, Error::HostBorrow { .. }), "{e:?}");
    }
    assert_eq!(x.to_vec(), [0.0, 1.0, 2.0]);
    assert_eq!(agents.global_ids().to_vec(), [0, 1, 2]);
    assert_eq!(agents.generation(), 0);
}

#[test]
fn maps_made_before_a_permutation_are_refused() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let agents = Set::dynamic("agents", 3, 3).unwrap();
    let x = Dat::from_vec("x", &agents, 1, vec![0.0, 1.0, 2.0]).unwrap();
    let pairs = Set::new("pairs", 1).unwrap();
    let pair = Map::new("pair", &pairs, &agents, 2, vec![0, 2]).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    agents.permute(&[1, 2, 0]).unwrap();
    let e = par_loop!(rt, judge, pairs, x(READ, pair[0]), life(FATE));
    let e = e.unwrap_err().to_string();
    assert!(e.contains("pair") && e.contains("agents"), "{e}");
}

#[test]
fn sorting_the_senders_needs_a_fresh_build_of_dynamic_senders() {
    let grid = SpatialGrid::new_2d("g", [0.0, 0.0], [4.0, 4.0], 1.0, Boundary::Clamp).unwrap();
    let fixed = Set::new("fixed", 3).unwrap();
    let p = Dat::from_vec("p", &fixed, 2, vec![3.5, 3.5, 0.5, 0.5, 2.5, 0.5]).unwrap();
    let list = MessageList::spatial("near", grid, &p).unwrap();
    list.build().unwrap();
    let e = list.sort_senders().unwrap_err().to_string();
    assert!(
        e.contains("`near`") && e.contains("Set::dynamic") && e.contains("`fixed`"),
        "{e}"
    );

    let agents = Set::dynamic("agents", 3, 3).unwrap();
    let p = Dat::from_vec("p", &agents, 2, vec![3.5, 3.5, 0.5, 0.5, 2.5, 0.5]).unwrap();
    let sent = Dat::from_vec("sent", &agents, 1, vec![1, 1, 0]).unwrap();
    let list = MessageList::spatial("near", grid, &p).unwrap();
    let e = list.sort_senders().unwrap_err().to_string();
    assert!(e.contains("build first"), "{e}");
    // Only agents 0 and 1 send: they come first in bin order, then agent 2.
    list.build_sent(&sent).unwrap();
    list.sort_senders().unwrap();
    assert_eq!(agents.global_ids().to_vec(), [1, 0, 2]);
    assert_eq!(p.to_vec(), [0.5, 0.5, 3.5, 3.5, 2.5, 0.5]);
    assert_eq!(sent.to_vec(), [1, 1, 0]);
    let e = list.sort_senders().unwrap_err().to_string();
    assert!(e.contains("build first"), "{e}");
    // A change of the senders between the build and the sort.
    list.build().unwrap();
    agents.permute(&[2, 1, 0]).unwrap();
    let e = list.sort_senders().unwrap_err().to_string();
    assert!(e.contains("changed since the last build"), "{e}");
}

#[op2::kernel]
fn count_near(p: &[f64; 2], n: &mut i32, ps: &[[f64; 2]], msgs: &Spatial2d) {
    let mut c = 0;
    for j in msgs.near(p[0], p[1]) {
        if ps[j][0] >= 0.0 {
            c += 1;
        }
    }
    *n = c;
}

#[test]
fn a_message_set_changed_after_its_build_is_refused_until_rebuilt() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let grid = SpatialGrid::new_2d("g", [0.0, 0.0], [4.0, 4.0], 1.0, Boundary::Clamp).unwrap();
    let agents = Set::dynamic("agents", 3, 3).unwrap();
    let p = Dat::from_vec("p", &agents, 2, vec![3.5, 3.5, 0.5, 0.5, 1.5, 0.5]).unwrap();
    let n = Dat::<i32>::zeros("n", &agents, 1).unwrap();
    let list = MessageList::spatial("near", grid, &p).unwrap();
    let m_p = list.carry(&p).unwrap();
    list.build().unwrap();
    // Scrambling the messages themselves would pair them with the wrong bins.
    list.set().permute(&[2, 0, 1]).unwrap();
    let e = par_loop!(
        rt,
        count_near,
        agents,
        p(READ),
        n(WRITE),
        m_p(READ, list[..]),
        list(NEAR)
    )
    .unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("`near` changed since its build") && e.contains("build it again"),
        "{e}"
    );
    list.build().unwrap();
    par_loop!(
        rt,
        count_near,
        agents,
        p(READ),
        n(WRITE),
        m_p(READ, list[..]),
        list(NEAR)
    )
    .unwrap();
    assert_eq!(n.to_vec(), [1, 2, 2]);
}
