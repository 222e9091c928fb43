//! The model layer's runner (`op2::model::Simulation`): models ported onto
//! it compute, on every backend, the bits their hand-wired versions compute
//! on seq; its layers are those the description implies; and a body that
//! asks for what its function did not declare, or as another type, an
//! unbound function and initial agents that do not fit the declaration are
//! errors that name them.

use op2::model::{AgentFunction, AgentType, Agents, Model, Simulation};
use op2::prelude::*;
use op2::Error;
use op2_circles::{box_side, circles, circles_model, initial_positions, Circles, Params};
use op2_predator_prey::{predator_prey, predator_prey_model, PredatorPrey};

#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

/// Values of `dat` (dim `dim`) in id order, ids from `set`.
fn by_id<T: op2::Scalar>(set: &Set, dat: &Dat<T>, dim: usize) -> Vec<(u64, Vec<T>)> {
    let values = dat.to_vec();
    let mut v: Vec<(u64, Vec<T>)> = set
        .global_ids()
        .iter()
        .zip(values.chunks_exact(dim))
        .map(|(&id, c)| (id, c.to_vec()))
        .collect();
    v.sort_by_key(|(id, _)| *id);
    v
}

#[test]
fn circles_model_has_the_layers_its_description_implies() {
    let model = circles_model(10.0, Params::default()).unwrap();
    assert_eq!(
        model.layers().unwrap().to_string(),
        "layer 1: output_location\nlayer 2: move"
    );
}

#[test]
fn circles_on_the_model_layer_computes_the_hand_wired_bits_on_every_backend() {
    let n = 2000;
    let side = box_side(n, 1.0);
    let start = initial_positions(n, side, 5);
    let ids: Vec<u64> = (0..n as u64).collect();
    let steps = 12;
    let seq = Runtime::new(Backend::Seq).unwrap();
    for sort_every in [0, 3] {
        let p = Params {
            sort_every,
            ..Params::default()
        };
        let mut hand = Circles::new(&start, side, p).unwrap();
        for _ in 0..steps {
            hand.step(&seq).unwrap();
        }
        let want = by_id(hand.agents(), hand.positions_dat(), 3);
        for rt in backends() {
            let mut sim = circles(&rt, &ids, &start, side, p).unwrap();
            sim.run(steps).unwrap();
            assert_eq!(sim.steps(), steps);
            let set = sim.population("circle").unwrap();
            let got = by_id(set, sim.variable::<f32>("circle", "pos").unwrap(), 3);
            assert!(
                got == want,
                "{} (sorting every {sort_every}) differs from the hand-wired model",
                rt.backend()
            );
            let ids_in_memory = sim.variable::<u32>("circle", "id").unwrap().to_vec();
            let sorted = ids_in_memory.windows(2).any(|w| w[0] > w[1]);
            assert_eq!(
                sorted,
                sort_every > 0,
                "{}: the agents were sorted as asked",
                rt.backend()
            );
        }
    }
}

#[test]
fn predator_prey_model_has_the_layers_its_description_implies() {
    let model = predator_prey_model(op2_predator_prey::Params::default()).unwrap();
    assert_eq!(
        model.layers().unwrap().to_string(),
        "layer 1: output_predators\nlayer 2: choose_eater\nlayer 3: output_prey\nlayer 4: hunt, prey_live"
    );
}

#[test]
fn predator_prey_on_the_model_layer_computes_the_hand_wired_bits_on_every_backend() {
    let params = op2_predator_prey::Params::default();
    let (prey, predators, seed, steps) = (1500, 150, 3, 25);
    let seq = Runtime::new(Backend::Seq).unwrap();
    let mut hand = PredatorPrey::new(params, prey, predators, seed).unwrap();
    let mut counts = Vec::new();
    for _ in 0..steps {
        counts.push(hand.step(&seq).unwrap());
    }
    assert!(
        counts.iter().any(|c| c.0 != prey) && counts.iter().any(|c| c.1 != predators),
        "births and deaths: {counts:?}"
    );
    let want_prey: Vec<(u64, Vec<f64>)> = hand.prey_agents().into_iter().map(|(id, p)| (id, p.to_vec())).collect();
    let want_preds: Vec<(u64, Vec<f64>, i32)> = hand
        .predator_agents()
        .into_iter()
        .map(|(id, p, e)| (id, p.to_vec(), e))
        .collect();
    for rt in backends() {
        let mut sim = predator_prey(&rt, params, (prey, predators), seed, (0, 1)).unwrap();
        let mut got_counts = Vec::new();
        for _ in 0..steps {
            sim.step().unwrap();
            got_counts.push((
                sim.population("prey").unwrap().size(),
                sim.population("predator").unwrap().size(),
            ));
        }
        assert_eq!(got_counts, counts, "{}: populations per step", rt.backend());
        let prey_set = sim.population("prey").unwrap();
        assert!(
            by_id(prey_set, sim.variable::<f64>("prey", "pos").unwrap(), 2) == want_prey,
            "{}: prey",
            rt.backend()
        );
        let preds = sim.population("predator").unwrap();
        let pos = by_id(preds, sim.variable::<f64>("predator", "pos").unwrap(), 2);
        let energy = by_id(preds, sim.variable::<i32>("predator", "energy").unwrap(), 1);
        let got: Vec<(u64, Vec<f64>, i32)> = pos
            .into_iter()
            .zip(energy)
            .map(|((id, p), (_, e))| (id, p, e[0]))
            .collect();
        assert!(got == want_preds, "{}: predators", rt.backend());
    }
}

/// A model of one agent type `a` with variable `x` (f64) and `n` (i32), and
/// one function `f` using `x`.
fn small_model() -> Model {
    let mut model = Model::new("small");
    model
        .add_agent(
            AgentType::new("a")
                .variable::<f64>("x", 1, &[1.5])
                .variable::<i32>("n", 2, &[7, 8]),
        )
        .unwrap();
    model.add_function(AgentFunction::new("f", "a").updates("x")).unwrap();
    model
}

#[op2::kernel]
fn double(x: &mut f64) {
    *x *= 2.0;
}

#[test]
fn variables_start_at_their_defaults_and_bodies_run_each_step() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = Simulation::new(&small_model(), &rt).unwrap();
    sim.populate("a", Agents::new(3).set("x", vec![1.0f64, 2.0, 3.0]))
        .unwrap();
    sim.bind("f", |c| {
        let x = c.var::<f64>("x")?;
        par_loop!(c.rt(), double, c.agents(), x(RW))
    })
    .unwrap();
    sim.run(2).unwrap();
    assert_eq!(sim.variable::<f64>("a", "x").unwrap().to_vec(), [4.0, 8.0, 12.0]);
    assert_eq!(sim.variable::<i32>("a", "n").unwrap().to_vec(), [7, 8, 7, 8, 7, 8]);
}

fn reason(e: Error) -> String {
    match e {
        Error::InvalidModel { model, reason } => {
            assert_eq!(model, "small");
            reason
        }
        other => panic!("expected InvalidModel, got {other}"),
    }
}

