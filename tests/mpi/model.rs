//! Models on the model layer shared among the ranks by the runner
//! (`Simulation::distribute`): Boids, Circles, predator-prey and hens and
//! eggs (two types giving birth to each other's) match one
//! rank agent by agent, overlapped or not, and a log across the ranks
//! holds one rank's values.

use op2::model::{AgentReductions, Agents, Log, Simulation};
use op2::mpi::{DomainOptions, Mpi};
use op2::prelude::*;

/// `(id, values)` of every agent of `agent` here, for `variable` (`dim`
/// values of `T`).
fn here<T: op2::Scalar>(sim: &Simulation<'_>, agent: &str, variable: &str, dim: usize) -> Vec<(u64, Vec<T>)> {
    let set = sim.population(agent).unwrap();
    let values = sim.variable::<T>(agent, variable).unwrap().to_vec();
    set.global_ids()
        .iter()
        .zip(values.chunks_exact(dim))
        .map(|(&id, v)| (id, v.to_vec()))
        .collect()
}

/// Every agent here is in `one` with the same values, and the ranks hold
/// as many agents as `one`.
fn matches<T: op2::Scalar + PartialEq + std::fmt::Debug>(
    mpi: &Mpi,
    shared: &[(u64, Vec<T>)],
    one: &[(u64, Vec<T>)],
    what: &str,
) {
    let mut count = [shared.len() as u64];
    mpi.sum_u64(&mut count);
    assert_eq!(count[0], one.len() as u64, "{what}: agents on all ranks");
    for (id, v) in shared {
        let k = one.iter().position(|(i, _)| i == id);
        assert_eq!(k.map(|k| &one[k].1), Some(v), "{what}: agent {id}");
    }
}

fn backends() -> Vec<Runtime> {
    let mut v: Vec<Runtime> = [Backend::Seq, Backend::Rayon, Backend::Jit]
        .into_iter()
        .filter_map(|b| Runtime::new(b).ok())
        .collect();
    #[cfg(feature = "opencl")]
    v.push(Runtime::new(Backend::OpenCl).unwrap());
    v
}

/// Boids and Circles (no births) and predator-prey (births and deaths).
pub fn described_models_match_one_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank(), mpi.size());
    let share = |n: usize| -> Vec<u64> { (rank..n).step_by(size).map(|i| i as u64).collect() };
    for rt in backends() {
        let b = rt.backend();
        // Boids: positions and velocities after every few steps, overlapped
        // every other step.
        let p = op2_boids::Params::default();
        let n = 500;
        let side = op2_boids::box_side(n, 2.0);
        let (pos, vel) = op2_boids::initial_state(n, side, 4, &p);
        let all = Agents::new(n).set("pos", pos).set("vel", vel);
        let mut one = op2_boids::boids(&rt, all.clone(), side, p).unwrap();
        let mut shared = op2_boids::boids(&rt, all.share(rank, size), side, p).unwrap();
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        let log = Log::new().count("boid").mean("boid", "vel").max("boid", "pos");
        for step in 1..=8 {
            shared.set_overlap(step % 2 == 0);
            one.step().unwrap();
            shared.step().unwrap();
            if step % 4 == 0 {
                matches(
                    mpi,
                    &here::<f32>(&shared, "boid", "pos", 3),
                    &here(&one, "boid", "pos", 3),
                    &format!("{b} boids"),
                );
                matches(
                    mpi,
                    &here::<f32>(&shared, "boid", "vel", 3),
                    &here(&one, "boid", "vel", 3),
                    &format!("{b} boids"),
                );
                // Fixed-point sums: the same bits however the boids are shared.
                let mut stats = op2_boids::flock_statistics(&shared).unwrap();
                mpi.sum_u64(&mut stats);
                assert_eq!(
                    stats,
                    op2_boids::flock_statistics(&one).unwrap(),
                    "{b}: flock statistics"
                );
                // A log across the ranks: one rank's values (sums up to rounding).
                let (got, want) = (log.values_across(&shared, mpi).unwrap(), log.values(&one).unwrap());
                assert_eq!((got[0], &got[4..]), (want[0], &want[4..]), "{b}: count and maxima");
                for (g, w) in got[1..4].iter().zip(&want[1..4]) {
                    assert!((g - w).abs() < 1e-12, "{b}: mean velocity {g} vs {w}");
                }
                // Host reductions, shared by the ranks by themselves.
                let host = |sim: &Simulation<'_>| {
                    let hist = sim.histogram("boid", "pos", 0, (0.0, side), 8).unwrap();
                    (hist, sim.min("boid", "vel").unwrap(), sim.max("boid", "pos").unwrap())
                };
                let (got, want) = (host(&shared), host(&one));
                assert_eq!(got, want, "{b}: host reductions");
                assert_eq!(got.0.iter().sum::<u64>(), n as u64, "{b}: every boid in the box");
            }
        }
        // Circles.
        let cp = op2_circles::Params::default();
        let n = 800;
        let side = op2_circles::box_side(n, 1.0);
        let start = op2_circles::initial_positions(n, side, 2);
        let ids = share(n);
        let mine: Vec<[f32; 3]> = ids.iter().map(|&i| start[i as usize]).collect();
        let mut one = op2_circles::circles(&rt, &(0..n as u64).collect::<Vec<_>>(), &start, side, cp).unwrap();
        let mut shared = op2_circles::circles(&rt, &ids, &mine, side, cp).unwrap();
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        shared.set_overlap(true);
        one.run(6).unwrap();
        shared.run(6).unwrap();
        matches(
            mpi,
            &here::<f32>(&shared, "circle", "pos", 3),
            &here(&one, "circle", "pos", 3),
            &format!("{b} circles"),
        );
        // Hens and eggs: children of the other type, numbered across ranks.
        let hp = op2_predator_prey::HenParams::default();
        let hens = op2_predator_prey::initial_hens(50, hp.size, 3);
        let mut one = op2_predator_prey::hens_and_eggs(&rt, hp, hens.clone(), 5).unwrap();
        let mut shared = op2_predator_prey::hens_and_eggs(&rt, hp, hens.share(rank, size), 5).unwrap();
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        one.run(10).unwrap();
        shared.run(10).unwrap();
        for t in ["hen", "egg"] {
            matches(
                mpi,
                &here::<f64>(&shared, t, "pos", 2),
                &here(&one, t, "pos", 2),
                &format!("{b} {t}s"),
            );
            matches(
                mpi,
                &here::<i32>(&shared, t, "age", 1),
                &here(&one, t, "age", 1),
                &format!("{b} {t}s"),
            );
        }
        // Predator-prey: births and deaths numbered across ranks.
        let pp = op2_predator_prey::Params::default();
        let mut one = op2_predator_prey::predator_prey(&rt, pp, (500, 50), 5, (0, 1)).unwrap();
        let mut shared = op2_predator_prey::predator_prey(&rt, pp, (500, 50), 5, (rank, size)).unwrap();
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        shared.set_overlap(true);
        for step in 1..=10 {
            one.step().unwrap();
            shared.step().unwrap();
            if step % 5 == 0 {
                let what = format!("{b} predator-prey step {step}");
                matches(
                    mpi,
                    &here::<f64>(&shared, "prey", "pos", 2),
                    &here(&one, "prey", "pos", 2),
                    &what,
                );
                matches(
                    mpi,
                    &here::<f64>(&shared, "predator", "pos", 2),
                    &here(&one, "predator", "pos", 2),
                    &what,
                );
                let (e1, e2) = (
                    here::<i32>(&shared, "predator", "energy", 1),
                    here(&one, "predator", "energy", 1),
                );
                matches(mpi, &e1, &e2, &what);
            }
        }
    }
}

