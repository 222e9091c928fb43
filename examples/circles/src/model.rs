//! Circles on op2's carriers.

use op2::prelude::*;

/// The model's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The interaction radius `r`.
    pub radius: f32,
    /// The repulsion strength.
    pub repulse: f32,
    /// Steps between sorts of the agents by bin in memory (0: never). A
    /// sort changes no result, only the speed: neighbours in space become
    /// neighbours in memory.
    pub sort_every: u64,
}

impl Default for Params {
    /// FLAME GPU's: `r = 2`, `repulse = 0.05`; sorted every 10 steps.
    fn default() -> Params {
        Params {
            radius: 2.0,
            repulse: 0.05,
            sort_every: 10,
        }
    }
}

/// One agent's move: the mean repulsion of the messages within the radius,
/// added to its position. (3.141 is the model's constant, not a rounded pi.)
/// Its sine is op2's own (`portable_math`): every backend, GPUs included,
/// moves the agents to the same bits.
#[op2::kernel(portable_math)]
#[allow(clippy::approx_constant)]
pub fn circles_move(me: &u32, p: &mut [f32; 3], ids: &[u32], ps: &[[f32; 3]], msgs: &Spatial3d, params: &[f32; 2]) {
    let r = params[0];
    let repulse = params[1];
    let mut f = [0.0f32; 3];
    let mut n = 0;
    for j in msgs.near(p[0], p[1], p[2]) {
        if ids[j] != *me {
            let dx = ps[j][0] - p[0];
            let dy = ps[j][1] - p[1];
            let dz = ps[j][2] - p[2];
            let s = (dx * dx + dy * dy + dz * dz).sqrt();
            if s > 0.0 && s < r {
                let k = ((s / r) * 3.141f32 * -2.0f32).sin() * repulse;
                f[0] += k * dx / s;
                f[1] += k * dy / s;
                f[2] += k * dz / s;
                n += 1;
            }
        }
    }
    if n > 0 {
        for c in 0..3 {
            p[c] += f[c] / (n as f32);
        }
    }
}

/// What a step's loop reads and writes.
struct Carriers<'a> {
    id: &'a Dat<u32>,
    pos: &'a Dat<f32>,
    list: &'a MessageList,
    m_id: &'a Dat<u32>,
    m_pos: &'a Dat<f32>,
    params: &'a Global<f32>,
}

impl Carriers<'_> {
    /// Moves the agents of `over` (all of them, or a part).
    fn move_agents(&self, rt: &Runtime, over: &impl op2::IterationSpace) -> op2::Result<()> {
        let Carriers {
            id,
            pos,
            list,
            m_id,
            m_pos,
            params,
        } = self;
        par_loop!(
            rt,
            circles_move,
            over,
            id(READ),
            pos(RW),
            m_id(READ, list[..]),
            m_pos(READ, list[..]),
            list(NEAR),
            params(READ)
        )
    }
}

/// The side of the box `N` agents fill at `density` agents per unit volume.
pub fn box_side(agents: usize, density: f64) -> f64 {
    (agents as f64 / density).cbrt()
}

/// `agents` positions uniform in `[0, side)^3`, agent `i`'s from the
/// counter-based stream `(seed, i, 0)`: the same on every machine.
pub fn initial_positions(agents: usize, side: f64, seed: u64) -> Vec<[f32; 3]> {
    (0..agents)
        .map(|i| {
            let mut s = Philox::new(seed, i as u64, 0);
            let mut p = [0.0f32; 3];
            for c in &mut p {
                // Rounding to f32 may reach `side` itself: stay inside.
                *c = ((s.uniform_f64() * side) as f32).min(side as f32 * (1.0 - f32::EPSILON));
            }
            p
        })
        .collect()
}

/// Circles on op2: the agents' ids and positions, the spatial message list
/// they send to each step (a copy of both), and the model's constants.
pub struct Circles {
    agents: Set,
    id: Dat<u32>,
    pos: Dat<f32>,
    list: MessageList,
    m_id: Dat<u32>,
    m_pos: Dat<f32>,
    params: Global<f32>,
    sort_every: u64,
    steps: u64,
    /// The ranks sharing the agents, in a distributed run.
    #[cfg(feature = "mpi")]
    domain: Option<op2::mpi::AgentDomain>,
    /// Whether a distributed step moves the agents that read no ghost
    /// while the ghosts travel ([`Circles::set_overlap`]).
    #[cfg(feature = "mpi")]
    overlap: bool,
}