/// A function's body.
type Body = fn(&op2::model::Call<'_>) -> op2::Result<()>;

#[test]
fn a_body_asking_for_what_its_function_did_not_declare_is_named() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let cases: [(&str, Body); 4] = [
        ("asks for `a.n`, which it does not declare", |c| {
            c.var::<i32>("n").map(drop)
        }),
        ("asks for `a.x` as `f32` values, and it holds 1 `f64` per agent", |c| {
            c.var::<f32>("x").map(drop)
        }),
        ("asks for its input, and it reads no message list", |c| {
            c.input().map(drop)
        }),
        ("asks for environment property `g`, which it does not declare", |c| {
            c.env::<f64>("g").map(drop)
        }),
    ];
    for (want, body) in cases {
        let mut sim = Simulation::new(&small_model(), &rt).unwrap();
        sim.populate("a", Agents::new(2)).unwrap();
        sim.bind("f", body).unwrap();
        let got = reason(sim.step().unwrap_err());
        assert!(got.contains("function `f`") && got.contains(want), "{got}");
    }
}

#[test]
fn unbound_functions_and_ill_fitting_agents_are_named() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = Simulation::new(&small_model(), &rt).unwrap();
    let got = reason(sim.start().unwrap_err());
    assert!(got.contains("function `f` has no body"), "{got}");

    let cases = [
        (
            Agents::new(2).set("x", vec![1.0f64]),
            "give 1 `f64` values of `x`, and 2 agents of 1 `f64` need 2",
        ),
        (
            Agents::new(2).set("n", vec![1.0f64; 4]),
            "give 4 `f64` values of `n`, and 2 agents of 2 `i32` need 4",
        ),
        (
            Agents::new(1).set("y", vec![1.0f64]),
            "give values of `y`, which the type does not declare",
        ),
    ];
    for (agents, want) in cases {
        let mut sim = Simulation::new(&small_model(), &rt).unwrap();
        sim.bind("f", |_| Ok(())).unwrap();
        sim.populate("a", agents).unwrap();
        let got = reason(sim.start().unwrap_err());
        assert!(got.contains(want), "{got}");
    }
    let mut sim = Simulation::new(&small_model(), &rt).unwrap();
    assert!(reason(sim.populate("b", Agents::new(1)).map(drop).unwrap_err()).contains("type `b`"));
    assert!(reason(sim.bind("g", |_| Ok(())).map(drop).unwrap_err()).contains("function `g`"));
    assert!(reason(sim.variable::<f64>("a", "x").map(drop).unwrap_err()).contains("has not started"));
    sim.bind("f", |_| Ok(())).unwrap();
    sim.start().unwrap();
    assert!(reason(sim.populate("a", Agents::new(1)).map(drop).unwrap_err()).contains("before the simulation starts"));
    let got = reason(sim.variable::<i32>("a", "x").map(drop).unwrap_err());
    assert!(got.contains("the host asks for `a.x` as `i32` values"), "{got}");
}

#[test]
fn host_functions_run_at_start_each_step_and_exit_and_conditions_end_runs() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let events = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut sim = Simulation::new(&small_model(), &rt).unwrap();
    sim.populate("a", Agents::new(2)).unwrap();
    sim.bind("f", |c| {
        let x = c.var::<f64>("x")?;
        par_loop!(c.rt(), double, c.agents(), x(RW))
    })
    .unwrap();
    let (e1, e2, e3, e4) = (events.clone(), events.clone(), events.clone(), events.clone());
    sim.add_init_function(move |s| {
        // The data exist: an init function may set the agents' values.
        s.variable::<f64>("a", "x")?.data_mut()[1] = 10.0;
        e1.borrow_mut().push(format!("init {}", s.steps()));
        Ok(())
    });
    sim.add_step_function(move |s| {
        e2.borrow_mut().push(format!("step {}", s.steps()));
        Ok(())
    });
    sim.add_exit_condition(move |s| {
        e3.borrow_mut().push(format!("condition {}", s.steps()));
        Ok(s.variable::<f64>("a", "x")?.data_ro()[1] >= 80.0)
    });
    sim.add_exit_function(move |s| {
        e4.borrow_mut().push(format!("exit {}", s.steps()));
        Ok(())
    });
    assert_eq!(sim.run(10).unwrap(), 3, "10 -> 20 -> 40 -> 80: three steps");
    assert_eq!(
        *events.borrow(),
        [
            "init 0",
            "step 1",
            "condition 1",
            "step 2",
            "condition 2",
            "step 3",
            "condition 3",
            "exit 3"
        ]
    );
    assert_eq!(sim.variable::<f64>("a", "x").unwrap().to_vec(), [12.0, 80.0]);
}

#[test]
fn boids_model_has_the_layers_its_description_implies() {
    let model = op2_boids::boids_model(10.0, op2_boids::Params::default()).unwrap();
    assert_eq!(
        model.layers().unwrap().to_string(),
        "layer 1: output_location\nlayer 2: flock"
    );
}

#[test]
fn boids_fly_the_same_bits_on_every_backend_and_align() {
    use op2_boids::{boids, box_side, flock_statistics, initial_state, speed_and_polarisation, Params};
    let (n, steps, p) = (1200, 30, Params::default());
    let side = box_side(n, 2.0);
    let start = initial_state(n, side, 9, &p);
    let ids: Vec<u64> = (0..n as u64).collect();
    let mut reference = None;
    for rt in backends() {
        let agents = Agents::with_ids(ids.clone())
            .set("pos", start.0.clone())
            .set("vel", start.1.clone());
        let mut sim = boids(&rt, agents, side, p).unwrap();
        let before = speed_and_polarisation(flock_statistics(&sim).unwrap());
        sim.run(steps).unwrap();
        let set = sim.population("boid").unwrap();
        let got = (
            by_id(set, sim.variable::<f32>("boid", "pos").unwrap(), 3),
            by_id(set, sim.variable::<f32>("boid", "vel").unwrap(), 3),
        );
        // The statistics by loop are those of the velocities on the host.
        let (speed, polarisation) = speed_and_polarisation(flock_statistics(&sim).unwrap());
        let unit: Vec<[f64; 3]> = (got.1.iter())
            .map(|(_, v)| {
                let s = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() as f64;
                [v[0] as f64 / s, v[1] as f64 / s, v[2] as f64 / s]
            })
            .collect();
        let host_speed = got
            .1
            .iter()
            .map(|(_, v)| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() as f64)
            .sum::<f64>()
            / n as f64;
        let mean = |c: usize| unit.iter().map(|u| u[c]).sum::<f64>() / n as f64;
        let host_polarisation = (mean(0).powi(2) + mean(1).powi(2) + mean(2).powi(2)).sqrt();
        assert!((speed - host_speed).abs() < 1e-8 && (polarisation - host_polarisation).abs() < 1e-8);
        // Random headings at first; the flock aligns.
        assert!(
            before.1 < 0.1 && polarisation > 2.0 * before.1,
            "{before:?} -> {polarisation}"
        );
        match &reference {
            None => reference = Some(got),
            Some(want) => assert!(got == *want, "{} differs from seq", rt.backend()),
        }
    }
}