/// The network SIR (`op2_sir::network_sir`) cut among the ranks by the
/// runner: the same counts and states, tick by tick, as the hand-wired
/// model on one process; and what `distribute` refuses, every rank alike.
pub fn network_sir_matches_one_rank(mpi: &Mpi) {
    use op2_sir::{network_counts, network_sir, Sir};
    let n = 150;
    let mut rng = op2::Philox::new(29, 0, 0);
    let ids: Vec<u64> = (0..n as u64).map(|i| 3 * i + 1).collect();
    let mut edges = Vec::new();
    while edges.len() < 420 {
        let (a, b) = (rng.below(n as u32) as usize, rng.below(n as u32) as usize);
        if a != b {
            edges.push((a, b));
        }
    }
    let by_id: Vec<(u64, u64)> = edges.iter().map(|&(a, b)| (ids[a], ids[b])).collect();
    let seq = Runtime::new(Backend::Seq).unwrap();
    for (pq, rt) in [(0.4, 0.25), (1.0, 1.0)]
        .into_iter()
        .flat_map(|pq| backends().into_iter().map(move |rt| (pq, rt)))
    {
        let b = rt.backend();
        let mut one = Sir::new(n, Some(ids.clone()), &edges, 2, pq, 13).unwrap();
        let mut shared = network_sir(&rt, &ids, &by_id, ids[2], pq, 13).unwrap();
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        assert_eq!(
            network_counts(&shared).unwrap(),
            one.counts(&seq).unwrap(),
            "{b}: tick 0"
        );
        let owned = shared.population("node").unwrap().size();
        let mut total = [owned as u64];
        mpi.sum_u64(&mut total);
        assert_eq!(total[0], n as u64, "{b}: each node owned by one rank");
        for tick in 1..=20 {
            let want = one.step(&seq).unwrap();
            shared.step().unwrap();
            assert_eq!(
                network_counts(&shared).unwrap(),
                want,
                "p, q = {pq:?} on {b}: counts at tick {tick}"
            );
            let cut = shared.network_distribution("contacts").expect("cut");
            let all = cut.gather(shared.variable::<i32>("node", "state").unwrap()).unwrap();
            if let Some(all) = all {
                assert_eq!(all, one.states(), "p, q = {pq:?} on {b}: states at tick {tick}");
            }
        }
        // A log across the ranks: the nodes and their states, one rank's
        // (the loops over a cut set reduce across the ranks themselves).
        let log = Log::new()
            .count("node")
            .sum("node", "state")
            .max("node", "state")
            .histogram("node", "state", 0, (0.0, 3.0), 3);
        let states = one.states();
        let each = |s: i32| states.iter().filter(|&&v| v == s).count() as f64;
        let most = f64::from(*states.iter().max().unwrap());
        let want = [n as f64, each(1) + 2.0 * each(2), most, each(0), each(1), each(2)];
        assert_eq!(log.values_across(&shared, mpi).unwrap(), want, "{b}: the log");
        let e = shared.distribute(mpi, DomainOptions::default()).err().expect("twice");
        assert!(e.to_string().contains("is distributed twice"), "{e}");
    }
    // Refused alike on every rank, before any collective call.
    let refused = |sim: &mut Simulation<'_>, says: &str| {
        let e = sim.distribute(mpi, DomainOptions::default()).err().expect("refused");
        assert!(e.to_string().contains(says), "{e}\nshould say: {says}");
    };
    let mut started = network_sir(&seq, &ids, &by_id, ids[0], (0.1, 0.1), 1).unwrap();
    started.start().unwrap();
    refused(&mut started, "distribute a network before the simulation starts");
    let mut alone = op2::model::Model::new("alone");
    alone.add_agent(op2::model::AgentType::new("hermit")).unwrap();
    let mut alone = Simulation::new(&alone, &seq).unwrap();
    refused(
        &mut alone,
        "no spatial or discrete message list to cut it by (nor a network)",
    );
}

