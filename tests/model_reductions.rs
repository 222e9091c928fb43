//! Host reductions of agent variables (`op2::model::AgentReductions`):
//! counts of values, sums, minima, maxima and histograms computed by loops
//! on every backend equal the same computed on the host from the agents'
//! values, exactly; bad requests are errors naming the variable. And
//! single agents' initial values (`Agents::set_agent`) land on the agent
//! with that id, over defaults and given values, or are refused naming the
//! id.

use op2::model::{AgentFunction, AgentReductions, AgentType, Agents, Model, Simulation};
use op2::prelude::*;
use op2::Error;

#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

/// Agents `a` with a level `n` (i32), a weight `w` (f32), a tag `t` (u32),
/// a big number `b` (i64) and a place `x` (f64 x 2); `shift` moves the
/// levels each step.
fn model() -> Model {
    let mut m = Model::new("tags");
    let a = AgentType::new("a")
        .variable::<i32>("n", 1, &[0])
        .variable::<f32>("w", 1, &[0.5])
        .variable::<u32>("t", 1, &[7])
        .variable::<i64>("b", 1, &[0])
        .variable::<f64>("x", 2, &[0.0, 0.0]);
    m.add_agent(a).unwrap();
    m.add_function(AgentFunction::new("shift", "a").updates("n")).unwrap();
    m
}

#[op2::kernel]
fn shift(n: &mut i32) {
    *n = (*n * 5 + 3) % 11;
}

fn simulation(rt: &Runtime, count: usize) -> Simulation<'_> {
    let ids: Vec<u64> = (0..count as u64).map(|i| 3 * i + 1).collect();
    let n: Vec<i32> = (0..count).map(|i| ((i * 7) % 13) as i32 - 4).collect();
    let w: Vec<f32> = (0..count).map(|i| (i % 4) as f32 * 0.25).collect();
    let b: Vec<i64> = (0..count).map(|i| (1i64 << 40) + (i % 3) as i64).collect();
    let x: Vec<f64> = (0..2 * count).map(|i| ((i * 37) % 101) as f64 / 9.0 - 5.0).collect();
    let agents = Agents::with_ids(ids).set("n", n).set("w", w).set("b", b).set("x", x);
    simulation_of(rt, agents.set_agent(4, "t", &[9u32]))
}

/// The model on `rt` with `agents`.
fn simulation_of(rt: &Runtime, agents: Agents) -> Simulation<'_> {
    let mut sim = Simulation::new(&model(), rt).unwrap();
    sim.populate("a", agents).unwrap();
    sim.bind("shift", |c| {
        let n = c.var::<i32>("n")?;
        par_loop!(c.rt(), shift, c.agents(), n(RW))
    })
    .unwrap();
    sim
}

/// How many of `values` equal each of `of`.
fn host_counts<T: PartialEq>(values: &[T], of: &[T]) -> Vec<u64> {
    of.iter()
        .map(|v| values.iter().filter(|x| *x == v).count() as u64)
        .collect()
}

#[test]
fn reductions_by_loops_equal_the_host_on_every_backend() {
    for rt in backends() {
        let mut sim = simulation(&rt, 700);
        sim.run(2).unwrap();
        let b = rt.backend();
        let n = sim.variable::<i32>("a", "n").unwrap().to_vec();
        let of: Vec<i32> = (-10..11).collect();
        let counts = sim.count_each("a", "n", &of).unwrap();
        assert_eq!(counts, host_counts(&n, &of), "{b}: n");
        assert_eq!(counts.iter().sum::<u64>(), 700, "{b}: every level is in -10..11");
        assert!(counts.iter().filter(|&&c| c > 0).count() > 3, "{b}: {counts:?}");
        assert_eq!(sim.count("a", "n", 3).unwrap(), host_counts(&n, &[3])[0], "{b}");
        let w = sim.variable::<f32>("a", "w").unwrap().to_vec();
        assert_eq!(
            sim.count_each("a", "w", &[0.25f32, 0.75, 2.0]).unwrap(),
            host_counts(&w, &[0.25, 0.75, 2.0])
        );
        // u32: the one agent given its own tag, the others the default.
        assert_eq!(sim.count_each("a", "t", &[7u32, 9]).unwrap(), [699, 1], "{b}");
        // i64 beyond what an f64 holds exactly apart.
        let big = [(1i64 << 40) + 1, (1i64 << 40) + 2];
        assert_eq!(sim.count_each("a", "b", &big).unwrap(), [233, 233], "{b}");

        let x = sim.variable::<f64>("a", "x").unwrap().to_vec();
        let col = |c: usize| x.chunks(2).map(move |p| p[c]).collect::<Vec<f64>>();
        let (x0, x1) = (col(0), col(1));
        let sums = sim.sum("a", "x").unwrap();
        for (got, want) in sums.iter().zip([x0.iter().sum::<f64>(), x1.iter().sum::<f64>()]) {
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{b}: sum {got} vs {want}"
            );
        }
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(sim.min("a", "x").unwrap(), [min(&x0), min(&x1)], "{b}");
        assert_eq!(sim.max("a", "x").unwrap(), [max(&x0), max(&x1)], "{b}");
        assert_eq!(
            sim.sum("a", "n").unwrap(),
            [n.iter().map(|&v| v as f64).sum::<f64>()],
            "{b}"
        );

        let hist = sim.histogram("a", "x", 1, (-4.0, 4.0), 8).unwrap();
        let mut want = vec![0u64; 8];
        for v in x1.iter().filter(|v| (-4.0..4.0).contains(*v)) {
            want[((v + 4.0) as usize).min(7)] += 1;
        }
        assert_eq!(hist, want, "{b}: histogram");
        assert!(hist.iter().filter(|&&c| c > 0).count() > 3, "{b}: {hist:?}");
    }
}