#[test]
fn populations_written_read_back_exactly_as_csv_and_json_lines() {
    use op2_boids::{boids, boids_model, box_side, initial_state, Params};
    let rt = Runtime::new(Backend::Seq).unwrap();
    let (n, p) = (300, Params::default());
    let side = box_side(n, 2.0);
    let (pos, vel) = initial_state(n, side, 3, &p);
    let mut sim = boids(&rt, Agents::new(n).set("pos", pos).set("vel", vel), side, p).unwrap();
    sim.run(5).unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model_populations");
    std::fs::create_dir_all(&dir).unwrap();
    let model = boids_model(side, p).unwrap();
    let want = (
        sim.population("boid").unwrap().global_ids().to_vec(),
        sim.variable::<f32>("boid", "pos").unwrap().to_vec(),
        sim.variable::<f32>("boid", "vel").unwrap().to_vec(),
    );
    for file in ["boids.csv", "boids.jsonl"] {
        let path = dir.join(file);
        sim.write_population("boid", &path).unwrap();
        let agents = Agents::read(&model, "boid", &path).unwrap();
        assert_eq!(agents.ids(), &want.0[..], "{file}");
        let mut again = Simulation::new(&model, &rt).unwrap();
        again.populate("boid", agents).unwrap();
        again.bind("flock", |_| Ok(())).unwrap();
        again.start().unwrap();
        let got = (
            again.population("boid").unwrap().global_ids().to_vec(),
            again.variable::<f32>("boid", "pos").unwrap().to_vec(),
            again.variable::<f32>("boid", "vel").unwrap().to_vec(),
        );
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            (&got.0, bits(&got.1), bits(&got.2)),
            (&want.0, bits(&want.1), bits(&want.2)),
            "{file}"
        );
    }
    let text = std::fs::read_to_string(dir.join("boids.csv")).unwrap();
    assert!(
        text.starts_with("id,pos[0],pos[1],pos[2],vel[0],vel[1],vel[2]\n"),
        "{}",
        &text[..60]
    );
}

#[test]
fn population_files_that_do_not_fit_the_type_are_named_with_their_line() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model_populations");
    std::fs::create_dir_all(&dir).unwrap();
    let model = small_model();
    let cases = [
        ("a.csv", "id,x,y\n0,1,2\n", 1, "`y` is not a variable of agent type `a`"),
        ("b.csv", "id,x,n[0]\n0,1,2\n", 1, "`n` has 2 values, and 1 columns"),
        ("c.csv", "id,x\n0,1.5\n1,abc\n", 3, "`abc` is not a value of `x` (f64)"),
        ("d.csv", "x\n1.5\n", 1, "one `id` column"),
        (
            "e.jsonl",
            "{\"id\":0,\"n\":[1,2,3]}\n",
            1,
            "`n` has 2 values, and 3 were given",
        ),
        ("f.jsonl", "{\"id\":0,\"x\":1}\n{\"x\":2}\n", 2, "no \"id\""),
        (
            "g.jsonl",
            "{\"id\":0,\"x\":1}\n{\"id\":1,\"n\":[1,2]}\n",
            2,
            "other variables than the first line",
        ),
        (
            "i.jsonl",
            "{\"id\":[1,2],\"x\":1}\n",
            1,
            "`id` has 2 values, and an agent has one",
        ),
        ("j.jsonl", "{\"id\":1,\"x\":1,\"id\":2}\n", 1, "`id` is given twice"),
        ("k.jsonl", "{\"id\":1,\"x\":1,\"x\":2}\n", 1, "`x` is given twice"),
    ];
    for (file, text, want_line, want) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        match Agents::read(&model, "a", &path) {
            Err(Error::InputFile { line, reason, .. }) => {
                assert_eq!(line, want_line, "{file}: {reason}");
                assert!(reason.contains(want), "{file}: {reason}");
            }
            other => panic!("{file}: expected an error, got {other:?}"),
        }
    }
    // A partial population: the variables it lacks take their defaults.
    std::fs::write(
        dir.join("h.jsonl"),
        "{\"id\":4,\"x\":\"NaN\"}\n{\"id\":9,\"x\":-0.25}\n",
    )
    .unwrap();
    let agents = Agents::read(&model, "a", dir.join("h.jsonl")).unwrap();
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = Simulation::new(&model, &rt).unwrap();
    sim.populate("a", agents).unwrap();
    sim.bind("f", |_| Ok(())).unwrap();
    sim.start().unwrap();
    let x = sim.variable::<f64>("a", "x").unwrap().to_vec();
    assert!(x[0].is_nan() && x[1] == -0.25);
    assert_eq!(sim.variable::<i32>("a", "n").unwrap().to_vec(), [7, 8, 7, 8]);
    assert_eq!(sim.population("a").unwrap().global_ids().to_vec(), [4, 9]);
}

#[test]
fn lattice_sir_moves_agents_between_states_as_the_plain_model_on_every_backend() {
    use op2::model::{Log, LogFile, Logging};
    use op2_sir::{lattice_sir, lattice_sir_by_hand, lattice_sir_model};
    let (size, rates, infected, seed, steps) = ((30, 20), (0.2, 0.15), [0u64, 317, 599], 7, 30);
    let model = lattice_sir_model(size.0, size.1, rates.0, rates.1).unwrap();
    assert_eq!(
        model.layers().unwrap().to_string(),
        "layer 1: shed\nlayer 2: infect\nlayer 3: recover"
    );
    let want = lattice_sir_by_hand(size, rates, &infected, seed, steps);
    let count = |s: i32| want.iter().filter(|&&v| v == s).count() as f64;
    assert!(
        count(2) > 50.0 && count(0) > 10.0,
        "an epidemic that spread and left some: {:?}",
        [count(0), count(1), count(2)]
    );
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model_states");
    std::fs::create_dir_all(&dir).unwrap();
    for rt in backends() {
        let mut sim = lattice_sir(&rt, size, rates, &infected, seed, (0, 1)).unwrap();
        let path = dir.join(format!("{}.csv", rt.backend()));
        Logging::new(Log::new().count_states("person"), LogFile::create(&path).unwrap())
            .exit(&mut sim)
            .unwrap();
        sim.run(steps as u64).unwrap();
        let ids = sim.population("person").unwrap().global_ids().to_vec();
        let states = sim.states("person").unwrap().to_vec();
        let mut got = vec![-1; want.len()];
        for (&id, &s) in ids.iter().zip(&states) {
            got[id as usize] = s;
        }
        assert_eq!(got, want, "{}: states after {steps} steps", rt.backend());
        // The states counted by a loop, logged at exit.
        let log = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            log,
            format!(
                "step,person.S,person.I,person.R\n{steps},{},{},{}\n",
                count(0),
                count(1),
                count(2)
            )
        );
    }
}

/// Agents `a` with a value `x` and a count `heard`; those above a half
/// send `x` (optionally), every agent counts what it hears and adds it to
/// macro property `total`.
fn signals_model() -> Model {
    use op2::model::{EnvProperty, Message, MessageKind};
    let mut m = Model::new("signals");
    m.add_agent(
        AgentType::new("a")
            .variable::<f64>("x", 1, &[0.0])
            .variable::<i32>("heard", 1, &[0]),
    )
    .unwrap();
    m.add_message(Message::new("loud", "a", MessageKind::BruteForce).carries("x"))
        .unwrap();
    m.add_environment(EnvProperty::reduced::<f64>("total", 1)).unwrap();
    m.add_function(AgentFunction::new("shout", "a").reads("x").output_optional("loud"))
        .unwrap();
    let listen = AgentFunction::new("listen", "a").writes("heard").input("loud");
    m.add_function(listen.environment("total", Access::Inc)).unwrap();
    m
}

