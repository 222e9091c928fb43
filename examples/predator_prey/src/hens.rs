//! Hens and eggs: two agent types that give birth to each other's type, on
//! op2's model layer. Hens and eggs sit on a periodic square (they do not
//! move). Each step
//!
//! 1. every hen with fewer than `crowd` eggs within radius `r` lays an egg
//!    at its own place with probability `lay` (a child of the other type);
//! 2. every egg of age `incubation` hatches a hen at its place (another
//!    child of the other type), unless `crowd` hens or more are within `r`;
//! 3. eggs age by one and die past `incubation` (after their hatching
//!    step); hens age by one and die past `lifespan`.
//!
//! The children get new ids of their type, numbered by their parents' ids,
//! so every backend and rank count has the same hens and eggs.

use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Message, MessageKind, Model, Simulation};
use op2::prelude::*;

/// The model's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HenParams {
    /// Side of the periodic square.
    pub size: f64,
    /// The crowding radius.
    pub radius: f64,
    /// Neighbours (eggs near a hen, hens near an egg) that stop laying or
    /// hatching.
    pub crowd: i32,
    /// Probability per step that an uncrowded hen lays.
    pub lay: f64,
    /// Steps an egg takes to hatch.
    pub incubation: i32,
    /// Steps a hen lives.
    pub lifespan: i32,
}

impl Default for HenParams {
    fn default() -> HenParams {
        HenParams {
            size: 32.0,
            radius: 2.0,
            crowd: 4,
            lay: 0.2,
            incubation: 3,
            lifespan: 12,
        }
    }
}

/// A hen lays (`spawn`) an egg at its place, unless crowded.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
pub fn lay(
    p: &[f64; 2],
    spawn: &mut i32,
    egg_pos: &mut [f64; 2],
    eggs: &[[f64; 2]],
    near: &Spatial2d,
    par: &[f64; 3],
    ipar: &[i32; 3],
    rng: &mut Philox,
) {
    let w = par[0];
    let r2 = par[1] * par[1];
    let mut crowd = 0;
    for j in near.near(p[0], p[1]) {
        let mut dx = eggs[j][0] - p[0];
        let mut dy = eggs[j][1] - p[1];
        if dx > 0.5 * w {
            dx -= w;
        }
        if dx < -0.5 * w {
            dx += w;
        }
        if dy > 0.5 * w {
            dy -= w;
        }
        if dy < -0.5 * w {
            dy += w;
        }
        if dx * dx + dy * dy <= r2 {
            crowd += 1;
        }
    }
    *spawn = 0;
    if rng.uniform_f64() < par[2] && crowd < ipar[0] {
        *spawn = 1;
        egg_pos[0] = p[0];
        egg_pos[1] = p[1];
    }
}

/// An egg of age `incubation` hatches a hen at its place, unless crowded.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
pub fn hatch(
    p: &[f64; 2],
    age: &i32,
    spawn: &mut i32,
    hen_pos: &mut [f64; 2],
    hens: &[[f64; 2]],
    near: &Spatial2d,
    par: &[f64; 3],
    ipar: &[i32; 3],
) {
    let w = par[0];
    let r2 = par[1] * par[1];
    let mut crowd = 0;
    for j in near.near(p[0], p[1]) {
        let mut dx = hens[j][0] - p[0];
        let mut dy = hens[j][1] - p[1];
        if dx > 0.5 * w {
            dx -= w;
        }
        if dx < -0.5 * w {
            dx += w;
        }
        if dy > 0.5 * w {
            dy -= w;
        }
        if dy < -0.5 * w {
            dy += w;
        }
        if dx * dx + dy * dy <= r2 {
            crowd += 1;
        }
    }
    *spawn = 0;
    if *age >= ipar[1] && crowd < ipar[0] {
        *spawn = 1;
        hen_pos[0] = p[0];
        hen_pos[1] = p[1];
    }
}

/// An agent ages by one step and dies past `limit`.
#[op2::kernel]
pub fn age_and_die(age: &mut i32, limit: &i32, fate: &mut Fate) {
    *age += 1;
    if *age > *limit {
        fate.die();
    }
}