/// Nodes of a network, well or sick (states): a well node whose
/// neighbours carry a load above a threshold falls sick (a condition that
/// reads the neighbours' loads through the cut network), a sick node's
/// load grows, and every load decays; a sick node whose load passes a
/// bound gets well again.
fn contagion_model() -> op2::model::Model {
    use op2::model::{AgentFunction, AgentType, Model, Network};
    let mut m = Model::new("contagion");
    let node = AgentType::new("node").variable::<f64>("load", 1, &[0.0]);
    m.add_agent(node.states(["well", "sick"])).unwrap();
    m.add_network(Network::new("contacts", "node")).unwrap();
    let catch = AgentFunction::new("catch", "node").in_state("well").moves_to("sick");
    m.add_function(catch.condition().reads_neighbours("contacts", "load"))
        .unwrap();
    let suffer = AgentFunction::new("suffer", "node").in_state("sick").updates("load");
    m.add_function(suffer).unwrap();
    let heal = AgentFunction::new("heal", "node").in_state("sick").moves_to("well");
    m.add_function(heal.condition().reads("load")).unwrap();
    m.add_function(AgentFunction::new("decay", "node").updates("load"))
        .unwrap();
    m
}

#[op2::kernel]
fn contagion_catch(pass: &mut i32, loads: &[f64]) {
    let mut sum = 0.0;
    for j in 0..loads.len() {
        sum += loads[j];
    }
    *pass = 0;
    if sum > 0.9 {
        *pass = 1;
    }
}

#[op2::kernel]
fn contagion_suffer(load: &mut f64) {
    *load += 1.0;
}

#[op2::kernel]
fn contagion_heal(load: &f64, pass: &mut i32) {
    *pass = 0;
    if *load > 2.2 {
        *pass = 1;
    }
}

#[op2::kernel]
fn contagion_decay(load: &mut f64) {
    *load *= 0.6;
}

fn contagion<'rt>(rt: &'rt Runtime, ids: &[u64], edges: &[(u64, u64)], sick: &[u64]) -> Simulation<'rt> {
    let mut sim = Simulation::new(&contagion_model(), rt).unwrap();
    let states = ids.iter().map(|i| if sick.contains(i) { "sick" } else { "well" });
    let loads: Vec<f64> = ids.iter().map(|i| if sick.contains(i) { 1.0 } else { 0.0 }).collect();
    let nodes = Agents::with_ids(ids.to_vec()).set("load", loads).in_states(states);
    sim.populate("node", nodes).unwrap().connect("contacts", edges).unwrap();
    sim.bind_condition("catch", |c| {
        let (pass, (loads, contacts)) = (c.pass()?, c.neighbours::<f64>("contacts", "load")?);
        par_loop!(
            c.rt(),
            contagion_catch,
            c.agents(),
            pass(WRITE),
            loads(READ, contacts[..])
        )
    })
    .unwrap();
    sim.bind("suffer", |c| {
        let load = c.var::<f64>("load")?;
        par_loop!(c.rt(), contagion_suffer, c.agents(), load(RW))
    })
    .unwrap();
    sim.bind_condition("heal", |c| {
        let (load, pass) = (c.var::<f64>("load")?, c.pass()?);
        par_loop!(c.rt(), contagion_heal, c.agents(), load(READ), pass(WRITE))
    })
    .unwrap();
    sim.bind("decay", |c| {
        let load = c.var::<f64>("load")?;
        par_loop!(c.rt(), contagion_decay, c.agents(), load(RW))
    })
    .unwrap();
    sim
}

/// States and conditions on a network cut among the ranks: loops over the
/// agents of a state, or those a condition passes, of a cut set, reading
/// neighbours through the cut network; the same states and loads each
/// step as one process, on every backend.
pub fn network_states_match_one_rank(mpi: &Mpi) {
    let n = 120;
    let ids: Vec<u64> = (0..n as u64).map(|i| 7 * i + 2).collect();
    let mut rng = op2::Philox::new(41, 0, 0);
    let mut edges = Vec::new();
    while edges.len() < 300 {
        let (a, b) = (rng.below(n as u32) as usize, rng.below(n as u32) as usize);
        if a != b {
            edges.push((ids[a], ids[b]));
        }
    }
    let sick = [ids[3], ids[50], ids[97]];
    for rt in backends() {
        let b = rt.backend();
        let mut one = contagion(&rt, &ids, &edges, &sick);
        let mut shared = contagion(&rt, &ids, &edges, &sick);
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        let mut changes = 0;
        let mut last = Vec::new();
        for step in 1..=10 {
            one.step().unwrap();
            shared.step().unwrap();
            let cut = shared.network_distribution("contacts").expect("cut");
            let states = cut.gather(shared.states("node").unwrap()).unwrap();
            let loads = cut.gather(shared.variable::<f64>("node", "load").unwrap()).unwrap();
            if let (Some(states), Some(loads)) = (states, loads) {
                let want = one.states("node").unwrap().to_vec();
                assert_eq!(states, want, "{b}: states at step {step}");
                assert_eq!(
                    loads,
                    one.variable::<f64>("node", "load").unwrap().to_vec(),
                    "{b}: step {step}"
                );
                changes += usize::from(want != last);
                last = want;
            }
        }
        if mpi.rank() == 0 {
            assert!(changes > 3, "{b}: the states kept changing ({changes} steps)");
        }
    }
}

