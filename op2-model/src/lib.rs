//! op2's model layer: agent models described as their authors think of them
//! (FLAME GPU's model description, SAGESim's breeds), on top of op2's Sets,
//! Dats, message lists and lifecycles.
//!
//! A [`Model`] holds [`AgentType`]s (variables of any Dat type and width,
//! with defaults, optional states), [`Message`] lists (brute force, spatial
//! 2D/3D, discrete 2D; sent by one agent type, carrying its variables),
//! [`EnvProperty`]s (constants, and macro properties that functions update
//! with INC/MIN/MAX) and [`AgentFunction`]s, each declaring what it reads
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
//! This is the description and its order; running a model (a `Simulation`
//! that binds each function to its kernel and drives the lists, sorts,
//! births and deaths, and distribution) builds on it.

#![deny(missing_docs)]

mod agent_type;
mod environment;
mod function;
mod layers;
mod message;
mod model;

pub use agent_type::{AgentType, Variable};
pub use environment::EnvProperty;
pub use function::{AgentFunction, VariableUse};
pub use layers::Layers;
pub use message::{Message, MessageKind};
pub use model::Model;

#[cfg(test)]
mod tests;
