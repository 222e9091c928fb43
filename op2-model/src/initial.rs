//! A population to start from: the agents' ids and the values of any of
//! their variables (the others take the declared defaults), and values of
//! single agents named by id over those. Checked against the model when
//! the simulation starts (`Simulation::populate`).

use op2_core::{Scalar, ScalarType};

/// The agents a simulation starts with, of one type.
#[derive(Clone, Debug, PartialEq)]
pub struct Agents {
    pub(crate) ids: Vec<u64>,
    /// `(variable, type, values as bytes)`, in the order given.
    pub(crate) values: Vec<(String, ScalarType, Vec<u8>)>,
    /// Each agent's state, by name (none given: the type's first).
    pub(crate) states: Option<Vec<String>>,
    /// Single agents' values, over the others, in the order given.
    pub(crate) single: Vec<SingleAgent>,
}

/// One agent's values of one variable ([`Agents::set_agent`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SingleAgent {
    pub(crate) id: u64,
    pub(crate) variable: String,
    pub(crate) scalar: ScalarType,
    pub(crate) bytes: Vec<u8>,
    /// The agent is another rank's (a share's): the values are checked
    /// here too, so that every rank refuses a bad one alike, and applied
    /// there.
    pub(crate) elsewhere: bool,
}

impl Agents {
    /// `count` agents with ids `0..count`.
    pub fn new(count: usize) -> Agents {
        Agents::with_ids((0..count as u64).collect())
    }

    /// Agents with these ids (unique; in a distributed run, this rank's
    /// share of the run's agents).
    pub fn with_ids(ids: Vec<u64>) -> Agents {
        Agents {
            ids,
            values: Vec::new(),
            states: None,
            single: Vec::new(),
        }
    }

    /// Gives `variable` these values: the variable's `dim` values for each
    /// agent, in the order of the ids.
    pub fn set<T: Scalar>(mut self, variable: impl Into<String>, values: Vec<T>) -> Agents {
        self.values
            .push((variable.into(), T::TYPE, bytemuck::cast_slice(&values).to_vec()));
        self
    }

    /// Gives the agent with id `id` these values of `variable` (its `dim`
    /// values), over the declared default or the values given by
    /// [`Agents::set`], whichever order they come in: say, the one infected
    /// node of an epidemic. Checked when the simulation starts: an `id` that
    /// is not one of the agents', or values of another type or width than
    /// the variable's, are an error naming them. In a distributed run, give
    /// them to the whole population and take each rank's part with
    /// [`Agents::share`], which keeps them where they belong and lets every
    /// rank check them all.
    pub fn set_agent<T: Scalar>(mut self, id: u64, variable: impl Into<String>, values: &[T]) -> Agents {
        self.single.push(SingleAgent {
            id,
            variable: variable.into(),
            scalar: T::TYPE,
            bytes: bytemuck::cast_slice(values).to_vec(),
            elsewhere: false,
        });
        self
    }

    /// This rank's share of the agents on `ranks` ranks (for
    /// `Simulation::distribute`): the agents at positions
    /// `rank, rank + ranks, ...`, with their values.
    pub fn share(&self, rank: usize, ranks: usize) -> Agents {
        let n = self.ids.len();
        let keep: Vec<usize> = (rank..n).step_by(ranks.max(1)).collect();
        let values = (self.values.iter())
            .map(|(name, scalar, bytes)| {
                // Bytes per agent: every agent has the same number of values.
                let each = bytes.len().checked_div(n).unwrap_or(0);
                let mine = keep
                    .iter()
                    .flat_map(|&k| &bytes[k * each..(k + 1) * each])
                    .copied()
                    .collect();
                (name.clone(), *scalar, mine)
            })
            .collect();
        Agents {
            ids: keep.iter().map(|&k| self.ids[k]).collect(),
            values,
            states: (self.states.as_ref()).map(|s| keep.iter().filter_map(|&k| s.get(k).cloned()).collect()),
            single: self.single_share(&keep),
        }
    }

    /// The single agents' values in a share: every one, applied to its own
    /// agents only; those of other ranks' agents are only checked, and
    /// those of ids no agent has are refused on every rank.
    fn single_share(&self, keep: &[usize]) -> Vec<SingleAgent> {
        if self.single.is_empty() {
            return Vec::new();
        }
        let all: std::collections::HashSet<u64> = self.ids.iter().copied().collect();
        let mine: std::collections::HashSet<u64> = keep.iter().map(|&k| self.ids[k]).collect();
        (self.single.iter())
            .map(|one| SingleAgent {
                elsewhere: one.elsewhere || (all.contains(&one.id) && !mine.contains(&one.id)),
                ..one.clone()
            })
            .collect()
    }

    /// Puts the agents in these states (one name per agent, in the order
    /// of the ids); without, every agent starts in its type's first state.
    pub fn in_states<S: Into<String>>(mut self, states: impl IntoIterator<Item = S>) -> Agents {
        self.states = Some(states.into_iter().map(Into::into).collect());
        self
    }

    /// How many agents.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Their ids.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }
}
