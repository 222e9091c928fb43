//! `LongMap`: a map with 64-bit entries (OP2's `op_decl_map_long`), for meshes whose
//! target sets hold more than `i32::MAX` elements (`Set::new_long`). Its own type, so a
//! loop through it reads 64-bit entries and a loop through a `Map` keeps reading 32-bit
//! ones, with no test of the width per entry; generated code does the same per argument.
use crate::{Map, Result, Set};

/// A fixed-arity table with 64-bit entries from each element of one set to
/// `arity` elements of another: [`Map`] for a target set of more than
/// `i32::MAX` elements ([`Set::new_long`]). `par_loop!` takes it wherever it
/// takes a Map (`d(ACCESS, m[i])`, `d(ACCESS, m)`), on every backend;
/// generated code reads its entries as 64-bit integers and every other
/// map's as 32-bit ones. Features that keep 32-bit entries (distribution
/// over MPI ranks, HDF5 and VTK output of maps, renumbering) take `Map`s
/// only.
///
/// ```
/// use op2_core::{LongMap, Set};
///
/// let huge = Set::new_long("huge", 3_000_000_000).unwrap();
/// let probes = Set::new("probes", 2).unwrap();
/// let m = LongMap::new("probe_to_huge", &probes, &huge, 1, vec![7, 2_999_999_999]).unwrap();
/// assert_eq!(m.values()[1], 2_999_999_999);
/// ```
#[derive(Clone, Debug)]
pub struct LongMap(Map);

impl LongMap {
    /// Builds a map from a flat, element-major table of
    /// `from.total_size() * arity` entries, each inside `to`.
    ///
    /// # Errors
    /// As [`Map::new`].
    pub fn new(name: impl Into<String>, from: &Set, to: &Set, arity: usize, values: Vec<i64>) -> Result<LongMap> {
        Map::new_long(name, from, to, arity, values).map(LongMap)
    }

    /// The arity-1 map from `set` to itself, as [`Map::identity`], with
    /// 64-bit entries: for a set of more than `i32::MAX` elements.
    ///
    /// # Panics
    /// Where the host memory for its table cannot be had;
    /// [`LongMap::try_identity`] returns the error.
    pub fn identity(name: impl Into<String>, set: &Set) -> LongMap {
        LongMap::try_identity(name, set).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`LongMap::identity`].
    ///
    /// # Errors
    /// [`crate::Error::HostOutOfMemory`] where its table cannot be allocated.
    pub fn try_identity(name: impl Into<String>, set: &Set) -> Result<LongMap> {
        Map::try_long_identity(name.into(), set).map(LongMap)
    }

    /// The map's name.
    pub fn name(&self) -> &str {
        self.0.name()
    }

    /// The source set.
    pub fn from_set(&self) -> &Set {
        self.0.from_set()
    }

    /// The target set.
    pub fn to_set(&self) -> &Set {
        self.0.to_set()
    }

    /// Entries per source element.
    pub fn arity(&self) -> usize {
        self.0.arity()
    }

    /// The flat table, element-major.
    pub fn values(&self) -> &[i64] {
        self.0.long_values().unwrap_or_default()
    }

    /// A process-wide unique identity, never reused.
    pub fn id(&self) -> u64 {
        self.0.id()
    }

    /// The map validation, planning and generated code see (its table is
    /// 64-bit: [`Map::table`]).
    pub(crate) fn as_map(&self) -> &Map {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn identities_and_ids_too_large_to_hold_are_errors() {
        // 2^62 elements: a table of them cannot be allocated (nor counted in
        // bytes), and asking for one is an error, not an abort.
        let huge = Set::new_long("huge", 1 << 62).unwrap();
        let out_of_memory =
            |e: Error| matches!(e, Error::HostOutOfMemory { ref name, .. } if name == "id" || name == "huge");
        assert!(out_of_memory(LongMap::try_identity("id", &huge).err().unwrap()));
        assert!(out_of_memory(Map::try_identity("id", &huge).err().unwrap()));
        assert!(out_of_memory(huge.try_global_ids().err().unwrap()));
        // A set that fits is unchanged.
        let small = Set::new_long("small", 5).unwrap();
        let id = LongMap::try_identity("id", &small).unwrap();
        assert_eq!(id.values(), [0, 1, 2, 3, 4]);
        assert_eq!(small.try_global_ids().unwrap().as_ref(), [0, 1, 2, 3, 4]);
    }
}
