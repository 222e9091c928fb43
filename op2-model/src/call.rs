//! What an agent function's body sees when the simulation runs it: the
//! runtime, the agents it runs on, and the carriers of what the function
//! declared (its agent type's variables, the list it reads and that list's
//! carried variables, environment properties, births and deaths, random
//! streams), typed. A body asks for them by name and passes them to
//! `par_loop!`; asking for something the function did not declare, or as
//! another type, is an error naming both.

use op2_agents::{Lifecycle, MessageList};
use op2_backends::Runtime;
use op2_core::{Dat, Error, Global, IterationSpace, RaggedMap, RandomStreams, Result, Scalar, Set, Subset};

use crate::carriers::{AgentCarriers, Carriers, ListCarriers};
use crate::{AgentFunction, Model};

/// The agents a function's loop runs over: all of its type's, or a part
/// of them (in an overlapped distributed step, first those that read no
/// other rank's message, then the others).
#[derive(Clone, Copy)]
pub enum Over<'a> {
    /// Every agent of the type.
    All(&'a Set),
    /// Some of them.
    Part(&'a Subset),
}

impl IterationSpace for Over<'_> {
    fn space(&self) -> (&Set, Option<&Subset>) {
        match self {
            Over::All(set) => (set, None),
            Over::Part(subset) => (subset.set(), Some(subset)),
        }
    }
}

/// One run of an agent function, as its body sees it.
pub struct Call<'a> {
    pub(crate) over: Over<'a>,
    pub(crate) model: &'a Model,
    pub(crate) function: &'a AgentFunction,
    pub(crate) rt: &'a Runtime,
    pub(crate) agent: &'a AgentCarriers,
    pub(crate) carriers: &'a Carriers,
    /// Whether this is the run of the function's condition.
    pub(crate) condition: bool,
}

