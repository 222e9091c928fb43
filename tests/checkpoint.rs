//! Checkpoints of model-layer simulations (`op2::model::Checkpoints`,
//! feature `hdf5`): a run checkpointed at step k and resumed from the file
//! ends bit for bit where the uninterrupted run ends, on every backend, for
//! models with spatial lists, births and deaths, random streams, states,
//! networks and macro properties; a checkpoint of another model, of
//! another layout version or cut short is refused with an error naming the
//! file, never a panic or a partial load.
#![cfg(feature = "hdf5")]

use std::path::PathBuf;

use op2::model::{AgentType, Checkpoints, Model, Simulation, Snapshot};
use op2::prelude::*;
use op2::Error;
use op2_circles::{box_side, circles, initial_positions, Params};
use op2_predator_prey::predator_prey;

#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

#[path = "support/scratch.rs"]
mod scratch;
use scratch::Scratch;

/// This test's own directory, `op2-checkpoint-<name>-<pid>`, removed when done.
fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("checkpoint-{name}"))
}

/// Runs `make()` for `steps` steps whole, and again checkpointed after
/// `at` steps and resumed from the file into a fresh `make()`: both end
/// in the same state (returned).
fn resumes_bitwise<'rt>(
    dir: &std::path::Path,
    what: &str,
    make: impl Fn() -> Simulation<'rt>,
    at: u64,
    steps: u64,
) -> Snapshot {
    let mut whole = make();
    whole.run(steps).unwrap();
    let want = whole.snapshot().unwrap().in_id_order();
    let path = dir.join(format!("{what}.h5"));
    let mut first = make();
    first.run(at).unwrap();
    first.checkpoint(&path).unwrap();
    assert!(
        !dir.join(format!("{what}.h5.writing")).exists(),
        "{what}: the file was renamed"
    );
    drop(first);
    let mut resumed = make();
    resumed.resume(&path).unwrap();
    assert_eq!(resumed.run(steps - at).unwrap(), steps - at);
    assert_eq!(resumed.steps(), steps, "{what}: steps count on from the checkpoint's");
    let got = resumed.snapshot().unwrap().in_id_order();
    assert!(got == want, "{what}: the resumed run ends where the whole run ends");
    want
}

#[test]
fn circles_resume_bitwise_on_every_backend() {
    let dir = scratch("circles");
    let n = 1200;
    let side = box_side(n, 1.0);
    let start = initial_positions(n, side, 5);
    let ids: Vec<u64> = (0..n as u64).collect();
    let p = Params {
        sort_every: 3,
        ..Params::default()
    };
    for rt in backends() {
        let what = format!("circles-{}", rt.backend());
        let end = resumes_bitwise(&dir, &what, || circles(&rt, &ids, &start, side, p).unwrap(), 4, 10);
        // The agents moved: a checkpoint that lost them would not match.
        let pos0: Vec<f32> = start.concat();
        assert_ne!(end.agents[0].variables[1].bytes, bytemuck_bytes(&pos0), "{what}: moved");
    }
}

fn bytemuck_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

#[test]
fn predators_and_prey_resume_bitwise_on_every_backend() {
    let dir = scratch("predator-prey");
    let params = op2_predator_prey::Params::default();
    for rt in backends() {
        let what = format!("predator-prey-{}", rt.backend());
        let make = || predator_prey(&rt, params, (800, 80), 3, (0, 1)).unwrap();
        let end = resumes_bitwise(&dir, &what, make, 7, 16);
        // Births and deaths happened after the checkpoint: the next ids
        // and the streams' counters came through it.
        assert!(end.agents.iter().any(|a| a.next_id > 880), "{what}: births");
        assert!(end.agents.iter().all(|a| a.stream_loops > 0), "{what}: draws");
    }
}

