//! FLAME GPU's Circles benchmark, for op2: `N` agents in a box of side
//! `W = (N / density)^(1/3)`; each step every agent sends its id and position,
//! reads the messages within radius `r` of itself, and moves by the mean of
//! the repulsions `k (p_other - p_self) / s`, `k = sin((s / r) 3.141 (-2))
//! repulse`, over the neighbours at separation `0 < s < r`. Single precision.
//!
//! [`Circles`] runs it on op2's carriers: a spatial message list on a grid of
//! cell width `r` (positions outside the box clamp to the edge bins), built
//! each step, and one loop over the agents reading it through `list(NEAR)`.
//! [`step_by_hand`] is the same step written directly in Rust on rayon with a
//! cell list (the benchmark's baseline).
#![deny(missing_docs)]

mod by_hand;
mod csv;
mod described;
mod model;

pub use by_hand::{step_by_hand, CellList};
pub use csv::{format_g9, read_positions};
pub use described::{circles, circles_model};
pub use model::{box_side, initial_positions, Circles, Params};
