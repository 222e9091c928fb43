//! A run between two steps, as plain data: what a simulation needs to go
//! on exactly where it stopped. [`Simulation::snapshot`] takes it (this
//! rank's agents, in a distributed run) and [`Simulation::restore`] gives
//! it to a simulation of the same model before it starts, which then
//! continues as the first would have. A checkpoint file is a snapshot on
//! disk (`op2::model::Checkpoints`).
//!
//! What a snapshot holds: per agent type its agents' ids, every
//! variable's values and states, its random streams' seed and loop count
//! and the id its next child gets; the environment properties' values;
//! each network's edges; the step count. No message list is kept: every
//! reader of a list runs after the function that outputs it, in the same
//! step (`Model::layers`), so none outlives a step. The restored agents
//! keep the snapshot's order (the order they were kept in): a reduction
//! adds them in that order, and a sum of floats depends on it. A snapshot
//! of any rank count restores on any other.

use op2_core::{Result, ScalarType};

use crate::{Agents, Model, Simulation};

/// The values of one variable of a type's agents.
#[derive(Clone, Debug, PartialEq)]
pub struct VariableValues {
    /// The variable.
    pub name: String,
    /// Its element type.
    pub scalar: ScalarType,
    /// Values per agent.
    pub dim: usize,
    /// `dim` values per agent, in the order of the ids, as bytes.
    pub bytes: Vec<u8>,
}

/// One agent type's part of a snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentValues {
    /// The type.
    pub name: String,
    /// The agents' ids.
    pub ids: Vec<u64>,
    /// Every variable, in declaration order.
    pub variables: Vec<VariableValues>,
    /// Each agent's state (its place in the type's states), for a type
    /// with states.
    pub states: Option<Vec<i32>>,
    /// The seed of the type's random streams.
    pub stream_seed: u64,
    /// Loops that drew from them so far.
    pub stream_loops: u32,
    /// The id the type's next child gets.
    pub next_id: u64,
}

/// A simulation between two steps (see the module's header).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The model's name.
    pub model: String,
    /// The model's layout ([`Model::layout`]): what its data are.
    pub layout: Vec<String>,
    /// Steps run.
    pub steps: u64,
    /// Every agent type, in the model's order.
    pub agents: Vec<AgentValues>,
    /// Every environment property's values, as bytes, in the model's order.
    pub environment: Vec<(String, Vec<u8>)>,
    /// Every network's edges, as pairs of agent ids.
    pub networks: Vec<(String, Vec<(u64, u64)>)>,
}

impl AgentValues {
    /// Puts the agents in id order, their values with them.
    pub fn sort_by_id(&mut self) {
        if self.ids.is_sorted() {
            return;
        }
        let n = self.ids.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by_key(|&k| self.ids[k]);
        for v in &mut self.variables {
            let each = v.bytes.len().checked_div(n).unwrap_or(0);
            let mut sorted = Vec::with_capacity(v.bytes.len());
            for &k in &order {
                sorted.extend_from_slice(&v.bytes[k * each..(k + 1) * each]);
            }
            v.bytes = sorted;
        }
        if let Some(states) = &mut self.states {
            *states = order.iter().filter_map(|&k| states.get(k).copied()).collect();
        }
        self.ids = order.iter().map(|&k| self.ids[k]).collect();
    }
}

impl Snapshot {
    /// The snapshot with every type's agents in id order: two runs are in
    /// the same state when these are equal, wherever each kept its agents.
    pub fn in_id_order(mut self) -> Snapshot {
        self.agents.iter_mut().for_each(AgentValues::sort_by_id);
        self
    }
}

/// What a restored simulation sets once its carriers exist.
pub(crate) struct Resumed {
    steps: u64,
    /// `(type, stream loops, next id)`.
    counters: Vec<(String, u32, u64)>,
    environment: Vec<(String, Vec<u8>)>,
}

fn type_name(scalar: ScalarType) -> &'static str {
    scalar.rust_name()
}

impl Model {
    /// What this model's data are, one line per item: each agent type
    /// with its variables (type and width) and states, each environment
    /// property (type and length), each message list (its kind, bounds
    /// and radius: where agents may be), each network. Two models with the same
    /// layout can take each other's snapshots.
    pub fn layout(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for a in &self.agents {
            lines.push(format!("agent type `{}`", a.name));
            for v in &a.variables {
                let (t, n) = (type_name(v.scalar), v.dim);
                lines.push(format!("variable `{}.{}`: {n} {t}", a.name, v.name));
            }
            if !a.states.is_empty() {
                lines.push(format!("states of `{}`: {}", a.name, a.states.join(", ")));
            }
        }
        for p in &self.environment {
            let n = p.values.len() / p.scalar.size();
            let kind = if p.reduced { "macro property" } else { "property" };
            lines.push(format!("{kind} `{}`: {n} {}", p.name, type_name(p.scalar)));
        }
        for m in &self.messages {
            lines.push(format!("message list `{}` from `{}`: {:?}", m.name, m.sender, m.kind));
        }
        for n in &self.networks {
            let d = if n.directed { "directed" } else { "undirected" };
            lines.push(format!("network `{}` over `{}`, {d}", n.name, n.agent));
        }
        lines
    }

