//! Distributed op2 runs under `mpirun` (docs/ARCHITECTURE.md, Distributed runs).
//!
//! The distribution logic needs no MPI and is tested as plain Rust:
//! [`derive_owners`] gives every element of every set an owner rank from a
//! partition of one primary set; [`rank_layout`] numbers each rank's elements
//! as core / owned / exec halo / non-exec halo (the region sizes live on
//! [`op2_core::Set`]); [`local_map`] renumbers map tables; [`neighbours`]
//! lists what each rank sends and receives in a halo exchange; [`dual_graph`]
//! is what METIS partitions.
//!
//! With the `mpi` feature (MPICH through rsmpi, METIS vendored), `Mpi`
//! initialises MPI and distributes a mesh built on every rank into local
//! carriers whose sets exchange halos and reduce Globals across ranks.
//!
//! Messages for stderr go out whole, every line prefixed with the rank
//! ([`rank_message`], [`write_rank_message`], `Mpi::eprintln`), so that
//! several ranks' messages never interleave mid-line.
//!
//! ## Cargo features
//!
#![doc = document_features::document_features!()]
#![deny(missing_docs)]

#[cfg(feature = "mpi")]
mod distribute;
mod dual_graph;
mod layout;
mod mesh;
mod ownership;
mod report;
#[cfg(feature = "mpi")]
mod transport;

#[cfg(feature = "mpi")]
pub use distribute::{Distributed, Mpi};
pub use dual_graph::dual_graph;
pub use layout::{local_map, neighbours, rank_layout, Neighbour, RankLayout, SetLayout};
pub use mesh::{MapDesc, MeshDesc};
pub use ownership::{block_owner, derive_owners};
pub use report::{rank_message, write_rank_message};
