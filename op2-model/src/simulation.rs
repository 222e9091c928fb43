//! The runner: a model's carriers on a runtime, and its functions run
//! layer by layer each step. A function's body (bound with
//! [`Simulation::bind`]) runs its loops; a function that outputs a message
//! list has the list built right after it (its messages are the senders'
//! values then), a function that only outputs needs no body. Births and
//! deaths apply after the loop that decides them. Spatial lists whose
//! senders neither die nor give birth have their senders sorted by bin
//! every few steps (neighbours in space become neighbours in memory; no
//! result changes). Under `mpirun` (`Simulation::distribute`, feature
//! `mpi`) an `AgentDomain` over the spatial lists moves the agents to the
//! ranks owning their bins before each step and brings the ghost messages
//! to each build, without user code.

use std::cell::RefCell;

use op2_agents::{AgentSet, Lifecycle, MessageList};
use op2_backends::Runtime;
use op2_core::agent_support::{identity_order, stage, DeviceAdoption, NewIds, OVERWRITE, READ, UPDATE};
use op2_core::{
    scratch_buffer, AgentPack, ArgData, Dat, DeviceBuffer, DeviceState, DeviceWork, Global, Result, Scalar, SelectJob,
    Set, Subset, Workers,
};

use crate::call::{Call, Over};
use crate::carriers::{AgentCarriers, Carriers};
#[cfg(feature = "mpi")]
use crate::typed::AnyDat;
use crate::{AgentFunction, Agents, Layers, MessageKind, Model};
#[cfg(feature = "mpi")]
use op2_core::RandomStreams;

/// What a function's body is: it runs the function's loops.
type Body<'rt> = Box<dyn Fn(&Call<'_>) -> Result<()> + 'rt>;

/// A host function (FLAME GPU's init, step and exit functions): it reads
/// and writes populations and environment properties through the
/// simulation's accessors, and may run loops of its own.
type HostFunction<'rt> = Box<dyn FnMut(&Simulation<'rt>) -> Result<()> + 'rt>;

/// An exit condition: true ends [`Simulation::run`] after the step.
type ExitCondition<'rt> = Box<dyn FnMut(&Simulation<'rt>) -> Result<bool> + 'rt>;

/// When host functions run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    Init,
    Step,
    Exit,
}

/// Steps between sorts of a spatial list's senders by default.
pub const DEFAULT_SORT_EVERY: u64 = 10;

