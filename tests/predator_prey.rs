//! Predators and prey (`examples/predator_prey`): steps computed by hand on
//! a few agents (eating, ties broken by id, starving, splitting), and the
//! populations of a longer run equal on every backend and thread count.

use op2::{Backend, Runtime, RuntimeOptions};
use op2_predator_prey::{Params, PredatorPrey};

/// Parameters where nothing random matters: no prey births, no steps.
fn still() -> Params {
    Params {
        prey_step: 0.0,
        predator_step: 0.0,
        prey_birth: 0.0,
        gain: 5,
        threshold: 100,
        ..Params::default()
    }
}

#[test]
fn the_nearest_predator_eats_and_gains() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    // Prey 0 at (10, 10): predator 0 at distance 0.5, predator 1 at 0.25.
    // Prey 1 at (30, 30): predators 2 and 3 both at distance 0.5 (a tie:
    // the smaller id eats). Prey 2 far from everyone.
    let prey = vec![10.0, 10.0, 30.0, 30.0, 50.0, 50.0];
    let preds = vec![10.5, 10.0, 10.0, 10.25, 30.5, 30.0, 29.5, 30.0];
    let mut m = PredatorPrey::with_agents(still(), prey, preds, vec![10, 10, 10, 10], 1).unwrap();
    assert_eq!(m.step(&rt).unwrap(), (1, 4));
    let survivors: Vec<u64> = m.prey_agents().iter().map(|a| a.0).collect();
    assert_eq!(survivors, [2]);
    let energy: Vec<(u64, i32)> = m.predator_agents().iter().map(|a| (a.0, a.2)).collect();
    // Ate one: 10 + 5 - 1; ate none: 10 - 1.
    assert_eq!(energy, [(0, 9), (1, 14), (2, 14), (3, 9)]);
    let (prey_census, pred_census) = m.last_census();
    assert_eq!((prey_census.deaths, prey_census.births), (2, 0));
    assert_eq!((pred_census.deaths, pred_census.births), (0, 0));
}

#[test]
fn predators_starve_and_split() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let params = Params {
        threshold: 12,
        ..still()
    };
    // Predator 0 starves (energy 1), predator 1 eats and splits (8 + 5 - 1
    // = 12: 6 to the child, 6 kept), predator 2 just gets hungrier.
    let prey = vec![20.0, 20.0];
    let preds = vec![5.0, 5.0, 20.0, 20.5, 40.0, 40.0];
    let mut m = PredatorPrey::with_agents(params, prey, preds, vec![1, 8, 9], 1).unwrap();
    assert_eq!(m.step(&rt).unwrap(), (0, 3));
    let got: Vec<(u64, [f64; 2], i32)> = m.predator_agents();
    // Survivors in order, then the child (the next id, 3) at its parent's place.
    assert_eq!(got, [(1, [20.0, 20.5], 6), (2, [40.0, 40.0], 8), (3, [20.0, 20.5], 6)]);
    assert_eq!(m.predators().next_id(), Some(4));
}

/// Counts per step, then every prey and every predator.
type Run = (Vec<(usize, usize)>, Vec<(u64, [f64; 2])>, Vec<(u64, [f64; 2], i32)>);

/// The populations of a run of `steps`.
fn run(rt: &Runtime, steps: u64) -> Run {
    let params = Params {
        size: 32.0,
        ..Params::default()
    };
    let mut m = PredatorPrey::new(params, 600, 60, 7).unwrap();
    let counts = (0..steps).map(|_| m.step(rt).unwrap()).collect();
    (counts, m.prey_agents(), m.predator_agents())
}

#[test]
fn populations_are_the_same_on_every_backend() {
    let steps = 40;
    let seq = run(&Runtime::new(Backend::Seq).unwrap(), steps);
    // Births and deaths both happen, and the predators outgrow their
    // initial capacity (twice their number).
    assert!(seq.0.iter().any(|&(_, preds)| preds > 120), "{:?}", seq.0);
    assert!(seq.0.windows(2).any(|w| w[1].0 < w[0].0), "{:?}", seq.0);
    assert!(seq.0.windows(2).any(|w| w[1].1 < w[0].1), "{:?}", seq.0);
    let mut others: Vec<(&str, RuntimeOptions, Backend)> = Vec::new();
    #[cfg(feature = "rayon")]
    {
        others.push(("rayon, 1 thread", RuntimeOptions::default().threads(1), Backend::Rayon));
        others.push(("rayon, 3 threads", RuntimeOptions::default().threads(3), Backend::Rayon));
    }
    #[cfg(feature = "jit")]
    others.push(("jit", RuntimeOptions::default().threads(2), Backend::Jit));
    #[cfg(feature = "opencl")]
    others.push(("opencl", RuntimeOptions::default(), Backend::OpenCl));
    for (name, options, backend) in others {
        let rt = Runtime::with_options(backend, options).unwrap();
        assert!(run(&rt, steps) == seq, "{name} differs from seq");
    }
}
