//! The Airfoil benchmark (docs/ARCHITECTURE.md, The Airfoil benchmark): OP2's classic finite-volume
//! code on a C-grid around a NACA0012 aerofoil.
//!
//! - [`mesh`]: the mesh arrays, the generator ([`generate()`]), OP2's
//!   `new_grid.dat` format ([`grid_file`]) and, with feature `hdf5`, OP2's
//!   HDF5 layout (`hdf5_grid`); Gmsh files ([`gmsh_grid`]).
//! - [`kernels`] and [`dsl`]: the benchmark written with `#[op2::kernel]` and
//!   `par_loop!`.
//! - [`handwritten`]: the same arithmetic in plain Rust loops, the correctness
//!   and speed baseline.
//! - [`triad`]: the machine's memory bandwidth (a STREAM triad), for the
//!   bandwidth floor.
#![deny(missing_docs)]

pub mod constants;
pub mod dsl;
mod error;
pub mod generate;
pub mod gmsh_grid;
pub mod grid_file;
pub mod handwritten;
#[cfg(feature = "hdf5")]
pub mod hdf5_grid;
pub mod kernels;
pub mod mesh;
mod spline;
pub mod triad;

pub use constants::Constants;
pub use dsl::AirfoilDsl;
pub use error::AirfoilError;
pub use generate::generate;
pub use handwritten::Handwritten;
pub use mesh::Mesh;

/// rms at iteration 1000 on the 720 000-cell mesh (double precision).
pub const REFERENCE_RMS_1000: f64 = 1.060114637578e-4;

/// Relative tolerance of the reference check: 1e-5 percent.
pub const REFERENCE_TOLERANCE: f64 = 1e-7;

/// Whether `rms` matches the reference within [`REFERENCE_TOLERANCE`].
pub fn matches_reference(rms: f64) -> bool {
    ((rms - REFERENCE_RMS_1000) / REFERENCE_RMS_1000).abs() <= REFERENCE_TOLERANCE
}
