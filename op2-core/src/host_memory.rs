//! Host allocations that may be too large to have: reserved first, so that
//! a Dat, Global, Map or table of billions of elements reports
//! [`Error::HostOutOfMemory`] naming it instead of aborting the process.

use crate::{Error, Result};

/// An empty vector with room for `n` values, or [`Error::HostOutOfMemory`]
/// naming `name`.
pub(crate) fn reserved<T>(name: &str, n: usize) -> Result<Vec<T>> {
    let mut values = Vec::new();
    match values.try_reserve_exact(n) {
        Ok(()) => Ok(values),
        Err(_) => Err(Error::HostOutOfMemory {
            name: name.to_string(),
            bytes: n.saturating_mul(std::mem::size_of::<T>()),
        }),
    }
}

/// `index(0), index(1), ... index(n - 1)` (an identity table, a set's
/// global ids), or [`Error::HostOutOfMemory`] naming `name`.
pub(crate) fn counting<T>(name: &str, n: usize, index: impl Fn(usize) -> T) -> Result<Vec<T>> {
    let mut values = reserved(name, n)?;
    values.extend((0..n).map(index));
    Ok(values)
}
