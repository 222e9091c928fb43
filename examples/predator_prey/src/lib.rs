//! Predators and prey on op2: births and deaths of mobile agents.
//!
//! Prey and predators live on a periodic square of side `W`. Each step:
//!
//! 1. Every prey within the kill radius of a predator is eaten by the
//!    nearest one (ties: the predator with the smaller id), so each prey is
//!    eaten at most once and the choice does not depend on the order
//!    anything runs in.
//! 2. Every predator counts the prey it ate (gaining `gain` energy each),
//!    steers towards the nearest uneaten prey within its sensing radius
//!    (ties: the smaller id) or, seeing none, steps at random; it loses 1
//!    energy, dies at 0, and at `threshold` or more splits: a child at its
//!    position gets half its energy (rounded down), it keeps the rest.
//! 3. Every eaten prey dies; every other prey has a child (at its position)
//!    with probability `prey_birth` unless `crowd` or more prey are within
//!    the crowding radius, and steps at random.
//!
//! Agents find each other through spatial message lists (periodic grids),
//! draw from counter-based random streams keyed by their ids, and die and
//! are born through [`op2::Lifecycle`]. With the `mpi` feature,
//! `PredatorPrey::shared` shares both populations among the ranks of a
//! run by space (one `AgentDomain` for both lists), and the populations
//! come out bit for bit as on one rank. All arithmetic is exact: positions
//! are multiples of 1/64 (steps of 1/16 split in four, coordinates below
//! 2^10) and energies integers, so no rounding (nor fused multiply-adds)
//! can make two backends disagree: every backend and thread count gives
//! the same populations, bit for bit.
#![deny(missing_docs)]

mod described;
mod hens;

pub use described::{predator_prey, predator_prey_model};
pub use hens::{age_and_die, hatch, hens_and_eggs, hens_model, initial_hens, lay, HenParams};

use op2::prelude::*;

/// The model's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Side of the periodic square (a whole number, at most 1024).
    pub size: f64,
    /// Largest prey step per axis (a multiple of 1/16).
    pub prey_step: f64,
    /// Largest predator step per axis (a multiple of 1/16).
    pub predator_step: f64,
    /// Predators see prey within this radius.
    pub sense: f64,
    /// Predators eat prey within this radius (at most `sense`).
    pub kill: f64,
    /// Prey crowding radius.
    pub crowd_radius: f64,
    /// Probability per step that an uncrowded prey has a child.
    pub prey_birth: f64,
    /// Prey within the crowding radius that stop births.
    pub crowd: i32,
    /// Energy a predator gains per prey eaten.
    pub gain: i32,
    /// Energy at which a predator splits.
    pub threshold: i32,
    /// Largest initial predator energy (each draws 1 to this).
    pub initial_energy: i32,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            size: 64.0,
            prey_step: 0.5,
            predator_step: 0.5,
            sense: 3.0,
            kill: 0.75,
            crowd_radius: 1.0,
            prey_birth: 0.1,
            crowd: 4,
            gain: 4,
            threshold: 40,
            initial_energy: 20,
        }
    }
}

impl Params {
    /// Checks what exact arithmetic needs.
    ///
    /// # Errors
    /// A message naming the first bad parameter.
    pub fn check(&self) -> Result<(), String> {
        let multiple = |x: f64, q: f64| (x / q).fract() == 0.0;
        if !(self.size >= 1.0 && self.size <= 1024.0 && self.size.fract() == 0.0) {
            return Err(format!("size {}: a whole number from 1 to 1024", self.size));
        }
        for (name, step) in [("prey step", self.prey_step), ("predator step", self.predator_step)] {
            if !(step >= 0.0 && step < self.size / 2.0 && multiple(step, 1.0 / 16.0)) {
                return Err(format!("{name} {step}: a multiple of 1/16 below half the size"));
            }
        }
        for (name, r) in [
            ("sense", self.sense),
            ("kill", self.kill),
            ("crowd radius", self.crowd_radius),
        ] {
            if !(r > 0.0 && r <= self.size / 3.0) {
                return Err(format!("{name} radius {r}: positive, at most a third of the size"));
            }
        }
        if self.kill > self.sense {
            return Err(format!(
                "kill radius {} exceeds the sense radius {}",
                self.kill, self.sense
            ));
        }
        if !(0.0..=1.0).contains(&self.prey_birth) {
            return Err(format!("prey birth probability {}: from 0 to 1", self.prey_birth));
        }
        if self.gain < 0 || self.threshold < 2 || self.initial_energy < 1 || self.crowd < 0 {
            return Err("gain >= 0, threshold >= 2, initial energy >= 1, crowd >= 0".to_string());
        }
        Ok(())
    }

