//! op2's model layer: agent models described as their authors think of them
//! (FLAME GPU's model description, SAGESim's breeds), on top of op2's Sets,
//! Dats, message lists and lifecycles.
//!
//! A [`Model`] holds [`AgentType`]s (variables of any Dat type and width,
//! with defaults, optional states), [`Message`] lists (brute force, spatial
//! 2D/3D, discrete 2D; sent by one agent type, carrying its variables),
//! [`EnvProperty`]s (constants, and macro properties that functions update
//! with INC/MIN/MAX), [`Network`]s (neighbours among the agents of one
//! type, read through a ragged map) and [`AgentFunction`]s, each declaring what it reads
//! and writes. Everything is checked as it joins the model, and
//! [`Model::layers`] orders the functions: derived from their declarations
//! (functions that do not depend on each other share a layer), or given
//! and checked; a model that cannot be ordered is an error naming the
//! cycle.
//!
//! ```
//! use op2_core::Access;
//! use op2_model::{AgentFunction, AgentType, Message, MessageKind, Model};
//!
//! let mut model = Model::new("circles");
//! model.add_agent(AgentType::new("circle").variable::<f32>("pos", 3, &[0.0; 3]))?;
//! let spatial = MessageKind::Spatial { dims: 3, min: [0.0; 3], max: [40.0; 3], radius: 2.0, wrap: false };
//! model.add_message(Message::new("location", "circle", spatial).carries("pos"))?;
//! model.add_function(AgentFunction::new("output_location", "circle").reads("pos").output("location"))?;
//! model.add_function(AgentFunction::new("move", "circle").updates("pos").input("location"))?;
//! assert_eq!(model.layers()?.to_string(), "layer 1: output_location\nlayer 2: move");
//! # Ok::<(), op2_core::Error>(())
//! ```
//!
//! A [`Simulation`] runs a model on a runtime: it makes the carriers (a
//! dynamic Set per agent type with a Dat per variable, a message list per
//! declared list, a Global per environment property) from the initial
//! [`Agents`], runs each function's body (bound with [`Simulation::bind`];
//! it runs `par_loop!` on what its [`Call`] gives it, by name and checked
//! against the declaration), builds each list after the function that
//! outputs it, sorts spatial lists' senders by bin, and under `mpirun`
//! (feature `mpi`, `Simulation::distribute`) migrates the agents and
//! brings the ghost messages.

#![deny(missing_docs)]

mod agent_type;
mod call;
mod carriers;
mod environment;
mod function;
mod initial;
mod layers;
mod message;
mod model;
mod names;
mod network;
mod population_file;
mod simulation;
mod snapshot;
mod typed;

pub use agent_type::{AgentType, Variable};
pub use call::{Call, Over};
pub use environment::EnvProperty;
pub use function::{AgentFunction, VariableUse};
pub use initial::Agents;
pub use layers::Layers;
pub use message::{Message, MessageKind};
pub use model::Model;
pub use network::Network;
pub use simulation::{Simulation, DEFAULT_SORT_EVERY};
pub use snapshot::{AgentValues, Snapshot, VariableValues};

#[cfg(test)]
mod tests;
