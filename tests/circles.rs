//! Circles (FLAME GPU's benchmark) on every backend: two agents move apart
//! as the formula says, step by step; every backend built in gives seq's
//! bits on a few thousand agents, whether the agents are sorted in memory
//! or not; the hand-written cell-list baseline computes the same model
//! (within 1e-5: it visits neighbours in another order).

use op2::portable_math::PortableMath;
use op2_circles::{box_side, initial_positions, step_by_hand, CellList, Circles, Params};

// Each backend must match seq bit for bit: the move kernel's math is op2's
// own (`portable_math`), devices included.
#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

/// The formula for one agent pushed by one neighbour at `d = p_other - p_self`.
#[allow(clippy::approx_constant)] // 3.141 is the model's constant
fn push(d: [f32; 3], p: Params) -> [f32; 3] {
    let s = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    if !(s > 0.0 && s < p.radius) {
        return [0.0; 3];
    }
    // op2's own sine, as the kernel's (`portable_math`).
    let k = ((s / p.radius) * 3.141f32 * -2.0f32).portable_sin() * p.repulse;
    // One neighbour: the mean is the force itself (divided by 1).
    [k * d[0] / s / 1.0, k * d[1] / s / 1.0, k * d[2] / s / 1.0]
}

#[test]
fn two_agents_half_apart_move_apart_as_the_formula_says() {
    let p = Params::default();
    for rt in backends() {
        let start = [[3.0f32, 4.0, 5.0], [3.5, 4.0, 5.0]];
        let mut model = Circles::new(&start, 10.0, p).unwrap();
        let mut want = start;
        for step in 1..=3 {
            model.step(&rt).unwrap();
            let d = [
                want[1][0] - want[0][0],
                want[1][1] - want[0][1],
                want[1][2] - want[0][2],
            ];
            let f0 = push(d, p);
            let f1 = push([-d[0], -d[1], -d[2]], p);
            for c in 0..3 {
                want[0][c] += f0[c];
                want[1][c] += f1[c];
            }
            assert_eq!(model.positions(), want, "{}: step {step}", rt.backend());
        }
        // They moved apart along x only, by about 2 x 0.05 a step at first.
        let got = model.positions();
        assert!(got[1][0] - got[0][0] > 0.75, "{got:?}");
        assert_eq!((got[0][1], got[1][2]), (4.0, 5.0));
    }
}

#[test]
fn backends_agree_and_match_the_hand_written_model() {
    let n = 3000;
    let side = box_side(n, 1.0);
    let start = initial_positions(n, side, 7);
    let p = Params::default();
    let steps = 8;
    let mut reference: Option<Vec<[f32; 3]>> = None;
    // Sorting the agents in memory (never, every step, every third) changes
    // no bit of the result.
    let backends = backends();
    let runs = backends
        .iter()
        .flat_map(|rt| [0, 1, 3].map(|sort_every| (rt, sort_every)));
    for (rt, sort_every) in runs {
        let mut model = Circles::new(&start, side, Params { sort_every, ..p }).unwrap();
        for _ in 0..steps {
            model.step(rt).unwrap();
        }
        let got = model.positions();
        if sort_every > 0 {
            let ids: Vec<u32> = model.ids().to_vec();
            assert!(ids.windows(2).any(|w| w[0] > w[1]), "the agents were sorted");
        }
        match &reference {
            None => reference = Some(got),
            Some(want) => assert!(
                got == *want,
                "{} sorting every {sort_every} differs from seq",
                rt.backend()
            ),
        }
    }
    // The baseline visits neighbours in another order: equal up to rounding.
    let mut by_hand = start.clone();
    let mut cells = CellList::default();
    for _ in 0..steps {
        step_by_hand(&mut by_hand, side, p, &mut cells);
    }
    let want = reference.unwrap();
    let moved = want.iter().zip(&start).filter(|(a, b)| a != b).count();
    assert!(moved > n / 2, "most agents move: {moved}");
    for (g, w) in by_hand.iter().flatten().zip(want.iter().flatten()) {
        assert!((g - w).abs() <= 1e-5, "hand-written {g} vs op2 {w}");
    }
}