/// The lattice SIR (`op2_sir::lattice_sir`: states, conditions and a
/// discrete list of range 1) shared among the ranks by its lattice: every
/// person's state after each step as on one rank, on every backend; a
/// discrete list of range 3 reads its ghosts 3 cells away; a discrete
/// list beside a spatial one of other cells reads them as far.
pub fn discrete_lists_match_one_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank(), mpi.size());
    let (dims, rates, infected, seed) = ((13, 9), (0.45, 0.2), [3u64, 61, 100], 17);
    let states = |sim: &Simulation<'_>| -> Vec<(u64, Vec<i32>)> {
        let ids = sim.population("person").unwrap().global_ids().to_vec();
        let states = sim.states("person").unwrap().to_vec();
        ids.into_iter().zip(states).map(|(id, s)| (id, vec![s])).collect()
    };
    for rt in backends() {
        let b = rt.backend();
        let mut one = op2_sir::lattice_sir(&rt, dims, rates, &infected, seed, (0, 1)).unwrap();
        let mut shared = op2_sir::lattice_sir(&rt, dims, rates, &infected, seed, (rank, size)).unwrap();
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        for step in 1..=8 {
            one.step().unwrap();
            shared.step().unwrap();
            matches(
                mpi,
                &states(&shared),
                &states(&one),
                &format!("{b} lattice SIR step {step}"),
            );
        }
        if size > 1 {
            let mut ghosts = [shared.domain().expect("distributed").stats().ghosts_sent];
            mpi.sum_u64(&mut ghosts);
            assert!(ghosts[0] > 0, "{b}: the ranks read each other's cells");
        }
    }
    // A range of 3: each person counts the people within 3 cells.
    let seq = Runtime::new(Backend::Seq).unwrap();
    let mut one = far_sight(&seq, (0, 1));
    let mut shared = far_sight(&seq, (rank, size));
    shared.distribute(mpi, DomainOptions::default()).unwrap();
    one.step().unwrap();
    shared.step().unwrap();
    let (got, want) = (
        here::<i32>(&shared, "person", "seen", 1),
        here(&one, "person", "seen", 1),
    );
    matches(mpi, &got, &want, "range 3");
    // The kernel asks for 5 cells; the range is 3: some see fewer than all.
    assert!(want.iter().any(|(_, s)| s[0] < 150), "{want:?}");
    // A lattice without a reach: no rank could know how far others read.
    let people = Set::dynamic_with_ids("people", vec![1, 2], 2).unwrap();
    let cells = Dat::from_vec("cells", &people, 2, vec![0i32, 0, 1, 1]).unwrap();
    let lattice = SpatialGrid::discrete_2d("lattice", [4, 4], Boundary::Clamp).unwrap();
    let list = MessageList::spatial("unbounded", lattice, &cells).unwrap();
    let e = op2::mpi::AgentDomain::check_lists(&[&list], &DomainOptions::default()).unwrap_err();
    assert!(e.to_string().contains("give its grid a reach"), "{e}");
    let list = MessageList::spatial("bounded", lattice.with_reach(1).unwrap(), &cells).unwrap();
    op2::mpi::AgentDomain::check_lists(&[&list], &DomainOptions::default()).unwrap();
    // A discrete list beside a spatial one over the same box, with other
    // cells: the lattice's readers are found through the domain's bins.
    for rt in backends() {
        let b = rt.backend();
        let mut one = wanderers(&rt, (0, 1));
        let mut shared = wanderers(&rt, (rank, size));
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        for step in 1..=5 {
            one.step().unwrap();
            shared.step().unwrap();
            let what = format!("{b} wanderers step {step}");
            matches(
                mpi,
                &here::<i32>(&shared, "a", "seen", 1),
                &here(&one, "a", "seen", 1),
                &what,
            );
            matches(
                mpi,
                &here::<f64>(&shared, "a", "pos", 2),
                &here(&one, "a", "pos", 2),
                &what,
            );
        }
    }
}

/// Wanderers (this rank's `share`) on a 10 x 10 box, placed by a spatial
/// list of bins 2.5 wide, who step and then count the wanderers within 2
/// cells of a discrete list over the same box.
fn wanderers<'rt>(rt: &'rt Runtime, share: (usize, usize)) -> Simulation<'rt> {
    use op2::model::{AgentFunction, AgentType, Message, MessageKind, Model};
    let mut m = Model::new("wanderers");
    let a = AgentType::new("a").variable::<f64>("pos", 2, &[0.0, 0.0]);
    m.add_agent(a.variable::<i32>("seen", 1, &[0])).unwrap();
    let near = MessageKind::spatial_2d([0.0; 2], [10.0; 2], 2.5, false);
    m.add_message(Message::new("near", "a", near).carries("pos")).unwrap();
    let cells = MessageKind::Discrete2d {
        width: 10,
        height: 10,
        range: 2,
    };
    m.add_message(Message::new("cells", "a", cells).carries("pos")).unwrap();
    m.add_function(AgentFunction::new("step", "a").updates("pos").output("cells"))
        .unwrap();
    m.add_function(
        AgentFunction::new("look", "a")
            .reads("pos")
            .writes("seen")
            .input("cells"),
    )
    .unwrap();
    let mut sim = Simulation::new(&m, rt).unwrap();
    let pos: Vec<f64> = (0..200)
        .flat_map(|i| [(i * 37 % 100) as f64 * 0.1, (i * 53 % 100) as f64 * 0.1])
        .collect();
    let people = Agents::new(200).set("pos", pos);
    sim.populate("a", people.share(share.0, share.1)).unwrap();
    sim.bind("step", |c| {
        let pos = c.var::<f64>("pos")?;
        par_loop!(c.rt(), wander, c.agents(), pos(RW))
    })
    .unwrap();
    sim.bind("look", |c| {
        let (pos, seen, cells) = (c.var::<f64>("pos")?, c.var::<i32>("seen")?, c.input()?);
        par_loop!(c.rt(), look_near, c.agents(), pos(READ), seen(WRITE), cells(NEAR))
    })
    .unwrap();
    sim
}

