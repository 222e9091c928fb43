//! Generated code on disk, shared by the backends that compile it (`jit`
//! objects, `cuda` PTX), and the device backends' tuning records: SHA-256 keys for file names and checksummed files
//! written atomically, so concurrent processes (MPI ranks) never load half a
//! file and never run code built from another source.

mod disk_cache;
mod hash;

pub use disk_cache::{default_dir, DiskCache};
pub use hash::cache_key;
