//! The network SIR on op2's model layer: nodes with a state, a network
//! over them, and one function that reads its neighbours' states through
//! the network and writes each node's next state (the runner keeps the two
//! buffers and swaps them), counting the states into a macro property.
//! Distributed by `Simulation::distribute`, which cuts the network with
//! METIS. It computes the same states, tick by tick, as the hand-wired
//! [`crate::Sir`].

use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Model, Network, Simulation};
use op2::prelude::*;

use crate::model::{check_probabilities, tally, transition};
use crate::{Counts, INFECTED, SUSCEPTIBLE};

/// The network SIR described: agent type `node` (its `state`), network
/// `contacts` over the nodes, transmission and recovery `p_q`, and the
/// macro property `counts` that `transition` fills each tick.
///
/// # Errors
/// [`op2::Error::InvalidModel`] if the description does not hold together.
pub fn network_sir_model(p: f64, q: f64) -> op2::Result<Model> {
    let mut model = Model::new("sir");
    model.add_agent(AgentType::new("node").variable::<i32>("state", 1, &[SUSCEPTIBLE]))?;
    model.add_network(Network::new("contacts", "node"))?;
    model.add_environment(EnvProperty::constant("p_q", &[p, q]))?;
    model.add_environment(EnvProperty::reduced::<i64>("counts", 3))?;
    let transition = AgentFunction::new("transition", "node")
        .writes("state")
        .reads_neighbours("contacts", "state")
        .environment("p_q", Access::Read)
        .environment("counts", Access::Inc);
    model.add_function(transition)?;
    Ok(model)
}

/// The epidemic on `rt`: nodes `ids`, undirected `edges` between ids
/// (each counted as often as given), node `first` infected, transmission
/// `p` and recovery `q`, random streams under `seed` (node `v` draws tick
/// `t` from `Philox::new(seed, v's id, t - 1)`). Its counts at tick 0 come
/// when it starts; [`network_counts`] reads them after each step.
///
/// # Errors
/// [`op2::Error::InvalidOption`] if `first` is not a node or `p` or `q`
/// is not a probability; [`op2::Error::InvalidModel`] if an edge names an
/// id that is not a node's.
pub fn network_sir<'rt>(
    rt: &'rt Runtime,
    ids: &[u64],
    edges: &[(u64, u64)],
    first: u64,
    (p, q): (f64, f64),
    seed: u64,
) -> op2::Result<Simulation<'rt>> {
    check_probabilities(p, q)?;
    let at = ids.iter().position(|&id| id == first);
    let at = at.ok_or_else(|| op2::Error::InvalidOption {
        option: "seed-node",
        reason: format!("node {first} is not one of the {} nodes", ids.len()),
    })?;
    let mut state = vec![SUSCEPTIBLE; ids.len()];
    state[at] = INFECTED;
    let mut sim = Simulation::new(&network_sir_model(p, q)?, rt)?;
    sim.populate("node", Agents::with_ids(ids.to_vec()).set("state", state))?
        .connect("contacts", edges)?
        .seed_agent("node", seed)?;
    sim.bind("transition", |c| {
        let (next, counts, p_q) = (c.var::<i32>("state")?, c.env::<i64>("counts")?, c.env::<f64>("p_q")?);
        let ((state, contacts), rng) = (c.neighbours::<i32>("contacts", "state")?, c.random());
        counts.try_fill(0)?;
        par_loop!(
            c.rt(),
            transition,
            c.agents(),
            next(WRITE),
            counts(INC),
            state(READ),
            state(READ, contacts[..]),
            p_q(READ),
            rng(DRAW)
        )
    })?;
    sim.add_init_function(|sim| {
        let (state, counts) = (sim.variable::<i32>("node", "state")?, sim.environment::<i64>("counts")?);
        counts.try_fill(0)?;
        par_loop!(sim.rt(), tally, sim.population("node")?, state(READ), counts(INC))
    });
    Ok(sim)
}

/// The counts of the last tick (over every rank).
///
/// # Errors
/// [`op2::Error::InvalidModel`] before the simulation starts.
pub fn network_counts(sim: &Simulation<'_>) -> op2::Result<Counts> {
    let c = sim.environment::<i64>("counts")?.try_data_ro()?;
    Ok(Counts {
        susceptible: c[0] as u64,
        infected: c[1] as u64,
        recovered: c[2] as u64,
    })
}