#[op2::kernel]
fn wander(p: &mut [f64; 2]) {
    p[0] += 1.75;
    p[1] += 0.5;
    for c in 0..2 {
        if p[c] >= 10.0 {
            p[c] -= 10.0;
        }
    }
}

#[op2::kernel]
fn look_near(p: &[f64; 2], seen: &mut i32, cells: &Discrete2d) {
    *seen = 0;
    for _j in cells.within(p[0] as i32, p[1] as i32, 2) {
        *seen += 1;
    }
}

/// People on a 12 x 10 lattice (this rank's `share`) who count the people
/// within a discrete list's range of 3 cells.
fn far_sight<'rt>(rt: &'rt Runtime, share: (usize, usize)) -> Simulation<'rt> {
    let mut m = op2::model::Model::new("far");
    let person = op2::model::AgentType::new("person").variable::<i32>("cell", 2, &[0, 0]);
    m.add_agent(person.variable::<i32>("seen", 1, &[0])).unwrap();
    let lattice = op2::model::MessageKind::Discrete2d {
        width: 12,
        height: 10,
        range: 3,
    };
    m.add_message(op2::model::Message::new("cells", "person", lattice).carries("cell"))
        .unwrap();
    m.add_function(op2::model::AgentFunction::new("be", "person").output("cells"))
        .unwrap();
    let look = op2::model::AgentFunction::new("look", "person")
        .reads("cell")
        .writes("seen");
    m.add_function(look.input("cells")).unwrap();
    let mut sim = Simulation::new(&m, rt).unwrap();
    // Two people on some cells, none on others.
    let cells: Vec<i32> = (0..150).flat_map(|i| [(i * 7 % 12), (i * 5 % 10)]).collect();
    let people = Agents::new(150).set("cell", cells);
    sim.populate("person", people.share(share.0, share.1)).unwrap();
    sim.bind("look", |c| {
        let (cell, seen, list) = (c.var::<i32>("cell")?, c.var::<i32>("seen")?, c.input()?);
        par_loop!(c.rt(), look_around, c.agents(), cell(READ), seen(WRITE), list(NEAR))
    })
    .unwrap();
    sim
}

/// How many people are within 5 cells (at most the list's range).
#[op2::kernel]
fn look_around(cell: &[i32; 2], seen: &mut i32, cells: &Discrete2d) {
    *seen = 0;
    for _j in cells.within(cell[0], cell[1], 5) {
        *seen += 1;
    }
}

/// Walkers in a periodic box that gossip over a brute-force list: the hot
/// ones (a sent flag) tell everyone their heat, each walker warms by what
/// it hears (a sum in sender id order), and walks by its heat, so the
/// walkers move between ranks while every rank reads every rank's
/// messages.
fn gossip_model(side: f64) -> op2::model::Model {
    use op2::model::{AgentFunction, AgentType, Message, MessageKind, Model};
    let mut m = Model::new("gossip");
    m.add_agent(
        AgentType::new("walker")
            .variable::<f64>("pos", 2, &[0.0, 0.0])
            .variable::<f64>("heat", 1, &[0.0])
            .variable::<i32>("crowd", 1, &[0]),
    )
    .unwrap();
    let place = MessageKind::spatial_2d([0.0; 2], [side; 2], 1.0, true);
    m.add_message(Message::new("place", "walker", place).carries("pos"))
        .unwrap();
    let all = Message::new("rumours", "walker", MessageKind::BruteForce);
    m.add_message(all.carries("pos").carries("heat").carries_ids()).unwrap();
    m.add_function(
        AgentFunction::new("shout", "walker")
            .reads("heat")
            .output_optional("rumours"),
    )
    .unwrap();
    // A macro property: how many rumours were heard, over every rank.
    m.add_environment(op2::model::EnvProperty::reduced::<i64>("heard", 1))
        .unwrap();
    let listen = AgentFunction::new("listen", "walker").reads("pos").updates("heat");
    let listen = listen.environment("heard", Access::Inc);
    m.add_function(listen.reads_ids().input("rumours")).unwrap();
    let walk = AgentFunction::new("walk", "walker").reads("heat").updates("pos");
    m.add_function(walk.output("place")).unwrap();
    // Read in the step the walkers moved: they must be on their bins'
    // ranks by then.
    let count = AgentFunction::new("count", "walker").reads("pos").writes("crowd");
    m.add_function(count.input("place")).unwrap();
    m
}

/// How many walkers (itself included) are within 1 of `p`, the periodic way.
#[op2::kernel]
fn gossip_count(p: &[f64; 2], crowd: &mut i32, ps: &[[f64; 2]], place: &Spatial2d, side: &f64) {
    *crowd = 0;
    for j in place.near(p[0], p[1]) {
        let mut s2 = 0.0;
        for c in 0..2 {
            let mut d = ps[j][c] - p[c];
            if d > 0.5 * *side {
                d -= *side;
            }
            if d < -0.5 * *side {
                d += *side;
            }
            s2 += d * d;
        }
        if s2 < 1.0 {
            *crowd += 1;
        }
    }
}

