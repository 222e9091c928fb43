//! Distributed op2 runs under `mpirun` (DESIGN.md section 7).
//!
//! Not built yet: this crate will partition the iteration sets with METIS, number
//! each rank's elements as core / owned / exec halo / non-exec halo, exchange halos
//! and reduce Globals across ranks. The region sizes already live on
//! [`op2_core::Set`], where one process keeps everything in the core region.
#![deny(missing_docs)]