#[op2::kernel]
fn shout(x: &f64, sent: &mut i32) {
    *sent = 0;
    if *x > 0.5 {
        *sent = 1;
    }
}

#[op2::kernel]
fn listen(heard: &mut i32, xs: &[f64], total: &mut f64) {
    let mut sum = 0.0;
    for j in 0..xs.len() {
        sum += xs[j];
    }
    *heard = xs.len() as i32;
    *total += sum;
}

#[test]
fn optional_output_and_macro_properties() {
    let n = 40;
    let x: Vec<f64> = (0..n).map(|i| ((i * 7) % 11) as f64 / 10.0).collect();
    let loud: Vec<f64> = x.iter().copied().filter(|&v| v > 0.5).collect();
    let sum: f64 = loud.iter().sum();
    for rt in backends() {
        let mut sim = Simulation::new(&signals_model(), &rt).unwrap();
        sim.populate("a", Agents::new(n).set("x", x.clone())).unwrap();
        sim.bind("shout", |c| {
            let (x, sent) = (c.var::<f64>("x")?, c.sent()?);
            par_loop!(c.rt(), shout, c.agents(), x(READ), sent(WRITE))
        })
        .unwrap();
        sim.bind("listen", |c| {
            let (heard, list, xs, total) = (
                c.var::<i32>("heard")?,
                c.input()?,
                c.message::<f64>("x")?,
                c.env::<f64>("total")?,
            );
            par_loop!(c.rt(), listen, c.agents(), heard(WRITE), xs(READ, list[..]), total(INC))
        })
        .unwrap();
        sim.run(2).unwrap();
        assert_eq!(
            sim.list("loud").unwrap().len(),
            loud.len(),
            "{}: the senders above a half",
            rt.backend()
        );
        assert_eq!(
            sim.variable::<i32>("a", "heard").unwrap().to_vec(),
            vec![loud.len() as i32; n]
        );
        // The macro property keeps what every agent added, both steps.
        let total = sim.environment::<f64>("total").unwrap().value();
        assert!((total - 2.0 * n as f64 * sum).abs() < 1e-9, "{}: {total}", rt.backend());
    }
    // A body asking whom it sends from must output optionally.
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = Simulation::new(&signals_model(), &rt).unwrap();
    sim.bind("shout", |c| c.sent().map(drop)).unwrap();
    sim.bind("listen", |c| c.sent().map(drop)).unwrap();
    let e = sim.step().unwrap_err().to_string();
    assert!(e.contains("function `listen`: asks whom it sends from"), "{e}");
}

#[test]
fn hens_and_eggs_give_birth_to_each_other_on_every_backend() {
    use op2_predator_prey::{hens_and_eggs, hens_model, initial_hens, HenParams};
    let p = HenParams::default();
    assert_eq!(
        hens_model(p).unwrap().layers().unwrap().to_string(),
        "layer 1: output_hens, output_eggs\nlayer 2: lay\nlayer 3: hatch\nlayer 4: egg_ages, hen_ages"
    );
    let steps = 14;
    let mut reference = None;
    for rt in backends() {
        let mut sim = hens_and_eggs(&rt, p, initial_hens(60, p.size, 3), 5).unwrap();
        let mut counts = Vec::new();
        for _ in 0..steps {
            sim.step().unwrap();
            counts.push((
                sim.population("hen").unwrap().size(),
                sim.population("egg").unwrap().size(),
            ));
        }
        let of = |t: &str| {
            let set = sim.population(t).unwrap();
            let pos = by_id(set, sim.variable::<f64>(t, "pos").unwrap(), 2);
            let age = by_id(set, sim.variable::<i32>(t, "age").unwrap(), 1);
            pos.into_iter()
                .zip(age)
                .map(|((id, p), (_, a))| (id, p, a[0]))
                .collect::<Vec<_>>()
        };
        let (hens, eggs) = (of("hen"), of("egg"));
        // Hens laid eggs, eggs hatched hens (ids past the first 60), and
        // the first hens died of age.
        assert!(eggs.len() > 10 && hens.iter().any(|h| h.0 >= 60), "{counts:?}");
        assert!(hens.iter().all(|h| h.0 >= 60), "the first hens die past their lifespan");
        assert!(hens.iter().all(|h| h.2 <= p.lifespan) && eggs.iter().all(|e| e.2 <= p.incubation));
        match &reference {
            None => reference = Some((counts, hens, eggs)),
            Some(want) => assert!(
                (&counts, &hens, &eggs) == (&want.0, &want.1, &want.2),
                "{} differs from seq",
                rt.backend()
            ),
        }
    }
}

#[test]
fn misbound_conditions_seeds_sorts_and_births_are_named() {
    use op2_sir::lattice_sir_model;
    let rt = Runtime::new(Backend::Seq).unwrap();
    // A condition for a function that declares none, twice, or not at all.
    let mut sim = Simulation::new(&small_model(), &rt).unwrap();
    let got = reason(sim.bind_condition("f", |_| Ok(())).map(drop).unwrap_err());
    assert!(
        got.contains("binds a condition to function `f`, which declares none"),
        "{got}"
    );
    assert!(reason(sim.seed_agent("b", 1).map(drop).unwrap_err()).contains("seeds agent type `b`"));
    let got = reason(sim.sort_every("nothing", 3).map(drop).unwrap_err());
    assert!(
        got.contains("sorts by bin list `nothing`, which is not a spatial list"),
        "{got}"
    );
    // Births of another type asked for by a function that has none.
    sim.bind("f", |c| c.spawn().map(drop)).unwrap();
    let got = reason(sim.step().unwrap_err());
    assert!(got.contains("function `f`: asks for children of another type"), "{got}");

    let model = lattice_sir_model(4, 4, 0.1, 0.1).unwrap();
    let mut sim = Simulation::new(&model, &rt).unwrap();
    sim.bind_condition("infect", |_| Ok(())).unwrap();
    let twice = sim
        .bind_condition("infect", |_| Ok(()))
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(twice.contains("binds the condition of `infect` twice"), "{twice}");
    let got = sim.start().unwrap_err().to_string();
    assert!(
        got.contains("function `recover` has a condition and no body for it"),
        "{got}"
    );
    // A condition's flags exist in its condition only; states must be the type's.
    let mut sim = Simulation::new(&model, &rt).unwrap();
    sim.populate("person", Agents::new(16).in_states(["Z"; 16])).unwrap();
    sim.bind_condition("infect", |_| Ok(())).unwrap();
    sim.bind_condition("recover", |_| Ok(())).unwrap();
    let got = sim.start().unwrap_err().to_string();
    assert!(got.contains("in state `Z`, which it does not have"), "{got}");
}

/// A network: its node ids, its edges by index and by id.
type Network = (Vec<u64>, Vec<(usize, usize)>, Vec<(u64, u64)>);

