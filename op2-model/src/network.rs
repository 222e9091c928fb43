//! A network over the agents of one type (SAGESim's network, FLAME GPU's
//! environment graph): each agent's neighbours, given as edges between
//! agent ids when the simulation starts (`Simulation::connect`). An agent
//! function reads its neighbours' variables through it
//! (`AgentFunction::reads_neighbours`); in op2 that is a ragged map from
//! the type's set to itself, and under `mpirun` the network is cut among
//! the ranks by a graph partitioner, each rank keeping the neighbours its
//! agents read in its halo.
//!
//! The agents of a network's type are its nodes: they stay (no births, no
//! deaths, no moves between ranks), which is what lets the network be a
//! fixed map.

/// A network's declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub(crate) name: String,
    pub(crate) agent: String,
    pub(crate) directed: bool,
}

impl Network {
    /// Network `name` over the agents of type `agent`. Its edges are
    /// undirected (an edge between `a` and `b` makes each the other's
    /// neighbour); an edge given twice counts twice, and an edge from an
    /// agent to itself makes it its own neighbour (once).
    pub fn new(name: impl Into<String>, agent: impl Into<String>) -> Network {
        Network {
            name: name.into(),
            agent: agent.into(),
            directed: false,
        }
    }

    /// Makes the edges directed: an edge `(a, b)` makes `b` a neighbour of
    /// `a` only (`a` reads `b`).
    pub fn directed(mut self) -> Network {
        self.directed = true;
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent type whose agents are its nodes.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Whether its edges are directed.
    pub fn is_directed(&self) -> bool {
        self.directed
    }
}
