//! Circles on op2's model layer: the agent type, its message list, the
//! model's constants and its two functions described, and a simulation
//! that runs them (lists built, agents sorted and, under MPI, shared among
//! the ranks by the runner). It moves the agents to the same bits as the
//! hand-wired [`crate::Circles`].

use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Message, MessageKind, Model, Simulation};
use op2::prelude::*;

use crate::model::circles_move;
use crate::Params;

/// Circles described, in a box of side `side`: circles with an id and a
/// position send both to spatial list `location` (clamped at the box), then
/// move away from the neighbours they read there.
///
/// # Errors
/// [`op2::Error::InvalidModel`] if the description does not hold together.
pub fn circles_model(side: f64, params: Params) -> op2::Result<Model> {
    let mut model = Model::new("circles");
    let circle = AgentType::new("circle")
        .variable::<u32>("id", 1, &[0])
        .variable::<f32>("pos", 3, &[0.0; 3]);
    let (min, max, radius) = ([0.0; 3], [side; 3], f64::from(params.radius));
    let location = MessageKind::spatial_3d(min, max, radius, false);
    model.add_agent(circle)?;
    model.add_message(
        Message::new("location", "circle", location)
            .carries("pos")
            .carries("id"),
    )?;
    model.add_environment(EnvProperty::constant("params", &[params.radius, params.repulse]))?;
    let output = AgentFunction::new("output_location", "circle")
        .reads("id")
        .reads("pos")
        .output("location");
    let moves = AgentFunction::new("move", "circle")
        .reads("id")
        .updates("pos")
        .input("location");
    model.add_function(output)?;
    model.add_function(moves.environment("params", Access::Read))?;
    Ok(model)
}

/// Circles on `rt`: agents `ids` at `positions` (in a distributed run this
/// rank's share; see `Simulation::distribute`), in a box of side `side`.
/// Call [`Simulation::step`] to run it; the agents' variables are `circle.id`
/// and `circle.pos`.
///
/// # Errors
/// [`op2::Error::InvalidGlobalIds`] if an id does not fit 32 bits; as
/// [`circles_model`] and [`Simulation::start`].
pub fn circles<'rt>(
    rt: &'rt Runtime,
    ids: &[u64],
    positions: &[[f32; 3]],
    side: f64,
    params: Params,
) -> op2::Result<Simulation<'rt>> {
    let ids32 = ids.iter().map(|&i| u32::try_from(i)).collect::<Result<Vec<u32>, _>>();
    let ids32 = ids32.map_err(|_| op2::Error::InvalidGlobalIds {
        set: "circle".into(),
        reason: "an agent id does not fit the model's 32-bit ids".into(),
    })?;
    let agents = Agents::with_ids(ids.to_vec())
        .set("id", ids32)
        .set("pos", positions.concat());
    let mut sim = Simulation::new(&circles_model(side, params)?, rt)?;
    sim.populate("circle", agents)?
        .sort_every("location", params.sort_every)?;
    sim.bind("move", |c| {
        let (id, pos, params) = (c.var::<u32>("id")?, c.var::<f32>("pos")?, c.env::<f32>("params")?);
        let (list, m_id, m_pos) = (c.input()?, c.message::<u32>("id")?, c.message::<f32>("pos")?);
        par_loop!(
            c.rt(),
            circles_move,
            c.agents(),
            id(READ),
            pos(RW),
            m_id(READ, list[..]),
            m_pos(READ, list[..]),
            list(NEAR),
            params(READ)
        )
    })?;
    sim.start()?;
    Ok(sim)
}