impl Circles {
    /// Agents `0, 1, ...` at `positions`, in a box of side `side` (the
    /// message grid's extent; agents may leave it: they then fall into the
    /// edge bins).
    ///
    /// # Errors
    /// [`op2::Error::InvalidMessages`] if the radius or side is not positive
    /// and finite.
    pub fn new(positions: &[[f32; 3]], side: f64, params: Params) -> op2::Result<Circles> {
        let ids: Vec<u64> = (0..positions.len() as u64).collect();
        Circles::with_ids(&ids, positions, side, params)
    }

    /// Agents `ids` at `positions` (agent `ids[k]` at `positions[k]`): some
    /// of a larger run's agents, e.g. a rank's share.
    ///
    /// # Errors
    /// As [`Circles::new`]; [`op2::Error::InvalidGlobalIds`] if an id
    /// repeats or is past the ids' range, [`op2::Error::DatLength`] if
    /// there is not one position per id.
    pub fn with_ids(ids: &[u64], positions: &[[f32; 3]], side: f64, params: Params) -> op2::Result<Circles> {
        let n = ids.len();
        // Dynamic (of a fixed size) so that the agents can be sorted.
        let agents = Set::dynamic_with_ids("agents", ids.to_vec(), n)?;
        let user_ids = ids
            .iter()
            .map(|&i| {
                u32::try_from(i).map_err(|_| op2::Error::InvalidGlobalIds {
                    set: "agents".into(),
                    reason: format!("agent id {i} does not fit the model's 32-bit ids"),
                })
            })
            .collect::<op2::Result<Vec<u32>>>()?;
        let id = Dat::from_vec("id", &agents, 1, user_ids)?;
        let pos = Dat::from_vec("pos", &agents, 3, positions.iter().flatten().copied().collect())?;
        let grid = SpatialGrid::new_3d("location", [0.0; 3], [side; 3], params.radius as f64, Boundary::Clamp)?;
        let list = MessageList::spatial("location", grid, &pos)?;
        let (m_id, m_pos) = (list.carry(&id)?, list.carry(&pos)?);
        let sort_every = params.sort_every;
        let params = Global::new("params", vec![params.radius, params.repulse])?;
        Ok(Circles {
            agents,
            id,
            pos,
            list,
            m_id,
            m_pos,
            params,
            sort_every,
            steps: 0,
            #[cfg(feature = "mpi")]
            domain: None,
            #[cfg(feature = "mpi")]
            overlap: false,
        })
    }

    /// This rank's share of the agents at `positions` (agent `i` at
    /// `positions[i]`) on the ranks of `mpi`: at first every `size`-th
    /// agent; from the first step on, the agents in this rank's box of the
    /// message grid ([`op2::mpi::AgentDomain`]). The positions come out
    /// bitwise as on one rank. Collective.
    ///
    /// # Errors
    /// As [`Circles::new`] and [`op2::mpi::AgentDomain::new`].
    #[cfg(feature = "mpi")]
    pub fn shared(
        mpi: &op2::mpi::Mpi,
        positions: &[[f32; 3]],
        side: f64,
        params: Params,
        options: op2::mpi::DomainOptions,
    ) -> op2::Result<Circles> {
        let (rank, size) = (mpi.rank(), mpi.size());
        let ids: Vec<u64> = (rank..positions.len()).step_by(size).map(|i| i as u64).collect();
        let mine: Vec<[f32; 3]> = ids.iter().map(|&i| positions[i as usize]).collect();
        let mut model = Circles::with_ids(&ids, &mine, side, params)?;
        model.domain = Some(op2::mpi::AgentDomain::new(mpi, &model.list, options)?);
        Ok(model)
    }

    /// In a distributed run, whether each step moves the agents whose
    /// neighbourhood holds no other rank's message while the ghosts travel,
    /// then the others once they came (`AgentDomain::build_overlapped_on`);
    /// the positions are bitwise the same either way. Off at first.
    #[cfg(feature = "mpi")]
    pub fn set_overlap(&mut self, overlap: bool) {
        self.overlap = overlap;
    }