    fn reals(&self) -> Vec<f64> {
        vec![
            self.size,
            self.prey_step,
            self.predator_step,
            self.sense,
            self.kill,
            self.prey_birth,
            self.crowd_radius,
        ]
    }
}

/// Each prey: the predator that eats it, the nearest within the kill
/// radius (ties: the smaller id), or -1.
#[op2::kernel]
pub fn choose_eater(
    p: &[f64; 2],
    eaten_by: &mut i64,
    pred_ids: &[i64],
    pred_pos: &[[f64; 2]],
    preds: &Spatial2d,
    par: &[f64; 7],
) {
    let w = par[0];
    let kill2 = par[4] * par[4];
    let mut best = -1i64;
    let mut best_d2 = 0.0;
    for j in preds.near(p[0], p[1]) {
        let mut dx = pred_pos[j][0] - p[0];
        let mut dy = pred_pos[j][1] - p[1];
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
        let d2 = dx * dx + dy * dy;
        if d2 <= kill2 && (best < 0 || d2 < best_d2 || (d2 == best_d2 && pred_ids[j] < best)) {
            best = pred_ids[j];
            best_d2 = d2;
        }
    }
    *eaten_by = best;
}

/// Each predator: eats, steers or wanders, pays for living, dies or splits.
#[allow(clippy::too_many_arguments)]
#[op2::kernel]
pub fn hunt(
    p: &mut [f64; 2],
    energy: &mut i32,
    me: &i64,
    child_energy: &mut i32,
    prey_ids: &[i64],
    prey_pos: &[[f64; 2]],
    prey_eaten: &[i64],
    prey: &Spatial2d,
    par: &[f64; 7],
    ipar: &[i32; 3],
    rng: &mut Philox,
    fate: &mut Fate,
) {
    let w = par[0];
    let step = par[2];
    let sense2 = par[3] * par[3];
    let mut ate = 0;
    let mut best = -1i64;
    let mut best_d2 = 0.0;
    let mut tx = 0.0;
    let mut ty = 0.0;
    for j in prey.near(p[0], p[1]) {
        if prey_eaten[j] == *me {
            ate += 1;
        } else if prey_eaten[j] < 0 {
            let mut dx = prey_pos[j][0] - p[0];
            let mut dy = prey_pos[j][1] - p[1];
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
            let d2 = dx * dx + dy * dy;
            if d2 <= sense2 && (best < 0 || d2 < best_d2 || (d2 == best_d2 && prey_ids[j] < best)) {
                best = prey_ids[j];
                best_d2 = d2;
                tx = dx;
                ty = dy;
            }
        }
    }
    // Both draws always: the stream advances alike whatever happens.
    let kx = (rng.uniform_f64() * 9.0) as i32;
    let ky = (rng.uniform_f64() * 9.0) as i32;
    let mut mx = (kx - 4) as f64 * step * 0.25;
    let mut my = (ky - 4) as f64 * step * 0.25;
    if best >= 0 {
        mx = tx;
        my = ty;
        if mx > step {
            mx = step;
        }
        if mx < -step {
            mx = -step;
        }
        if my > step {
            my = step;
        }
        if my < -step {
            my = -step;
        }
    }
    let mut x = p[0] + mx;
    let mut y = p[1] + my;
    if x < 0.0 {
        x += w;
    }
    if x >= w {
        x -= w;
    }
    if y < 0.0 {
        y += w;
    }
    if y >= w {
        y -= w;
    }
    p[0] = x;
    p[1] = y;
    *energy += ipar[0] * ate - 1;
    if *energy <= 0 {
        fate.die();
    } else if *energy >= ipar[1] {
        fate.spawn();
        *child_energy = *energy / 2;
        *energy -= *child_energy;
    }
}

