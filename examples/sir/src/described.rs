//! The network SIR on op2's model layer: nodes with a state, a network
//! over them, and one function that reads its neighbours' states through
//! the network and writes each node's next state (the runner keeps the two
//! buffers and swaps them); the states are counted between ticks by a
//! host reduction on the runtime (`AgentReductions::count_each`).
//! Distributed by `Simulation::distribute`, which cuts the network with
//! METIS. It computes the same states, tick by tick, as the hand-wired
//! [`crate::Sir`].

use op2::model::{AgentFunction, AgentReductions, AgentType, Agents, EnvProperty, Model, Network, Simulation};
use op2::prelude::*;

use crate::model::{check_probabilities, transition};
use crate::{Counts, INFECTED, RECOVERED, SUSCEPTIBLE};

/// The network SIR described: agent type `node` (its `state`), network
/// `contacts` over the nodes, and transmission and recovery `p_q`.
///
/// # Errors
/// [`op2::Error::InvalidModel`] if the description does not hold together.
pub fn network_sir_model(p: f64, q: f64) -> op2::Result<Model> {
    let mut model = Model::new("sir");
    model.add_agent(AgentType::new("node").variable::<i32>("state", 1, &[SUSCEPTIBLE]))?;
    model.add_network(Network::new("contacts", "node"))?;
    model.add_environment(EnvProperty::constant("p_q", &[p, q]))?;
    let transition = AgentFunction::new("transition", "node")
        .writes("state")
        .reads_neighbours("contacts", "state")
        .environment("p_q", Access::Read);
    model.add_function(transition)?;
    Ok(model)
}

/// The epidemic on `rt`: nodes `ids`, undirected `edges` between ids
/// (each counted as often as given), node `first` infected, transmission
/// `p` and recovery `q`, random streams under `seed` (node `v` draws tick
/// `t` from `Philox::new(seed, v's id, t - 1)`).
///
/// # Errors
/// [`op2::Error::InvalidOption`] if `p` or `q` is not a probability;
/// [`op2::Error::InvalidModel`] (when it starts) if `first` or an edge
/// names an id that is not a node's.
pub fn network_sir<'rt>(
    rt: &'rt Runtime,
    ids: &[u64],
    edges: &[(u64, u64)],
    first: u64,
    (p, q): (f64, f64),
    seed: u64,
) -> op2::Result<Simulation<'rt>> {
    check_probabilities(p, q)?;
    let nodes = Agents::with_ids(ids.to_vec()).set_agent(first, "state", &[INFECTED]);
    let mut sim = Simulation::new(&network_sir_model(p, q)?, rt)?;
    sim.populate("node", nodes)?
        .connect("contacts", edges)?
        .seed_agent("node", seed)?;
    sim.bind("transition", |c| {
        let (next, p_q, rng) = (c.var::<i32>("state")?, c.env::<f64>("p_q")?, c.random());
        let (state, contacts) = c.neighbours::<i32>("contacts", "state")?;
        par_loop!(
            c.rt(),
            transition,
            c.agents(),
            next(WRITE),
            state(READ),
            state(READ, contacts[..]),
            p_q(READ),
            rng(DRAW)
        )
    })?;
    Ok(sim)
}

/// The counts of the states now (over every rank).
///
/// # Errors
/// [`op2::Error::InvalidModel`] before the simulation starts.
pub fn network_counts(sim: &Simulation<'_>) -> op2::Result<Counts> {
    let c = sim.count_each("node", "state", &[SUSCEPTIBLE, INFECTED, RECOVERED])?;
    let (susceptible, infected, recovered) = (c[0], c[1], c[2]);
    Ok(Counts {
        susceptible,
        infected,
        recovered,
    })
}
