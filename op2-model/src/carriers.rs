//! What a simulation runs on, made from a model and its initial
//! populations: per agent type a dynamic Set with one Dat per variable,
//! its births and deaths (a `Lifecycle`, for types that functions kill or
//! give birth to) and its random streams; per message list an
//! `op2_agents::MessageList` with the Dats it carries; per network a
//! ragged map over its type's Set (a static Set: the nodes stay), and a
//! second buffer for each variable a function both reads through it and
//! writes; per environment property a Global.

use op2_agents::{Boundary, Lifecycle, MessageList, SpatialGrid};
use std::collections::HashMap;

use op2_core::{Dat, Duplicates, EdgeRules, Error, RaggedMap, RandomStreams, Result, ScalarType, SelfLoops, Set};

use crate::typed::{AnyDat, AnyGlobal};
use crate::{AgentType, Agents, Message, MessageKind, Model, Variable};

/// One agent type's carriers.
pub(crate) struct AgentCarriers {
    pub set: Set,
    /// `(variable, Dat)`, in declaration order.
    pub variables: Vec<(String, AnyDat)>,
    pub life: Option<Lifecycle>,
    pub streams: RandomStreams,
    /// Each agent's state (its place in the type's states), for a type
    /// with states.
    pub state: Option<Dat<i32>>,
    /// What the last condition decided for each agent, for a type that
    /// has functions with conditions.
    pub pass: Option<Dat<i32>>,
    /// Per function that outputs optionally or from some agents (a state,
    /// a condition): whether each agent sends.
    pub sent: Vec<(String, Dat<i32>)>,
    /// Per function whose agents give birth to another type's.
    pub adoptions: Vec<Adoption>,
    /// `(variable, Dat)`: the second buffer of each variable a function
    /// reads through a network and writes (it writes there, then the two
    /// swap).
    pub next: Vec<(String, AnyDat)>,
}

/// What a function whose agents give birth to agents of another type
/// writes, per parent: whether it has a child, and the child's values.
pub(crate) struct Adoption {
    pub function: String,
    pub young: String,
    pub spawn: Dat<i32>,
    /// `(variable of the young's type, its values for each parent's child)`.
    pub child: Vec<(String, AnyDat)>,
}

impl AgentCarriers {
    /// The Dat of `variable`, if the type has it.
    pub fn variable(&self, variable: &str) -> Option<&AnyDat> {
        self.variables.iter().find(|(n, _)| n == variable).map(|(_, d)| d)
    }

    /// The second buffer of `variable`, if it has one.
    pub fn next(&self, variable: &str) -> Option<&AnyDat> {
        self.next.iter().find(|(n, _)| n == variable).map(|(_, d)| d)
    }
}

/// One message list's carriers.
pub(crate) struct ListCarriers {
    pub list: MessageList,
    /// `(sender variable, carried Dat)`.
    pub carried: Vec<(String, AnyDat)>,
    /// The senders' ids, when the messages carry them.
    pub ids: Option<Dat<i64>>,
    /// The senders' states, when the messages carry them.
    pub states: Option<Dat<i32>>,
    /// Steps between sorts of the senders by bin (0: never).
    pub sort_every: u64,
}

impl ListCarriers {
    /// The carried Dat of `variable`, if the list carries it.
    pub fn carried(&self, variable: &str) -> Option<&AnyDat> {
        self.carried.iter().find(|(n, _)| n == variable).map(|(_, d)| d)
    }
}

/// Everything a simulation runs on.
pub(crate) struct Carriers {
    /// In the model's order of agent types.
    pub agents: Vec<(String, AgentCarriers)>,
    pub lists: Vec<(String, ListCarriers)>,
    pub environment: Vec<(String, AnyGlobal)>,
    /// `(network, its map)`.
    pub networks: Vec<(String, RaggedMap)>,
}