/// A random network of `n` nodes with ids `7i + 5` and `m` edges (no self
/// loops).
fn random_network(n: usize, m: usize, seed: u64) -> Network {
    let mut rng = op2::Philox::new(seed, 0, 0);
    let ids: Vec<u64> = (0..n as u64).map(|i| 7 * i + 5).collect();
    let mut edges = Vec::new();
    while edges.len() < m {
        let (a, b) = (rng.below(n as u32) as usize, rng.below(n as u32) as usize);
        if a != b {
            edges.push((a, b));
        }
    }
    let by_id = edges.iter().map(|&(a, b)| (ids[a], ids[b])).collect();
    (ids, edges, by_id)
}

#[test]
fn network_sir_on_the_model_layer_computes_the_hand_wired_states_on_every_backend() {
    use op2_sir::{network_counts, network_sir, network_sir_model, Sir};
    assert_eq!(
        network_sir_model(0.3, 0.2).unwrap().layers().unwrap().to_string(),
        "layer 1: transition"
    );
    let (ids, edges, by_id) = random_network(150, 400, 31);
    let seq = Runtime::new(Backend::Seq).unwrap();
    for pq in [(0.35, 0.2), (1.0, 1.0)] {
        for rt in backends() {
            let mut hand = Sir::new(ids.len(), Some(ids.clone()), &edges, 4, pq, 9).unwrap();
            let mut sim = network_sir(&rt, &ids, &by_id, ids[4], pq, 9).unwrap();
            sim.start().unwrap();
            assert_eq!(network_counts(&sim).unwrap(), hand.counts(&seq).unwrap(), "tick 0");
            for tick in 1..=30 {
                let want = hand.step(&seq).unwrap();
                sim.step().unwrap();
                let got = network_counts(&sim).unwrap();
                assert_eq!(got, want, "p, q = {pq:?}, {}: counts at tick {tick}", rt.backend());
                let states = sim.variable::<i32>("node", "state").unwrap().to_vec();
                assert_eq!(
                    states,
                    hand.states(),
                    "p, q = {pq:?}, {}: states at tick {tick}",
                    rt.backend()
                );
            }
            if pq == (1.0, 1.0) {
                // A breadth-first wave: the first node's neighbours were infected at tick 1.
                let states = hand.states();
                assert!(states.iter().all(|&s| s != op2_sir::INFECTED), "the wave has passed");
            }
        }
    }
}

#[op2::kernel]
fn sum_of_neighbours(x: &f64, xs: &[f64], s: &mut f64) {
    let mut t = *x * 1000.0;
    for &v in xs {
        t += v;
    }
    *s = t;
}

#[op2::kernel]
fn pull(x: &mut f64, xs: &[f64]) {
    let mut t = 0.0;
    for &v in xs {
        t += v;
    }
    *x = t + 1.0;
}

/// Agents `a` with `x` and `s` on network `net`: `sums` writes into `s`
/// a thousand times `x` plus the neighbours' `x`, then `spread` sets each
/// `x` to one more than its neighbours' sum (their old values).
fn network_model(directed: bool) -> Model {
    use op2::model::Network;
    let mut m = Model::new("pulls");
    m.add_agent(
        AgentType::new("a")
            .variable::<f64>("x", 1, &[0.0])
            .variable::<f64>("s", 1, &[0.0]),
    )
    .unwrap();
    let net = Network::new("net", "a");
    m.add_network(if directed { net.directed() } else { net }).unwrap();
    m.add_function(
        AgentFunction::new("sums", "a")
            .reads("x")
            .writes("s")
            .reads_neighbours("net", "x"),
    )
    .unwrap();
    m.add_function(
        AgentFunction::new("spread", "a")
            .writes("x")
            .reads_neighbours("net", "x"),
    )
    .unwrap();
    m
}

fn network_simulation<'rt>(rt: &'rt Runtime, directed: bool, edges: &[(u64, u64)]) -> Simulation<'rt> {
    let mut sim = Simulation::new(&network_model(directed), rt).unwrap();
    sim.populate(
        "a",
        Agents::with_ids(vec![10, 20, 30, 40]).set("x", vec![1.0, 2.0, 3.0, 4.0]),
    )
    .unwrap()
    .connect("net", edges)
    .unwrap();
    sim.bind("sums", |c| {
        let (x, s) = (c.var::<f64>("x")?, c.var::<f64>("s")?);
        let (xn, net) = c.neighbours::<f64>("net", "x")?;
        par_loop!(
            c.rt(),
            sum_of_neighbours,
            c.agents(),
            x(READ),
            xn(READ, net[..]),
            s(WRITE)
        )
    })
    .unwrap();
    sim.bind("spread", |c| {
        let x = c.var::<f64>("x")?;
        let (xn, net) = c.neighbours::<f64>("net", "x")?;
        par_loop!(c.rt(), pull, c.agents(), x(WRITE), xn(READ, net[..]))
    })
    .unwrap();
    sim
}

#[test]
fn networks_read_neighbours_old_values_directed_or_not_with_repeats_and_loops() {
    // 10 - 20 twice, 20 - 30, 40 its own neighbour; 30 and 40 otherwise alone.
    let edges = [(10, 20), (20, 10), (20, 30), (40, 40)];
    for rt in backends() {
        let mut sim = network_simulation(&rt, false, &edges);
        sim.step().unwrap();
        // Undirected: 10 reads 20 twice; 20 reads 10 twice and 30; 30 reads
        // 20; 40 reads itself once.
        let s = sim.variable::<f64>("a", "s").unwrap().to_vec();
        assert_eq!(s, [1004.0, 2005.0, 3002.0, 4004.0], "{}", rt.backend());
        let x = sim.variable::<f64>("a", "x").unwrap().to_vec();
        assert_eq!(x, [5.0, 6.0, 3.0, 5.0], "{}: from the old values", rt.backend());
        sim.step().unwrap();
        let x = sim.variable::<f64>("a", "x").unwrap().to_vec();
        assert_eq!(x, [13.0, 14.0, 7.0, 6.0], "{}: a second step", rt.backend());

        let mut sim = network_simulation(&rt, true, &edges);
        sim.step().unwrap();
        // Directed: 10 reads 20, 20 reads 10 and 30, 30 reads nobody, 40 itself.
        let s = sim.variable::<f64>("a", "s").unwrap().to_vec();
        assert_eq!(s, [1002.0, 2004.0, 3000.0, 4004.0], "{}: directed", rt.backend());
        let x = sim.variable::<f64>("a", "x").unwrap().to_vec();
        assert_eq!(x, [3.0, 5.0, 1.0, 5.0], "{}: directed", rt.backend());
    }
}

