//! Distributed op2 runs under `mpirun` (docs/ARCHITECTURE.md, Distributed runs).
//!
//! The distribution logic needs no MPI and is tested as plain Rust:
//! [`dual_graph`] (op2-core's, as is the mesh description [`MeshDesc`]) is
//! what METIS partitions; [`derive_owners`] gives every
//! element of every set an owner rank from a partition of one primary set
//! (`ownership.rs`); the halo layout (`halo_layout.rs`): [`rank_layout`]
//! numbers each rank's elements as core / owned / exec halo / non-exec halo
//! (the region sizes live on [`op2_core::Set`]), [`local_map`] renumbers map
//! tables, [`neighbours`] lists what each rank sends and receives in a halo
//! exchange.
//!
//! With the `mpi` feature (MPICH through rsmpi, METIS vendored), `Mpi`
//! initialises MPI (`world.rs`) and distributes a mesh built on every rank
//! into local carriers (`partition.rs`) whose sets exchange halos and reduce
//! Globals across ranks (`halo_exchange.rs`, the MPI side of
//! [`op2_core::Distribution`]).
//!
//! A mesh too large for one process is read in blocks instead: each rank
//! holds a contiguous block of rows of every set (`BlockMesh`, filled from
//! a file, e.g. by op2-hdf5), and `Mpi::distribute_blocks` partitions it in
//! parallel (PT-Scotch with the `ptscotch` feature, `ptscotch.rs`), moves
//! rows to their owners and builds the same layout and halos as the
//! in-memory path, no rank ever holding a whole set
//! (`block_distribution.rs`, over the all-to-all exchanges and block
//! directory of `all_to_all.rs`).
//!
//! To write a distributed mesh, `SpreadMesh` (both `Distributed` and
//! `BlockDistributed`) moves every rank's owned rows of a table to
//! contiguous blocks of the whole, in global order (`spread_mesh.rs`).
//!
//! Moving agents are shared by space: [`BinDecomposition`] cuts a spatial
//! message grid's bins among ranks and lists which ranks read which bins;
//! with `mpi`, `AgentDomain` moves agents to the rank owning their bin,
//! sends ghost messages, during a list's build if asked
//! (`agent_domain/`), and numbers children across
//! ranks by their parents' ids (`shared_births.rs`).
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
mod agent_domain;
#[cfg(feature = "mpi")]
mod all_to_all;
mod bin_decomposition;
#[cfg(feature = "mpi")]
mod block_distribution;
#[cfg(feature = "mpi")]
mod block_mesh;
#[cfg(feature = "mpi")]
mod halo_exchange;
mod halo_layout;
#[cfg(feature = "mpi")]
mod heap;
mod ownership;
#[cfg(feature = "mpi")]
mod partition;
mod partitioner;
#[cfg(feature = "ptscotch")]
mod ptscotch;
mod report;
#[cfg(feature = "mpi")]
mod shared_births;
#[cfg(feature = "mpi")]
mod spread_mesh;
#[cfg(feature = "mpi")]
mod waiting;
#[cfg(feature = "mpi")]
mod world;

#[cfg(feature = "mpi")]
pub use agent_domain::{AgentDomain, DomainOptions, DomainStats};
pub use bin_decomposition::{BinBox, BinDecomposition, Readers};
#[cfg(feature = "mpi")]
pub use block_distribution::{BlockDistributed, BlockPartitioner};
#[cfg(feature = "mpi")]
pub use block_mesh::{BlockMesh, BlockSetId};
pub use halo_layout::{local_map, local_ragged, neighbours, rank_layout, Neighbour, RankLayout, SetLayout};
pub use op2_core::{dual_graph, MapDesc, MeshDesc};
pub use ownership::{block_owner, block_rows, derive_owners};
#[cfg(feature = "mpi")]
pub use partition::Distributed;
pub use partitioner::Partitioner;
pub use report::{rank_message, write_rank_message};
#[cfg(feature = "mpi")]
pub use spread_mesh::{dat_to_blocks, map_to_blocks, SetNumbering, SpreadMesh};
#[cfg(feature = "mpi")]
pub use world::Mpi;