/// Each prey: dies if eaten; else may have a child (if not crowded) and
/// steps at random.
#[allow(clippy::too_many_arguments)]
#[op2::kernel]
pub fn prey_live(
    p: &mut [f64; 2],
    eaten_by: &i64,
    me: &i64,
    prey_ids: &[i64],
    prey_pos: &[[f64; 2]],
    prey: &Spatial2d,
    par: &[f64; 7],
    ipar: &[i32; 3],
    rng: &mut Philox,
    fate: &mut Fate,
) {
    let w = par[0];
    let step = par[1];
    let crowd2 = par[6] * par[6];
    let u = rng.uniform_f64();
    let kx = (rng.uniform_f64() * 9.0) as i32;
    let ky = (rng.uniform_f64() * 9.0) as i32;
    if *eaten_by >= 0 {
        fate.die();
    } else {
        let mut crowd = 0;
        for j in prey.near(p[0], p[1]) {
            if prey_ids[j] != *me {
                let mut dx = prey_pos[j][0] - p[0];
                let mut dy = prey_pos[j][1] - p[1];
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
                if dx * dx + dy * dy <= crowd2 {
                    crowd += 1;
                }
            }
        }
        if crowd < ipar[2] && u < par[5] {
            fate.spawn();
        }
        let mut x = p[0] + (kx - 4) as f64 * step * 0.25;
        let mut y = p[1] + (ky - 4) as f64 * step * 0.25;
        if x < 0.0 {
            x += w;
        }
        if x >= w {
            x -= w;
        }
        if y < 0.0 {
            y += w;
        }
        if y >= w {
            y -= w;
        }
        p[0] = x;
        p[1] = y;
    }
}

/// One population: its dynamic set, positions, births and deaths, and the
/// spatial message list it sends its ids and positions through.
struct Population {
    set: Set,
    pos: Dat<f64>,
    life: Lifecycle,
    list: MessageList,
    m_ids: Dat<i64>,
    m_pos: Dat<f64>,
    rng: RandomStreams,
}

impl Population {
    /// Agents with the ids `ids` at `pos`.
    fn new(name: &str, ids: Vec<u64>, pos: Vec<f64>, radius: f64, size: f64, seed: u64) -> op2::Result<Population> {
        let n = ids.len();
        let set = Set::dynamic_with_ids(name, ids, 2 * n)?;
        let pos = Dat::from_vec(format!("{name}.pos"), &set, 2, pos)?;
        let life = Lifecycle::new(&set)?;
        // Whole cells of at least the radius: the side need not be a multiple.
        let grid = SpatialGrid::new_2d(name, [0.0; 2], [size; 2], radius, Boundary::Wrap)?;
        let list = MessageList::spatial(format!("{name}.near"), grid, &pos)?;
        let (m_ids, m_pos) = (list.carry(life.ids())?, list.carry(&pos)?);
        let rng = RandomStreams::new(format!("{name}.rng"), seed);
        Ok(Population {
            set,
            pos,
            life,
            list,
            m_ids,
            m_pos,
            rng,
        })
    }

    /// `(id, x, y)` of every agent (on this rank), in id order.
    fn agents(&self) -> Vec<(u64, [f64; 2])> {
        let pos = self.pos.data_ro();
        let mut v: Vec<_> = self
            .set
            .global_ids()
            .iter()
            .zip(pos.chunks_exact(2))
            .map(|(&id, p)| (id, [p[0], p[1]]))
            .collect();
        v.sort_by_key(|a| a.0);
        v
    }
}

/// Positions of `n` agents uniform on the square, multiples of 1/64, from
/// stream `(seed, i, call)`.
fn initial_positions(n: usize, size: f64, seed: u64, call: u32) -> Vec<f64> {
    (0..n as u64)
        .flat_map(|i| {
            let mut rng = Philox::new(seed, i, call);
            let mut at = || (rng.uniform_f64() * size * 64.0).floor() / 64.0;
            [at(), at()]
        })
        .collect()
}

/// Rank `ranks.0`'s share (of `ranks.1`) of the initial agents: the prey
/// and predators whose index `i` has `i % ranks.1 == ranks.0`, as `(ids,
/// x y pairs)`, and the predators' energies: `prey` prey and `predators`
/// predators uniform on the square, each predator with energy 1 to
/// `initial_energy`, all drawn from seed `seed`.
type Start = ((Vec<u64>, Vec<f64>), (Vec<u64>, Vec<f64>), Vec<i32>);