    /// Why a snapshot of `model` with `layout` does not fit this model (the
    /// first line that differs), if it does not.
    pub fn layout_differs(&self, model: &str, layout: &[String]) -> Option<String> {
        if model != self.name {
            return Some(format!("it is of model `{model}`, not `{}`", self.name));
        }
        let mine = self.layout();
        let at = (0..mine.len().max(layout.len())).find(|&k| mine.get(k) != layout.get(k))?;
        Some(match (layout.get(at), mine.get(at)) {
            (Some(theirs), Some(ours)) => format!("it has {theirs} where this model has {ours}"),
            (Some(theirs), None) => format!("it has {theirs}, which this model lacks"),
            (None, Some(ours)) => format!("it lacks {ours}"),
            (None, None) => unreachable!("a line differs"),
        })
    }
}

impl<'rt> Simulation<'rt> {
    /// The run as it stands, between two steps: this rank's agents (the
    /// ones it owns), everything else as every rank holds it.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] before it starts; a device's error
    /// copying values back.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let carriers = self.carriers()?;
        let mut agents = Vec::new();
        for (a, (name, c)) in self.model.agents.iter().zip(&carriers.agents) {
            let n = c.set.size();
            let ids = c.set.try_global_ids()?[..n].to_vec();
            let variables = (a.variables.iter().zip(&c.variables))
                .map(|(v, (_, dat))| {
                    let mut bytes = dat.to_bytes()?;
                    bytes.truncate(n * v.dim * v.scalar.size());
                    Ok(VariableValues {
                        name: v.name.clone(),
                        scalar: v.scalar,
                        dim: v.dim,
                        bytes,
                    })
                })
                .collect::<Result<_>>()?;
            let states = match &c.state {
                Some(s) => Some(s.try_data_ro()?[..n].to_vec()),
                None => None,
            };
            let next_id = match c.set.population() {
                Some(p) => p.next_id(),
                None => ids.iter().max().map_or(0, |m| m + 1),
            };
            agents.push(AgentValues {
                name: name.clone(),
                ids,
                variables,
                states,
                stream_seed: c.streams.seed(),
                stream_loops: c.streams.loops(),
                next_id,
            });
        }
        let environment = (carriers.environment.iter())
            .map(|(name, g)| Ok((name.clone(), g.to_bytes()?)))
            .collect::<Result<_>>()?;
        Ok(Snapshot {
            model: self.model.name.clone(),
            layout: self.model.layout(),
            steps: self.steps,
            agents,
            environment,
            networks: self.edges.clone(),
        })
    }

    /// Continues from `snapshot` (of a simulation of this model; in a
    /// distributed run, each rank gives a share of the agents of types
    /// that move (any share: `Simulation::distribute` places them), and every agent of a
    /// network's type): its agents replace the initial ones, in its order,
    /// its edges the networks', its seeds and counters the streams', its
    /// values the environment's, and the step count goes on from its.
    /// Init functions do not run for it. Call it before the first step
    /// (and, distributed, before `Simulation::distribute`): a simulation
    /// started already makes its data anew from the snapshot (what its init
    /// functions did to the environment gives way to the snapshot's).
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the snapshot is of another
    /// model or layout (naming the first difference), the simulation
    /// stepped or is distributed, or a type's values do not match its ids
    /// or a state is not one of its type's; as [`Simulation::start`] for
    /// a started one.
    pub fn restore(&mut self, snapshot: Snapshot) -> Result<&mut Simulation<'rt>> {
        let started = self.is_started();
        if started && (self.steps > 0 || self.is_distributed()) {
            return Err(self.model.invalid(
                "cannot restore a snapshot once it has stepped or is distributed: restore before".to_string(),
            ));
        }
        if let Some(why) = self.model.layout_differs(&snapshot.model, &snapshot.layout) {
            return Err(self.model.invalid(format!("cannot restore the snapshot: {why}")));
        }
        if snapshot.agents.len() != self.model.agents.len() {
            return Err(self.model.invalid(format!(
                "cannot restore the snapshot: it has {} agent types, the model {}",
                snapshot.agents.len(),
                self.model.agents.len()
            )));
        }
        // Everything is checked before anything changes.
        let properties = &self.model.environment;
        let fits = snapshot.environment.len() == properties.len()
            && (snapshot.environment.iter().zip(properties))
                .all(|((name, bytes), p)| *name == p.name && bytes.len() == p.values.len());
        if !fits {
            return Err(self.model.invalid(
                "cannot restore the snapshot: its environment is not this model's (names, order or sizes)".to_string(),
            ));
        }
        let mut initial = Vec::new();
        let mut counters = Vec::new();
        let mut seeds = Vec::new();
        for (a, values) in self.model.agents.iter().zip(snapshot.agents) {
            if a.name != values.name || values.variables.len() != a.variables.len() {
                return Err(self.model.invalid(format!(
                    "cannot restore the snapshot: its agent types differ at `{}`",
                    a.name
                )));
            }
            let n = values.ids.len();
            if values.states.is_some() == a.states.is_empty() {
                return Err(self.model.invalid(format!(
                    "cannot restore the snapshot: type `{}` has {} and the snapshot {}",
                    a.name,
                    op2_core::plural(a.states.len(), "state", "states"),
                    if values.states.is_some() {
                        "gives states"
                    } else {
                        "none"
                    }
                )));
            }
            if let Some(states) = &values.states {
                if states.len() != n {
                    return Err(self.model.invalid(format!(
                        "cannot restore the snapshot: {} states for {n} agents of `{}`",
                        states.len(),
                        a.name
                    )));
                }
            }
            // Checked here, not when the set is made: nothing changes
            // before the whole snapshot is found to fit.
            let mut sorted = values.ids.clone();
            sorted.sort_unstable();
            if let Some(&id) = sorted.last().filter(|&&id| id > i64::MAX as u64) {
                return Err(self.model.invalid(format!(
                    "cannot restore the snapshot: agent id {id} of `{}` is past the largest id, {}",
                    a.name,
                    i64::MAX
                )));
            }
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return Err(self.model.invalid(format!(
                    "cannot restore the snapshot: agent id {} of `{}` appears twice",
                    w[0], a.name
                )));
            }
            drop(sorted);
            // The agents stay in the snapshot's order: a reduction adds them
            // in the order they are kept, and floats' sums depend on it.
            let mut agents = Agents::with_ids(values.ids.clone());
            for (v, given) in a.variables.iter().zip(values.variables) {
                let shape = given.scalar == v.scalar && given.dim == v.dim;
                if given.name != v.name || !shape || given.bytes.len() != n * v.dim * v.scalar.size() {
                    return Err(self.model.invalid(format!(
                        "cannot restore the snapshot: variable `{}.{}` has {} bytes for {n} agents",
                        a.name,
                        given.name,
                        given.bytes.len()
                    )));
                }
                agents.values.push((v.name.clone(), v.scalar, given.bytes));
            }
            if let Some(states) = values.states {
                let named = states.iter().zip(&values.ids).map(|(&s, id)| {
                    usize::try_from(s)
                        .ok()
                        .and_then(|s| a.states.get(s))
                        .cloned()
                        .ok_or_else(|| {
                            self.model.invalid(format!(
                                "cannot restore the snapshot: agent {id} of `{}` is in state {s}, and the type has {}",
                                a.name,
                                a.states.len()
                            ))
                        })
                });
                agents.states = Some(named.collect::<Result<_>>()?);
            }
            initial.push((a.name.clone(), agents));
            seeds.push((a.name.clone(), values.stream_seed));
            counters.push((a.name.clone(), values.stream_loops, values.next_id));
        }
        self.initial = initial;
        self.seeds = seeds;
        self.edges = snapshot.networks;
        self.resumed = Some(Resumed {
            steps: snapshot.steps,
            counters,
            environment: snapshot.environment,
        });
        if started {
            self.carriers = None;
            self.start()?;
        }
        Ok(self)
    }

    /// Once the carriers exist: a restored simulation takes its counters
    /// and environment from its snapshot; any other runs its init
    /// functions.
    pub(crate) fn begin(&mut self) -> Result<()> {
        let Some(resumed) = self.resumed.take() else {
            return self.run_init_functions();
        };
        let carriers = self.carriers()?;
        for (name, loops, next_id) in &resumed.counters {
            let c = carriers.agent(name).expect("restore checked the types");
            c.streams.set_loops(*loops);
            if let Some(p) = c.set.population() {
                p.set_next_id(*next_id);
            }
        }
        for (name, bytes) in &resumed.environment {
            let g = carriers.property(name).expect("restore checked the layout");
            g.set_bytes(bytes).map_err(|e| match e {
                op2_core::Error::InvalidModel { reason, .. } => self.model.invalid(reason),
                e => e,
            })?;
        }
        self.steps = resumed.steps;
        Ok(())
    }
}
