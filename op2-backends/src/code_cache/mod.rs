//! Generated code on disk, shared by the backends that compile it (`jit`
//! objects, `cuda` PTX): stable hashes for keys and checksummed files written
//! atomically, so concurrent processes (MPI ranks) never load half a file.

mod disk_cache;
mod hash;

pub use disk_cache::{default_dir, DiskCache};
pub use hash::fnv1a;