#[op2::kernel]
fn gossip_shout(heat: &f64, sent: &mut i32) {
    *sent = 0;
    if *heat > 0.3 {
        *sent = 1;
    }
}

#[op2::kernel]
fn gossip_listen(me: &i64, p: &[f64; 2], heat: &mut f64, ids: &[i64], ps: &[[f64; 2]], hs: &[f64], heard: &mut i64) {
    *heard += hs.len() as i64;
    let mut warmth = 0.0;
    for j in 0..hs.len() {
        if ids[j] != *me {
            let dx = ps[j][0] - p[0];
            let dy = ps[j][1] - p[1];
            warmth += hs[j] / (1.0 + dx * dx + dy * dy);
        }
    }
    *heat = 0.5 * *heat + 0.05 * warmth;
}

#[op2::kernel]
fn gossip_walk(heat: &f64, p: &mut [f64; 2], side: &f64) {
    p[0] += 0.9 * *heat + 0.35;
    p[1] += 0.6 - 0.4 * *heat;
    for c in 0..2 {
        if p[c] >= *side {
            p[c] -= *side;
        }
        if p[c] < 0.0 {
            p[c] += *side;
        }
    }
}

fn gossip<'rt>(rt: &'rt Runtime, model: &op2::model::Model, agents: Agents, side: f64) -> Simulation<'rt> {
    let mut sim = Simulation::new(model, rt).unwrap();
    sim.populate("walker", agents).unwrap();
    sim.bind("shout", |c| {
        let (heat, sent) = (c.var::<f64>("heat")?, c.sent()?);
        par_loop!(c.rt(), gossip_shout, c.agents(), heat(READ), sent(WRITE))
    })
    .unwrap();
    sim.bind("listen", |c| {
        let (me, pos, heat, heard) = (
            c.ids()?,
            c.var::<f64>("pos")?,
            c.var::<f64>("heat")?,
            c.env::<i64>("heard")?,
        );
        let (list, ids, ps, hs) = (
            c.input()?,
            c.message_ids()?,
            c.message::<f64>("pos")?,
            c.message::<f64>("heat")?,
        );
        par_loop!(
            c.rt(),
            gossip_listen,
            c.agents(),
            me(READ),
            pos(READ),
            heat(RW),
            ids(READ, list[..]),
            ps(READ, list[..]),
            hs(READ, list[..]),
            heard(INC)
        )
    })
    .unwrap();
    let side = Global::new("side", vec![side]).unwrap();
    let width = side.clone();
    sim.bind("walk", move |c| {
        let (heat, pos) = (c.var::<f64>("heat")?, c.var::<f64>("pos")?);
        par_loop!(c.rt(), gossip_walk, c.agents(), heat(READ), pos(RW), width(READ))
    })
    .unwrap();
    sim.bind("count", move |c| {
        let (pos, crowd, place, ps) = (
            c.var::<f64>("pos")?,
            c.var::<i32>("crowd")?,
            c.input()?,
            c.message::<f64>("pos")?,
        );
        par_loop!(
            c.rt(),
            gossip_count,
            c.agents(),
            pos(READ),
            crowd(WRITE),
            ps(READ, place[..]),
            place(NEAR),
            side(READ)
        )
    })
    .unwrap();
    sim
}

/// A brute-force list under `mpirun`: every rank's readers read every
/// rank's messages (the hot senders only), in sender id order, so heat
/// and positions match one rank bit for bit while the walkers move
/// between ranks.
pub fn brute_force_lists_reach_every_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank(), mpi.size());
    let (n, side) = (90, 8.0);
    let mut pos = Vec::new();
    let mut heat = Vec::new();
    for i in 0..n {
        let mut s = op2::Philox::new(5, i as u64, 0);
        pos.extend([s.uniform_f64() * side, s.uniform_f64() * side]);
        heat.push(s.uniform_f64());
    }
    let all = Agents::new(n).set("pos", pos).set("heat", heat);
    for rt in backends() {
        let b = rt.backend();
        let mut one = gossip(&rt, &gossip_model(side), all.clone(), side);
        let mut shared = gossip(&rt, &gossip_model(side), all.share(rank, size), side);
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        for step in 1..=6 {
            one.step().unwrap();
            shared.step().unwrap();
            let what = format!("{b} gossip step {step}");
            let mut heard = [shared.list("rumours").unwrap().len() as u64];
            mpi.sum_u64(&mut heard);
            // Every rank's listeners added to the same macro property.
            let rumours = |s: &Simulation<'_>| s.environment::<i64>("heard").unwrap().value();
            assert_eq!(rumours(&shared), rumours(&one), "{what}: rumours heard");
            // Every rank holds every message.
            assert_eq!(
                heard[0],
                size as u64 * one.list("rumours").unwrap().len() as u64,
                "{what}"
            );
            matches(
                mpi,
                &here::<f64>(&shared, "walker", "heat", 1),
                &here(&one, "walker", "heat", 1),
                &what,
            );
            matches(
                mpi,
                &here::<f64>(&shared, "walker", "pos", 2),
                &here(&one, "walker", "pos", 2),
                &what,
            );
            matches(
                mpi,
                &here::<i32>(&shared, "walker", "crowd", 1),
                &here(&one, "walker", "crowd", 1),
                &what,
            );
        }
        if size > 1 {
            let moved = shared.domain().expect("distributed").stats().agents_sent;
            let mut total = [moved];
            mpi.sum_u64(&mut total);
            assert!(total[0] > 0, "{b}: the walkers moved between ranks");
        }
    }
    // A brute-force list whose senders no spatial list places.
    let seq = Runtime::new(Backend::Seq).unwrap();
    let mut m = gossip_model(8.0);
    m.add_agent(op2::model::AgentType::new("crier").variable::<f64>("heat", 1, &[1.0]))
        .unwrap();
    let cries = op2::model::Message::new("cries", "crier", op2::model::MessageKind::BruteForce);
    m.add_message(cries.carries("heat")).unwrap();
    let mut sim = gossip(&seq, &m, Agents::new(4), 8.0);
    let e = sim.distribute(mpi, DomainOptions::default()).err().expect("refused");
    assert!(
        e.to_string()
            .contains("brute-force list `cries` is sent by agent type `crier`, which no spatial or discrete list"),
        "{e}"
    );
    // Types that where they are matters and that nothing places.
    let refused = |m: &op2::model::Model, says: &str| {
        let mut sim = gossip(&seq, m, Agents::new(4), 8.0);
        let e = sim.distribute(mpi, DomainOptions::default()).err().expect("refused");
        assert!(e.to_string().contains(says), "{e}\nshould say: {says}");
    };
    let mut m = gossip_model(8.0);
    let watcher = op2::model::AgentType::new("watcher").variable::<f64>("pos", 2, &[0.0; 2]);
    m.add_agent(watcher).unwrap();
    let watch = op2::model::AgentFunction::new("watch", "watcher").reads("pos");
    m.add_function(watch.input("place")).unwrap();
    refused(
        &m,
        "function `watch` of agent type `watcher` reads list `place` by position while no list places that type",
    );
    let mut m = gossip_model(8.0);
    m.add_agent(op2::model::AgentType::new("egg")).unwrap();
    m.add_function(op2::model::AgentFunction::new("lay", "walker").births("egg"))
        .unwrap();
    refused(
        &m,
        "function `lay` gives birth to agent type `egg`, which no spatial or discrete list places",
    );
}