#[test]
fn networks_that_do_not_fit_are_named() {
    use op2::model::{EnvProperty, Message, MessageKind, Network};
    let rt = Runtime::new(Backend::Seq).unwrap();
    let base = || {
        let mut m = Model::new("nets");
        m.add_agent(AgentType::new("a").variable::<f64>("x", 1, &[0.0]))
            .unwrap();
        m.add_agent(AgentType::new("b").variable::<f64>("y", 1, &[0.0]))
            .unwrap();
        m
    };
    let refused = |m: &mut Model, f: AgentFunction| why(m.add_function(f).map(|_| ()).unwrap_err());
    let mut m = base();
    assert!(why(m.add_network(Network::new("n", "c")).map(|_| ()).unwrap_err()).contains("agent type `c`"));
    m.add_network(Network::new("n", "a")).unwrap();
    let e = why(m.add_network(Network::new("n", "b")).map(|_| ()).unwrap_err());
    assert!(e.contains("network `n` already"), "{e}");
    let e = why(m.add_network(Network::new("m", "a")).map(|_| ()).unwrap_err());
    assert!(e.contains("one network per type"), "{e}");
    for (f, says) in [
        (
            AgentFunction::new("f", "a").reads_neighbours("m", "x"),
            "network `m`, which is not declared",
        ),
        (
            AgentFunction::new("f", "b").reads_neighbours("n", "y"),
            "whose nodes are agents of type `a`, not `b`",
        ),
        (
            AgentFunction::new("f", "a").reads_neighbours("n", "z"),
            "`a.z` of its neighbours, which is not declared",
        ),
        (
            AgentFunction::new("f", "a").updates("x").reads_neighbours("n", "x"),
            "uses it as Rw: a function that reads a variable through a network writes its new values (WRITE)",
        ),
        (
            AgentFunction::new("f", "a").deaths(),
            "lets its agents die, and its agents are the nodes of network `n`",
        ),
        (
            AgentFunction::new("f", "a").births("a"),
            "gives birth, and its agents are the nodes",
        ),
        (
            AgentFunction::new("f", "b").births("a"),
            "gives birth to agents of type `a`, the nodes of network `n`",
        ),
    ] {
        let e = refused(&mut m, f);
        assert!(
            e.contains("function `f`") && e.contains(says),
            "{e}\nshould say: {says}"
        );
    }
    let e = why(m
        .add_message(Message::new("l", "a", MessageKind::BruteForce).carries("x"))
        .map(|_| ())
        .unwrap_err());
    assert!(e.contains("the nodes of network `n`"), "{e}");
    // A function of a state's agents may not double-buffer.
    let mut s = Model::new("states");
    s.add_agent(
        AgentType::new("a")
            .variable::<f64>("x", 1, &[0.0])
            .states(["on", "off"]),
    )
    .unwrap();
    s.add_network(Network::new("n", "a")).unwrap();
    let e = refused(
        &mut s,
        AgentFunction::new("f", "a")
            .in_state("on")
            .writes("x")
            .reads_neighbours("n", "x"),
    );
    assert!(e.contains("on some agents only"), "{e}");
    // Deaths declared before the network.
    let mut d = base();
    d.add_function(AgentFunction::new("die", "a").deaths()).unwrap();
    let e = why(d.add_network(Network::new("n", "a")).map(|_| ()).unwrap_err());
    assert!(e.contains("function `die`: lets its agents die"), "{e}");
    assert!(d.network("n").is_none(), "a refused network is not kept");

    // The simulation's edges.
    let mut m = network_model(false);
    m.add_environment(EnvProperty::constant("k", &[1.0])).unwrap();
    let mut sim = Simulation::new(&m, &rt).unwrap();
    let e = why(sim.connect("other", &[]).map(|_| ()).unwrap_err());
    assert!(e.contains("network `other`, which the model does not have"), "{e}");
    sim.populate("a", Agents::with_ids(vec![1, 2])).unwrap();
    sim.bind("sums", |_| Ok(()))
        .unwrap()
        .bind("spread", |_| Ok(()))
        .unwrap();
    let e = why(sim.start().unwrap_err());
    assert!(e.contains("network `net` was given no edges"), "{e}");
    sim.connect("net", &[(1, 2), (2, 3)]).unwrap();
    let e = why(sim.connect("net", &[]).map(|_| ()).unwrap_err());
    assert!(e.contains("given twice"), "{e}");
    let e = why(sim.start().unwrap_err());
    assert!(
        e.contains("edge 1 (2, 3) of network `net` names agent 3, which type `a` does not have"),
        "{e}"
    );
    // A function that writes what it reads through a network needs a body,
    // even when it also moves its agents (it would swap in unwritten values).
    let mut moving = Model::new("moving");
    moving
        .add_agent(
            AgentType::new("a")
                .variable::<f64>("x", 1, &[0.0])
                .states(["on", "off"]),
        )
        .unwrap();
    moving.add_network(Network::new("n", "a")).unwrap();
    let f = AgentFunction::new("f", "a")
        .writes("x")
        .reads_neighbours("n", "x")
        .moves_to("off");
    moving.add_function(f).unwrap();
    let mut sim = Simulation::new(&moving, &rt).unwrap();
    sim.connect("n", &[]).unwrap();
    let e = why(sim.start().unwrap_err());
    assert!(e.contains("function `f` has no body"), "{e}");
    // Bodies asking for a read they did not declare, or as another type.
    let bodies: [(Body, &str); 2] = [
        (
            |c| c.neighbours::<f64>("net", "s").map(|_| ()),
            "`a.s` of its neighbours in network `net`, which it does not declare",
        ),
        (|c| c.neighbours::<f32>("net", "x").map(|_| ()), "as `f32` values"),
    ];
    for (body, says) in bodies {
        let mut sim = Simulation::new(&network_model(false), &rt).unwrap();
        sim.populate("a", Agents::with_ids(vec![1])).unwrap();
        sim.connect("net", &[]).unwrap();
        sim.bind("sums", body).unwrap().bind("spread", |_| Ok(())).unwrap();
        let e = why(sim.step().unwrap_err());
        assert!(
            e.contains("function `sums`") && e.contains(says),
            "{e}\nshould say: {says}"
        );
        let e = why(sim.connect("net", &[]).map(|_| ()).unwrap_err());
        assert!(e.contains("before the simulation starts"), "{e}");
    }
}

/// The reason of an `InvalidModel` error.
fn why(e: Error) -> String {
    match e {
        Error::InvalidModel { reason, .. } => reason,
        other => panic!("expected InvalidModel, got {other}"),
    }
}

/// Agents `a` in states `quiet` and `loud`: the loud ones all send `x` to
/// `shouts` (a function of a state), the quiet ones whose condition says
/// `x` is under 0.3 send to `whispers` if their loop says `x` is over 0.1
/// (a condition and an optional output); every agent counts both lists.
fn chorus_model() -> Model {
    use op2::model::{Message, MessageKind};
    let mut m = Model::new("chorus");
    m.add_agent(
        AgentType::new("a")
            .variable::<f64>("x", 1, &[0.0])
            .variable::<i32>("heard", 1, &[0])
            .variable::<i32>("overheard", 1, &[0])
            .states(["quiet", "loud"]),
    )
    .unwrap();
    m.add_message(Message::new("shouts", "a", MessageKind::BruteForce).carries("x"))
        .unwrap();
    m.add_message(Message::new("whispers", "a", MessageKind::BruteForce).carries("x"))
        .unwrap();
    m.add_function(
        AgentFunction::new("shout", "a")
            .in_state("loud")
            .reads("x")
            .output("shouts"),
    )
    .unwrap();
    let whisper = AgentFunction::new("whisper", "a").in_state("quiet").condition();
    m.add_function(whisper.reads("x").output_optional("whispers")).unwrap();
    m.add_function(AgentFunction::new("hear", "a").writes("heard").input("shouts"))
        .unwrap();
    m.add_function(
        AgentFunction::new("overhear", "a")
            .writes("overheard")
            .input("whispers"),
    )
    .unwrap();
    m
}

