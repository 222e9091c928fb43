//! Distributed op2 runs under `mpirun` (DESIGN.md section 7).
//!
//! This crate holds the distribution logic, which needs no MPI and is tested
//! as plain Rust: [`derive_owners`] gives every element of every set an owner
//! rank from a partition of one primary set; [`rank_layout`] numbers each
//! rank's elements as core / owned / exec halo / non-exec halo (the region
//! sizes live on [`op2_core::Set`]); [`local_map`] renumbers map tables; and
//! [`neighbours`] lists what each rank sends and receives in a halo exchange.
//! The MPI transport (rsmpi), METIS partitioning and the runtime integration
//! are the next steps of the MPI issue.
#![deny(missing_docs)]

mod layout;
mod mesh;
mod ownership;

pub use layout::{local_map, neighbours, rank_layout, Neighbour, RankLayout, SetLayout};
pub use mesh::{MapDesc, MeshDesc};
pub use ownership::{block_owner, derive_owners};