impl Carriers {
    /// Makes the carriers of `model`, its agent types starting as
    /// `initial` says (a type not there starts empty), each type's random
    /// streams seeded from `seed` and its place in the model, or as
    /// `seeds` says, each network with the edges `edges` gives it.
    pub fn new(
        model: &Model,
        initial: &[(String, Agents)],
        seed: u64,
        seeds: &[(String, u64)],
        edges: &[(String, Vec<(u64, u64)>)],
    ) -> Result<Carriers> {
        let mut agents = Vec::new();
        for (k, a) in model.agents.iter().enumerate() {
            let none = Agents::new(0);
            let start = initial.iter().find(|(n, _)| n == &a.name).map_or(&none, |(_, s)| s);
            // Births, deaths and ids need the type's Lifecycle.
            let mortal = model
                .functions
                .iter()
                .any(|f| (f.agent == a.name && (f.deaths || f.ids)) || f.births.as_deref() == Some(&a.name));
            let numbered = model.messages.iter().any(|m| m.sender == a.name && m.ids);
            let streams_seed = match seeds.iter().find(|(n, _)| n == &a.name) {
                Some((_, s)) => *s,
                None => seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            };
            let carriers = AgentCarriers::new(model, a, start, mortal || numbered, streams_seed)?;
            agents.push((a.name.clone(), carriers));
        }
        let mut lists = Vec::new();
        for m in &model.messages {
            let (_, senders) = agents
                .iter()
                .find(|(n, _)| n == &m.sender)
                .expect("the model checked the sender");
            lists.push((m.name.clone(), ListCarriers::new(model, m, senders)?));
        }
        let environment = model
            .environment
            .iter()
            .map(|p| Ok((p.name.clone(), AnyGlobal::from_bytes(&p.name, p.scalar, &p.values)?)))
            .collect::<Result<_>>()?;
        let mut networks = Vec::new();
        for net in &model.networks {
            let (_, nodes) = agents
                .iter()
                .find(|(n, _)| n == &net.agent)
                .expect("the model checked the type");
            let given = edges.iter().find(|(n, _)| n == &net.name).map(|(_, e)| &e[..]);
            let given = given.ok_or_else(|| {
                model.invalid(format!(
                    "network `{}` was given no edges: give them (Simulation::connect) before it starts",
                    net.name
                ))
            })?;
            networks.push((net.name.clone(), network_map(model, net, &nodes.set, given)?));
        }
        Ok(Carriers {
            agents,
            lists,
            environment,
            networks,
        })
    }

    /// The map of network `name`.
    pub fn network(&self, name: &str) -> Option<&RaggedMap> {
        self.networks.iter().find(|(n, _)| n == name).map(|(_, m)| m)
    }

    /// The carriers of agent type `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentCarriers> {
        self.agents.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }

    /// The carriers of message list `name`.
    pub fn list(&self, name: &str) -> Option<&ListCarriers> {
        self.lists.iter().find(|(n, _)| n == name).map(|(_, l)| l)
    }

    /// The Global of environment property `name`.
    pub fn property(&self, name: &str) -> Option<&AnyGlobal> {
        self.environment.iter().find(|(n, _)| n == name).map(|(_, g)| g)
    }
}

/// `bytes`, the initial values of `v` for `start`'s agents, with the
/// values [`Agents::set_agent`] gave single agents put in (those of
/// another rank's agents only checked).
fn set_single_agents(
    model: &Model,
    a: &AgentType,
    start: &Agents,
    v: &Variable,
    mut bytes: Vec<u8>,
) -> Result<Vec<u8>> {
    let mut single = start.single.iter().filter(|one| one.variable == v.name).peekable();
    if single.peek().is_none() {
        return Ok(bytes);
    }
    let at: HashMap<u64, usize> = start.ids.iter().enumerate().map(|(k, &id)| (id, k)).collect();
    let each = v.dim * v.scalar.size();
    for one in single {
        let id = one.id;
        if one.scalar != v.scalar || one.bytes.len() != each {
            return Err(model.invalid(format!(
                "the initial agents of type `{}` give agent {id} {} `{}` values of `{}`, which holds {} `{}`",
                a.name,
                one.bytes.len() / one.scalar.size(),
                one.scalar.rust_name(),
                v.name,
                v.dim,
                v.scalar.rust_name()
            )));
        }
        if one.elsewhere {
            continue;
        }
        let k = at.get(&id).ok_or_else(|| {
            model.invalid(format!(
                "the initial agents of type `{}` give agent {id} a value of `{}`, and no agent has id {id}",
                a.name, v.name
            ))
        })?;
        bytes[k * each..(k + 1) * each].copy_from_slice(&one.bytes);
    }
    Ok(bytes)
}

