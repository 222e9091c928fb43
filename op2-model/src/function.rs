//! An agent function as a modeller declares it (FLAME GPU's agent function
//! description): the agent type (and state) it runs on, the variables and
//! environment properties it reads and writes, the message list it reads and
//! the one it outputs, the agent type it may give birth to and whether its
//! agents may die. The model orders functions into layers from these
//! declarations (`layers.rs`).

use op2_core::{Access, Scalar, ScalarType};

/// One variable a function uses: how, and (if the function says) as which
/// type and width, checked against the agent type's declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct VariableUse {
    pub(crate) name: String,
    pub(crate) access: Access,
    pub(crate) shape: Option<(ScalarType, usize)>,
}

/// An agent function.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentFunction {
    pub(crate) name: String,
    pub(crate) agent: String,
    pub(crate) state: Option<String>,
    pub(crate) next_state: Option<String>,
    pub(crate) uses: Vec<VariableUse>,
    pub(crate) environment: Vec<(String, Access)>,
    pub(crate) input: Option<String>,
    pub(crate) output: Option<(String, bool)>,
    pub(crate) births: Option<String>,
    pub(crate) deaths: bool,
    /// Whether it reads its agents' ids.
    pub(crate) ids: bool,
    /// Whether a condition selects the agents it runs on.
    pub(crate) condition: bool,
    /// `(network, variable)`: the neighbours' variables it reads.
    pub(crate) neighbours: Vec<(String, String)>,
}

impl AgentFunction {
    /// A function called `name` that runs on agents of type `agent`, using
    /// nothing yet.
    pub fn new(name: impl Into<String>, agent: impl Into<String>) -> AgentFunction {
        AgentFunction {
            name: name.into(),
            agent: agent.into(),
            state: None,
            next_state: None,
            uses: Vec::new(),
            environment: Vec::new(),
            input: None,
            output: None,
            births: None,
            deaths: false,
            ids: false,
            condition: false,
            neighbours: Vec::new(),
        }
    }

    /// Uses the agent's `variable` as `access` says (READ, WRITE, RW, INC,
    /// MIN, MAX).
    pub fn uses(mut self, variable: impl Into<String>, access: Access) -> AgentFunction {
        self.uses.push(VariableUse {
            name: variable.into(),
            access,
            shape: None,
        });
        self
    }

    /// As [`AgentFunction::uses`], as `dim` values of `T`: a variable of
    /// another type or width is refused by the model.
    pub fn uses_as<T: Scalar>(mut self, variable: impl Into<String>, dim: usize, access: Access) -> AgentFunction {
        self.uses.push(VariableUse {
            name: variable.into(),
            access,
            shape: Some((T::TYPE, dim)),
        });
        self
    }

    /// Reads `variable` of each agent's neighbours in network `network`
    /// (whose nodes are the function's agents): `Call::neighbours` gives
    /// the Dat and the network's map, passed as `v(READ, map[..])`. The
    /// values read are those before the function: one that also writes
    /// `variable` declares it [`AgentFunction::writes`] and writes the new
    /// values to `Call::var` (a second buffer) while it reads the old ones,
    /// its own included, from the Dat `Call::neighbours` gives; the two
    /// swap after it.
    pub fn reads_neighbours(mut self, network: impl Into<String>, variable: impl Into<String>) -> AgentFunction {
        self.neighbours.push((network.into(), variable.into()));
        self
    }

    /// Reads its agents' ids (the population's `i64` ids: each agent's
    /// own, children getting new ones).
    pub fn reads_ids(mut self) -> AgentFunction {
        self.ids = true;
        self
    }

    /// Reads the agent's `variable`.
    pub fn reads(self, variable: impl Into<String>) -> AgentFunction {
        self.uses(variable, Access::Read)
    }

    /// Reads and writes the agent's `variable`.
    pub fn updates(self, variable: impl Into<String>) -> AgentFunction {
        self.uses(variable, Access::Rw)
    }

    /// Writes the agent's `variable` without reading it.
    pub fn writes(self, variable: impl Into<String>) -> AgentFunction {
        self.uses(variable, Access::Write)
    }

    /// Uses environment property `property` as `access` says: READ, or
    /// INC, MIN or MAX for a macro property.
    pub fn environment(mut self, property: impl Into<String>, access: Access) -> AgentFunction {
        self.environment.push((property.into(), access));
        self
    }

    /// Reads message list `list`.
    pub fn input(mut self, list: impl Into<String>) -> AgentFunction {
        self.input = Some(list.into());
        self
    }

    /// Outputs message list `list`: every agent it runs on sends one.
    pub fn output(mut self, list: impl Into<String>) -> AgentFunction {
        self.output = Some((list.into(), false));
        self
    }

    /// Outputs message list `list`, each agent sending or not.
    pub fn output_optional(mut self, list: impl Into<String>) -> AgentFunction {
        self.output = Some((list.into(), true));
        self
    }

    /// Runs only on agents in state `state`.
    pub fn in_state(mut self, state: impl Into<String>) -> AgentFunction {
        self.state = Some(state.into());
        self
    }

    /// Moves the agents it runs on to state `state` afterwards.
    pub fn moves_to(mut self, state: impl Into<String>) -> AgentFunction {
        self.next_state = Some(state.into());
        self
    }

    /// Its agents may give birth to agents of type `agent` (their own or
    /// another).
    pub fn births(mut self, agent: impl Into<String>) -> AgentFunction {
        self.births = Some(agent.into());
        self
    }

    /// Runs only on the agents (of its state) that a condition selects
    /// (FLAME GPU's function condition): a body bound with
    /// `Simulation::bind_condition` runs a loop that writes 1 (run) or 0
    /// to `Call::pass` for each agent, on the runtime, before the function.
    /// The condition reads what the function declares.
    pub fn condition(mut self) -> AgentFunction {
        self.condition = true;
        self
    }

    /// Its agents may die.
    pub fn deaths(mut self) -> AgentFunction {
        self.deaths = true;
        self
    }

    /// The function's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent type it runs on.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Whether it writes `variable` and reads it through a network: its
    /// writes then go to a second buffer that swaps in after it.
    pub(crate) fn double_buffers(&self, variable: &str) -> bool {
        let written = (self.uses.iter()).any(|u| u.name == variable && u.access != op2_core::Access::Read);
        written && self.neighbours.iter().any(|(_, v)| v == variable)
    }

    /// The message list it reads, if any.
    pub fn input_list(&self) -> Option<&str> {
        self.input.as_deref()
    }

    /// The message list it outputs, if any, and whether optionally.
    pub fn output_list(&self) -> Option<(&str, bool)> {
        self.output.as_ref().map(|(l, o)| (l.as_str(), *o))
    }
}
