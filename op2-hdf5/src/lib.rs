//! OP2's HDF5 mesh format, read and written: the layout OP2's own tools
//! (`convert_mesh`, `op_dump_to_hdf5`) use, so that a mesh made for OP2 runs
//! on op2 and back.
//!
//! - A **Set** is an integer dataset of shape `[1]` holding its size.
//! - A **Map** is an `int` dataset `[from-set size][dim]`, 0-based, with the
//!   attributes `dim`, `size` (the from-set size) and `type` ("int").
//! - A **Dat** is a dataset `[set size][dim]` of its type, with the attributes
//!   `dim`, `size` (bytes per element: dim × the type's size) and `type`
//!   ("double", "float", "int", "long long" or "unsigned int").
//! - A **constant** is a 1-D dataset `[dim]` with the attributes `dim` and
//!   `type`.
//!
//! Names may hold groups (`group/name`); objects nobody asks for are ignored.
//!
//! `MeshFile` reads. It returns whole objects as op2 [`Set`](op2_core::Set)s,
//! [`Map`](op2_core::Map)s and [`Dat`](op2_core::Dat)s, or any block of rows
//! of a Map's or Dat's table, which is what each process reads of a
//! distributed mesh. With the `mpi` feature, `MeshFile::open_parallel` opens
//! the file on every rank at once through MPI-IO.
//!
//! `MeshWriter` writes, with OP2's attributes. A distributed set is
//! refused: gather its values first, or, with `mpi`, write each rank's block
//! (`MeshWriter::append_parallel`, `MeshWriter::write_dat_rows`).
//!
//! `MeshCheckpoint` writes the Sets, Maps, Dats and Globals a mesh program
//! chooses, with its step, as one file in this layout that appears whole
//! or not at all (under `mpirun` each rank writing its own rows), and
//! `MeshCheckpointFile` reads it back (`mesh_checkpoint.rs`,
//! `whole_file.rs`).
//!
//! With `mpi`, `MeshFile::block_set`, `block_map` and `block_dat` read each
//! rank's block of a mesh into an `op2_mpi::BlockMesh`, for distribution
//! with no rank holding a whole set (`blocks.rs`).
//!
//! Nothing read is trusted. A missing object, a wrong shape, a missing or
//! contradicting attribute, or a `type` that is not how the values are
//! stored (HDF5 would silently convert) each gives an
//! [`Error::MeshFile`](op2_core::Error::MeshFile). The error names the file,
//! the object, and what was expected there. So do a map entry outside its
//! target set and a size that does not match the set given.
//!
//! Everything here needs the crate's `hdf5` feature (on through the `op2`
//! crate's `hdf5` feature); without it the crate is empty, so that the
//! workspace builds where no HDF5 library is installed.
//!
//! ## Cargo features
//!
#![doc = document_features::document_features!()]
#![deny(missing_docs)]

#[cfg(feature = "mpi")]
mod blocks;
#[cfg(feature = "hdf5")]
mod element_type;
#[cfg(feature = "hdf5")]
mod mesh_checkpoint;
#[cfg(feature = "hdf5")]
mod reader;
#[cfg(feature = "hdf5")]
mod whole_file;
#[cfg(feature = "hdf5")]
mod writer;

#[cfg(feature = "hdf5")]
pub use mesh_checkpoint::{MeshCheckpoint, MeshCheckpointFile, MESH_CHECKPOINT_FORMAT};
#[cfg(feature = "hdf5")]
pub use reader::{MeshFile, Table};
#[cfg(feature = "mpi")]
pub use whole_file::agree;
#[cfg(feature = "hdf5")]
pub use whole_file::{checkpoints_before, rename_when_whole, writing_name};
#[cfg(feature = "hdf5")]
pub use writer::MeshWriter;