    /// The ranks sharing the agents ([`Circles::shared`]).
    #[cfg(feature = "mpi")]
    pub fn domain(&self) -> Option<&op2::mpi::AgentDomain> {
        self.domain.as_ref()
    }

    /// One step: every agent sends its message, then moves; every
    /// `sort_every` steps (from the first) the agents are then sorted in
    /// memory by the bins of the step's messages.
    ///
    /// In a distributed run (`Circles::shared`, feature `mpi`) the agents first move to
    /// the ranks that own their bins, and each rank receives the messages
    /// its agents read from its neighbours' bins while it builds its list.
    ///
    /// # Errors
    /// As `MessageList::build`, `Runtime::par_loop` and
    /// `MessageList::sort_senders`; as `AgentDomain::migrate_on` and
    /// `AgentDomain::build_on`.
    pub fn step(&mut self, rt: &Runtime) -> op2::Result<()> {
        let carriers = Carriers {
            id: &self.id,
            pos: &self.pos,
            list: &self.list,
            m_id: &self.m_id,
            m_pos: &self.m_pos,
            params: &self.params,
        };
        #[cfg(feature = "mpi")]
        match &mut self.domain {
            Some(domain) if self.overlap => {
                domain.migrate_on(rt)?;
                domain.build_overlapped_on(&self.list, &self.agents, rt, &mut |part| carriers.move_agents(rt, part))?;
            }
            Some(domain) => {
                domain.migrate_on(rt)?;
                domain.build_on(&self.list, rt)?;
                carriers.move_agents(rt, &self.agents)?;
            }
            None => {
                self.list.build_on(rt)?;
                carriers.move_agents(rt, &self.agents)?;
            }
        }
        #[cfg(not(feature = "mpi"))]
        {
            self.list.build_on(rt)?;
            carriers.move_agents(rt, &self.agents)?;
        }
        if self.sort_every > 0 && self.steps % self.sort_every == 0 {
            self.list.sort_senders_on(rt)?;
        }
        self.steps += 1;
        Ok(())
    }

    /// Puts the agents back at `positions` (agent `i`'s at `positions[i]`,
    /// wherever it is in memory), e.g. to time the same step again.
    ///
    /// # Errors
    /// [`op2::Error::DatLength`] if there is not one position per agent;
    /// [`op2::Error::HostBorrow`] if the positions are borrowed.
    pub fn restart(&mut self, positions: &[[f32; 3]], steps: u64) -> op2::Result<()> {
        if positions.len() != self.agents.size() {
            return Err(op2::Error::DatLength {
                dat: self.pos.name().to_string(),
                set: self.agents.name().to_string(),
                set_size: self.agents.size(),
                dim: 3,
                expected: self.agents.size() * 3,
                found: positions.len() * 3,
            });
        }
        let ids = self.id.try_data_ro()?;
        let mut pos = self.pos.try_data_mut()?;
        for (at, &id) in pos.chunks_exact_mut(3).zip(ids.iter()) {
            at.copy_from_slice(&positions[id as usize]);
        }
        self.steps = steps;
        Ok(())
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The agents.
    pub fn agents(&self) -> &Set {
        &self.agents
    }

    /// The agents' ids (`0..N`, in memory order: sorting mixes them).
    pub fn ids(&self) -> &Dat<u32> {
        &self.id
    }

    /// The agents' positions (dim 3, in memory order, as [`Circles::ids`]).
    pub fn positions_dat(&self) -> &Dat<f32> {
        &self.pos
    }

    /// The positions in id order: agent `i`'s is the `i`-th, up to the
    /// largest id here (in a distributed run, the agents of other ranks
    /// are NaN).
    pub fn positions(&self) -> Vec<[f32; 3]> {
        let ids = self.id.to_vec();
        let len = ids.iter().max().map_or(0, |&m| m as usize + 1);
        let mut by_id = vec![[f32::NAN; 3]; len];
        for (c, &id) in self.pos.to_vec().chunks_exact(3).zip(&ids) {
            by_id[id as usize] = [c[0], c[1], c[2]];
        }
        by_id
    }
}