fn initial_agents(params: &Params, prey: usize, predators: usize, seed: u64, ranks: (usize, usize)) -> Start {
    let (rank, size) = ranks;
    let energies: Vec<i32> = (0..predators as u64)
        .map(|i| 1 + (Philox::new(seed, i, 2).uniform_f64() * params.initial_energy as f64) as i32)
        .collect();
    let mine = |n: usize| -> Vec<u64> { (rank..n).step_by(size).map(|i| i as u64).collect() };
    let pick = |all: Vec<f64>, ids: &[u64]| -> Vec<f64> {
        ids.iter()
            .flat_map(|&i| [all[2 * i as usize], all[2 * i as usize + 1]])
            .collect()
    };
    let (prey_ids, pred_ids) = (mine(prey), mine(predators));
    let prey_pos = pick(initial_positions(prey, params.size, seed, 0), &prey_ids);
    let pred_pos = pick(initial_positions(predators, params.size, seed, 1), &pred_ids);
    let pred_energy = pred_ids.iter().map(|&i| energies[i as usize]).collect();
    ((prey_ids, prey_pos), (pred_ids, pred_pos), pred_energy)
}

/// Each prey of `over` (all prey, or a part) chooses the predator that eats
/// it, if any: the first loop of a step.
fn choose_eaters(
    rt: &Runtime,
    over: &impl op2::IterationSpace,
    prey: &Population,
    preds: &Population,
    eaten_by: &Dat<i64>,
    par: &Global<f64>,
) -> op2::Result<()> {
    let (list, ids, pos) = (&preds.list, &preds.m_ids, &preds.m_pos);
    par_loop!(
        rt,
        choose_eater,
        over,
        prey.pos(READ),
        eaten_by(WRITE),
        ids(READ, list[..]),
        pos(READ, list[..]),
        list(NEAR),
        par(READ)
    )
}

/// The model on op2's carriers.
pub struct PredatorPrey {
    prey: Population,
    eaten_by: Dat<i64>,
    m_eaten: Dat<i64>,
    preds: Population,
    energy: Dat<i32>,
    child_energy: Dat<i32>,
    par: Global<f64>,
    ipar: Global<i32>,
    steps: u64,
    #[cfg(feature = "mpi")]
    domain: Option<op2::mpi::AgentDomain>,
    /// In a distributed run, whether the prey that see no other rank's
    /// predator choose while the predators' ghosts travel
    /// ([`PredatorPrey::set_overlap`]).
    #[cfg(feature = "mpi")]
    overlap: bool,
}

impl PredatorPrey {
    /// `prey` prey and `predators` predators uniform on the square, each
    /// predator with energy 1 to `initial_energy`, all drawn from seed `seed`.
    ///
    /// # Errors
    /// [`op2::Error::InvalidOption`] naming the bad parameter (see
    /// [`Params::check`]); errors of the carriers.
    pub fn new(params: Params, prey: usize, predators: usize, seed: u64) -> op2::Result<PredatorPrey> {
        PredatorPrey::share(params, prey, predators, seed, (0, 1))
    }

    /// The agents of [`PredatorPrey::new`] whose index `i` has
    /// `i % ranks.1 == ranks.0`, with their ids.
    fn share(
        params: Params,
        prey: usize,
        predators: usize,
        seed: u64,
        ranks: (usize, usize),
    ) -> op2::Result<PredatorPrey> {
        let (prey, preds, energies) = initial_agents(&params, prey, predators, seed, ranks);
        PredatorPrey::build(params, prey, preds, energies, seed)
    }

    /// This rank's share of [`PredatorPrey::new`]'s agents on the ranks of
    /// `mpi`: at first every `size`-th prey and predator; from the first
    /// step on, those in this rank's box of the prey's message grid
    /// ([`op2::mpi::AgentDomain`], one for both populations). Populations,
    /// positions, energies and ids come out bitwise as on one rank.
    /// Collective.
    ///
    /// # Errors
    /// As [`PredatorPrey::new`] and [`op2::mpi::AgentDomain::of_lists`].
    #[cfg(feature = "mpi")]
    pub fn shared(
        mpi: &op2::mpi::Mpi,
        params: Params,
        prey: usize,
        predators: usize,
        seed: u64,
        options: op2::mpi::DomainOptions,
    ) -> op2::Result<PredatorPrey> {
        let mut model = PredatorPrey::share(params, prey, predators, seed, (mpi.rank(), mpi.size()))?;
        let lists = [&model.prey.list, &model.preds.list];
        model.domain = Some(op2::mpi::AgentDomain::of_lists(mpi, &lists, options)?);
        Ok(model)
    }