/// The model described.
///
/// # Errors
/// [`op2::Error::InvalidModel`] if the description does not hold together.
pub fn hens_model(p: HenParams) -> op2::Result<Model> {
    let mut m = Model::new("hens_and_eggs");
    let place = |t: &str| {
        AgentType::new(t)
            .variable::<f64>("pos", 2, &[0.0; 2])
            .variable::<i32>("age", 1, &[0])
    };
    m.add_agent(place("hen"))?;
    m.add_agent(place("egg"))?;
    let square = MessageKind::spatial_2d([0.0; 2], [p.size; 2], p.radius, true);
    m.add_message(Message::new("hens", "hen", square).carries("pos"))?;
    m.add_message(Message::new("eggs", "egg", square).carries("pos"))?;
    m.add_environment(EnvProperty::constant("par", &[p.size, p.radius, p.lay]))?;
    m.add_environment(EnvProperty::constant("ipar", &[p.crowd, p.incubation, p.lifespan]))?;
    m.add_environment(EnvProperty::constant("incubation", &[p.incubation]))?;
    m.add_environment(EnvProperty::constant("lifespan", &[p.lifespan]))?;
    let read = Access::Read;
    let env = |f: AgentFunction| f.environment("par", read).environment("ipar", read);
    m.add_function(AgentFunction::new("output_hens", "hen").output("hens"))?;
    m.add_function(AgentFunction::new("output_eggs", "egg").output("eggs"))?;
    m.add_function(env(AgentFunction::new("lay", "hen")
        .reads("pos")
        .input("eggs")
        .births("egg")))?;
    let hatch = AgentFunction::new("hatch", "egg").reads("pos").reads("age");
    m.add_function(env(hatch.input("hens").births("hen")))?;
    let egg_ages = AgentFunction::new("egg_ages", "egg").updates("age").deaths();
    m.add_function(egg_ages.environment("incubation", read))?;
    let hen_ages = AgentFunction::new("hen_ages", "hen").updates("age").deaths();
    m.add_function(hen_ages.environment("lifespan", read))?;
    Ok(m)
}

/// The model on `rt`: `hens` (ids and `x, y` pairs; in a distributed run
/// this rank's share) and no eggs; random streams from `seed`.
///
/// # Errors
/// As [`hens_model`] and [`Simulation::start`].
pub fn hens_and_eggs(rt: &Runtime, p: HenParams, hens: Agents, seed: u64) -> op2::Result<Simulation<'_>> {
    let mut sim = Simulation::new(&hens_model(p)?, rt)?;
    sim.populate("hen", hens)?.seed(seed)?;
    sim.bind("lay", |c| {
        let (pos, spawn, egg_pos) = (c.var::<f64>("pos")?, c.spawn()?, c.child::<f64>("pos")?);
        let (list, eggs, par, ipar, rng) = (
            c.input()?,
            c.message::<f64>("pos")?,
            c.env::<f64>("par")?,
            c.env::<i32>("ipar")?,
            c.random(),
        );
        par_loop!(
            c.rt(),
            lay,
            c.agents(),
            pos(READ),
            spawn(WRITE),
            egg_pos(WRITE),
            eggs(READ, list[..]),
            list(NEAR),
            par(READ),
            ipar(READ),
            rng(DRAW)
        )
    })?;
    sim.bind("hatch", |c| {
        let (pos, age, spawn, hen_pos) = (
            c.var::<f64>("pos")?,
            c.var::<i32>("age")?,
            c.spawn()?,
            c.child::<f64>("pos")?,
        );
        let (list, hens, par, ipar) = (
            c.input()?,
            c.message::<f64>("pos")?,
            c.env::<f64>("par")?,
            c.env::<i32>("ipar")?,
        );
        par_loop!(
            c.rt(),
            hatch,
            c.agents(),
            pos(READ),
            age(READ),
            spawn(WRITE),
            hen_pos(WRITE),
            hens(READ, list[..]),
            list(NEAR),
            par(READ),
            ipar(READ)
        )
    })?;
    for (f, limit) in [("egg_ages", "incubation"), ("hen_ages", "lifespan")] {
        sim.bind(f, move |c| {
            let (age, limit, life) = (c.var::<i32>("age")?, c.env::<i32>(limit)?, c.life()?);
            par_loop!(c.rt(), age_and_die, c.agents(), age(RW), limit(READ), life(FATE))
        })?;
    }
    sim.start()?;
    Ok(sim)
}

/// `n` hens uniform on the square (multiples of 1/64), from stream
/// `(seed, i, 0)`, ids `0..n`.
pub fn initial_hens(n: usize, size: f64, seed: u64) -> Agents {
    let pos: Vec<f64> = (0..n as u64)
        .flat_map(|i| {
            let mut rng = Philox::new(seed, i, 0);
            let mut at = || (rng.uniform_f64() * size * 64.0).floor() / 64.0;
            [at(), at()]
        })
        .collect();
    Agents::new(n).set("pos", pos)
}