#[test]
fn network_and_lattice_epidemics_resume_bitwise_on_every_backend() {
    use op2_sir::{lattice_sir, network_counts, network_sir};
    let dir = scratch("sir");
    let mut rng = op2::Philox::new(31, 0, 0);
    let ids: Vec<u64> = (0..150u64).map(|i| 7 * i + 5).collect();
    let mut edges = Vec::new();
    while edges.len() < 400 {
        let (a, b) = (rng.below(150) as usize, rng.below(150) as usize);
        if a != b {
            edges.push((ids[a], ids[b]));
        }
    }
    for rt in backends() {
        let what = format!("network-{}", rt.backend());
        let make = || network_sir(&rt, &ids, &edges, ids[4], (0.35, 0.2), 9).unwrap();
        resumes_bitwise(&dir, &what, make, 5, 12);
        // The states come back with the run, so the counts taken from them do.
        let mut resumed = make();
        resumed.resume(dir.join(format!("{what}.h5"))).unwrap();
        resumed.start().unwrap();
        let mut first = make();
        first.run(5).unwrap();
        assert_eq!(
            network_counts(&resumed).unwrap(),
            network_counts(&first).unwrap(),
            "{what}: counts"
        );

        let what = format!("lattice-{}", rt.backend());
        let make = || lattice_sir(&rt, (12, 10), (0.4, 0.15), &[3, 60], 5, (0, 1)).unwrap();
        resumes_bitwise(&dir, &what, make, 6, 15);
    }
}

/// A checkpoint of Circles after two steps, at `dir/circles.h5`.
fn circles_checkpoint(rt: &Runtime, dir: &std::path::Path) -> PathBuf {
    let n = 300;
    let side = box_side(n, 1.0);
    let start = initial_positions(n, side, 2);
    let ids: Vec<u64> = (0..n as u64).collect();
    let mut sim = circles(rt, &ids, &start, side, Params::default()).unwrap();
    sim.run(2).unwrap();
    let path = dir.join("circles.h5");
    sim.checkpoint(&path).unwrap();
    path
}

fn fresh_circles(rt: &Runtime) -> Simulation<'_> {
    circles(rt, &[], &[], box_side(300, 1.0), Params::default()).unwrap()
}

#[test]
fn checkpoints_cut_short_are_refused_at_every_eighth() {
    let dir = scratch("cut");
    let rt = Runtime::new(Backend::Seq).unwrap();
    let path = circles_checkpoint(&rt, &dir);
    let whole = std::fs::read(&path).unwrap();
    // The whole file resumes (so the refusals below are the cuts').
    fresh_circles(&rt).resume(&path).unwrap();
    for eighth in 0..8 {
        let cut = dir.join(format!("cut-{eighth}.h5"));
        std::fs::write(&cut, &whole[..whole.len() * eighth / 8]).unwrap();
        let mut sim = fresh_circles(&rt);
        match sim.resume(&cut) {
            Err(Error::MeshFile { path, .. }) => assert_eq!(path, cut, "the error names the file"),
            Err(e) => panic!("cut at {eighth}/8: an error of another kind: {e}"),
            Ok(_) => panic!("cut at {eighth}/8: resumed from a file cut short"),
        }
    }
}

#[test]
fn checkpoints_of_other_models_and_versions_are_refused_naming_the_difference() {
    let dir = scratch("other");
    let rt = Runtime::new(Backend::Seq).unwrap();
    let path = circles_checkpoint(&rt, &dir);

    // Another model.
    let mut model = Model::new("walkers");
    model
        .add_agent(AgentType::new("walker").variable::<f64>("x", 1, &[0.0]))
        .unwrap();
    let mut walkers = Simulation::new(&model, &rt).unwrap();
    let e = walkers.resume(&path).map(drop).unwrap_err().to_string();
    assert!(e.contains("circles.h5") && e.contains("model `circles`"), "{e}");

    // The same model's name with a variable of another type.
    let mut model = Model::new("circles");
    let circle = AgentType::new("circle")
        .variable::<u32>("id", 1, &[0])
        .variable::<f64>("pos", 3, &[0.0; 3]);
    model.add_agent(circle).unwrap();
    let mut other = Simulation::new(&model, &rt).unwrap();
    let e = other.resume(&path).map(drop).unwrap_err().to_string();
    assert!(
        e.contains("circle.pos") && e.contains("f32") && e.contains("f64"),
        "{e}"
    );

    // Another version of the layout.
    let newer = dir.join("newer.h5");
    std::fs::copy(&path, &newer).unwrap();
    let w = op2::hdf5::MeshWriter::append(&newer).unwrap();
    w.write_constant::<i32>("checkpoint/format", &[op2::model::CHECKPOINT_FORMAT + 1])
        .unwrap();
    w.finish().unwrap();
    let e = fresh_circles(&rt).resume(&newer).map(drop).unwrap_err().to_string();
    assert!(e.contains("checkpoint/format") && e.contains("version"), "{e}");

    // A simulation that stepped already takes no checkpoint.
    let mut stepped = fresh_circles(&rt);
    stepped.step().unwrap();
    let e = stepped.resume(&path).map(drop).unwrap_err().to_string();
    assert!(e.contains("stepped"), "{e}");
}