    /// In a distributed run, whether the prey that can see no predator of
    /// another rank choose their eater while the predators' ghost messages
    /// travel, then the others once they came
    /// (`AgentDomain::build_overlapped_on`); the same results either way.
    /// Off by default; nothing changes on one rank.
    pub fn set_overlap(&mut self, overlap: bool) {
        #[cfg(feature = "mpi")]
        {
            self.overlap = overlap;
        }
        #[cfg(not(feature = "mpi"))]
        let _ = overlap;
    }

    /// The ranks sharing the agents ([`PredatorPrey::shared`]).
    #[cfg(feature = "mpi")]
    pub fn domain(&self) -> Option<&op2::mpi::AgentDomain> {
        self.domain.as_ref()
    }

    /// Prey at `prey` and predators at `predators` (`x, y` pairs, multiples
    /// of 1/64 inside the square) with energies `energies`; random streams
    /// from seed `seed`.
    ///
    /// # Errors
    /// As [`PredatorPrey::new`]; [`op2::Error::DatLength`] if there is not
    /// one energy per predator.
    pub fn with_agents(
        params: Params,
        prey: Vec<f64>,
        predators: Vec<f64>,
        energies: Vec<i32>,
        seed: u64,
    ) -> op2::Result<PredatorPrey> {
        let ids = |pos: &[f64]| (0..pos.len() as u64 / 2).collect::<Vec<_>>();
        PredatorPrey::build(params, (ids(&prey), prey), (ids(&predators), predators), energies, seed)
    }

    /// Prey and predators with the given ids and positions.
    fn build(
        params: Params,
        (prey_ids, prey): (Vec<u64>, Vec<f64>),
        (pred_ids, predators): (Vec<u64>, Vec<f64>),
        energies: Vec<i32>,
        seed: u64,
    ) -> op2::Result<PredatorPrey> {
        params.check().map_err(|reason| op2::Error::InvalidOption {
            option: "predator-prey parameters",
            reason,
        })?;
        let prey_radius = params.sense.max(params.crowd_radius);
        let prey = Population::new("prey", prey_ids, prey, prey_radius, params.size, seed)?;
        let preds = Population::new(
            "predators",
            pred_ids,
            predators,
            params.kill,
            params.size,
            seed ^ 0x5eed,
        )?;
        let eaten_by = Dat::filled("eaten_by", &prey.set, 1, -1i64)?;
        let m_eaten = prey.list.carry(&eaten_by)?;
        let energy = Dat::from_vec("energy", &preds.set, 1, energies)?;
        let child_energy = preds.life.offspring(&energy)?;
        Ok(PredatorPrey {
            eaten_by,
            m_eaten,
            energy,
            child_energy,
            par: Global::new("par", params.reals())?,
            ipar: Global::new("ipar", vec![params.gain, params.threshold, params.crowd])?,
            prey,
            preds,
            steps: 0,
            #[cfg(feature = "mpi")]
            domain: None,
            #[cfg(feature = "mpi")]
            overlap: false,
        })
    }

