//! A model: its agent types, message lists, environment and agent
//! functions, each checked as it joins (every name it refers to declared
//! before it, every variable used as its declared type), and the order its
//! functions run in ([`Model::layers`]).

use op2_core::{Access, Error, Result};

use crate::layers::{self, Layers};
use crate::names::name_problem;
use crate::{AgentFunction, AgentType, EnvProperty, Message, MessageKind, Network};

/// An agent model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub(crate) name: String,
    pub(crate) agents: Vec<AgentType>,
    pub(crate) messages: Vec<Message>,
    pub(crate) environment: Vec<EnvProperty>,
    pub(crate) functions: Vec<AgentFunction>,
    pub(crate) networks: Vec<Network>,
    pub(crate) given_layers: Option<Vec<Vec<String>>>,
}

impl Model {
    /// An empty model called `name`.
    pub fn new(name: impl Into<String>) -> Model {
        Model {
            name: name.into(),
            agents: Vec::new(),
            messages: Vec::new(),
            environment: Vec::new(),
            functions: Vec::new(),
            networks: Vec::new(),
            given_layers: None,
        }
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn invalid(&self, reason: String) -> Error {
        Error::InvalidModel {
            model: self.name.clone(),
            reason,
        }
    }

    /// Adds an agent type.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the model has a type of that name, or the
    /// type declares a variable or state twice, a variable of no values,
    /// or a default of another width.
    pub fn add_agent(&mut self, agent: AgentType) -> Result<&mut Model> {
        if self.agent(&agent.name).is_some() {
            return Err(self.invalid(format!("it has agent type `{}` already", agent.name)));
        }
        if let Some(p) = agent.problem() {
            return Err(self.invalid(p));
        }
        self.agents.push(agent);
        Ok(self)
    }

    /// Adds a message list.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the model has a list of that name, its
    /// sender is not an agent type of the model, it carries a variable the
    /// sender does not have (or one twice), or a spatial list's dims are
    /// not 2 or 3, its radius not positive, or it carries no position of
    /// that many values first.
    pub fn add_message(&mut self, message: Message) -> Result<&mut Model> {
        let name = &message.name;
        if let Some(p) = name_problem("message list", name) {
            return Err(self.invalid(p));
        }
        if self.message(name).is_some() {
            return Err(self.invalid(format!("it has message list `{name}` already")));
        }
        let Some(sender) = self.agent(&message.sender) else {
            return Err(self.invalid(format!(
                "message list `{name}` is sent by agent type `{}`, which it does not have",
                message.sender
            )));
        };
        if let Some(net) = self.network_of(&sender.name) {
            return Err(self.invalid(format!(
                "message list `{name}` is sent by agent type `{}`, the nodes of network `{}`: nodes read \
                 each other through the network (AgentFunction::reads_neighbours), not through messages, for now",
                sender.name, net.name
            )));
        }
        for (k, v) in message.carried.iter().enumerate() {
            if sender.variable_named(v).is_none() {
                return Err(self.invalid(format!(
                    "message list `{name}` carries `{v}`, which agent type `{}` does not have",
                    sender.name
                )));
            }
            if message.carried[..k].contains(v) {
                return Err(self.invalid(format!("message list `{name}` carries `{v}` twice")));
            }
        }
        if message.states && sender.states.is_empty() {
            return Err(self.invalid(format!(
                "message list `{name}` carries its senders' states, and agent type `{}` has none",
                sender.name
            )));
        }
        if let MessageKind::Discrete2d { width, height, .. } = message.kind {
            if width == 0 || height == 0 {
                return Err(self.invalid(format!(
                    "discrete message list `{name}` is on a {width} x {height} lattice: it needs cells"
                )));
            }
        }
        if let MessageKind::Spatial {
            dims, radius, min, max, ..
        } = message.kind
        {
            if !(2..=3).contains(&dims) || radius.is_nan() || radius <= 0.0 {
                return Err(self.invalid(format!(
                    "spatial message list `{name}` has {dims} dimensions and radius {radius}: \
                     2 or 3, and a positive radius"
                )));
            }
            if (0..dims).any(|d| !(min[d].is_finite() && max[d].is_finite() && min[d] < max[d])) {
                return Err(self.invalid(format!(
                    "spatial message list `{name}` spans {:?} to {:?}: each corner finite, the lower below the upper",
                    &min[..dims],
                    &max[..dims]
                )));
            }
            let position = message.carried.first().and_then(|v| sender.variable_named(v));
            if position.is_none_or(|p| p.dim != dims) {
                return Err(self.invalid(format!(
                    "spatial message list `{name}` must carry the senders' position ({dims} values) first"
                )));
            }
        }
        self.messages.push(message);
        Ok(self)
    }

    /// Adds a network over the agents of one type; its edges are given to
    /// the simulation (`Simulation::connect`).
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the model has a network of that name, its
    /// type is not one of the model's or is the type of another network,
    /// or the type sends messages or has functions with births or deaths
    /// (a network's nodes stay).
    pub fn add_network(&mut self, network: Network) -> Result<&mut Model> {
        let (name, agent) = (&network.name, &network.agent);
        if let Some(p) = name_problem("network", name) {
            return Err(self.invalid(p));
        }
        if self.networks.iter().any(|n| &n.name == name) {
            return Err(self.invalid(format!("it has network `{name}` already")));
        }
        if self.agent(agent).is_none() {
            return Err(self.invalid(format!(
                "network `{name}` is over agent type `{agent}`, which it does not have"
            )));
        }
        if let Some(other) = self.network_of(agent) {
            return Err(self.invalid(format!(
                "network `{name}` is over agent type `{agent}`, the nodes of network `{}` already: one network \
                 per type",
                other.name
            )));
        }
        if let Some(m) = self.messages.iter().find(|m| &m.sender == agent) {
            return Err(self.invalid(format!(
                "network `{name}` is over agent type `{agent}`, which sends message list `{}`: a network's nodes \
                 read each other through it, not through messages, for now",
                m.name
            )));
        }
        self.networks.push(network);
        if let Some(f) = self.functions.iter().find(|f| self.static_problem(f).is_some()) {
            let reason = self.static_problem(f).expect("found");
            self.networks.pop();
            return Err(self.invalid(format!("function `{}`: {reason}", f.name)));
        }
        Ok(self)
    }

    /// The network whose nodes are the agents of type `agent`, if any.
    pub fn network_of(&self, agent: &str) -> Option<&Network> {
        self.networks.iter().find(|n| n.agent == agent)
    }

    /// The network called `name`.
    pub fn network(&self, name: &str) -> Option<&Network> {
        self.networks.iter().find(|n| n.name == name)
    }

    /// Why `f` cannot run on or give birth to a network's nodes, which
    /// stay, if it cannot.
    fn static_problem(&self, f: &AgentFunction) -> Option<String> {
        let nodes = |t: &str| self.network_of(t).map(|n| n.name.clone());
        if let Some(net) = nodes(&f.agent) {
            let what = match (f.deaths, &f.births, f.ids) {
                (true, _, _) => Some("lets its agents die"),
                (_, Some(_), _) => Some("gives birth"),
                (_, _, true) => Some("reads its agents' ids"),
                _ => None,
            };
            if let Some(what) = what {
                return Some(format!(
                    "{what}, and its agents are the nodes of network `{net}`, which stay (no births, deaths or \
                     population ids)"
                ));
            }
        }
        let born = f.births.as_deref().and_then(|t| nodes(t).map(|n| (t, n)));
        born.map(|(t, net)| format!("gives birth to agents of type `{t}`, the nodes of network `{net}`, which stay"))
    }

    /// Adds an environment property.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the model has a property of that name, or
    /// it holds no values.
    pub fn add_environment(&mut self, property: EnvProperty) -> Result<&mut Model> {
        if let Some(p) = name_problem("environment property", &property.name) {
            return Err(self.invalid(p));
        }
        if self.environment.iter().any(|p| p.name == property.name) {
            return Err(self.invalid(format!("it has environment property `{}` already", property.name)));
        }
        if property.len() == 0 {
            return Err(self.invalid(format!("environment property `{}` holds no values", property.name)));
        }
        self.environment.push(property);
        Ok(self)
    }

    /// Adds an agent function; functions run in layers derived from what
    /// they use ([`Model::layers`]).
    ///
    /// # Errors
    /// [`Error::InvalidModel`] naming the function and what it refers to
    /// that the model does not declare (an agent type, a variable, a state,
    /// a message list, an environment property), a variable used as
    /// another type or width than declared, a list read but sent by
    /// another agent type than it outputs, a list both read and output, a
    /// constant property updated or a macro property read as a whole, or a
    /// second function of the same name.
    pub fn add_function(&mut self, function: AgentFunction) -> Result<&mut Model> {
        if let Some(reason) = self.function_problem(&function) {
            return Err(self.invalid(format!("function `{}`: {reason}", function.name)));
        }
        self.functions.push(function);
        Ok(self)
    }

    fn function_problem(&self, f: &AgentFunction) -> Option<String> {
        if let Some(p) = name_problem("function", &f.name) {
            return Some(p);
        }
        if self.functions.iter().any(|g| g.name == f.name) {
            return Some("the model has a function of that name already".to_string());
        }
        let Some(agent) = self.agent(&f.agent) else {
            return Some(format!(
                "runs on agent type `{}`, which the model does not have",
                f.agent
            ));
        };
        for u in &f.uses {
            let Some(v) = agent.variable_named(&u.name) else {
                return Some(format!("uses `{}.{}`, which is not declared", agent.name, u.name));
            };
            if let Some((scalar, dim)) = u.shape {
                if (scalar, dim) != (v.scalar, v.dim) {
                    return Some(format!(
                        "uses `{}.{}` as {dim} {}, and it is declared as {} {}",
                        agent.name,
                        u.name,
                        scalar.rust_name(),
                        v.dim,
                        v.scalar.rust_name()
                    ));
                }
            }
        }
        for s in [&f.state, &f.next_state].into_iter().flatten() {
            if !agent.states.contains(s) {
                return Some(format!(
                    "names state `{s}`, which agent type `{}` does not have",
                    agent.name
                ));
            }
        }
        if let Some(t) = &f.births {
            if self.agent(t).is_none() {
                return Some(format!(
                    "gives birth to agent type `{t}`, which the model does not have"
                ));
            }
        }
        for (p, access) in &f.environment {
            let Some(prop) = self.environment.iter().find(|q| &q.name == p) else {
                return Some(format!("uses environment property `{p}`, which is not declared"));
            };
            let updates = matches!(access, Access::Inc | Access::Min | Access::Max);
            if updates != prop.reduced || matches!(access, Access::Write | Access::Rw) {
                return Some(format!(
                    "uses environment property `{p}` as {access:?}: agent functions read constants and update \
                     macro properties with INC, MIN or MAX"
                ));
            }
        }
        if let Some(p) = self.static_problem(f) {
            return Some(p);
        }
        if let Some(p) = self.neighbours_problem(f) {
            return Some(p);
        }
        if let Some(l) = &f.input {
            if self.message(l).is_none() {
                return Some(format!("reads message list `{l}`, which is not declared"));
            }
        }
        if f.next_state.is_some() && agent.states.is_empty() {
            return Some(format!("moves agents of type `{}`, which has no states", agent.name));
        }
        if let Some((l, _)) = &f.output {
            let Some(m) = self.message(l) else {
                return Some(format!("outputs message list `{l}`, which is not declared"));
            };
            if m.sender != f.agent {
                return Some(format!(
                    "outputs message list `{l}`, which agents of type `{}` send, not `{}`",
                    m.sender, f.agent
                ));
            }
            if f.input.as_ref() == Some(l) {
                return Some(format!("reads and outputs message list `{l}` in one step"));
            }
        }
        None
    }

    /// Why `f`'s reads through networks do not hold together, if they do
    /// not: each network declared and over `f`'s type, each variable
    /// declared, and a variable also written only written (WRITE), by a
    /// function of all agents, so that a second buffer can take it.
    fn neighbours_problem(&self, f: &AgentFunction) -> Option<String> {
        let agent = self.agent(&f.agent)?;
        for (net, v) in &f.neighbours {
            let Some(network) = self.network(net) else {
                return Some(format!(
                    "reads `{v}` of its neighbours in network `{net}`, which is not declared"
                ));
            };
            if network.agent != f.agent {
                return Some(format!(
                    "reads `{v}` of its neighbours in network `{net}`, whose nodes are agents of type `{}`, not `{}`",
                    network.agent, f.agent
                ));
            }
            if agent.variable_named(v).is_none() {
                return Some(format!(
                    "reads `{}.{v}` of its neighbours, which is not declared",
                    f.agent
                ));
            }
            let Some(u) = f.uses.iter().find(|u| &u.name == v && u.access != Access::Read) else {
                continue;
            };
            if u.access != Access::Write {
                return Some(format!(
                    "reads `{v}` of its neighbours and uses it as {:?}: a function that reads a variable through a \
                     network writes its new values (WRITE) apart from the old ones it reads",
                    u.access
                ));
            }
            if f.state.is_some() || f.condition {
                return Some(format!(
                    "reads `{v}` of its neighbours and writes it on some agents only (a state or a condition): the \
                     new values go to a second buffer, which every agent must write"
                ));
            }
        }
        None
    }

    /// Runs the functions in these layers (FLAME GPU's layers) instead of
    /// derived ones; checked by [`Model::layers`].
    pub fn set_layers<S: Into<String>>(&mut self, layers: impl IntoIterator<Item = Vec<S>>) -> &mut Model {
        let layers = layers
            .into_iter()
            .map(|l| l.into_iter().map(Into::into).collect())
            .collect();
        self.given_layers = Some(layers);
        self
    }

    /// The order the functions run in each step: the layers given with
    /// [`Model::set_layers`], checked, else layers derived from what each
    /// function reads and writes (`layers.rs`). Printable.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if a function reads a message list no
    /// function outputs or two functions output one list, if the functions
    /// cannot be ordered (naming the cycle), or if given layers miss a
    /// function, name one twice or one it does not have, or put a function
    /// in a layer no later than one it depends on.
    pub fn layers(&self) -> Result<Layers> {
        for m in &self.messages {
            let outputs: Vec<&AgentFunction> = self
                .functions
                .iter()
                .filter(|f| f.output.as_ref().is_some_and(|(l, _)| l == &m.name))
                .collect();
            if let [a, b, ..] = outputs[..] {
                return Err(self.invalid(format!(
                    "functions `{}` and `{}` both output message list `{}`",
                    a.name, b.name, m.name
                )));
            }
            let readers = self.functions.iter().filter(|f| f.input.as_ref() == Some(&m.name));
            if let (Some(r), []) = (readers.clone().next(), &outputs[..]) {
                return Err(self.invalid(format!(
                    "function `{}` reads message list `{}`, which no function outputs",
                    r.name, m.name
                )));
            }
        }
        match &self.given_layers {
            Some(given) => layers::check(self, given),
            None => layers::derive(self),
        }
    }

    /// The agent type called `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentType> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The message list called `name`.
    pub fn message(&self, name: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.name == name)
    }

    /// The environment property called `name`.
    pub fn environment_property(&self, name: &str) -> Option<&EnvProperty> {
        self.environment.iter().find(|p| p.name == name)
    }

    /// The agent types, in declaration order.
    pub fn agent_types(&self) -> &[AgentType] {
        &self.agents
    }

    /// The environment properties, in declaration order.
    pub fn properties(&self) -> &[EnvProperty] {
        &self.environment
    }

    /// The networks, in declaration order.
    pub fn networks(&self) -> &[Network] {
        &self.networks
    }

    /// The functions, in declaration order.
    pub fn functions(&self) -> &[AgentFunction] {
        &self.functions
    }
}