#[test]
fn counters_come_through_a_checkpoint_even_past_the_agents_ids() {
    // The next child's id need not follow the largest id alive (the
    // youngest may have died): the checkpoint keeps it as it is.
    let dir = scratch("counters");
    let rt = Runtime::new(Backend::Seq).unwrap();
    let params = op2_predator_prey::Params::default();
    let make = || predator_prey(&rt, params, (400, 40), 3, (0, 1)).unwrap();
    let mut sim = make();
    sim.run(3).unwrap();
    let mut s = sim.snapshot().unwrap();
    for a in &mut s.agents {
        a.next_id += 1000;
        a.stream_loops += 7;
    }
    let mut bumped = make();
    bumped.restore(s.clone()).unwrap();
    let path = dir.join("bumped.h5");
    bumped.checkpoint(&path).unwrap();
    let mut resumed = make();
    resumed.resume(&path).unwrap();
    let got = resumed.snapshot().unwrap();
    for (a, b) in got.agents.iter().zip(&s.agents) {
        assert_eq!((a.next_id, a.stream_loops), (b.next_id, b.stream_loops), "`{}`", a.name);
    }
    assert!(got.in_id_order() == s.in_id_order());
}

#[test]
fn a_snapshot_that_does_not_fit_is_refused_and_changes_nothing() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = fresh_circles(&rt);
    let mut bad = sim.snapshot().unwrap();
    bad.environment.push(("heat".into(), vec![0; 8]));
    let e = sim.restore(bad).map(drop).unwrap_err();
    assert!(e.to_string().contains("environment"), "{e}");
    let mut bad = sim.snapshot().unwrap();
    bad.agents[0].variables[1].scalar = op2::ScalarType::F64;
    let e = sim.restore(bad).map(drop).unwrap_err();
    assert!(e.to_string().contains("circle.pos"), "{e}");
    // Ids are checked before anything changes, not at the next step.
    let mut sim = circles(
        &rt,
        &[4, 9],
        &[[1.0; 3], [2.0; 3]],
        box_side(300, 1.0),
        Params::default(),
    )
    .unwrap();
    let mut bad = sim.snapshot().unwrap();
    bad.agents[0].ids[1] = 4;
    let e = sim.restore(bad).map(drop).unwrap_err();
    assert!(e.to_string().contains("agent id 4 of `circle` appears twice"), "{e}");
    let mut bad = sim.snapshot().unwrap();
    bad.agents[0].ids[0] = u64::MAX;
    let e = sim.restore(bad).map(drop).unwrap_err();
    assert!(e.to_string().contains("is past the largest id"), "{e}");
    // States where the type has none (or none where it has some) would
    // put every agent in the first state.
    let mut bad = sim.snapshot().unwrap();
    bad.agents[0].states = Some(vec![0, 0]);
    let e = sim.restore(bad).map(drop).unwrap_err();
    assert!(
        e.to_string().contains("has 0 states and the snapshot gives states"),
        "{e}"
    );
    // The simulation is as it was: it steps.
    sim.run(2).unwrap();
    assert_eq!(sim.steps(), 2);
}

