//! What a simulation runs on, made from a model and its initial
//! populations: per agent type a dynamic Set with one Dat per variable,
//! its births and deaths (a `Lifecycle`, for types that functions kill or
//! give birth to) and its random streams; per message list an
//! `op2_agents::MessageList` with the Dats it carries; per environment
//! property a Global.

use op2_agents::{Boundary, Lifecycle, MessageList, SpatialGrid};
use op2_core::{Dat, Error, RandomStreams, Result, ScalarType, Set};

use crate::typed::{AnyDat, AnyGlobal};
use crate::{AgentType, Agents, Message, MessageKind, Model};

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
    /// Per function that outputs optionally: whether each agent sends.
    pub sent: Vec<(String, Dat<i32>)>,
    /// Per function whose agents give birth to another type's.
    pub adoptions: Vec<Adoption>,
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
}

impl Carriers {
    /// Makes the carriers of `model`, its agent types starting as
    /// `initial` says (a type not there starts empty), each type's random
    /// streams seeded from `seed` and its place in the model, or as
    /// `seeds` says.
    pub fn new(
        model: &Model,
        initial: &mut Vec<(String, Agents)>,
        seed: u64,
        seeds: &[(String, u64)],
    ) -> Result<Carriers> {
        let mut agents = Vec::new();
        for (k, a) in model.agents.iter().enumerate() {
            let start = match initial.iter().position(|(n, _)| n == &a.name) {
                Some(i) => initial.swap_remove(i).1,
                None => Agents::new(0),
            };
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
        Ok(Carriers {
            agents,
            lists,
            environment,
        })
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

impl AgentCarriers {
    fn new(model: &Model, a: &AgentType, start: Agents, with_life: bool, seed: u64) -> Result<AgentCarriers> {
        let n = start.len();
        let capacity = a.capacity.max(n);
        let set = Set::dynamic_with_ids(a.name.clone(), start.ids.clone(), capacity)?;
        for (v, _, _) in &start.values {
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
        let sent = (model.functions.iter())
            .filter(|f| f.agent == a.name && f.output.as_ref().is_some_and(|(_, optional)| *optional))
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
        })
    }
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
            MessageKind::Discrete2d { width, height, .. } => {
                let grid = SpatialGrid::discrete_2d(&m.name, [width, height], Boundary::Clamp)?;
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
