//! An agent type as a modeller declares it (FLAME GPU's agent description,
//! SAGESim's breed): a name, variables of any Dat type and width with their
//! defaults, optional named states, and the room its population starts with.

use op2_core::{Scalar, ScalarType};

use crate::names::name_problem;

/// One variable of an agent type: a Dat of `dim` values of `scalar` per
/// agent, new agents taking `default`.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub(crate) name: String,
    pub(crate) scalar: ScalarType,
    pub(crate) dim: usize,
    /// One agent's values, as bytes (`dim` values of `scalar`).
    pub(crate) default: Vec<u8>,
}

impl Variable {
    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its element type.
    pub fn scalar(&self) -> ScalarType {
        self.scalar
    }

    /// Values per agent.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// A new agent's values.
    ///
    /// # Panics
    /// If `T` is not the variable's type (see [`Variable::scalar`]).
    pub fn default_values<T: Scalar>(&self) -> Vec<T> {
        assert_eq!(T::TYPE, self.scalar, "variable `{}` is {:?}", self.name, self.scalar);
        let size = std::mem::size_of::<T>();
        self.default
            .chunks_exact(size)
            .map(bytemuck::pod_read_unaligned)
            .collect()
    }
}

/// An agent type: its variables, states and initial capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentType {
    pub(crate) name: String,
    pub(crate) variables: Vec<Variable>,
    pub(crate) states: Vec<String>,
    pub(crate) capacity: usize,
}

impl AgentType {
    /// A type called `name`, with no variables yet, no states (its agents
    /// are all alike) and no room reserved.
    pub fn new(name: impl Into<String>) -> AgentType {
        AgentType {
            name: name.into(),
            variables: Vec::new(),
            states: Vec::new(),
            capacity: 0,
        }
    }

    /// Adds a variable of `dim` values of `T` per agent, new agents taking
    /// `default` (one value per component). A second variable of one name,
    /// a `dim` of 0 or a default of another length is refused when the
    /// type joins a model ([`crate::Model::add_agent`]).
    pub fn variable<T: Scalar>(mut self, name: impl Into<String>, dim: usize, default: &[T]) -> AgentType {
        self.variables.push(Variable {
            name: name.into(),
            scalar: T::TYPE,
            dim,
            default: bytemuck::cast_slice(default).to_vec(),
        });
        self
    }

    /// Names the states its agents can be in (FLAME GPU's agent states):
    /// functions run on the agents of one state and may move them to
    /// another. The first is where new agents start.
    pub fn states<S: Into<String>>(mut self, states: impl IntoIterator<Item = S>) -> AgentType {
        self.states = states.into_iter().map(Into::into).collect();
        self
    }

    /// Reserves room for `agents` agents in every variable.
    pub fn capacity(mut self, agents: usize) -> AgentType {
        self.capacity = agents;
        self
    }

    /// The type's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its variables, in declaration order.
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// The variable called `name`.
    pub fn variable_named(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// Its states (none: one implicit state).
    pub fn state_names(&self) -> &[String] {
        &self.states
    }

    /// The room reserved.
    pub fn initial_capacity(&self) -> usize {
        self.capacity
    }

    /// What is wrong with the declaration, if anything.
    pub(crate) fn problem(&self) -> Option<String> {
        let name = &self.name;
        if let Some(p) = name_problem("agent type", name) {
            return Some(p);
        }
        for (k, v) in self.variables.iter().enumerate() {
            if let Some(p) = name_problem(&format!("`{name}` variable"), &v.name) {
                return Some(p);
            }
            if self.variables[..k].iter().any(|w| w.name == v.name) {
                return Some(format!("agent type `{name}` declares variable `{}` twice", v.name));
            }
            if v.dim == 0 {
                return Some(format!("variable `{name}.{}` has no values (dim 0)", v.name));
            }
            let given = v.default.len() / v.scalar.size();
            if given != v.dim {
                return Some(format!(
                    "variable `{name}.{}` has {} values, and its default gives {given}",
                    v.name, v.dim
                ));
            }
        }
        for (k, s) in self.states.iter().enumerate() {
            if let Some(p) = name_problem(&format!("`{name}` state"), s) {
                return Some(p);
            }
            if self.states[..k].contains(s) {
                return Some(format!("agent type `{name}` declares state `{s}` twice"));
            }
        }
        None
    }
}