impl<'a> Call<'a> {
    /// The runtime to run the function's loops on.
    pub fn rt(&self) -> &'a Runtime {
        self.rt
    }

    /// The function's name.
    pub fn name(&self) -> &'a str {
        &self.function.name
    }

    /// The agents the function runs on: its loops' iteration space.
    pub fn agents(&self) -> Over<'a> {
        self.over
    }

    /// All agents of the function's type (the set its variables live on).
    pub fn set(&self) -> &'a Set {
        &self.agent.set
    }

    fn invalid(&self, reason: String) -> Error {
        self.model
            .invalid(format!("function `{}`: {reason}", self.function.name))
    }

    /// The Dat of the agents' `variable`, as `T` values. For a variable the
    /// function also reads through a network
    /// (`AgentFunction::reads_neighbours`), the second buffer the new values
    /// go to; it takes the variable's place after the function.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function does not declare that it
    /// uses the variable, or the variable holds another type.
    pub fn var<T: Scalar>(&self, variable: &str) -> Result<&'a Dat<T>> {
        let agent = &self.function.agent;
        if !self.function.uses.iter().any(|u| u.name == variable) {
            return Err(self.invalid(format!(
                "asks for `{agent}.{variable}`, which it does not declare (AgentFunction::uses)"
            )));
        }
        let buffered = self.function.double_buffers(variable);
        let dat = match self.agent.next(variable) {
            Some(next) if buffered && !self.condition => next,
            _ => self
                .agent
                .variable(variable)
                .expect("the model checked the function's variables"),
        };
        dat.typed(
            &self.model.name,
            &format!("`{agent}.{variable}`"),
            &format!("function `{}`", self.function.name),
        )
    }

    /// The Dat of `variable` as it was before the function, and network
    /// `network`'s map, for a function that reads its agents' neighbours'
    /// `variable`: pass them as `v(READ, map[..])` (and `v(READ)` for the
    /// agent's own value).
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function does not declare that read
    /// (AgentFunction::reads_neighbours), or the variable holds another
    /// type.
    pub fn neighbours<T: Scalar>(&self, network: &str, variable: &str) -> Result<(&'a Dat<T>, &'a RaggedMap)> {
        let agent = &self.function.agent;
        if !(self.function.neighbours.iter()).any(|(n, v)| n == network && v == variable) {
            return Err(self.invalid(format!(
                "asks for `{agent}.{variable}` of its neighbours in network `{network}`, which it does not \
                 declare (AgentFunction::reads_neighbours)"
            )));
        }
        let map = self.carriers.network(network).expect("the model checked the network");
        let dat = self.agent.variable(variable).expect("the model checked the variable");
        let dat = dat.typed(
            &self.model.name,
            &format!("`{agent}.{variable}`"),
            &format!("function `{}`", self.function.name),
        )?;
        Ok((dat, map))
    }

    fn input_carriers(&self) -> Result<&'a ListCarriers> {
        let name = self
            .function
            .input
            .as_deref()
            .ok_or_else(|| self.invalid("asks for its input, and it reads no message list".to_string()))?;
        Ok(self
            .carriers
            .list(name)
            .expect("the model checked the function's input"))
    }

    /// The message list the function reads, built by the function that
    /// outputs it.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function reads no list.
    pub fn input(&self) -> Result<&'a MessageList> {
        Ok(&self.input_carriers()?.list)
    }

    /// The Dat of `variable` that the input list's messages carry (the
    /// senders' values at the build), read as `m(READ, list[..])`.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function reads no list, the list does
    /// not carry the variable, or it holds another type.
    pub fn message<T: Scalar>(&self, variable: &str) -> Result<&'a Dat<T>> {
        let input = self.input_carriers()?;
        let list = input.list.name();
        let dat = input.carried(variable).ok_or_else(|| {
            self.invalid(format!(
                "asks for `{variable}` of message list `{list}`, which does not carry it (Message::carries)"
            ))
        })?;
        dat.typed(
            &self.model.name,
            &format!("`{variable}` of message list `{list}`"),
            &format!("function `{}`", self.function.name),
        )
    }

    /// The Global of environment property `property`.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function does not declare that it
    /// uses the property, or the property holds another type.
    pub fn env<T: Scalar>(&self, property: &str) -> Result<&'a Global<T>> {
        if !self.function.environment.iter().any(|(p, _)| p == property) {
            return Err(self.invalid(format!(
                "asks for environment property `{property}`, which it does not declare \
                 (AgentFunction::environment)"
            )));
        }
        let global = self
            .carriers
            .property(property)
            .expect("the model checked the function's properties");
        global.typed(
            &self.model.name,
            property,
            &format!("function `{}`", self.function.name),
        )
    }

    /// The agents' births and deaths, passed as `life(FATE)`.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function declares neither births of
    /// its own type nor deaths (AgentFunction::births, ::deaths).
    pub fn life(&self) -> Result<&'a Lifecycle> {
        let f = self.function;
        let own_births = f.births.as_deref() == Some(f.agent.as_str());
        match &self.agent.life {
            Some(life) if f.deaths || own_births => Ok(life),
            _ => Err(self.invalid(
                "asks for its agents' births and deaths, and declares neither deaths nor births of its own type"
                    .to_string(),
            )),
        }
    }

    /// The agents' ids, as the population numbers them (children get new
    /// ones): what a kernel reads to know which agent it is.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function does not declare it reads
    /// them (AgentFunction::reads_ids).
    pub fn ids(&self) -> Result<&'a Dat<i64>> {
        match &self.agent.life {
            Some(life) if self.function.ids => Ok(life.ids()),
            _ => Err(self.invalid("asks for its agents' ids, and does not declare it reads them".to_string())),
        }
    }

    /// The senders' ids that the input list's messages carry, read as
    /// `m(READ, list[..])`.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function reads no list or its
    /// messages do not carry ids (Message::carries_ids).
    pub fn message_ids(&self) -> Result<&'a Dat<i64>> {
        let input = self.input_carriers()?;
        input.ids.as_ref().ok_or_else(|| {
            self.invalid(format!(
                "asks for the senders' ids of message list `{}`, which does not carry them",
                input.list.name()
            ))
        })
    }

    /// The Dat a child's value of `variable` comes from: the kernel writes
    /// it (WRITE) when it spawns; without it a child copies its parent.
    ///
    /// # Errors
    /// As [`Call::life`] and [`Call::var`].
    pub fn offspring<T: Scalar>(&self, variable: &str) -> Result<Dat<T>> {
        let life = self.life()?;
        life.offspring(self.var::<T>(variable)?)
    }

    /// The senders' states that the input list's messages carry (each
    /// state's place in the sender type's states), read as
    /// `m(READ, list[..])`.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function reads no list or its
    /// messages do not carry states (Message::carries_state).
    pub fn message_states(&self) -> Result<&'a Dat<i32>> {
        let input = self.input_carriers()?;
        input.states.as_ref().ok_or_else(|| {
            self.invalid(format!(
                "asks for the senders' states of message list `{}`, which does not carry them",
                input.list.name()
            ))
        })
    }

    fn adoption(&self) -> Result<&'a crate::carriers::Adoption> {
        (self.agent.adoptions.iter())
            .find(|a| a.function == self.function.name)
            .ok_or_else(|| {
                self.invalid(
                    "asks for children of another type, and does not declare births of another type".to_string(),
                )
            })
    }

    /// For a function whose agents give birth to agents of another type
    /// (AgentFunction::births naming another type), the Dat its loop
    /// writes for each agent (WRITE): 1 if it has a child this step, 0 if
    /// not. After the function the children join their type, numbered by
    /// their parents' ids, with the values the loop wrote to
    /// [`Call::child`] (their other Dats zero, their state the first).
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function gives birth to no other type.
    pub fn spawn(&self) -> Result<&'a Dat<i32>> {
        Ok(&self.adoption()?.spawn)
    }

    /// The Dat (one element per parent) a child's value of `variable` of
    /// the type born comes from: the loop writes it (WRITE) for the agents
    /// that spawn.
    ///
    /// # Errors
    /// As [`Call::spawn`]; [`Error::InvalidModel`] if the type born has no
    /// such variable or it holds another type.
    pub fn child<T: Scalar>(&self, variable: &str) -> Result<&'a Dat<T>> {
        let a = self.adoption()?;
        let dat = (a.child.iter().find(|(v, _)| v == variable))
            .map(|(_, d)| d)
            .ok_or_else(|| {
                self.invalid(format!(
                    "asks for `{}.{variable}` of its children, which is not declared",
                    a.young
                ))
            })?;
        dat.typed(
            &self.model.name,
            &format!("`{}.{variable}` of its children", a.young),
            &format!("function `{}`", self.function.name),
        )
    }

    /// For a function that outputs its list optionally
    /// (AgentFunction::output_optional), the Dat its loop writes for each
    /// agent (WRITE): 1 if the agent sends its message this step, 0 if not.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the function does not output optionally.
    pub fn sent(&self) -> Result<&'a Dat<i32>> {
        let optional = self.function.output.as_ref().is_some_and(|(_, o)| *o);
        (self.agent.sent.iter())
            .filter(|_| optional)
            .find(|(f, _)| f == &self.function.name)
            .map(|(_, d)| d)
            .ok_or_else(|| self.invalid("asks whom it sends from, and does not output optionally".to_string()))
    }

    /// In the run of a function's condition (`Simulation::bind_condition`),
    /// the Dat the condition's loop writes for each agent (WRITE): 1 for
    /// the agents the function runs on, 0 for the others.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] outside a condition.
    pub fn pass(&self) -> Result<&'a Dat<i32>> {
        match (&self.agent.pass, self.condition) {
            (Some(pass), true) => Ok(pass),
            _ => Err(self.invalid("asks for the condition's flags outside its condition".to_string())),
        }
    }

    /// The agents' random streams (`s(DRAW)`): each agent's stream is
    /// keyed by its id, so draws do not depend on where it is in memory
    /// nor on the rank it is on.
    pub fn random(&self) -> &'a RandomStreams {
        &self.agent.streams
    }
}
