//! The same epidemic as agents with states, on op2's model layer: one
//! person per cell of a `width` x `height` lattice, each in state S, I or
//! R. Each step every person sends its cell and state to a discrete 2D
//! message list; a susceptible person with `k` infected people in the
//! cells around its own (its Moore neighbourhood) is infected with
//! probability `1 - (1 - p)^k`, and an infected person recovers with
//! probability `q`. Both transitions are functions that move agents from
//! one state to the next, the agents chosen by a condition run on the
//! runtime (FLAME GPU's function conditions): [`exposed`] and
//! [`recovers`], each drawing from the person's random stream.
//! [`lattice_sir_by_hand`] is the same model in plain Rust.

use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Message, MessageKind, Model, Simulation};
use op2::prelude::*;

/// Whether a susceptible person at `cell` is infected: by each infected
/// person in the cells around it, independently with probability `rates[0]`.
#[op2::kernel]
pub fn exposed(
    cell: &[i32; 2],
    pass: &mut i32,
    states: &[i32],
    contacts: &Discrete2d,
    rates: &[f64; 2],
    rng: &mut Philox,
) {
    let mut escape = 1.0;
    for j in contacts.within(cell[0], cell[1], 1) {
        if states[j] == 1 {
            escape *= 1.0 - rates[0];
        }
    }
    *pass = 0;
    if rng.uniform_f64() < 1.0 - escape {
        *pass = 1;
    }
}

/// Whether an infected person recovers: with probability `rates[1]`.
#[op2::kernel]
pub fn recovers(pass: &mut i32, rates: &[f64; 2], rng: &mut Philox) {
    *pass = 0;
    if rng.uniform_f64() < rates[1] {
        *pass = 1;
    }
}

/// The model described on a `width` x `height` lattice, infection and
/// recovery probabilities `p` and `q`.
///
/// # Errors
/// [`op2::Error::InvalidModel`] if the description does not hold together.
pub fn lattice_sir_model(width: usize, height: usize, p: f64, q: f64) -> op2::Result<Model> {
    let mut model = Model::new("lattice_sir");
    model.add_agent(
        AgentType::new("person")
            .variable::<i32>("cell", 2, &[0, 0])
            .states(["S", "I", "R"]),
    )?;
    let lattice = MessageKind::Discrete2d {
        width,
        height,
        range: 1,
    };
    model.add_message(
        Message::new("contacts", "person", lattice)
            .carries("cell")
            .carries_state(),
    )?;
    model.add_environment(EnvProperty::constant("rates", &[p, q]))?;
    model.add_function(AgentFunction::new("shed", "person").output("contacts"))?;
    let infect = AgentFunction::new("infect", "person")
        .in_state("S")
        .moves_to("I")
        .condition();
    model.add_function(
        infect
            .reads("cell")
            .input("contacts")
            .environment("rates", Access::Read),
    )?;
    let recover = AgentFunction::new("recover", "person")
        .in_state("I")
        .moves_to("R")
        .condition();
    model.add_function(recover.environment("rates", Access::Read))?;
    Ok(model)
}

/// The model on `rt`: person `y * width + x` at cell `(x, y)`, those in
/// `infected` in state I, the others S; random streams from `seed`. In a
/// distributed run, `(rank, ranks)` takes this rank's share of the people
/// (`(0, 1)`: all of them; see `Simulation::distribute`, which then
/// starts the simulation); else the simulation starts here.
///
/// # Errors
/// As [`lattice_sir_model`] and [`Simulation::start`].
pub fn lattice_sir<'rt>(
    rt: &'rt Runtime,
    (width, height): (usize, usize),
    (p, q): (f64, f64),
    infected: &[u64],
    seed: u64,
    (rank, ranks): (usize, usize),
) -> op2::Result<Simulation<'rt>> {
    let n = width * height;
    let cells: Vec<i32> = (0..n).flat_map(|i| [(i % width) as i32, (i / width) as i32]).collect();
    let states = (0..n as u64).map(|i| if infected.contains(&i) { "I" } else { "S" });
    let people = Agents::new(n).set("cell", cells).in_states(states);
    let mut sim = Simulation::new(&lattice_sir_model(width, height, p, q)?, rt)?;
    sim.populate("person", people.share(rank, ranks))?;
    sim.seed(seed)?;
    sim.bind_condition("infect", |c| {
        let (cell, pass, rates, rng) = (c.var::<i32>("cell")?, c.pass()?, c.env::<f64>("rates")?, c.random());
        let (contacts, states) = (c.input()?, c.message_states()?);
        par_loop!(
            c.rt(),
            exposed,
            c.agents(),
            cell(READ),
            pass(WRITE),
            states(READ, contacts[..]),
            contacts(NEAR),
            rates(READ),
            rng(DRAW)
        )
    })?;
    sim.bind_condition("recover", |c| {
        let (pass, rates, rng) = (c.pass()?, c.env::<f64>("rates")?, c.random());
        par_loop!(c.rt(), recovers, c.agents(), pass(WRITE), rates(READ), rng(DRAW))
    })?;
    if ranks == 1 {
        sim.start()?;
    }
    Ok(sim)
}

/// The model in plain Rust: each person's state (0 S, 1 I, 2 R) after
/// `steps` steps, the functions in the model's order (infection, then
/// recovery of everyone infected by then), drawing as the simulation does (person `i`'s stream in
/// step `t`: `(stream_seed, i, 2t)` for infection, `(stream_seed, i, 2t + 1)`
/// for recovery, `stream_seed` the seed the simulation gives the type).
pub fn lattice_sir_by_hand(
    (width, height): (usize, usize),
    (p, q): (f64, f64),
    infected: &[u64],
    stream_seed: u64,
    steps: u32,
) -> Vec<i32> {
    let n = width * height;
    let mut state: Vec<i32> = (0..n as u64).map(|i| i32::from(infected.contains(&i))).collect();
    for t in 0..steps {
        // Infection reads the states the step's messages carry.
        let before = state.clone();
        for i in (0..n).filter(|&i| before[i] == 0) {
            let (x, y) = ((i % width) as i64, (i / width) as i64);
            let mut escape = 1.0;
            // The cells within 1, clamped to the lattice.
            for yy in (y - 1).max(0)..=(y + 1).min(height as i64 - 1) {
                for xx in (x - 1).max(0)..=(x + 1).min(width as i64 - 1) {
                    if before[(yy * width as i64 + xx) as usize] == 1 {
                        escape *= 1.0 - p;
                    }
                }
            }
            if Philox::new(stream_seed, i as u64, 2 * t).uniform_f64() < 1.0 - escape {
                state[i] = 1;
            }
        }
        // Recovery runs next (a later layer): on the infected of now, the
        // newly infected among them.
        for (i, s) in state.iter_mut().enumerate() {
            if *s == 1 && Philox::new(stream_seed, i as u64, 2 * t + 1).uniform_f64() < q {
                *s = 2;
            }
        }
    }
    state
}