/// A town: walkers (mobile, placed by a spatial list) and households on a
/// contact network (cut by METIS) in one model, meeting through macro
/// properties, which a step function copies into constants for the next
/// step: walkers speed up with the sick households counted so far, count
/// the crowds they are in, and households' loads grow with their
/// neighbours' and with the crowds.
fn town_model() -> op2::model::Model {
    use op2::model::{AgentFunction, AgentType, EnvProperty, Message, MessageKind, Model, Network};
    let mut m = Model::new("town");
    m.add_agent(AgentType::new("walker").variable::<f64>("pos", 2, &[0.0; 2]))
        .unwrap();
    m.add_agent(AgentType::new("home").variable::<f64>("load", 1, &[0.0]))
        .unwrap();
    m.add_network(Network::new("streets", "home")).unwrap();
    let place = MessageKind::spatial_2d([0.0; 2], [8.0; 2], 1.0, true);
    m.add_message(Message::new("place", "walker", place).carries("pos"))
        .unwrap();
    for p in ["crowd", "sick"] {
        m.add_environment(EnvProperty::reduced::<i64>(p, 1)).unwrap();
        let seen = EnvProperty::constant::<i64>(format!("{p}_seen"), &[0]);
        m.add_environment(seen).unwrap();
    }
    let walk = AgentFunction::new("walk", "walker").updates("pos");
    m.add_function(walk.environment("sick_seen", Access::Read).output("place"))
        .unwrap();
    let gather = AgentFunction::new("gather", "walker").reads("pos").input("place");
    m.add_function(gather.environment("crowd", Access::Inc)).unwrap();
    let spread = AgentFunction::new("spread", "home").writes("load");
    let spread = spread.reads_neighbours("streets", "load");
    m.add_function(
        spread
            .environment("crowd_seen", Access::Read)
            .environment("sick", Access::Inc),
    )
    .unwrap();
    m
}

#[op2::kernel]
fn town_walk(p: &mut [f64; 2], sick: &i64) {
    p[0] += 0.2 + 0.05 * (*sick % 5) as f64;
    p[1] += 0.3;
    for c in 0..2 {
        if p[c] >= 8.0 {
            p[c] -= 8.0;
        }
    }
}

#[op2::kernel]
fn town_gather(p: &[f64; 2], ps: &[[f64; 2]], place: &Spatial2d, crowd: &mut i64) {
    for j in place.near(p[0], p[1]) {
        let dx = ps[j][0] - p[0];
        let dy = ps[j][1] - p[1];
        if dx * dx + dy * dy < 1.0 {
            *crowd += 1;
        }
    }
}

#[op2::kernel]
fn town_spread(next: &mut f64, load: &f64, around: &[f64], crowd: &i64, sick: &mut i64) {
    let mut sum = 0.0;
    for j in 0..around.len() {
        sum += around[j];
    }
    *next = 0.5 * *load + 0.1 * sum + 0.01 * (*crowd % 10) as f64;
    if *next > 1.0 {
        *sick += 1;
    }
}