impl AgentCarriers {
    fn new(model: &Model, a: &AgentType, start: &Agents, with_life: bool, seed: u64) -> Result<AgentCarriers> {
        let n = start.len();
        let capacity = a.capacity.max(n);
        // A network's nodes stay: a static Set, which a graph partitioner
        // can cut.
        let set = match model.network_of(&a.name) {
            Some(_) => Set::with_global_ids(a.name.clone(), start.ids.clone())?,
            None => Set::dynamic_with_ids(a.name.clone(), start.ids.clone(), capacity)?,
        };
        let single = start.single.iter().map(|one| &one.variable);
        for v in start.values.iter().map(|(v, ..)| v).chain(single) {
            if a.variable_named(v).is_none() {
                return Err(model.invalid(format!(
                    "the initial agents of type `{}` give values of `{v}`, which the type does not declare",
                    a.name
                )));
            }
        }
        let mut variables = Vec::new();
        for v in &a.variables {
            let given = start.values.iter().find(|(name, _, _)| name == &v.name);
            let bytes = match given {
                Some((_, scalar, bytes)) => {
                    if *scalar != v.scalar || bytes.len() != n * v.dim * v.scalar.size() {
                        return Err(model.invalid(format!(
                            "the initial agents of type `{}` give {} `{}` values of `{}`, and {n} agents of {} `{}` \
                             need {}",
                            a.name,
                            bytes.len() / scalar.size(),
                            scalar.rust_name(),
                            v.name,
                            v.dim,
                            v.scalar.rust_name(),
                            n * v.dim
                        )));
                    }
                    bytes.clone()
                }
                None => v.default.repeat(n),
            };
            let bytes = set_single_agents(model, a, start, v, bytes)?;
            let dat = AnyDat::from_bytes(format!("{}.{}", a.name, v.name), &set, v.scalar, v.dim, &bytes)?;
            variables.push((v.name.clone(), dat));
        }
        let state = match (&a.states[..], &start.states) {
            ([], None) => None,
            ([], Some(_)) => {
                return Err(model.invalid(format!(
                    "the initial agents of type `{}` are given states, and the type has none",
                    a.name
                )))
            }
            (_, None) => Some(Dat::filled(format!("{}.state", a.name), &set, 1, 0)?),
            (names, Some(given)) => {
                if given.len() != n {
                    return Err(model.invalid(format!(
                        "the initial agents of type `{}` are given {} states for {n} agents",
                        a.name,
                        given.len()
                    )));
                }
                let index = |s: &String| {
                    (names.iter().position(|t| t == s)).ok_or_else(|| {
                        model.invalid(format!(
                            "initial agents of type `{}` in state `{s}`, which it does not have",
                            a.name
                        ))
                    })
                };
                let values = given
                    .iter()
                    .map(|s| index(s).map(|i| i as i32))
                    .collect::<Result<Vec<_>>>()?;
                Some(Dat::from_vec(format!("{}.state", a.name), &set, 1, values)?)
            }
        };
        let conditioned = model.functions.iter().any(|f| f.agent == a.name && f.condition);
        let pass = match conditioned {
            true => Some(Dat::zeros(format!("{}.pass", a.name), &set, 1)?),
            false => None,
        };
        // Who sends: written by the function (optional output), or marked
        // by the runner (a function of some agents, whose others are silent).
        let sends_some = |f: &crate::AgentFunction| {
            f.output
                .as_ref()
                .is_some_and(|(_, optional)| *optional || f.state.is_some() || f.condition)
        };
        let sent = (model.functions.iter())
            .filter(|f| f.agent == a.name && sends_some(f))
            .map(|f| Ok((f.name.clone(), Dat::zeros(format!("{}.sent", f.name), &set, 1)?)))
            .collect::<Result<_>>()?;
        let mut adoptions = Vec::new();
        for f in model.functions.iter().filter(|f| f.agent == a.name) {
            let Some(young) = f.births.as_ref().filter(|b| **b != a.name) else {
                continue;
            };
            let y = model.agent(young).expect("the model checked the type born");
            let child = (y.variables.iter())
                .map(|v| {
                    let name = format!("{}.child.{}", f.name, v.name);
                    Ok((
                        v.name.clone(),
                        AnyDat::from_bytes(name, &set, v.scalar, v.dim, &v.default.repeat(n))?,
                    ))
                })
                .collect::<Result<_>>()?;
            adoptions.push(Adoption {
                function: f.name.clone(),
                young: young.clone(),
                spawn: Dat::zeros(format!("{}.spawn", f.name), &set, 1)?,
                child,
            });
        }
        let mut next = Vec::new();
        for f in model.functions.iter().filter(|f| f.agent == a.name) {
            for (_, v) in &f.neighbours {
                if f.double_buffers(v) && !next.iter().any(|(w, _)| w == v) {
                    let (_, dat) = variables.iter().find(|(w, _)| w == v).expect("the model checked it");
                    next.push((v.clone(), dat.zeros_like(format!("{}.{v}.next", a.name), &set)?));
                }
            }
        }
        let life = if with_life { Some(Lifecycle::new(&set)?) } else { None };
        let streams = RandomStreams::new(format!("{}.random", a.name), seed);
        Ok(AgentCarriers {
            set,
            variables,
            life,
            streams,
            state,
            pass,
            sent,
            adoptions,
            next,
        })
    }
}

