//! Births and deaths in the conformance suite: a dynamic population whose
//! agents die, have children and age, step by step past its initial
//! capacity, on every backend. Each step is checked against a plain-Rust
//! model drawing the same random numbers (conservation, ids, every Dat
//! compacted alike), and every backend's populations equal `seq`'s bitwise.

use op2::prelude::*;

/// Dies with probability 0.3, else has a child with probability 0.35 (the
/// child's `age` is 0 and its `weight` half the parent's, which keeps the
/// other half); every agent that stays ages by one. The `tag` Dat is in no
/// loop: children copy their parent's.
#[op2::kernel]
fn live(
    age: &mut i32,
    weight: &mut f64,
    child_age: &mut i32,
    child_weight: &mut f64,
    rng: &mut Philox,
    fate: &mut Fate,
) {
    let u = rng.uniform_f64();
    if u < 0.3 {
        fate.die();
    } else if u < 0.65 {
        fate.spawn();
        *child_age = 0;
        *weight *= 0.5;
        *child_weight = *weight;
    }
    *age += 1;
}

/// The plain-Rust model: one agent.
#[derive(Clone, Debug, PartialEq)]
struct Agent {
    id: u64,
    age: i32,
    weight: f64,
    tag: [i64; 2],
}

const SEED: u64 = 2024;

/// One step of the model, drawing as the kernel does (the stream of agent
/// `id` in loop `step`).
fn model_step(agents: &[Agent], next_id: &mut u64, step: u32) -> Vec<Agent> {
    let mut kept = Vec::new();
    let mut born = Vec::new();
    for a in agents {
        let u = Philox::new(SEED, a.id, step).uniform_f64();
        let mut a = a.clone();
        a.age += 1;
        if u < 0.3 {
            continue;
        }
        if u < 0.65 {
            a.weight *= 0.5;
            born.push(Agent {
                id: 0,
                age: 0,
                weight: a.weight,
                tag: a.tag,
            });
        }
        kept.push(a);
    }
    // Children follow in their parents' order, with the next ids.
    for c in &mut born {
        c.id = *next_id;
        *next_id += 1;
    }
    kept.extend(born);
    kept
}

/// The population after each of `steps` steps, as `rt` computes it.
fn run(rt: &Runtime, n: usize, steps: u32) -> Vec<Vec<Agent>> {
    let agents = Set::dynamic("agents", n, n).unwrap();
    let age = Dat::<i32>::zeros("age", &agents, 1).unwrap();
    let weight = Dat::from_vec("weight", &agents, 1, (0..n).map(|i| 1.0 + i as f64).collect()).unwrap();
    let tag = Dat::from_vec("tag", &agents, 2, (0..n as i64).flat_map(|i| [i, -7 * i]).collect()).unwrap();
    let life = Lifecycle::new(&agents).unwrap();
    let (child_age, child_weight) = (life.offspring(&age).unwrap(), life.offspring(&weight).unwrap());
    let rng = RandomStreams::new("life", SEED);
    let mut history = Vec::new();
    for _ in 0..steps {
        let before = agents.size();
        par_loop!(
            rt,
            live,
            agents,
            age(RW),
            weight(RW),
            child_age(WRITE),
            child_weight(WRITE),
            rng(DRAW),
            life(FATE)
        )
        .unwrap();
        let c = life.last_census();
        assert_eq!((c.before, c.after), (before, agents.size()));
        assert_eq!(c.after, c.before - c.deaths + c.births, "conservation: {c:?}");
        let ids = agents.global_ids();
        let (age, weight, tag) = (age.data_ro(), weight.data_ro(), tag.data_ro());
        assert_eq!((age.len(), weight.len(), tag.len()), (c.after, c.after, 2 * c.after));
        assert!(life.fates().data_ro().iter().all(|&f| f == 0), "fates cleared");
        history.push(
            (0..c.after)
                .map(|i| Agent {
                    id: ids[i],
                    age: age[i],
                    weight: weight[i],
                    tag: [tag[2 * i], tag[2 * i + 1]],
                })
                .collect(),
        );
    }
    history
}

pub fn births_and_deaths_match_the_model(new_rt: &dyn Fn() -> Runtime) {
    let (n, steps) = (300, 8);
    let got = run(&new_rt(), n, steps);
    let mut model: Vec<Agent> = (0..n as u64)
        .map(|i| Agent {
            id: i,
            age: 0,
            weight: 1.0 + i as f64,
            tag: [i as i64, -7 * i as i64],
        })
        .collect();
    let mut next_id = n as u64;
    let mut grew = false;
    for (step, pop) in got.iter().enumerate() {
        model = model_step(&model, &mut next_id, step as u32);
        assert_eq!(pop, &model, "step {step}");
        // Ids are unique (ascending, in fact: children get the next ones).
        assert!(pop.windows(2).all(|w| w[0].id < w[1].id), "step {step}: ids ascend");
        grew |= pop.len() > n;
    }
    assert!(grew, "the population never outgrew its initial capacity");
    // Some die, some are born: the test exercises both.
    assert!(got.iter().any(|p| p.iter().any(|a| a.age == 0)));
    if let Ok(seq) = Runtime::new(Backend::Seq) {
        assert_eq!(got, run(&seq, n, steps), "populations differ from seq's");
    }
}