#[test]
fn checkpoints_every_k_steps_keep_the_last_two_and_name_a_bad_folder() {
    let dir = scratch("every");
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = fresh_circles(&rt);
    let mut every = op2::model::CheckpointEvery::new(dir.join("ck"), 3);
    let mut written = Vec::new();
    for _ in 0..10 {
        sim.step().unwrap();
        written.extend(every.after_step(&sim).unwrap());
    }
    let steps: Vec<u64> = [3, 6, 9].to_vec();
    assert_eq!(
        written,
        steps
            .iter()
            .map(|k| dir.join(format!("ck/step_{k}.h5")))
            .collect::<Vec<_>>()
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.join("ck"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["step_6.h5", "step_9.h5"], "the last two, nothing half written");
    // A run resumed from step 6 into the same folder counts the files
    // before it among the two it keeps.
    let mut resumed = fresh_circles(&rt);
    resumed.resume(dir.join("ck/step_6.h5")).unwrap();
    let mut every = op2::model::CheckpointEvery::new(dir.join("ck"), 3);
    for _ in 0..6 {
        resumed.step().unwrap();
        every.after_step(&resumed).unwrap();
    }
    let mut left: Vec<String> = std::fs::read_dir(dir.join("ck"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["step_12.h5", "step_9.h5"], "the resumed run's last two");
    // A folder where a file is.
    std::fs::write(dir.join("file"), "").unwrap();
    let mut bad = op2::model::CheckpointEvery::new(dir.join("file"), 1);
    sim.step().unwrap();
    match bad.after_step(&sim) {
        Err(Error::Io { path, .. }) => assert_eq!(path, dir.join("file")),
        other => panic!("a folder that cannot be made: {other:?}"),
    }
}

#[op2::kernel]
fn drift(x: &mut f64, total: &mut f64) {
    *total += *x;
    *x = *x * 1.0001 + 0.37;
}

/// Agents of one f64 `x` that add it to macro property `total` and drift.
fn drifting(rt: &Runtime, ids: Vec<u64>, x: Vec<f64>) -> Simulation<'_> {
    use op2::model::{AgentFunction, EnvProperty};
    let mut m = Model::new("drift");
    m.add_agent(AgentType::new("p").variable::<f64>("x", 1, &[0.0]))
        .unwrap();
    m.add_environment(EnvProperty::reduced::<f64>("total", 1)).unwrap();
    let f = AgentFunction::new("drift", "p").updates("x");
    m.add_function(f.environment("total", Access::Inc)).unwrap();
    let mut sim = Simulation::new(&m, rt).unwrap();
    sim.populate("p", op2::model::Agents::with_ids(ids).set("x", x))
        .unwrap();
    sim.bind("drift", |c| {
        let (x, total) = (c.var::<f64>("x")?, c.env::<f64>("total")?);
        par_loop!(c.rt(), drift, c.agents(), x(RW), total(INC))
    })
    .unwrap();
    sim.start().unwrap();
    sim
}

/// A sum of floats depends on the order of its terms, and a reduction adds
/// the agents in the order they are kept: a resumed run keeps them in the
/// order the checkpoint holds (here not the ids'), or its macro property
/// would differ from the whole run's in its last bits.
#[test]
fn agents_kept_out_of_id_order_resume_bitwise() {
    let dir = scratch("order");
    let n = 500u64;
    let ids: Vec<u64> = (0..n).rev().collect();
    let x: Vec<f64> = (0..n)
        .map(|i| (i as f64 * 0.7368).sin() * 10f64.powi((i % 7) as i32))
        .collect();
    // The orders give different sums (so the test can fail).
    let kept: f64 = x.iter().sum();
    let by_id: f64 = x.iter().rev().sum();
    assert_ne!(kept.to_bits(), by_id.to_bits(), "the data must tell the orders apart");
    for rt in backends() {
        let what = format!("drift-{}", rt.backend());
        let make = || drifting(&rt, ids.clone(), x.clone());
        let end = resumes_bitwise(&dir, &what, make, 3, 7);
        assert_ne!(end.environment[0].1, vec![0; 8], "{what}: the agents added to `total`");
    }
}