/// A model running on a runtime.
pub struct Simulation<'rt> {
    pub(crate) model: Model,
    rt: &'rt Runtime,
    pub(crate) layers: Layers,
    bodies: Vec<(String, Body<'rt>)>,
    conditions: Vec<(String, Body<'rt>)>,
    pub(crate) initial: Vec<(String, Agents)>,
    seed: u64,
    pub(crate) seeds: Vec<(String, u64)>,
    sort_every: Vec<(String, u64)>,
    pub(crate) carriers: Option<Carriers>,
    pub(crate) steps: u64,
    hosts: Vec<(When, HostFunction<'rt>)>,
    exit_conditions: Vec<ExitCondition<'rt>>,
    /// `(network, edges as pairs of agent ids)`, as given: kept once the
    /// simulation starts, for its snapshots.
    pub(crate) edges: Vec<(String, Vec<(u64, u64)>)>,
    /// What a restored simulation takes from its snapshot when it starts.
    pub(crate) resumed: Option<crate::snapshot::Resumed>,
    /// Device buffers that held selections, kept for the next ones (no
    /// device allocation per function and step).
    spare: RefCell<Vec<Box<dyn DeviceBuffer>>>,
    /// The ranks sharing the run, once distributed: what host reductions
    /// of its agents combine over.
    ranks: Option<std::sync::Arc<dyn op2_core::AllReduce>>,
    #[cfg(feature = "mpi")]
    domain: Option<Distributed>,
    /// `(network, how it was cut)`, once distributed.
    #[cfg(feature = "mpi")]
    cut: Vec<(String, op2_mpi::Distributed)>,
}

/// After `function` ran on `parents`: the children its loop asked for
/// (`Call::spawn`) join their type, numbered by their parents' ids (across
/// ranks when the type's births are numbered so), with the values the loop
/// wrote (`Call::child`); their other Dats start at zero, except the ids
/// the type's lifecycle and streams keep. The flags go back to zero.
fn adopt(
    rt: &Runtime,
    function: &AgentFunction,
    parents: &AgentCarriers,
    carriers: &Carriers,
    spare: &RefCell<Vec<Box<dyn DeviceBuffer>>>,
) -> Result<()> {
    let adoption = (parents.adoptions.iter())
        .find(|a| a.function == function.name)
        .expect("the carriers made the function's adoption");
    let young = carriers
        .agent(&adoption.young)
        .expect("the model checked the type born");
    if let Some(work) = rt.device_work() {
        return adopt_on_device(work, adoption, parents, young, spare);
    }
    let n = parents.set.size();
    let population = young.set.population().expect("agent types are dynamic sets");
    let found = (|| -> Result<(Vec<usize>, Vec<u64>)> {
        let flags = adoption.spawn.try_data_ro()?;
        let chosen: Vec<usize> = (0..n).filter(|&i| flags[i] != 0).collect();
        let ids = parents.set.try_global_ids()?;
        let parent_ids = chosen.iter().map(|&i| ids[i]).collect();
        Ok((chosen, parent_ids))
    })();
    let mut children = Vec::new();
    let (chosen, next) = numbered_round(population, young.set.name(), found, &mut children)?;
    if !chosen.is_empty() {
        adoption.spawn.try_data_mut()?.fill(0);
        let layout = young.set.agent_layout()?;
        let record = layout.record_bytes();
        let staged = (adoption.child.iter())
            .map(|(v, d)| Ok((format!("*.{v}"), d.to_bytes()?)))
            .collect::<Result<Vec<_>>>()?;
        let dats: Vec<(String, usize)> = layout
            .dats()
            .map(|(name, _, bytes)| (name.to_string(), bytes))
            .collect();
        let offsets: Vec<usize> = layout.offsets().collect();
        let mut pack = AgentPack::new(&layout);
        let bytes = pack.append_zeroed(children.len());
        for (k, (&parent, &id)) in chosen.iter().zip(&children).enumerate() {
            let rec = &mut bytes[k * record..(k + 1) * record];
            rec[..8].copy_from_slice(&id.to_le_bytes());
            for ((name, size), &at) in dats.iter().zip(&offsets) {
                let field = &mut rec[at..at + size];
                if let Some((_, values)) = staged.iter().find(|(s, _)| s == name) {
                    field.copy_from_slice(&values[parent * size..(parent + 1) * size]);
                } else if name == "*.ids" || name.ends_with(".stream_ids") {
                    field.copy_from_slice(&(id as i64).to_ne_bytes());
                }
            }
        }
        young.set.move_agents_on(&[], &[&pack], rt)?;
    }
    population.set_next_id(next);
    Ok(())
}

/// [`adopt`] where the runtime lends a device: the parents are selected
/// there from their flags, and every Dat of the young type gathers its
/// children's values there from the staged Dats (zeros where none is
/// staged). Only the count comes back, and the parents' indices when their
/// ids decide the children's (across processes, or ids out of index order).
fn adopt_on_device(
    work: &dyn DeviceWork,
    adoption: &crate::carriers::Adoption,
    parents: &AgentCarriers,
    young: &AgentCarriers,
    spare: &RefCell<Vec<Box<dyn DeviceBuffer>>>,
) -> Result<()> {
    let population = young.set.population().expect("agent types are dynamic sets");
    let parent_population = parents.set.population().expect("agent types are dynamic sets");
    let by_ids = population.numbers_across_processes() || !parent_population.ids_ascend();
    let name = format!("{}.parents", adoption.function);
    let selected = select_on_device(work, spare, name, &adoption.spawn, SelectBy::NonZero);
    let mut children = Vec::new();
    let (chosen, numbered) = match by_ids {
        true => {
            let found = selected.and_then(|chosen| {
                let parent_ids = (parents.set.try_global_ids())
                    .and_then(|ids| Ok(chosen.try_indices()?.iter().map(|&i| ids[i as usize]).collect()));
                match parent_ids {
                    Ok(parent_ids) => Ok((chosen, parent_ids)),
                    Err(e) => {
                        reclaim(spare, chosen);
                        Err(e)
                    }
                }
            });
            let (chosen, next) = numbered_round(population, young.set.name(), found, &mut children)?;
            (chosen, Some(next))
        }
        false => {
            let chosen = selected?;
            if let Err(e) = population.check_ids_left(young.set.name(), chosen.len()) {
                reclaim(spare, chosen);
                return Err(e);
            }
            (chosen, None)
        }
    };
    let births = chosen.len();
    let mut grown = false;
    let adopted = (|| -> Result<()> {
        if births == 0 {
            return Ok(());
        }
        // The staged values, where the loop left them.
        let staged = (adoption.child.iter())
            .map(|(v, d)| {
                let name = young.variable(v).expect("the model checked the variable").name();
                Ok((name, stage(work, ArgData::Dat(d.handle()), READ, 0)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let columns: Vec<(&str, &dyn DeviceBuffer)> = staged.iter().map(|(n, s)| (n.as_str(), s.buffer())).collect();
        let slot = chosen.device().lock();
        let indices = slot.buffer.as_deref().expect("selected on this device");
        let ids = match &numbered {
            Some(next) => NewIds::Given {
                ids: &children,
                next: *next,
            },
            None => NewIds::Next(births),
        };
        let (kept, first_id) = (young.set.size(), population.next_id());
        population.adopt_on_device(
            young.set.name(),
            &DeviceAdoption {
                parents: indices,
                births,
                source_len: parents.set.size(),
                columns: &columns,
                ids,
                generation: population.generation(),
            },
            work,
        )?;
        grown = true;
        // The children's ids, where kernels read them.
        if let Some(life) = &young.life {
            let ids = stage(work, ArgData::Dat(life.ids()), UPDATE, 0)?;
            match numbered {
                None => work.fill_ids(ids.buffer(), kept, births, first_id)?,
                Some(_) => {
                    let (mut given, mut order) = (None, None);
                    let given = scratch_buffer(work, &mut given, "children's ids", 8 * births)?;
                    given.upload(bytemuck::cast_slice(&children))?;
                    work.gather(&op2_core::GatherJob {
                        n: births,
                        words: 2,
                        order: identity_order(work, &mut order, births)?,
                        src: given,
                        dst: ids.buffer(),
                        dst_first: kept,
                        tail: None,
                    })?;
                }
            }
        }
        // Children come from each step's loop alone.
        let spawn = stage(work, ArgData::Dat(&adoption.spawn), OVERWRITE, 0)?;
        work.fill_zero(spawn.buffer(), parents.set.size())
    })();
    match (&adopted, numbered) {
        (Ok(()), Some(next)) if births == 0 => population.set_next_id(next),
        (Err(_), Some(next)) if !grown => population.numbering_failed(next),
        _ => {}
    }
    if let (Err(_), true, Some(life)) = (&adopted, grown, &young.life) {
        // The children joined: their ids are right on the host at least.
        if let Ok(mut ids) = life.ids().try_data_mut() {
            let _ = population.copy_ids(&mut ids);
        }
    }
    reclaim(spare, chosen);
    adopted
}

/// One round of numbering children by their parents' ids, collective
/// across processes: `found` is what this process found (the parents,
/// whatever form they take, and their ids) or its failure, in which case
/// it still takes part (with no parents) and then reports the failure.
fn numbered_round<P>(
    population: &op2_core::agent_support::Population,
    set: &str,
    found: Result<(P, Vec<u64>)>,
    children: &mut Vec<u64>,
) -> Result<(P, u64)> {
    let parent_ids = found.as_ref().ok().map(|(_, ids)| ids.as_slice());
    let next = population.number_children_of(set, parent_ids, children);
    match (found, next) {
        (Ok((parents, _)), Ok(next)) => Ok((parents, next)),
        (Err(e), next) => {
            if let Ok(next) = next {
                population.numbering_failed(next);
            }
            Err(e)
        }
        (Ok(_), Err(e)) => Err(e),
    }
}

/// A lifecycle whose loops leave their fates until [`HeldFates::apply`]
/// (dropped without it, on an error, the fates are discarded).
struct HeldFates<'a>(Option<&'a Lifecycle>);

impl<'a> HeldFates<'a> {
    fn new(life: Option<&'a Lifecycle>) -> HeldFates<'a> {
        if let Some(life) = life {
            life.hold_fates(true);
        }
        HeldFates(life)
    }

    /// Applies the fates the loops left.
    fn apply(mut self, rt: &Runtime) -> Result<()> {
        match self.0.take() {
            Some(life) => {
                life.hold_fates(false);
                life.apply_on(rt).map(drop)
            }
            None => Ok(()),
        }
    }
}

impl Drop for HeldFates<'_> {
    /// Let go without an apply (an error on the way): the fates held are
    /// forgotten, so that no parent dies a step late.
    fn drop(&mut self) {
        if let Some(life) = self.0 {
            life.hold_fates(false);
            life.discard();
        }
    }
}

/// Puts the agents of `some` (all of them for `None`) in state `to`: on
/// the device, where `rt` runs there (the states never come back).
fn move_agents(rt: &Runtime, state: &Dat<i32>, some: Option<&Subset>, to: i32) -> Result<()> {
    if let Some(work) = rt.device_work() {
        let n = state.set().size();
        let mut spare = None;
        let Some(subset) = some else {
            op2_core::DatHandle::halo(state).mark_stale();
            let staged = stage(work, ArgData::Dat(state), OVERWRITE, 0)?;
            if to == 0 {
                return work.fill_zero(staged.buffer(), n);
            }
            let iota = scratch_buffer(work, &mut spare, "all agents", 4 * n)?;
            work.fill_iota(iota, n)?;
            return work.mark(staged.buffer(), n, iota, n, to);
        };
        // Written where the loops read it: its halo (a cut network's) is
        // exchanged again before the next read through the network, on
        // every rank alike (a rank that moves nobody too: the exchange
        // is collective).
        op2_core::DatHandle::halo(state).mark_stale();
        if subset.is_empty() {
            return Ok(());
        }
        let staged = stage(work, ArgData::Dat(state), UPDATE, 0)?;
        // A subset's indices, once on this device (selected there, or
        // uploaded whole by a loop), stay valid: subsets never change.
        let slot = subset.device().lock();
        let valid = |b: &&dyn DeviceBuffer| b.context_id() == work.context_id() && slot.state != DeviceState::Host;
        if let Some(indices) = slot.buffer.as_deref().filter(valid) {
            return work.mark(staged.buffer(), n, indices, subset.len(), to);
        }
        drop(slot);
        let indices = scratch_buffer(work, &mut spare, "subset", 4 * subset.len())?;
        indices.upload(bytemuck::cast_slice(subset.try_indices()?))?;
        return work.mark(staged.buffer(), n, indices, subset.len(), to);
    }
    let mut state = state.try_data_mut()?;
    match some {
        Some(subset) => subset.indices().iter().for_each(|&i| state[i as usize] = to),
        None => state.iter_mut().for_each(|s| *s = to),
    }
    Ok(())
}

/// What a selection on a device keeps.
enum SelectBy {
    /// The agents whose flag is this value.
    Equal(i32),
    /// The agents whose flag is not zero.
    NonZero,
}

/// The subset of `flags`' set whose flags pass `by`, selected on `work`'s
/// device into a buffer from `spare` (or a new one): the flags and the
/// indices stay there; the host reads the count.
fn select_on_device(
    work: &dyn DeviceWork,
    spare: &RefCell<Vec<Box<dyn DeviceBuffer>>>,
    name: String,
    flags: &Dat<i32>,
    by: SelectBy,
) -> Result<Subset> {
    let n = flags.set().size();
    let staged = stage(work, ArgData::Dat(flags), READ, 0)?;
    let fits = |b: &dyn DeviceBuffer| b.context_id() == work.context_id() && b.bytes() >= 4 * n;
    let kept = {
        let mut spare = spare.borrow_mut();
        match spare.iter().position(|b| fits(&**b)) {
            Some(k) => Some(spare.swap_remove(k)),
            None => {
                // None fits (the population grew, or another device):
                // the smallest goes, so that the pool follows the sizes.
                if let Some(k) = (0..spare.len()).min_by_key(|&k| spare[k].bytes()) {
                    spare.swap_remove(k);
                }
                None
            }
        }
    };
    // A quarter more room than needed, for a population that grows.
    let out = match kept {
        Some(b) => b,
        None => work.new_buffer(&name, 4 * (n + n / 4).max(1))?,
    };
    let count = match by {
        SelectBy::Equal(value) => work.select_equal(n, staged.buffer(), value, &*out)?,
        SelectBy::NonZero => work.select(&SelectJob {
            n,
            flags: Some(staged.buffer()),
            mask: -1,
            when_set: true,
            out: &*out,
        })?,
    };
    Subset::selected_on_device(name, flags.set(), out, count)
}

/// Keeps the device buffer of `subset`, done with, for the next
/// selections (a few at most: one per selection of a step).
fn reclaim(spare: &RefCell<Vec<Box<dyn DeviceBuffer>>>, subset: Subset) {
    let mut spare = spare.borrow_mut();
    if spare.len() < 8 {
        spare.extend(subset.into_device_buffer());
    }
}

/// A distributed simulation's domain.
#[cfg(feature = "mpi")]
struct Distributed {
    domain: op2_mpi::AgentDomain,
    /// The lists whose ghosts it brings.
    lists: Vec<String>,
    /// Whether readers run while the ghosts travel.
    overlap: bool,
}

impl<'rt> Simulation<'rt> {
    /// A simulation of `model` on `rt`, its functions in `model.layers()`.
    /// Give it its initial agents ([`Simulation::populate`]) and bodies
    /// ([`Simulation::bind`]); its data are made when it starts
    /// ([`Simulation::start`], or the first step).
    ///
    /// # Errors
    /// As [`Model::layers`].
    pub fn new(model: &Model, rt: &'rt Runtime) -> Result<Simulation<'rt>> {
        Ok(Simulation {
            layers: model.layers()?,
            model: model.clone(),
            rt,
            bodies: Vec::new(),
            conditions: Vec::new(),
            initial: Vec::new(),
            seed: 0,
            seeds: Vec::new(),
            sort_every: Vec::new(),
            carriers: None,
            steps: 0,
            hosts: Vec::new(),
            exit_conditions: Vec::new(),
            edges: Vec::new(),
            resumed: None,
            spare: RefCell::new(Vec::new()),
            ranks: None,
            #[cfg(feature = "mpi")]
            domain: None,
            #[cfg(feature = "mpi")]
            cut: Vec::new(),
        })
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The order the functions run in.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The runtime.
    pub fn rt(&self) -> &'rt Runtime {
        self.rt
    }

    fn check_not_started(&self, what: &str) -> Result<()> {
        match self.carriers {
            Some(_) => Err(self.model.invalid(format!(
                "{what} before the simulation starts (Simulation::start, or the first step)"
            ))),
            None => Ok(()),
        }
    }

    /// Starts agent type `agent` with `agents` (the others start empty).
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such type, it
    /// was given agents already, or the simulation started; when it
    /// starts, if a variable's values are of another type or number than
    /// its declaration, or an id repeats.
    pub fn populate(&mut self, agent: &str, agents: Agents) -> Result<&mut Simulation<'rt>> {
        self.check_not_started("give initial agents")?;
        if self.model.agent(agent).is_none() {
            return Err(self.model.invalid(format!(
                "initial agents of type `{agent}`, which the model does not have"
            )));
        }
        if self.initial.iter().any(|(n, _)| n == agent) {
            return Err(self
                .model
                .invalid(format!("initial agents of type `{agent}` given twice")));
        }
        self.initial.push((agent.to_string(), agents));
        Ok(self)
    }

    /// Gives network `network` its edges, as pairs of agent ids (see
    /// [`crate::Network`] for what an edge means). In a distributed run
    /// every rank gives the whole network, as it gives every agent.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such network,
    /// it was given edges already, or the simulation started; when it
    /// starts, if an edge names an agent its type does not have.
    pub fn connect(&mut self, network: &str, edges: &[(u64, u64)]) -> Result<&mut Simulation<'rt>> {
        self.check_not_started("give a network its edges")?;
        if self.model.network(network).is_none() {
            return Err(self
                .model
                .invalid(format!("edges of network `{network}`, which the model does not have")));
        }
        if self.edges.iter().any(|(n, _)| n == network) {
            return Err(self.model.invalid(format!("edges of network `{network}` given twice")));
        }
        self.edges.push((network.to_string(), edges.to_vec()));
        Ok(self)
    }

    /// Seeds the agents' random streams: type `k` of the model draws from
    /// a seed made of `seed` and `k` (0 by default).
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] once the simulation started.
    pub fn seed(&mut self, seed: u64) -> Result<&mut Simulation<'rt>> {
        self.check_not_started("seed the random streams")?;
        self.seed = seed;
        Ok(self)
    }

    /// Seeds the random streams of agent type `agent` with `seed` itself.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such type, or
    /// once the simulation started.
    pub fn seed_agent(&mut self, agent: &str, seed: u64) -> Result<&mut Simulation<'rt>> {
        self.check_not_started("seed the random streams")?;
        if self.model.agent(agent).is_none() {
            return Err(self
                .model
                .invalid(format!("seeds agent type `{agent}`, which the model does not have")));
        }
        self.seeds.retain(|(n, _)| n != agent);
        self.seeds.push((agent.to_string(), seed));
        Ok(self)
    }

    /// Sorts the senders of spatial list `list` by bin every `steps` steps
    /// (0: never), after the step's last layer. By default every
    /// [`DEFAULT_SORT_EVERY`] steps when the senders neither die nor give
    /// birth, else never. Sorting changes no result, only the speed.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such spatial
    /// list.
    pub fn sort_every(&mut self, list: &str, steps: u64) -> Result<&mut Simulation<'rt>> {
        match self.model.message(list).map(|m| m.kind) {
            Some(MessageKind::Spatial { .. } | MessageKind::Discrete2d { .. }) => {}
            _ => {
                return Err(self
                    .model
                    .invalid(format!("sorts by bin list `{list}`, which is not a spatial list")))
            }
        }
        self.sort_every.retain(|(l, _)| l != list);
        self.sort_every.push((list.to_string(), steps));
        if let Some(c) = &mut self.carriers {
            c.lists
                .iter_mut()
                .filter(|(n, _)| n == list)
                .for_each(|(_, l)| l.sort_every = steps);
        }
        Ok(self)
    }

    /// Makes agent function `function` run `body` (which runs its loops
    /// with `par_loop!` on what the [`Call`] gives it).
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such function
    /// or it has a body already.
    pub fn bind(
        &mut self,
        function: &str,
        body: impl Fn(&Call<'_>) -> Result<()> + 'rt,
    ) -> Result<&mut Simulation<'rt>> {
        if !self.model.functions.iter().any(|f| f.name == function) {
            return Err(self
                .model
                .invalid(format!("binds function `{function}`, which the model does not have")));
        }
        if self.bodies.iter().any(|(n, _)| n == function) {
            return Err(self.model.invalid(format!("binds function `{function}` twice")));
        }
        self.bodies.push((function.to_string(), Box::new(body)));
        Ok(self)
    }

    /// Makes agent function `function`'s condition run `body`: a loop over
    /// `Call::agents` (the function's state's agents) that writes
    /// `Call::pass` (1: the function runs on the agent). It runs on the
    /// runtime right before the function, every step.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such function,
    /// it declares no condition (AgentFunction::condition) or has one bound.
    pub fn bind_condition(
        &mut self,
        function: &str,
        body: impl Fn(&Call<'_>) -> Result<()> + 'rt,
    ) -> Result<&mut Simulation<'rt>> {
        match self.model.functions.iter().find(|f| f.name == function) {
            Some(f) if f.condition => {}
            Some(_) => {
                return Err(self.model.invalid(format!(
                    "binds a condition to function `{function}`, which declares none (AgentFunction::condition)"
                )))
            }
            None => {
                return Err(self
                    .model
                    .invalid(format!("binds function `{function}`, which the model does not have")))
            }
        }
        if self.conditions.iter().any(|(n, _)| n == function) {
            return Err(self.model.invalid(format!("binds the condition of `{function}` twice")));
        }
        self.conditions.push((function.to_string(), Box::new(body)));
        Ok(self)
    }

    /// Makes the carriers, if not made yet.
    ///
    /// # Errors
    /// As [`Simulation::populate`] and the carriers' constructors.
    pub fn start(&mut self) -> Result<()> {
        if self.carriers.is_some() {
            return Ok(());
        }
        self.make_carriers()?;
        self.begin()
    }

    /// Runs the init functions, in order.
    pub(crate) fn run_init_functions(&mut self) -> Result<()> {
        self.run_hosts(When::Init)
    }

    /// Checks that every function can run, then makes the carriers.
    fn make_carriers(&mut self) -> Result<()> {
        self.check_runnable()?;
        let carriers = self.build_carriers()?;
        self.adopt_carriers(carriers);
        Ok(())
    }

    /// Checks that every function has what it needs to run: its bodies.
    fn check_runnable(&self) -> Result<()> {
        for f in &self.model.functions {
            if f.condition && !self.conditions.iter().any(|(n, _)| n == &f.name) {
                return Err(self.model.invalid(format!(
                    "function `{}` has a condition and no body for it: bind one (Simulation::bind_condition)",
                    f.name
                )));
            }
            // A function that outputs or moves agents may do only that (its
            // condition may read neighbours); one that outputs optionally
            // says who sends, one that double-buffers writes the new values.
            let optional = f.output.as_ref().is_some_and(|(_, o)| *o);
            let buffers = f.neighbours.iter().any(|(_, v)| f.double_buffers(v));
            let work = ((f.output.is_some() && !optional) || f.next_state.is_some()) && !buffers;
            if !work && !self.bodies.iter().any(|(n, _)| n == &f.name) {
                return Err(self.model.invalid(format!(
                    "function `{}` has no body: bind one (Simulation::bind)",
                    f.name
                )));
            }
        }
        Ok(())
    }

    /// The carriers from the initial agents and edges, which stay: a start
    /// refused (say, for edges missing) can be mended and retried.
    fn build_carriers(&self) -> Result<Carriers> {
        let mut carriers = Carriers::new(&self.model, &self.initial, self.seed, &self.seeds, &self.edges)?;
        let mortal: Vec<&str> = (self.model.functions.iter())
            .flat_map(|f| [f.deaths.then_some(f.agent.as_str()), f.births.as_deref()])
            .flatten()
            .collect();
        for (name, l) in &mut carriers.lists {
            let spatial = !matches!(self.model.message(name).map(|m| m.kind), Some(MessageKind::BruteForce));
            let mortal = mortal.contains(&l.list.senders().name());
            let default = if spatial && !mortal { DEFAULT_SORT_EVERY } else { 0 };
            l.sort_every = self
                .sort_every
                .iter()
                .find(|(n, _)| n == name)
                .map_or(default, |(_, k)| *k);
        }
        Ok(carriers)
    }

    /// Starts running on `carriers`: the initial agents are theirs (the
    /// edges stay, for snapshots).
    fn adopt_carriers(&mut self, carriers: Carriers) {
        self.initial = Vec::new();
        self.carriers = Some(carriers);
    }

    /// Runs the host functions registered for `when`, in order.
    fn run_hosts(&mut self, when: When) -> Result<()> {
        let mut hosts = std::mem::take(&mut self.hosts);
        let result = (hosts.iter_mut())
            .filter(|(w, _)| *w == when)
            .try_for_each(|(_, f)| f(self));
        // Functions registered by a host function come after the others.
        hosts.append(&mut self.hosts);
        self.hosts = hosts;
        result
    }

    /// Adds an init function: it runs once, when the simulation starts
    /// (its carriers made, before the first step), after those added
    /// before it.
    pub fn add_init_function(&mut self, f: impl FnMut(&Simulation<'rt>) -> Result<()> + 'rt) -> &mut Simulation<'rt> {
        self.hosts.push((When::Init, Box::new(f)));
        self
    }

    /// Adds a step function: it runs at the end of every step (after the
    /// layers and the sorts), e.g. to set environment properties for the
    /// next step or to log.
    pub fn add_step_function(&mut self, f: impl FnMut(&Simulation<'rt>) -> Result<()> + 'rt) -> &mut Simulation<'rt> {
        self.hosts.push((When::Step, Box::new(f)));
        self
    }

    /// Adds an exit function: it runs when [`Simulation::run`] ends (its
    /// steps run, or an exit condition met), or at [`Simulation::finish`].
    pub fn add_exit_function(&mut self, f: impl FnMut(&Simulation<'rt>) -> Result<()> + 'rt) -> &mut Simulation<'rt> {
        self.hosts.push((When::Exit, Box::new(f)));
        self
    }

    /// Adds an exit condition: checked after every step of
    /// [`Simulation::run`]; the first that holds ends the run. Under MPI
    /// every rank must reach the same answer (compute it from reduced
    /// values).
    pub fn add_exit_condition(
        &mut self,
        f: impl FnMut(&Simulation<'rt>) -> Result<bool> + 'rt,
    ) -> &mut Simulation<'rt> {
        self.exit_conditions.push(Box::new(f));
        self
    }

    /// Runs the exit functions (what [`Simulation::run`] does at its end),
    /// for a simulation stepped by hand.
    ///
    /// # Errors
    /// What the exit functions return.
    pub fn finish(&mut self) -> Result<()> {
        self.run_hosts(When::Exit)
    }

    pub(crate) fn carriers(&self) -> Result<&Carriers> {
        self.carriers.as_ref().ok_or_else(|| {
            self.model
                .invalid("has not started: its data exist once it does (Simulation::start, or a step)".to_string())
        })
    }

    /// Runs one step: each layer's functions in turn (in a layer, in
    /// declaration order).
    ///
    /// # Errors
    /// As [`Simulation::start`]; what the bodies return; the builds',
    /// sorts' and (distributed) migrations' errors.
    pub fn step(&mut self) -> Result<()> {
        self.start()?;
        let carriers = self.carriers.as_ref().expect("started");
        #[cfg(feature = "mpi")]
        if let Some(d) = &mut self.domain {
            d.domain.migrate_on(self.rt)?;
        }
        let order: Vec<&AgentFunction> = (self.layers.as_slice().iter().flatten())
            .map(|name| {
                self.model
                    .functions
                    .iter()
                    .find(|f| &f.name == name)
                    .expect("layers name functions")
            })
            .collect();
        // A list whose build waits for its reader, the next function, to
        // overlap the ghosts' travel (distributed, overlapped steps).
        #[cfg(feature = "mpi")]
        let mut deferred: Option<&MessageList> = None;
        // Whether agents may have left their ranks' bins since the last
        // migration (a distributed step).
        #[cfg(feature = "mpi")]
        let mut moved = false;
        for (k, function) in order.iter().enumerate() {
            let agent = carriers
                .agent(&function.agent)
                .expect("the model checked the agent type");
            let model = &self.model;
            let call = |over| Call {
                over,
                model,
                function,
                rt: self.rt,
                agent,
                carriers,
                condition: false,
            };
            let body = self.bodies.iter().find(|(n, _)| n == &function.name).map(|(_, b)| b);
            let some = self.select(function, agent)?;
            if let (Some(subset), Some(sent)) = (&some, agent.sent.iter().find(|(f, _)| f == &function.name)) {
                // Only the agents the function runs on may send: all of
                // them, or (optional output) those its loop says.
                move_agents(self.rt, &sent.1, None, 0)?;
                if function.output.as_ref().is_some_and(|(_, optional)| !optional) {
                    move_agents(self.rt, &sent.1, Some(subset), 1)?;
                }
            }
            if let (Some(next), Some(state)) = (&function.next_state, &agent.state) {
                let to = self.state_index(&function.agent, next);
                move_agents(self.rt, state, some.as_ref(), to)?;
            }
            // Children of another type are adopted from their parents'
            // flags before the dying parents leave: the loop's fates wait.
            let adopts = function.births.as_ref().is_some_and(|b| *b != function.agent);
            let held = (adopts && function.deaths).then(|| HeldFates::new(agent.life.as_ref()));
            if adopts {
                // Children come from this step's loop only, not from flags
                // a failed step left (adopt zeroes them once it read them).
                let adoption = (agent.adoptions.iter()).find(|a| a.function == function.name);
                move_agents(self.rt, &adoption.expect("made for it").spawn, None, 0)?;
            }
            if let Some(subset) = &some {
                if let Some(body) = body {
                    body(&call(Over::Part(subset)))?;
                }
            } else {
                #[cfg(feature = "mpi")]
                if let (Some(list), Some(d), Some(body)) = (deferred.take(), &mut self.domain, body) {
                    let rt = self.rt;
                    d.domain.build_overlapped_on(list, &agent.set, rt, &mut |part| {
                        body(&Call {
                            over: Over::Part(part),
                            model,
                            function,
                            rt,
                            agent,
                            carriers,
                            condition: false,
                        })
                    })?;
                } else if let Some(body) = body {
                    body(&call(Over::All(&agent.set)))?;
                }
                #[cfg(not(feature = "mpi"))]
                if let Some(body) = body {
                    body(&call(Over::All(&agent.set)))?;
                }
            }
            // The new values of what the function read through a network
            // take the old ones' place.
            for (v, next) in agent.next.iter().filter(|_| body.is_some()) {
                if function.double_buffers(v) {
                    agent.variable(v).expect("declared").swap(next)?;
                }
            }
            if adopts {
                adopt(self.rt, function, agent, carriers, &self.spare)?;
            }
            if let Some(held) = held {
                held.apply(self.rt)?;
            }
            let some_agents = some.is_some();
            if let Some(subset) = some {
                reclaim(&self.spare, subset);
            }
            #[cfg(feature = "mpi")]
            if self.domain.is_some() {
                moved |= places_anew(&self.model, function);
            }
            let Some((name, optional)) = &function.output else {
                continue;
            };
            let list = &carriers.list(name).expect("the model checked the output").list;
            let sent = (agent.sent.iter().find(|(f, _)| f == &function.name)).map(|(_, d)| d);
            debug_assert_eq!(*optional || some_agents, sent.is_some());
            #[cfg(feature = "mpi")]
            let overlaps_next = sent.is_none() && order.get(k + 1).is_some_and(|next| self.overlaps(next, name));
            #[cfg(feature = "mpi")]
            if let Some(d) = &mut self.domain {
                // A message in a bin another rank owns would reach that
                // bin's readers as nobody's ghost: the senders move first.
                let by_bins = self
                    .model
                    .message(name)
                    .is_some_and(|m| m.kind != MessageKind::BruteForce);
                if moved && by_bins {
                    d.domain.migrate_on(self.rt)?;
                    moved = false;
                }
                if d.lists.contains(name) {
                    match sent {
                        Some(sent) => {
                            d.domain.build_sent_on(list, sent, self.rt)?;
                        }
                        None if d.overlap && overlaps_next => deferred = Some(list),
                        None => {
                            d.domain.build_on(list, self.rt)?;
                        }
                    }
                    continue;
                }
            }
            let _ = (k, optional);
            match sent {
                Some(sent) => list.build_sent_on(sent, self.rt)?,
                None => list.build_on(self.rt)?,
            };
        }
        for (_, l) in &carriers.lists {
            if l.sort_every > 0 && self.steps % l.sort_every == 0 && l.list.is_built() {
                l.list.sort_senders_on(self.rt)?;
            }
        }
        self.steps += 1;
        self.run_hosts(When::Step)
    }

    /// The place of state `state` in agent type `agent`'s states.
    fn state_index(&self, agent: &str, state: &str) -> i32 {
        let a = self.model.agent(agent).expect("the model checked the agent type");
        a.states
            .iter()
            .position(|s| s == state)
            .expect("the model checked the state") as i32
    }

    /// The agents `function` runs on when not all of its type's: those in
    /// its state, of them those its condition selects (its condition's
    /// loop run first, on the runtime). `None`: all of them.
    fn select(&self, function: &AgentFunction, agent: &AgentCarriers) -> Result<Option<Subset>> {
        if function.state.is_none() && !function.condition {
            return Ok(None);
        }
        let work = self.rt.device_work();
        let in_state = match (&function.state, &agent.state) {
            (Some(s), Some(state)) => {
                let k = self.state_index(&function.agent, s);
                let name = format!("{}.{s}", function.name);
                Some(match work {
                    Some(work) => select_on_device(work, &self.spare, name, state, SelectBy::Equal(k))?,
                    None => Subset::where_dat(name, state, |v| v[0] == k)?,
                })
            }
            _ => None,
        };
        if !function.condition {
            return Ok(in_state);
        }
        let condition = (self.conditions.iter())
            .find(|(n, _)| n == &function.name)
            .map(|(_, c)| c)
            .expect("start() checked the conditions");
        let carriers = self.carriers.as_ref().expect("started");
        let pass = agent.pass.as_ref().expect("a type with conditions has flags");
        if let Some(work) = work {
            // The agents the condition does not run on must not pass.
            let staged = stage(work, ArgData::Dat(pass), OVERWRITE, 0)?;
            work.fill_zero(staged.buffer(), agent.set.size())?;
        }
        condition(&Call {
            over: match &in_state {
                Some(subset) => Over::Part(subset),
                None => Over::All(&agent.set),
            },
            model: &self.model,
            function,
            rt: self.rt,
            agent,
            carriers,
            condition: true,
        })?;
        let name = format!("{}.selected", function.name);
        if let Some(work) = work {
            let selected = select_on_device(work, &self.spare, name, pass, SelectBy::NonZero)?;
            if let Some(subset) = in_state {
                reclaim(&self.spare, subset);
            }
            return Ok(Some(selected));
        }
        let pass = pass.try_data_ro()?;
        let subset = match &in_state {
            Some(subset) => {
                let chosen = subset.indices().iter().map(|&i| i as usize).filter(|&i| pass[i] != 0);
                Subset::new(name, &agent.set, chosen.collect())?
            }
            None => Subset::filter(name, &agent.set, |i| pass[i] != 0)?,
        };
        Ok(Some(subset))
    }

    /// Refuses, before anything collective, agent types a distributed run
    /// would leave on the rank they start on although where they are
    /// matters: readers of a list binned by position that send no such
    /// list (their queries would miss the messages of bins no rank sends
    /// them), and types given birth to that no such list places (their
    /// children's ids are numbered across ranks only in the domain).
    #[cfg(feature = "mpi")]
    fn check_placed(&self, placing: &[String]) -> Result<()> {
        let placed: Vec<&str> = (placing.iter())
            .filter_map(|n| self.model.message(n))
            .map(|m| m.sender.as_str())
            .collect();
        let brute = (self.model.messages.iter()).filter(|m| m.kind == MessageKind::BruteForce);
        if let Some(m) = brute.clone().find(|m| !placed.contains(&m.sender.as_str())) {
            return Err(self.model.invalid(format!(
                "is distributed, and brute-force list `{}` is sent by agent type `{}`, which no spatial or \
                 discrete list places: its messages would reach only their own rank's readers",
                m.name, m.sender
            )));
        }
        for f in &self.model.functions {
            let input = f.input.as_deref().and_then(|l| self.model.message(l));
            if let Some(list) = input.filter(|m| m.kind != MessageKind::BruteForce) {
                if !placed.contains(&f.agent.as_str()) {
                    return Err(self.model.invalid(format!(
                        "is distributed by space, and function `{}` of agent type `{}` reads list `{}` by \
                         position while no list places that type: its agents would stay on the rank they start \
                         on, far from the messages they read (have the type send a spatial or discrete list of \
                         its position)",
                        f.name, f.agent, list.name
                    )));
                }
            }
            if let Some(child) = f.births.as_deref().filter(|c| !placed.contains(c)) {
                return Err(self.model.invalid(format!(
                    "is distributed by space, and function `{}` gives birth to agent type `{child}`, which no \
                     spatial or discrete list places: children are numbered across ranks only in the types \
                     the domain moves",
                    f.name
                )));
            }
        }
        Ok(())
    }

    /// Whether `reader` may run in two parts around the travel of list
    /// `list`'s ghosts: it reads the list and has a body, and nothing it
    /// does after its first part changes what the second reads (no births
    /// or deaths, no reductions into environment properties).
    #[cfg(feature = "mpi")]
    fn overlaps(&self, reader: &AgentFunction, list: &str) -> bool {
        let spatial = matches!(
            self.model.message(list).map(|m| m.kind),
            Some(MessageKind::Spatial { .. })
        );
        spatial
            && reader.input.as_deref() == Some(list)
            && self.bodies.iter().any(|(n, _)| n == &reader.name)
            && !reader.deaths
            && reader.births.is_none()
            && reader.state.is_none()
            && !reader.condition
            && reader.environment.iter().all(|(_, a)| *a == op2_core::Access::Read)
    }

    /// Shares the agents among the ranks of `mpi`. Collective; starts the
    /// simulation. Results are bitwise those of one rank, but for macro
    /// properties of floats, whose sums add the ranks' parts (equal up to
    /// rounding).
    ///
    /// - **Mobile agents** (a model with spatial or discrete lists over one
    ///   box; a discrete list's ghosts go as far as its range): every rank is
    ///   populated with its share of the run's agents, under ids unique
    ///   across ranks. One `AgentDomain` over the spatial lists, cut along
    ///   the first one's grid (`options`), then moves the agents to the
    ///   ranks that own their bins before each step, and each build brings
    ///   the ghost messages from the ranks whose agents it reads (a
    ///   discrete list's from as far as its range). A brute-force list's
    ///   build brings every rank's messages (its senders must send a
    ///   spatial or discrete list too, which places them).
    /// - **A network's nodes** (a model with networks): every rank is
    ///   populated with all the nodes and given all the edges; each
    ///   network is cut by METIS, each rank keeping its part of the nodes
    ///   and, in its halo, the neighbours they read. Call it before the
    ///   simulation starts. A model may have both: its networks are cut,
    ///   its other types shared by space (each rank populated with its
    ///   share of those); they meet through the environment.
    /// - **Macro properties** hold every rank's contributions: the loops
    ///   that update them combine the ranks' parts.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has neither a spatial
    /// or discrete list nor a network; reads a list by position, gives
    /// birth or sends a brute-force list from a type no list places; is
    /// distributed already, or (networks) has started; as
    /// [`op2_mpi::AgentDomain::of_lists`] (grids of other boxes or
    /// boundaries) and [`op2_mpi::Mpi::distribute_graph`].
    /// What the model and its lists make refusable is refused before the
    /// first collective step, on every rank alike, and leaves the
    /// simulation as it was.
    #[cfg(feature = "mpi")]
    pub fn distribute(&mut self, mpi: &op2_mpi::Mpi, options: op2_mpi::DomainOptions) -> Result<&mut Simulation<'rt>> {
        if self.domain.is_some() || !self.cut.is_empty() {
            return Err(self.model.invalid("is distributed twice".to_string()));
        }
        // The lists that place agents, spatial ones first (the first cuts
        // the domain), then brute-force ones: every rank gets all their
        // messages.
        let of_kind = |rank: u8| {
            (self.model.messages.iter())
                .filter(move |m| {
                    let r = match m.kind {
                        MessageKind::Spatial { .. } => 0,
                        MessageKind::Discrete2d { .. } => 1,
                        MessageKind::BruteForce => 2,
                    };
                    r == rank
                })
                .map(|m| m.name.clone())
        };
        let names: Vec<String> = of_kind(0).chain(of_kind(1)).chain(of_kind(2)).collect();
        let placing: Vec<String> = of_kind(0).chain(of_kind(1)).collect();
        let networks = !self.model.networks.is_empty();
        if placing.is_empty() && !networks {
            return Err(self.model.invalid(
                "is distributed by space, and it has no spatial or discrete message list to cut it by (nor a \
                 network)"
                    .to_string(),
            ));
        }
        // Everything that can be refused is, before anything collective.
        self.check_placed(&placing)?;
        if networks {
            if !placing.is_empty() {
                // The domain comes after the cut: whatever would refuse it
                // must refuse before, on lists made to be looked at.
                let trial = self.build_carriers()?;
                let lists: Vec<&MessageList> = (names.iter()).map(|n| &trial.list(n).expect("declared").list).collect();
                op2_mpi::AgentDomain::check_lists(&lists, &options)?;
            }
            // A network's nodes are cut by METIS; the other types' agents
            // are shared by space below, if any list places them.
            self.cut_networks(mpi)?;
            if placing.is_empty() {
                self.ranks = Some(mpi.all_reduce());
                self.share_macro_properties()?;
                return Ok(self);
            }
        }
        self.start()?;
        let carriers = self.carriers()?;
        let lists: Vec<&MessageList> = names
            .iter()
            .map(|n| &carriers.list(n).expect("declared").list)
            .collect();
        let domain = op2_mpi::AgentDomain::of_lists(mpi, &lists, options)?;
        self.domain = Some(Distributed {
            domain,
            lists: names,
            overlap: false,
        });
        self.ranks = Some(mpi.all_reduce());
        self.share_macro_properties()?;
        Ok(self)
    }

    /// Shares every macro property among the ranks (`Simulation::ranks`,
    /// which host reductions share too): the loops that update it on each
    /// rank's agents combine the ranks' contributions, so each rank holds
    /// what one process would (sums up to rounding).
    #[cfg(feature = "mpi")]
    fn share_macro_properties(&self) -> Result<()> {
        let (carriers, Some(ranks)) = (self.carriers()?, &self.ranks) else {
            return Ok(());
        };
        let reduced = self.model.environment.iter().filter(|p| p.reduced);
        for g in reduced.filter_map(|p| carriers.property(&p.name)) {
            g.reduce_across(ranks.clone());
        }
        Ok(())
    }

    /// Cuts each network among the ranks (`Simulation::distribute`): its
    /// type's Set, Dats and map are replaced by this rank's parts; then the
    /// simulation starts.
    #[cfg(feature = "mpi")]
    fn cut_networks(&mut self, mpi: &op2_mpi::Mpi) -> Result<()> {
        self.check_not_started("distribute a network")?;
        self.check_runnable()?;
        // Cut into locals: a refused cut leaves the simulation as it was.
        let mut carriers = self.build_carriers()?;
        let mut cut = Vec::new();
        for net in &self.model.networks {
            let k = (carriers.agents.iter())
                .position(|(n, _)| n == &net.agent)
                .expect("declared");
            let j = (carriers.networks.iter())
                .position(|(n, _)| n == &net.name)
                .expect("made");
            let (global, map) = (&carriers.agents[k].1, &carriers.networks[j].1);
            let d = mpi.distribute_graph(&[&global.set], &[], &[map], &global.set)?;
            let set = d.set(&global.set)?;
            let local = |(v, dat): &(String, AnyDat)| Ok((v.clone(), dat.distributed(&d)?));
            let a = AgentCarriers {
                variables: global.variables.iter().map(local).collect::<Result<_>>()?,
                state: global.state.as_ref().map(|s| d.dat(s)).transpose()?,
                pass: (global.pass.as_ref())
                    .map(|p| Dat::zeros(p.name(), &set, 1))
                    .transpose()?,
                next: (global.next.iter())
                    .map(|(v, dat)| Ok((v.clone(), dat.zeros_like(format!("{}.{v}.next", net.agent), &set)?)))
                    .collect::<Result<_>>()?,
                // A network's nodes neither send nor give birth nor die.
                sent: Vec::new(),
                adoptions: Vec::new(),
                life: None,
                streams: {
                    let streams = RandomStreams::new(global.streams.name(), global.streams.seed());
                    streams.set_loops(global.streams.loops());
                    streams
                },
                set,
            };
            let map = d.ragged(map)?;
            carriers.networks[j].1 = map;
            carriers.agents[k].1 = a;
            cut.push((net.name.clone(), d));
        }
        self.adopt_carriers(carriers);
        self.cut = cut;
        self.begin()
    }

    /// How network `network` was cut among the ranks
    /// (`Simulation::distribute`), to gather its nodes' values on one rank.
    #[cfg(feature = "mpi")]
    pub fn network_distribution(&self, network: &str) -> Option<&op2_mpi::Distributed> {
        self.cut.iter().find(|(n, _)| n == network).map(|(_, d)| d)
    }

    /// In a distributed run, whether a function that reads a spatial list
    /// right after the list's output runs on the agents that read no other
    /// rank's message while the ghosts travel, then on the others
    /// (`AgentDomain::build_overlapped_on`); the same results either way.
    /// Not for functions with births, deaths or reductions into the
    /// environment: they run whole. Off at first; nothing changes on an
    /// undistributed simulation.
    #[cfg(feature = "mpi")]
    pub fn set_overlap(&mut self, overlap: bool) {
        if let Some(d) = &mut self.domain {
            d.overlap = overlap;
        }
    }

    /// The ranks this simulation is shared by, once distributed
    /// (`Simulation::distribute`); `None` in one process. A Global that
    /// host code reduces the agents into is shared by them
    /// (`Global::reduce_across`), so each rank gets the whole run's value.
    pub fn ranks(&self) -> Option<std::sync::Arc<dyn op2_core::AllReduce>> {
        self.ranks.clone()
    }

    /// The ranks sharing the agents (`Simulation::distribute`).
    #[cfg(feature = "mpi")]
    pub fn domain(&self) -> Option<&op2_mpi::AgentDomain> {
        self.domain.as_ref().map(|d| &d.domain)
    }

    /// Runs up to `steps` steps: fewer when an exit condition holds after
    /// one. Then runs the exit functions. Returns the steps it ran.
    ///
    /// # Errors
    /// As [`Simulation::step`]; what the exit conditions and functions
    /// return.
    pub fn run(&mut self, steps: u64) -> Result<u64> {
        let mut ran = 0;
        while ran < steps {
            self.step()?;
            ran += 1;
            let mut conditions = std::mem::take(&mut self.exit_conditions);
            let done = conditions
                .iter_mut()
                .try_fold(false, |done, c| Ok::<_, op2_core::Error>(done || c(self)?));
            conditions.append(&mut self.exit_conditions);
            self.exit_conditions = conditions;
            if done? {
                break;
            }
        }
        self.finish()?;
        Ok(ran)
    }

    /// Whether the simulation is spread over ranks
    /// (`Simulation::distribute`).
    pub fn is_distributed(&self) -> bool {
        #[cfg(feature = "mpi")]
        return self.domain.is_some() || !self.cut.is_empty();
        #[cfg(not(feature = "mpi"))]
        false
    }

    /// Whether the simulation started (its data exist).
    pub fn is_started(&self) -> bool {
        self.carriers.is_some()
    }

    /// Steps run.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The agents of type `agent` (on this rank).
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such type or
    /// the simulation has not started.
    pub fn population(&self, agent: &str) -> Result<&Set> {
        let model = self.model.name.clone();
        let a = self
            .carriers()?
            .agent(agent)
            .ok_or_else(|| op2_core::Error::InvalidModel {
                model,
                reason: format!("asks for agent type `{agent}`, which the model does not have"),
            })?;
        Ok(&a.set)
    }

    /// The Dat of `agent`'s `variable`, as `T` values (in memory order;
    /// the population's ids say whose each value is).
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if there is no such variable or it
    /// holds another type, or the simulation has not started.
    pub fn variable<T: Scalar>(&self, agent: &str, variable: &str) -> Result<&Dat<T>> {
        let model = self.model.name.clone();
        let dat = self
            .carriers()?
            .agent(agent)
            .and_then(|a| a.variable(variable))
            .ok_or_else(|| op2_core::Error::InvalidModel {
                model: model.clone(),
                reason: format!("asks for variable `{agent}.{variable}`, which the model does not declare"),
            })?;
        dat.typed(&model, &format!("`{agent}.{variable}`"), "the host")
    }

    /// The Dat of each agent's state (its place in `agent`'s states), for
    /// a type with states.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if the model has no such type, it
    /// has no states, or the simulation has not started.
    pub fn states(&self, agent: &str) -> Result<&Dat<i32>> {
        let a = self.carriers()?.agent(agent);
        a.and_then(|a| a.state.as_ref()).ok_or_else(|| {
            self.model
                .invalid(format!("asks for the states of `{agent}`, a type without states"))
        })
    }

    /// The type-erased Dat of `agent.variable`.
    pub(crate) fn any_variable(&self, agent: &str, variable: &str) -> Result<&crate::typed::AnyDat> {
        let model = self.model.name.clone();
        self.carriers()?
            .agent(agent)
            .and_then(|a| a.variable(variable))
            .ok_or_else(|| op2_core::Error::InvalidModel {
                model,
                reason: format!("asks for variable `{agent}.{variable}`, which the model does not declare"),
            })
    }

    /// The Global of environment property `property`: the host reads it,
    /// and sets it between steps.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if there is no such property or it
    /// holds another type, or the simulation has not started.
    pub fn environment<T: Scalar>(&self, property: &str) -> Result<&Global<T>> {
        let model = self.model.name.clone();
        let global = self
            .carriers()?
            .property(property)
            .ok_or_else(|| op2_core::Error::InvalidModel {
                model: model.clone(),
                reason: format!("asks for environment property `{property}`, which the model does not declare"),
            })?;
        global.typed(&model, property, "the host")
    }

    /// The message list `list`.
    ///
    /// # Errors
    /// [`op2_core::Error::InvalidModel`] if there is no such list or the
    /// simulation has not started.
    pub fn list(&self, list: &str) -> Result<&MessageList> {
        let model = self.model.name.clone();
        let l = self
            .carriers()?
            .list(list)
            .ok_or_else(|| op2_core::Error::InvalidModel {
                model,
                reason: format!("asks for message list `{list}`, which the model does not declare"),
            })?;
        Ok(&l.list)
    }
}

/// Whether `function` may have moved agents out of their ranks' bins: it
/// writes the position a list bins its agents by, or gives birth to agents
/// such a list bins (placed wherever their parents put them).
#[cfg(feature = "mpi")]
fn places_anew(model: &Model, function: &AgentFunction) -> bool {
    model
        .messages
        .iter()
        .filter(|m| m.kind != MessageKind::BruteForce)
        .any(|m| {
            let writes_position = m.sender == function.agent
                && (function.uses.iter())
                    .any(|u| Some(&u.name) == m.carried.first() && u.access != op2_core::Access::Read);
            writes_position || function.births.as_deref() == Some(m.sender.as_str())
        })
}
