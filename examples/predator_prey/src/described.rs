//! Predators and prey on op2's model layer: the two agent types, the
//! spatial lists each sends, the constants and the five functions
//! described, and a simulation that runs them (births, deaths, builds and,
//! under MPI, the sharing among ranks done by the runner). It computes
//! the populations of the hand-wired [`crate::PredatorPrey`] bit for bit.

use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Message, MessageKind, Model, Simulation};
use op2::prelude::*;

use crate::{choose_eater, hunt, initial_agents, prey_live, Params};

/// The model described: prey (`pos`, `eaten_by`) and predators (`pos`,
/// `energy`) on a periodic square, each sending ids and positions (the prey
/// also who ate them) to spatial lists `prey_location` and
/// `predator_location`.
///
/// # Errors
/// [`op2::Error::InvalidOption`] naming a bad parameter ([`Params::check`]).
pub fn predator_prey_model(params: Params) -> op2::Result<Model> {
    params.check().map_err(|reason| op2::Error::InvalidOption {
        option: "predator-prey parameters",
        reason,
    })?;
    let mut model = Model::new("predator_prey");
    let prey = AgentType::new("prey").variable::<f64>("pos", 2, &[0.0; 2]);
    model.add_agent(prey.variable::<i64>("eaten_by", 1, &[-1]))?;
    let predator = AgentType::new("predator").variable::<f64>("pos", 2, &[0.0; 2]);
    model.add_agent(predator.variable::<i32>("energy", 1, &[0]))?;
    let square = |radius| MessageKind::spatial_2d([0.0; 2], [params.size; 2], radius, true);
    let prey_location = Message::new("prey_location", "prey", square(params.sense.max(params.crowd_radius)));
    model.add_message(prey_location.carries("pos").carries("eaten_by").carries_ids())?;
    let predator_location = Message::new("predator_location", "predator", square(params.kill));
    model.add_message(predator_location.carries("pos").carries_ids())?;
    let ipar = [params.gain, params.threshold, params.crowd];
    model.add_environment(EnvProperty::constant("par", &params.reals()))?;
    model.add_environment(EnvProperty::constant("ipar", &ipar))?;
    let read = Access::Read;
    let live = |f: AgentFunction| f.environment("par", read).environment("ipar", read);
    let output = AgentFunction::new("output_predators", "predator").reads("pos");
    model.add_function(output.output("predator_location"))?;
    let choose = AgentFunction::new("choose_eater", "prey").reads("pos");
    model.add_function(
        choose
            .writes("eaten_by")
            .input("predator_location")
            .environment("par", read),
    )?;
    model.add_function(AgentFunction::new("output_prey", "prey").output("prey_location"))?;
    let hunt = AgentFunction::new("hunt", "predator").updates("pos").updates("energy");
    model.add_function(live(
        hunt.reads_ids().input("prey_location").births("predator").deaths(),
    ))?;
    let prey_live = AgentFunction::new("prey_live", "prey").updates("pos").reads("eaten_by");
    model.add_function(live(
        prey_live.reads_ids().input("prey_location").births("prey").deaths(),
    ))?;
    Ok(model)
}

/// The model on `rt`: rank `ranks.0`'s share (of `ranks.1`) of `prey`
/// prey and `predators` predators drawn from seed `seed`, as
/// [`crate::PredatorPrey::new`] draws them (on several ranks, call
/// `Simulation::distribute` next). The prey's random streams are seeded
/// with `seed`, the predators' with `seed ^ 0x5eed`.
///
/// # Errors
/// As [`predator_prey_model`] and [`Simulation::start`].
pub fn predator_prey<'rt>(
    rt: &'rt Runtime,
    params: Params,
    (prey, predators): (usize, usize),
    seed: u64,
    ranks: (usize, usize),
) -> op2::Result<Simulation<'rt>> {
    let ((prey_ids, prey_pos), (pred_ids, pred_pos), energy) = initial_agents(&params, prey, predators, seed, ranks);
    let mut sim = Simulation::new(&predator_prey_model(params)?, rt)?;
    sim.populate("prey", Agents::with_ids(prey_ids).set("pos", prey_pos))?;
    let predators = Agents::with_ids(pred_ids).set("pos", pred_pos);
    sim.populate("predator", predators.set("energy", energy))?;
    sim.seed_agent("prey", seed)?.seed_agent("predator", seed ^ 0x5eed)?;
    sim.bind("choose_eater", |c| {
        let (pos, eaten_by, par) = (c.var::<f64>("pos")?, c.var::<i64>("eaten_by")?, c.env::<f64>("par")?);
        let (list, ids, m_pos) = (c.input()?, c.message_ids()?, c.message::<f64>("pos")?);
        par_loop!(
            c.rt(),
            choose_eater,
            c.agents(),
            pos(READ),
            eaten_by(WRITE),
            ids(READ, list[..]),
            m_pos(READ, list[..]),
            list(NEAR),
            par(READ)
        )
    })?;
    sim.bind("hunt", |c| {
        let (pos, energy, me) = (c.var::<f64>("pos")?, c.var::<i32>("energy")?, c.ids()?);
        let (list, ids, m_pos) = (c.input()?, c.message_ids()?, c.message::<f64>("pos")?);
        let (child, m_eaten) = (c.offspring::<i32>("energy")?, c.message::<i64>("eaten_by")?);
        let (par, ipar, rng, life) = (c.env::<f64>("par")?, c.env::<i32>("ipar")?, c.random(), c.life()?);
        par_loop!(
            c.rt(),
            hunt,
            c.agents(),
            pos(RW),
            energy(RW),
            me(READ),
            child(WRITE),
            ids(READ, list[..]),
            m_pos(READ, list[..]),
            m_eaten(READ, list[..]),
            list(NEAR),
            par(READ),
            ipar(READ),
            rng(DRAW),
            life(FATE)
        )
    })?;
    sim.bind("prey_live", |c| {
        let (pos, eaten_by, me) = (c.var::<f64>("pos")?, c.var::<i64>("eaten_by")?, c.ids()?);
        let (list, ids, m_pos) = (c.input()?, c.message_ids()?, c.message::<f64>("pos")?);
        let (par, ipar, rng, life) = (c.env::<f64>("par")?, c.env::<i32>("ipar")?, c.random(), c.life()?);
        par_loop!(
            c.rt(),
            prey_live,
            c.agents(),
            pos(RW),
            eaten_by(READ),
            me(READ),
            ids(READ, list[..]),
            m_pos(READ, list[..]),
            list(NEAR),
            par(READ),
            ipar(READ),
            rng(DRAW),
            life(FATE)
        )
    })?;
    sim.start()?;
    Ok(sim)
}
