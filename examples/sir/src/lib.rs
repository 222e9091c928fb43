//! An SIR epidemic on a network, for op2: synchronous ticks in which every
//! susceptible node becomes infected with probability `1 - (1 - p)^k` (`k` its
//! infected neighbours: independent transmission along each edge) and every
//! infected node recovers with probability `q`, all decided on the states at
//! the start of the tick.
//!
//! [`Sir`] runs it on op2's carriers as one loop over the nodes: each node
//! reads its neighbours' states through a ragged map (its neighbour list,
//! both directions of every edge), counts the infected ones and decides its
//! transition with its own random stream (a `&mut Philox` kernel parameter
//! given the model's `op2::RandomStreams`: keyed by the seed, the node's
//! global id and the tick, so every backend and rank count draws the same
//! numbers); the states are double-buffered.
//! [`sir_by_hand`] is the same model written directly in Rust, and
//! [`tick_by_hand_parallel`] one tick of it on rayon (the benchmark's baseline).
//!
//! [`network_sir`] is the same epidemic on op2's model layer (a network
//! over agents of type `node`, `described.rs`); the `sir` binary runs it,
//! and the tests compare it with [`Sir`].
//!
//! [`lattice_sir`] is the epidemic as agents with states S, I and R on a
//! lattice, on op2's model layer (`states.rs`).
#![deny(missing_docs)]

mod described;
mod model;
mod states;

pub use described::{network_counts, network_sir, network_sir_model};
pub use model::{
    sir_by_hand, tally, tick_by_hand_parallel, transition, Counts, Csr, Sir, INFECTED, RECOVERED, SUSCEPTIBLE,
};
pub use states::{exposed, lattice_sir, lattice_sir_by_hand, lattice_sir_model, recovers};