#[test]
fn bad_reductions_are_errors_naming_the_variable() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = simulation(&rt, 10);
    let early = sim.count("a", "n", 0).unwrap_err().to_string();
    assert!(early.contains("has not started"), "{early}");
    sim.start().unwrap();
    let reason = |e: Error| match e {
        Error::InvalidModel { reason, .. } => reason,
        other => panic!("not InvalidModel: {other}"),
    };
    let cases = [
        (
            sim.count("a", "n", 1.0f64).unwrap_err(),
            "single `f64` values, and it holds 1 `i32`",
        ),
        (sim.count("a", "x", 1.0f64).unwrap_err(), "it holds 2 `f64`"),
        (
            sim.count("a", "y", 1).unwrap_err(),
            "`a.y`, which the model does not declare",
        ),
        (
            sim.count("z", "n", 1).unwrap_err(),
            "`z.n`, which the model does not declare",
        ),
        (sim.count_each("a", "n", &[1, 2, 1]).unwrap_err(), "equal to 1 twice"),
        (
            sim.count_each("a", "n", &(0..65).collect::<Vec<i32>>()).unwrap_err(),
            "at most 64",
        ),
        (
            sim.histogram("a", "x", 2, (0.0, 1.0), 4).unwrap_err(),
            "component below 2",
        ),
        (sim.histogram("a", "x", 0, (0.0, 1.0), 0).unwrap_err(), "1 to 64 bins"),
        (sim.histogram("a", "x", 0, (1.0, 1.0), 4).unwrap_err(), "lo < hi"),
        (sim.histogram("a", "x", 0, (0.0, f64::NAN), 4).unwrap_err(), "lo < hi"),
        (
            sim.histogram("a", "x", 0, (0.0, f64::INFINITY), 4).unwrap_err(),
            "finite lo < hi",
        ),
        (
            sim.histogram("a", "x", 0, (-f64::MAX, f64::MAX), 4).unwrap_err(),
            "finite lo < hi",
        ),
    ];
    for (e, want) in cases {
        let r = reason(e);
        assert!(r.contains(want), "{r:?} should say {want:?}");
    }
    // No values asked, no counts.
    assert_eq!(sim.count_each::<i32>("a", "n", &[]).unwrap(), Vec::<u64>::new());
}

#[test]
fn single_agents_take_their_own_initial_values() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let agents = Agents::with_ids(vec![10, 20, 30])
        .set_agent(30, "x", &[1.5, -2.0])
        .set("x", vec![0.0; 6])
        .set_agent(20, "n", &[4])
        .set_agent(20, "n", &[5]);
    let mut sim = simulation_of(&rt, agents);
    sim.start().unwrap();
    // Over given values whichever comes first, over defaults, the last wins.
    assert_eq!(
        sim.variable::<f64>("a", "x").unwrap().to_vec(),
        [0.0, 0.0, 0.0, 0.0, 1.5, -2.0]
    );
    assert_eq!(sim.variable::<i32>("a", "n").unwrap().to_vec(), [0, 5, 0]);

    let bad = [
        (
            Agents::new(3).set_agent(3, "n", &[1]),
            "give agent 3 a value of `n`, and no agent has id 3",
        ),
        (
            Agents::new(3).set_agent(1, "x", &[1.0]),
            "give agent 1 1 `f64` values of `x`, which holds 2",
        ),
        (
            Agents::new(3).set_agent(1, "n", &[1u32]),
            "1 `u32` values of `n`, which holds 1 `i32`",
        ),
        (
            Agents::new(3).set_agent(1, "q", &[1]),
            "values of `q`, which the type does not declare",
        ),
    ];
    for (agents, want) in bad {
        let mut sim = simulation_of(&rt, agents);
        let e = sim.start().unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} should say {want:?}");
    }

    // Every share refuses what any rank would: an id no agent has, values
    // of the wrong width for another rank's agent, a variable the type
    // lacks (so that no rank goes on alone into a distributed start).
    let bad = [
        (Agents::new(4).set_agent(99, "n", &[1]), "no agent has id 99"),
        (
            Agents::new(4).set_agent(2, "x", &[1.0]),
            "give agent 2 1 `f64` values of `x`",
        ),
        (
            Agents::new(4).set_agent(2, "q", &[1]),
            "values of `q`, which the type does not declare",
        ),
    ];
    for (agents, want) in bad {
        for (rank, ids) in [(0, [0, 2]), (1, [1, 3])] {
            let share = agents.clone().set_agent(1, "n", &[8]).share(rank, 2);
            assert_eq!(share.ids(), ids);
            let e = simulation_of(&rt, share).start().unwrap_err().to_string();
            assert!(e.contains(want), "rank {rank}: {e:?} should say {want:?}");
        }
    }
    let agents = Agents::new(4).set_agent(1, "n", &[8]).set_agent(2, "n", &[9]);
    for (rank, want) in [(0, [0, 9]), (1, [8, 0])] {
        let mut sim = simulation_of(&rt, agents.share(rank, 2));
        sim.start().unwrap();
        assert_eq!(sim.variable::<i32>("a", "n").unwrap().to_vec(), want, "rank {rank}");
    }
}