/// Network `net`'s map over `nodes` from `edges` (pairs of agent ids).
fn network_map(model: &Model, net: &crate::Network, nodes: &Set, edges: &[(u64, u64)]) -> Result<RaggedMap> {
    let ids = nodes.try_global_ids()?;
    let index: HashMap<u64, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let mut pairs = Vec::with_capacity(edges.len());
    for (k, &(a, b)) in edges.iter().enumerate() {
        let at = |id: u64| {
            index.get(&id).copied().ok_or_else(|| {
                model.invalid(format!(
                    "edge {k} ({a}, {b}) of network `{}` names agent {id}, which type `{}` does not have",
                    net.name, net.agent
                ))
            })
        };
        pairs.push((at(a)?, at(b)?));
    }
    let rules = EdgeRules {
        undirected: !net.directed,
        duplicates: Duplicates::Keep,
        self_loops: SelfLoops::Keep,
    };
    RaggedMap::from_edges(format!("{}.neighbours", net.name), nodes, nodes, &pairs, rules)
}

impl ListCarriers {
    fn new(model: &Model, m: &Message, senders: &AgentCarriers) -> Result<ListCarriers> {
        let var = |name: &str| {
            senders.variable(name).ok_or_else(|| {
                model.invalid(format!(
                    "message list `{}` carries `{}.{name}`, which is not declared",
                    m.name, m.sender
                ))
            })
        };
        let position = || {
            let name = m.carried.first().ok_or_else(|| {
                model.invalid(format!(
                    "message list `{}` is binned by position: its first carried variable must be the senders' \
                     position",
                    m.name
                ))
            })?;
            var(name)
        };
        let list = match m.kind {
            MessageKind::BruteForce => MessageList::brute_force(m.name.clone(), &senders.set)?,
            MessageKind::Spatial {
                dims,
                min,
                max,
                radius,
                wrap,
            } => {
                let boundary = if wrap { Boundary::Wrap } else { Boundary::Clamp };
                let grid = match dims {
                    2 => SpatialGrid::new_2d(&m.name, [min[0], min[1]], [max[0], max[1]], radius, boundary)?,
                    3 => SpatialGrid::new_3d(&m.name, min, max, radius, boundary)?,
                    d => {
                        return Err(Error::InvalidMessages {
                            list: m.name.clone(),
                            reason: format!("a spatial list has 2 or 3 dimensions, not {d}"),
                        })
                    }
                };
                spatial_list(model, m, grid, position()?)?
            }
            MessageKind::Discrete2d { width, height, range } => {
                let lattice = SpatialGrid::discrete_2d(&m.name, [width, height], Boundary::Clamp)?;
                let grid = lattice.with_reach(range).map_err(|_| {
                    model.invalid(format!(
                        "discrete message list `{}` reaches {range} cells, past 2^31 - 1",
                        m.name
                    ))
                })?;
                spatial_list(model, m, grid, position()?)?
            }
        };
        let carried = m
            .carried
            .iter()
            .map(|v| Ok((v.clone(), var(v)?.carried_by(&list)?)))
            .collect::<Result<_>>()?;
        let ids = match (m.ids, &senders.life) {
            (true, Some(life)) => Some(list.carry(life.ids())?),
            _ => None,
        };
        let states = match (m.states, &senders.state) {
            (true, Some(state)) => Some(list.carry(state)?),
            _ => None,
        };
        Ok(ListCarriers {
            list,
            carried,
            ids,
            states,
            sort_every: 0,
        })
    }
}

/// A list binned by the positions in `position` (f32, f64 or i32 values).
fn spatial_list(model: &Model, m: &Message, grid: SpatialGrid, position: &AnyDat) -> Result<MessageList> {
    let name = m.name.clone();
    let wrong = || {
        model.invalid(format!(
            "message list `{}` is binned by `{}.{}`, which must hold f32, f64 or i32 coordinates",
            m.name, m.sender, m.carried[0]
        ))
    };
    match position.scalar() {
        ScalarType::F32 => MessageList::spatial(name, grid, position.get::<f32>().ok_or_else(wrong)?),
        ScalarType::F64 => MessageList::spatial(name, grid, position.get::<f64>().ok_or_else(wrong)?),
        ScalarType::I32 => MessageList::spatial(name, grid, position.get::<i32>().ok_or_else(wrong)?),
        _ => Err(wrong()),
    }
}