#[op2::kernel]
fn under_three_tenths(x: &f64, pass: &mut i32) {
    *pass = 0;
    if *x < 0.3 {
        *pass = 1;
    }
}

#[op2::kernel]
fn over_a_tenth(x: &f64, sent: &mut i32) {
    *sent = 0;
    if *x > 0.1 {
        *sent = 1;
    }
}

#[op2::kernel]
fn count_messages(heard: &mut i32, xs: &[f64]) {
    *heard = xs.len() as i32;
}

#[test]
fn functions_of_a_state_or_a_condition_output_from_their_agents_only() {
    let n = 60;
    let x: Vec<f64> = (0..n).map(|i| ((i * 13) % 17) as f64 / 17.0).collect();
    let states: Vec<&str> = (0..n).map(|i| if i % 3 == 0 { "loud" } else { "quiet" }).collect();
    let loud = (0..n).filter(|i| i % 3 == 0).count();
    let soft = (0..n).filter(|&i| i % 3 != 0 && x[i] < 0.3 && x[i] > 0.1).count();
    assert!(loud > 0 && soft > 0 && soft < n - loud, "a chorus of each kind");
    for rt in backends() {
        let mut sim = Simulation::new(&chorus_model(), &rt).unwrap();
        sim.populate("a", Agents::new(n).set("x", x.clone()).in_states(states.clone()))
            .unwrap();
        sim.bind_condition("whisper", |c| {
            let (x, pass) = (c.var::<f64>("x")?, c.pass()?);
            par_loop!(c.rt(), under_three_tenths, c.agents(), x(READ), pass(WRITE))
        })
        .unwrap();
        sim.bind("whisper", |c| {
            let (x, sent) = (c.var::<f64>("x")?, c.sent()?);
            par_loop!(c.rt(), over_a_tenth, c.agents(), x(READ), sent(WRITE))
        })
        .unwrap();
        for (f, v, l) in [("hear", "heard", "shouts"), ("overhear", "overheard", "whispers")] {
            sim.bind(f, move |c| {
                let (heard, list, xs) = (c.var::<i32>(v)?, c.input()?, c.message::<f64>("x")?);
                assert_eq!(list.name(), l);
                par_loop!(c.rt(), count_messages, c.agents(), heard(WRITE), xs(READ, list[..]))
            })
            .unwrap();
        }
        sim.run(2).unwrap();
        let b = rt.backend();
        assert_eq!(sim.list("shouts").unwrap().len(), loud, "{b}: every loud agent shouts");
        assert_eq!(
            sim.list("whispers").unwrap().len(),
            soft,
            "{b}: the quiet ones passing both"
        );
        assert_eq!(
            sim.variable::<i32>("a", "heard").unwrap().to_vec(),
            vec![loud as i32; n],
            "{b}"
        );
        assert_eq!(
            sim.variable::<i32>("a", "overheard").unwrap().to_vec(),
            vec![soft as i32; n],
            "{b}"
        );
    }
}

/// Mayflies: each adult lays one egg (of generation one more) and dies in
/// the same function, unless it is of the last generation, which only
/// dies; each egg hatches into an adult and is gone, in the same function.
fn mayfly_model() -> Model {
    let mut m = Model::new("mayflies");
    for t in ["adult", "egg"] {
        m.add_agent(
            AgentType::new(t)
                .variable::<i32>("gen", 1, &[0])
                .variable::<f64>("w", 1, &[0.0]),
        )
        .unwrap();
    }
    let lay = AgentFunction::new("lay", "adult").reads("gen").reads("w");
    m.add_function(lay.births("egg").deaths()).unwrap();
    let hatch = AgentFunction::new("hatch", "egg").reads("gen").reads("w");
    m.add_function(hatch.births("adult").deaths()).unwrap();
    m
}

#[op2::kernel]
fn lay_and_die(gen: &i32, w: &f64, spawn: &mut i32, child_gen: &mut i32, child_w: &mut f64, fate: &mut Fate) {
    *spawn = 0;
    if *gen < 3 {
        *spawn = 1;
        *child_gen = *gen + 1;
        *child_w = *w * 0.5 + 1.0;
    }
    fate.die();
}

/// A mayfly function's loop: `lay_and_die` over its agents.
fn lay_loop(c: &op2::model::Call<'_>) -> op2::Result<()> {
    let (gen, w, spawn) = (c.var::<i32>("gen")?, c.var::<f64>("w")?, c.spawn()?);
    let (cg, cw, life) = (c.child::<i32>("gen")?, c.child::<f64>("w")?, c.life()?);
    par_loop!(
        c.rt(),
        lay_and_die,
        c.agents(),
        gen(READ),
        w(READ),
        spawn(WRITE),
        cg(WRITE),
        cw(WRITE),
        life(FATE)
    )
}

#[test]
fn parents_give_birth_to_another_type_and_die_in_one_function() {
    let n = 25;
    let w: Vec<f64> = (0..n).map(|i| i as f64).collect();
    for rt in backends() {
        let mut sim = Simulation::new(&mayfly_model(), &rt).unwrap();
        sim.populate("adult", Agents::new(n).set("w", w.clone())).unwrap();
        for (f, from) in [("lay", "egg"), ("hatch", "adult")] {
            sim.bind(f, move |c| {
                assert_eq!(c.name(), if from == "egg" { "lay" } else { "hatch" });
                lay_loop(c)
            })
            .unwrap();
        }
        let b = rt.backend();
        let count = |sim: &Simulation<'_>, t: &str| sim.population(t).unwrap().size();
        // Step 1: the adults (generation 0) lay eggs of generation 1 and
        // die; the eggs hatch into adults of generation 2 and are gone.
        sim.step().unwrap();
        assert_eq!((count(&sim, "adult"), count(&sim, "egg")), (n, 0), "{b}: step 1");
        let gens = sim.variable::<i32>("adult", "gen").unwrap().to_vec();
        assert_eq!(gens, vec![2; n], "{b}: step 1");
        let mut got = sim.variable::<f64>("adult", "w").unwrap().to_vec();
        got.sort_by(f64::total_cmp);
        let want: Vec<f64> = w.iter().map(|w| (w * 0.5 + 1.0) * 0.5 + 1.0).collect();
        assert_eq!(got, want, "{b}: each child's value from its parent's");
        // Step 2: generation 2 lays generation 3, the last, whose eggs die
        // without hatching.
        sim.step().unwrap();
        assert_eq!((count(&sim, "adult"), count(&sim, "egg")), (0, 0), "{b}: step 2");
    }
}