    /// One step; returns the populations after it (on this rank).
    ///
    /// In a distributed run (`PredatorPrey::shared`, feature `mpi`) the
    /// agents first move to the ranks that own their bins; each list's
    /// ghosts go out during its build (the prey's carry who ate them,
    /// written in between).
    /// The domain's exchanges and the births' numbering agree on errors
    /// across ranks; an error elsewhere (a build, a loop without births)
    /// is this rank's alone, and the run must end on it.
    ///
    /// # Errors
    /// As `MessageList::build`, `Runtime::par_loop` and `Lifecycle::apply`;
    /// as `AgentDomain::migrate_on` and `AgentDomain::build_on`.
    pub fn step(&mut self, rt: &Runtime) -> op2::Result<(usize, usize)> {
        let (prey, preds) = (&self.prey, &self.preds);
        let (par, ipar, eaten_by, m_eaten) = (&self.par, &self.ipar, &self.eaten_by, &self.m_eaten);
        let (energy, child_energy) = (&self.energy, &self.child_energy);

        #[cfg(feature = "mpi")]
        let domain = &mut self.domain;
        #[cfg(not(feature = "mpi"))]
        let domain = &mut ();
        #[cfg(feature = "mpi")]
        match domain {
            Some(d) if self.overlap => {
                d.migrate_on(rt)?;
                d.build_overlapped_on(&preds.list, &prey.set, rt, &mut |part| {
                    choose_eaters(rt, part, prey, preds, eaten_by, par)
                })?;
            }
            Some(d) => {
                d.migrate_on(rt)?;
                d.build_on(&preds.list, rt)?;
                choose_eaters(rt, &prey.set, prey, preds, eaten_by, par)?;
            }
            None => {
                preds.list.build_on(rt)?;
                choose_eaters(rt, &prey.set, prey, preds, eaten_by, par)?;
            }
        }
        #[cfg(not(feature = "mpi"))]
        {
            preds.list.build_on(rt)?;
            choose_eaters(rt, &prey.set, prey, preds, eaten_by, par)?;
        }

        build(domain, &prey.list, rt)?;
        let (list, ids, pos) = (&prey.list, &prey.m_ids, &prey.m_pos);
        let (me, rng, life) = (preds.life.ids(), &preds.rng, &preds.life);
        par_loop!(
            rt,
            hunt,
            preds.set,
            preds.pos(RW),
            energy(RW),
            me(READ),
            child_energy(WRITE),
            ids(READ, list[..]),
            pos(READ, list[..]),
            m_eaten(READ, list[..]),
            list(NEAR),
            par(READ),
            ipar(READ),
            rng(DRAW),
            life(FATE)
        )?;

        let (me, rng, life) = (prey.life.ids(), &prey.rng, &prey.life);
        par_loop!(
            rt,
            prey_live,
            prey.set,
            prey.pos(RW),
            eaten_by(READ),
            me(READ),
            ids(READ, list[..]),
            pos(READ, list[..]),
            list(NEAR),
            par(READ),
            ipar(READ),
            rng(DRAW),
            life(FATE)
        )?;
        self.steps += 1;
        Ok(self.counts())
    }

    /// Prey and predators now.
    pub fn counts(&self) -> (usize, usize) {
        (self.prey.set.size(), self.preds.set.size())
    }

    /// Steps run.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The prey set.
    pub fn prey(&self) -> &Set {
        &self.prey.set
    }

    /// The predator set.
    pub fn predators(&self) -> &Set {
        &self.preds.set
    }

    /// `(id, position)` of every prey (on this rank), in id order.
    pub fn prey_agents(&self) -> Vec<(u64, [f64; 2])> {
        self.prey.agents()
    }

    /// `(id, position, energy)` of every predator (on this rank), in id order.
    pub fn predator_agents(&self) -> Vec<(u64, [f64; 2], i32)> {
        let (pos, energy) = (self.preds.pos.data_ro(), self.energy.data_ro());
        let mut v: Vec<_> = self
            .preds
            .set
            .global_ids()
            .iter()
            .zip(pos.chunks_exact(2).zip(energy.iter()))
            .map(|(&id, (p, &e))| (id, [p[0], p[1]], e))
            .collect();
        v.sort_by_key(|a| a.0);
        v
    }

    /// What the last step's births and deaths did: (prey, predators).
    pub fn last_census(&self) -> (op2::Census, op2::Census) {
        (self.prey.life.last_census(), self.preds.life.last_census())
    }

    /// The prey's positions Dat (2 per prey).
    pub fn prey_positions(&self) -> &Dat<f64> {
        &self.prey.pos
    }

    /// The predators' positions Dat (2 per predator).
    pub fn predator_positions(&self) -> &Dat<f64> {
        &self.preds.pos
    }

    /// The predators' energies.
    pub fn energies(&self) -> &Dat<i32> {
        &self.energy
    }
}

/// Builds `list`; in a distributed run its ghosts travel during the build
/// (`AgentDomain::build_on`).
#[cfg(feature = "mpi")]
fn build(domain: &mut Option<op2::mpi::AgentDomain>, list: &MessageList, rt: &Runtime) -> op2::Result<usize> {
    match domain {
        Some(d) => d.build_on(list, rt),
        None => list.build_on(rt),
    }
}

/// Builds `list`.
#[cfg(not(feature = "mpi"))]
fn build(_: &mut (), list: &MessageList, rt: &Runtime) -> op2::Result<usize> {
    list.build_on(rt)
}