/// The town on `rt`: `walkers` (this rank's share), every home and street.
fn town<'rt>(rt: &'rt Runtime, walkers: Agents, homes: &[u64], streets: &[(u64, u64)]) -> Simulation<'rt> {
    let mut sim = Simulation::new(&town_model(), rt).unwrap();
    let loads: Vec<f64> = homes.iter().map(|&h| (h % 4) as f64 * 0.5).collect();
    sim.populate("walker", walkers).unwrap();
    sim.populate("home", Agents::with_ids(homes.to_vec()).set("load", loads))
        .unwrap()
        .connect("streets", streets)
        .unwrap();
    sim.bind("walk", |c| {
        let (pos, sick) = (c.var::<f64>("pos")?, c.env::<i64>("sick_seen")?);
        par_loop!(c.rt(), town_walk, c.agents(), pos(RW), sick(READ))
    })
    .unwrap();
    sim.bind("gather", |c| {
        let (pos, place, ps, crowd) = (
            c.var::<f64>("pos")?,
            c.input()?,
            c.message::<f64>("pos")?,
            c.env::<i64>("crowd")?,
        );
        par_loop!(
            c.rt(),
            town_gather,
            c.agents(),
            pos(READ),
            ps(READ, place[..]),
            place(NEAR),
            crowd(INC)
        )
    })
    .unwrap();
    sim.bind("spread", |c| {
        let (next, crowd, sick) = (
            c.var::<f64>("load")?,
            c.env::<i64>("crowd_seen")?,
            c.env::<i64>("sick")?,
        );
        let (load, streets) = c.neighbours::<f64>("streets", "load")?;
        par_loop!(
            c.rt(),
            town_spread,
            c.agents(),
            next(WRITE),
            load(READ),
            load(READ, streets[..]),
            crowd(READ),
            sick(INC)
        )
    })
    .unwrap();
    // What the ranks counted together, for the next step's functions.
    sim.add_step_function(|s| {
        for p in ["crowd", "sick"] {
            let counted = s.environment::<i64>(p)?.value();
            s.environment::<i64>(&format!("{p}_seen"))?.try_data_mut()?[0] = counted;
        }
        Ok(())
    });
    sim
}

/// A model with a network and mobile agents under `mpirun`: the network
/// cut by METIS, the walkers shared by space, the macro properties
/// combined across the ranks; every walker, home and property as on one
/// process, on every backend.
pub fn networks_and_mobile_agents_match_one_rank(mpi: &Mpi) {
    let (rank, size) = (mpi.rank(), mpi.size());
    let homes: Vec<u64> = (0..80).map(|i| 1000 + 3 * i).collect();
    let mut rng = op2::Philox::new(8, 0, 0);
    let mut streets = Vec::new();
    while streets.len() < 200 {
        let (a, b) = (rng.below(80) as usize, rng.below(80) as usize);
        if a != b {
            streets.push((homes[a], homes[b]));
        }
    }
    let pos: Vec<f64> = (0..60)
        .flat_map(|i| [(i * 13 % 80) as f64 * 0.1, (i * 7 % 80) as f64 * 0.1])
        .collect();
    let walkers = Agents::new(60).set("pos", pos);
    for rt in backends() {
        let b = rt.backend();
        let mut one = town(&rt, walkers.clone(), &homes, &streets);
        let mut shared = town(&rt, walkers.share(rank, size), &homes, &streets);
        shared.distribute(mpi, DomainOptions::default()).unwrap();
        assert_eq!(
            town_model().layers().unwrap().to_string(),
            "layer 1: walk, spread\nlayer 2: gather"
        );
        for step in 1..=6 {
            one.step().unwrap();
            shared.step().unwrap();
            let what = format!("{b} town step {step}");
            for p in ["crowd", "sick"] {
                let value = |s: &Simulation<'_>| s.environment::<i64>(p).unwrap().value();
                assert_eq!(value(&shared), value(&one), "{what}: {p}");
            }
            matches(
                mpi,
                &here::<f64>(&shared, "walker", "pos", 2),
                &here(&one, "walker", "pos", 2),
                &what,
            );
            let cut = shared.network_distribution("streets").expect("cut");
            if let Some(loads) = cut.gather(shared.variable::<f64>("home", "load").unwrap()).unwrap() {
                assert_eq!(
                    loads,
                    one.variable::<f64>("home", "load").unwrap().to_vec(),
                    "{what}: loads"
                );
            }
        }
        assert!(
            shared.environment::<i64>("sick").unwrap().value() > 0,
            "{b}: some homes fell sick"
        );
        // The cut network's population, written by its owners alone (each
        // rank holds halo copies too): one process's file, byte for byte.
        let dir = std::env::temp_dir().join(format!("op2-mpi-homes-{}", crate::run_tag(mpi)));
        if rank == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        mpi.sum_u64(&mut [0]);
        let path = dir.join(format!("homes-{b}.csv"));
        shared.write_population_across("home", &path, mpi).unwrap();
        if rank == 0 {
            let alone = dir.join(format!("alone-{b}.csv"));
            one.write_population_by_id("home", &alone).unwrap();
            let (got, want) = (std::fs::read(&path).unwrap(), std::fs::read(&alone).unwrap());
            assert!(got == want, "{b}: homes gathered from {size} ranks, not one process's");
            let _ = std::fs::remove_dir_all(&dir);
        }
        mpi.sum_u64(&mut [0]);
    }
    // A domain that cannot be made is refused before the networks are
    // cut: the simulation stays as it was, and says so again.
    let mut model = town_model();
    let cells = op2::model::MessageKind::Discrete2d {
        width: 8,
        height: 8,
        range: 1,
    };
    model
        .add_message(op2::model::Message::new("cells", "walker", cells).carries("pos"))
        .unwrap();
    let seq = Runtime::new(Backend::Seq).unwrap();
    let mut sim = Simulation::new(&model, &seq).unwrap();
    sim.populate("walker", walkers.share(rank, size)).unwrap();
    let all_homes = Agents::with_ids(homes.clone()).set("load", vec![0.0; homes.len()]);
    sim.populate("home", all_homes)
        .unwrap()
        .connect("streets", &streets)
        .unwrap();
    for f in ["walk", "gather", "spread"] {
        sim.bind(f, |_| Ok(())).unwrap();
    }
    for _ in 0..2 {
        let e = sim.distribute(mpi, DomainOptions::default()).err().expect("refused");
        assert!(e.to_string().contains("grid covers another box"), "{e}");
        assert!(sim.network_distribution("streets").is_none(), "not cut");
    }
}