/// Hens hatch chicks (another type) every step; each chick writes down the
/// id a kernel reads for it: the id it was given, on every backend (on a
/// device, the children's ids are written there).
#[test]
fn children_of_another_type_read_their_own_ids() {
    let mut m = Model::new("coop");
    m.add_agent(AgentType::new("hen").variable::<f64>("w", 1, &[0.0]))
        .unwrap();
    m.add_agent(AgentType::new("chick").variable::<i64>("me", 1, &[-1]))
        .unwrap();
    m.add_function(AgentFunction::new("hatch", "hen").reads("w").births("chick"))
        .unwrap();
    m.add_function(AgentFunction::new("name", "chick").writes("me").reads_ids())
        .unwrap();
    for rt in backends() {
        let b = rt.backend();
        let mut sim = Simulation::new(&m, &rt).unwrap();
        // Hens 10, 20, ...: the odd-numbered ones hatch each step.
        let hens =
            Agents::with_ids((1..=9).map(|i| 10 * i).collect()).set("w", (1..=9).map(f64::from).collect::<Vec<_>>());
        sim.populate("hen", hens).unwrap();
        sim.bind("hatch", |c| {
            let (w, spawn, cw) = (c.var::<f64>("w")?, c.spawn()?, c.child::<i64>("me")?);
            par_loop!(c.rt(), hatch_odd, c.agents(), w(READ), spawn(WRITE), cw(WRITE))
        })
        .unwrap();
        sim.bind("name", |c| {
            let (me, ids) = (c.var::<i64>("me")?, c.ids()?);
            par_loop!(c.rt(), write_down, c.agents(), me(WRITE), ids(READ))
        })
        .unwrap();
        for step in 1..=3 {
            sim.step().unwrap();
            let chicks = sim.population("chick").unwrap();
            let ids: Vec<i64> = chicks.global_ids().iter().map(|&i| i as i64).collect();
            assert_eq!(ids.len(), 5 * step, "{b}");
            assert_eq!(
                sim.variable::<i64>("chick", "me").unwrap().to_vec(),
                ids,
                "{b}: step {step}"
            );
        }
    }
}

#[op2::kernel]
fn hatch_odd(w: &f64, spawn: &mut i32, child_me: &mut i64) {
    *spawn = 0;
    if (*w as i64) % 2 == 1 {
        *spawn = 1;
        *child_me = -7;
    }
}

#[op2::kernel]
fn write_down(me: &mut i64, id: &i64) {
    *me = *id;
}

/// A function whose loop decided deaths (held for its births of another
/// type) and then failed forgets those deaths: the next step's apply,
/// with no loop of its own, does not apply them.
#[test]
fn held_fates_of_a_failed_function_are_forgotten() {
    let n = 10;
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = Simulation::new(&mayfly_model(), &rt).unwrap();
    sim.populate("adult", Agents::new(n)).unwrap();
    let calls = std::cell::Cell::new(0);
    sim.bind("lay", move |c| {
        calls.set(calls.get() + 1);
        // Later steps run no loop: only the held fates could kill.
        if calls.get() > 1 {
            return Ok(());
        }
        lay_loop(c)?;
        Err(Error::InvalidOption {
            option: "lay",
            reason: "failed after its loop".into(),
        })
    })
    .unwrap();
    sim.bind("hatch", |_| Ok(())).unwrap();
    let e = sim.step().unwrap_err().to_string();
    assert!(e.contains("failed after its loop"), "{e}");
    assert_eq!(sim.population("adult").unwrap().size(), n, "nobody died yet");
    sim.step().unwrap();
    assert_eq!(
        sim.population("adult").unwrap().size(),
        n,
        "the failed step's deaths were forgotten"
    );
    assert_eq!(sim.population("egg").unwrap().size(), 0);
}

/// Names become groups of a checkpoint and columns of population files: a
/// name that holds their separators could stand for two things (type
/// `a/variables` beside type `a`) and is refused where it is declared.
#[test]
fn names_that_files_could_not_tell_apart_are_refused() {
    use op2::model::{EnvProperty, Message, MessageKind, Network};
    let mut m = Model::new("names");
    m.add_agent(AgentType::new("a").variable::<i64>("ids", 1, &[0]))
        .unwrap();
    let e = why(m.add_agent(AgentType::new("a/variables")).map(drop).unwrap_err());
    assert!(e.contains("the agent type name \"a/variables\" holds '/'"), "{e}");
    let e = why(m
        .add_agent(AgentType::new("b").variable::<f64>("x,y", 1, &[0.0]))
        .map(drop)
        .unwrap_err());
    assert!(e.contains("the `b` variable name \"x,y\" holds ','"), "{e}");
    let e = why(m
        .add_agent(AgentType::new("c").states(["calm", "loud\n"]))
        .map(drop)
        .unwrap_err());
    assert!(e.contains("the `c` state name"), "{e}");
    let e = why(m
        .add_environment(EnvProperty::constant("", &[1.0f64]))
        .map(drop)
        .unwrap_err());
    assert!(e.contains("is empty"), "{e}");
    let e = why(m
        .add_message(Message::new("say \"hi\"", "a", MessageKind::BruteForce))
        .map(drop)
        .unwrap_err());
    assert!(e.contains("the message list name"), "{e}");
    let e = why(m.add_network(Network::new("n[0]", "a")).map(drop).unwrap_err());
    assert!(e.contains("the network name \"n[0]\" holds '['"), "{e}");
    let e = why(m.add_function(AgentFunction::new(" f", "a")).map(drop).unwrap_err());
    assert!(e.contains("begins or ends with white space"), "{e}");
}

#[op2::kernel]
fn pass_if_high(x: &f64, pass: &mut i32) {
    if *x > 0.5 {
        *pass = 1;
    }
}

#[op2::kernel]
fn tick_down(x: &mut f64, count: &mut i32) {
    *x = 0.0;
    *count += 1;
}

/// A condition that sets only the flags of the agents that pass: the
/// others do not pass, at every step and on every backend (the flags start
/// each condition at zero, not at the last step's values).
#[test]
fn a_condition_that_sets_only_passing_flags_passes_no_one_else() {
    let mut m = Model::new("gate");
    m.add_agent(
        AgentType::new("a")
            .variable::<f64>("x", 1, &[0.0])
            .variable::<i32>("count", 1, &[0]),
    )
    .unwrap();
    m.add_function(
        AgentFunction::new("tick", "a")
            .condition()
            .updates("x")
            .updates("count"),
    )
    .unwrap();
    let n = 40;
    let x: Vec<f64> = (0..n).map(|i| (i % 4) as f64 / 3.0).collect();
    let want: Vec<i32> = x.iter().map(|&v| i32::from(v > 0.5)).collect();
    for rt in backends() {
        let mut sim = Simulation::new(&m, &rt).unwrap();
        sim.populate("a", Agents::new(n).set("x", x.clone())).unwrap();
        sim.bind_condition("tick", |c| {
            let (x, pass) = (c.var::<f64>("x")?, c.pass()?);
            par_loop!(c.rt(), pass_if_high, c.agents(), x(READ), pass(WRITE))
        })
        .unwrap();
        sim.bind("tick", |c| {
            let (x, count) = (c.var::<f64>("x")?, c.var::<i32>("count")?);
            par_loop!(c.rt(), tick_down, c.agents(), x(RW), count(RW))
        })
        .unwrap();
        sim.run(3).unwrap();
        assert_eq!(
            sim.variable::<i32>("a", "count").unwrap().to_vec(),
            want,
            "{}: each high agent ticks once",
            rt.backend()
        );
    }
}
