//! `Map`: a fixed-arity table from each element of one `Set` to `arity` elements of
//! another (a cell to its vertices), checked when built and immutable after. Indirect loop
//! arguments go through it, the planner colours by its targets, and devices upload it
//! once. A map can also come from a `Stencil` rule, its table built only on demand, and
//! `Map::identity` lets a direct write join the colouring.
use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::stencil::LatticeRule;
use crate::{Error, Result, Set};

/// A fixed-arity table from each element of one set to `arity` elements of
/// another (cell -> its 3 vertices). Immutable once built; a cheap cloneable handle.
///
/// A map made by a [`crate::Stencil`] computes its entries from a lattice
/// rule: native loops never read a table, and the table is built only when
/// something needs one (the planner, generated code, a device, distribution).
#[derive(Clone)]
pub struct Map(Arc<MapInner>);

struct MapInner {
    id: u64,
    device: crate::DeviceCell,
    name: String,
    from: Set,
    to: Set,
    arity: usize,
    /// The table: given, or built from `rule` on first use (empty for a
    /// map with 64-bit entries, whose table is `long`).
    values: OnceLock<Vec<i32>>,
    /// The 64-bit table of a [`crate::LongMap`]'s map.
    long: Option<Vec<i64>>,
    rule: Option<LatticeRule>,
    /// The generations of `from` and `to` when the map was made.
    generations: (u64, u64),
}

impl Map {
    /// Largest arity op2 supports: generated code indexes a map's entries with
    /// 32-bit integers.
    pub const MAX_ARITY: usize = i32::MAX as usize;

    /// Whether the map still fits its sets: `Err` if either is a dynamic set
    /// that has been renumbered (births or deaths) since the map was made.
    ///
    /// # Errors
    /// [`Error::StaleIndices`] naming the map and the set.
    pub fn check_current(&self) -> Result<()> {
        let m = &*self.0;
        m.from.check_generation("map", &m.name, m.generations.0)?;
        m.to.check_generation("map", &m.name, m.generations.1)
    }

    /// Builds a map from a flat, element-major table of `from.total_size() * arity`
    /// entries, each inside `to`.
    ///
    /// # Errors
    /// [`Error::ZeroArity`] if `arity` is 0, [`Error::ShapeTooLarge`] if it is
    /// above [`Map::MAX_ARITY`], [`Error::SizeOverflow`] if the number of
    /// entries overflows `usize`, [`Error::MapLength`] if the table has another
    /// length, [`Error::MapEntryOutOfRange`] if an entry lies outside `to`.
    pub fn new(name: impl Into<String>, from: &Set, to: &Set, arity: usize, values: Vec<i32>) -> Result<Map> {
        let name = name.into();
        Self::check_table(&name, from, to, arity, &values)?;
        Ok(Map::assemble(name, from, to, arity, OnceLock::from(values), None, None))
    }

    /// A map with 64-bit entries, as [`crate::LongMap::new`] makes (the
    /// table of the map it wraps).
    pub(crate) fn new_long(
        name: impl Into<String>,
        from: &Set,
        to: &Set,
        arity: usize,
        values: Vec<i64>,
    ) -> Result<Map> {
        let name = name.into();
        Self::check_table(&name, from, to, arity, &values)?;
        Ok(Map::long_table(name, from, to, arity, values))
    }

    fn long_table(name: String, from: &Set, to: &Set, arity: usize, values: Vec<i64>) -> Map {
        Map::assemble(name, from, to, arity, OnceLock::from(Vec::new()), Some(values), None)
    }

    /// The identity of `set` with 64-bit entries (see [`crate::LongMap::identity`]).
    pub(crate) fn try_long_identity(name: String, set: &Set) -> Result<Map> {
        let values = crate::host_memory::counting(&name, set.total_size(), |i| i as i64)?;
        Ok(Map::long_table(name, set, set, 1, values))
    }

    /// A map of the given parts, with a fresh identity.
    fn assemble(
        name: String,
        from: &Set,
        to: &Set,
        arity: usize,
        values: OnceLock<Vec<i32>>,
        long: Option<Vec<i64>>,
        rule: Option<LatticeRule>,
    ) -> Map {
        Map(Arc::new(MapInner {
            id: crate::id::next_id(),
            device: crate::DeviceCell::default(),
            name,
            from: from.clone(),
            to: to.clone(),
            arity,
            values,
            long,
            rule,
            generations: (from.generation(), to.generation()),
        }))
    }

    /// Checks a table of `values` for a map of `arity` from `from` into
    /// `to`: its shape, its length and every entry (see [`Map::new`]).
    fn check_table<V: Copy + Into<i64>>(name: &str, from: &Set, to: &Set, arity: usize, values: &[V]) -> Result<()> {
        let expected = Self::check_shape(name, from, arity)?;
        if values.len() != expected {
            return Err(Error::MapLength {
                map: name.to_string(),
                from_size: from.total_size(),
                arity,
                expected,
                found: values.len(),
            });
        }
        let target_size = to.total_size();
        let outside = |v: i64| v < 0 || v as u64 >= target_size as u64;
        if let Some(position) = values.iter().position(|&v| outside(v.into())) {
            return Err(Error::MapEntryOutOfRange {
                map: name.to_string(),
                position,
                element: position / arity,
                slot: position % arity,
                value: values[position].into(),
                target: to.name().to_string(),
                target_size,
            });
        }
        Ok(())
    }

    /// The number of entries of a map of `arity` from `from`, checked.
    fn check_shape(name: &str, from: &Set, arity: usize) -> Result<usize> {
        if arity == 0 {
            return Err(Error::ZeroArity { map: name.to_string() });
        }
        let from_size = from.total_size();
        let Some(expected) = from_size.checked_mul(arity) else {
            return Err(Error::SizeOverflow {
                kind: "map",
                name: name.to_string(),
                quantity: "number of entries",
                expression: format!("{from_size} elements of set `{}` x arity {arity}", from.name()),
            });
        };
        if arity > Self::MAX_ARITY {
            return Err(Error::ShapeTooLarge {
                kind: "map",
                name: name.to_string(),
                quantity: "arity",
                value: arity,
                max: Self::MAX_ARITY,
            });
        }
        Ok(expected)
    }

    /// A map whose entries `rule` computes (see [`crate::Stencil`]); `arity`
    /// is the rule's number of offsets, checked by the caller.
    pub(crate) fn computed(name: String, set: &Set, rule: LatticeRule) -> Map {
        Map::assemble(name, set, set, rule.arity(), OnceLock::new(), None, Some(rule))
    }

    /// The arity-1 map from `set` to itself: element `i` maps to `i`, halo
    /// elements of a distributed set included. Infallible, so it returns the
    /// Map itself. For a set of more than `i32::MAX` elements
    /// ([`Set::new_long`]) the entries are 64-bit and loops refuse the Map:
    /// use [`crate::LongMap::identity`] there.
    ///
    /// Use it to pass a Dat "directly" to a loop that also reaches the same
    /// Dat through another map. The planner colours only the targets of maps:
    /// in a loop over `cells` that increments `res` through a neighbour map
    /// `c2c` and also directly, the direct write of element `i` to `res[i]`
    /// would be invisible to the colouring and could race with element `j`
    /// writing `res[i]` through `c2c` on another thread. Such a loop is
    /// refused ([`Error::DirectAndIndirectWrite`]); through
    /// `same = Map::identity("same", &cells)` both writes are map targets and
    /// the planner keeps them apart:
    ///
    /// ```text
    /// par_loop!(rt, k, cells, res(INC), res(INC, c2c[0]))          // refused
    /// par_loop!(rt, k, cells, res(INC, same[0]), res(INC, c2c[0])) // coloured
    /// ```
    ///
    /// # Panics
    /// Where the host memory for its table cannot be had (a set of billions
    /// of elements); [`Map::try_identity`] returns the error.
    pub fn identity(name: impl Into<String>, set: &Set) -> Map {
        Map::try_identity(name, set).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`Map::identity`].
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`] where its table cannot be allocated.
    pub fn try_identity(name: impl Into<String>, set: &Set) -> Result<Map> {
        let (name, n) = (name.into(), set.total_size());
        if n > crate::set::MAX_SET_SIZE {
            // A long set (Set::new_long): its indices need 64-bit entries.
            return Map::try_long_identity(name, set);
        }
        let values = crate::host_memory::counting(&name, n, |i| i as i32)?;
        Ok(Map::assemble(name, set, set, 1, OnceLock::from(values), None, None))
    }

    /// The map's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The source set.
    pub fn from_set(&self) -> &Set {
        &self.0.from
    }

    /// The target set.
    pub fn to_set(&self) -> &Set {
        &self.0.to
    }

    /// Entries per source element.
    pub fn arity(&self) -> usize {
        self.0.arity
    }

    /// The flat table, element-major (built on the first call for a map
    /// whose entries a lattice rule computes). Empty for a map with 64-bit
    /// entries: [`Map::table`] gives every map's.
    pub fn values(&self) -> &[i32] {
        self.0
            .values
            .get_or_init(|| self.0.rule.as_ref().map_or_else(Vec::new, LatticeRule::table))
    }

    /// The flat table, element-major, at whichever width it is stored.
    pub fn table(&self) -> MapTable<'_> {
        match &self.0.long {
            Some(long) => MapTable::Long(long),
            None => MapTable::Narrow(self.values()),
        }
    }

    /// Whether the entries are 64-bit (the map of a [`crate::LongMap`], or
    /// the identity of a long set).
    pub fn is_long(&self) -> bool {
        self.0.long.is_some()
    }

    /// The 32-bit table, or for a map with 64-bit entries an error saying
    /// that `what` (a feature that needs 32-bit entries) cannot take it.
    ///
    /// # Errors
    /// [`Error::LongMapUnsupported`] for a map with 64-bit entries.
    pub fn narrow_values(&self, what: &str) -> Result<&[i32]> {
        match self.table() {
            MapTable::Narrow(v) => Ok(v),
            MapTable::Long(_) => Err(Error::LongMapUnsupported {
                map: self.name().to_string(),
                what: what.to_string(),
            }),
        }
    }

    /// The 64-bit table (`None` for 32-bit entries).
    pub(crate) fn long_values(&self) -> Option<&[i64]> {
        self.0.long.as_deref()
    }

    /// The lattice rule that computes the entries, for a map made by a
    /// [`crate::Stencil`].
    pub(crate) fn rule(&self) -> Option<&LatticeRule> {
        self.0.rule.as_ref()
    }

    /// The device copy of the table (maps are uploaded once and kept).
    pub fn device(&self) -> &crate::DeviceCell {
        &self.0.device
    }

    /// Whether two handles are the same map.
    pub fn same(&self, other: &Map) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// A process-wide unique identity, never reused: usable as a cache key.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// A handle that tells whether the map still exists, without keeping
    /// it: caches keyed by [`Map::id`] drop entries of dropped maps.
    pub(crate) fn watch(&self) -> crate::plan_cache::Watch {
        crate::plan_cache::Watch::of(&self.0)
    }
}

/// A map's table at the width it is stored: 32-bit entries (every [`Map`]
/// users make) or 64-bit ones (a [`crate::LongMap`]'s).
#[derive(Clone, Copy, Debug)]
pub enum MapTable<'a> {
    /// 32-bit entries.
    Narrow(&'a [i32]),
    /// 64-bit entries.
    Long(&'a [i64]),
}

impl MapTable<'_> {
    /// The number of entries.
    pub fn len(&self) -> usize {
        match self {
            MapTable::Narrow(v) => v.len(),
            MapTable::Long(v) => v.len(),
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `k` (validated: never negative).
    ///
    /// # Panics
    /// If `k` is out of range.
    pub fn get(&self, k: usize) -> usize {
        match self {
            MapTable::Narrow(v) => v[k] as usize,
            MapTable::Long(v) => v[k] as usize,
        }
    }

    /// The entries' bytes, as a device receives them.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            MapTable::Narrow(v) => bytemuck::cast_slice(v),
            MapTable::Long(v) => bytemuck::cast_slice(v),
        }
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Map({:?}: {} -> {}, arity {})",
            self.name(),
            self.from_set().name(),
            self.to_set().name(),
            self.arity()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets() -> (Set, Set) {
        (Set::new("cells", 2).unwrap(), Set::new("vertices", 4).unwrap())
    }

    #[test]
    fn valid_map_keeps_its_table() {
        let (c, v) = sets();
        let m = Map::new("c2v", &c, &v, 3, vec![0, 1, 2, 2, 1, 3]).unwrap();
        assert_eq!(m.arity(), 3);
        assert_eq!(m.values(), &[0, 1, 2, 2, 1, 3]);
        assert!(m.from_set().same(&c));
        assert!(m.to_set().same(&v));
    }

    #[test]
    fn wrong_length_names_map_and_sizes() {
        let (c, v) = sets();
        let e = Map::new("c2v", &c, &v, 3, vec![0, 1, 2, 2, 1]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::MapLength {
                    expected: 6,
                    found: 5,
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains("c2v") && msg.contains('6') && msg.contains('5'), "{msg}");
    }

    #[test]
    fn out_of_range_entry_names_position_and_value() {
        let (c, v) = sets();
        let e = Map::new("c2v", &c, &v, 3, vec![0, 1, 2, 2, 4, 3]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::MapEntryOutOfRange {
                    position: 4,
                    element: 1,
                    slot: 1,
                    value: 4,
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("c2v") && msg.contains("vertices") && msg.contains("is 4"),
            "{msg}"
        );
    }

    #[test]
    fn negative_entry_is_out_of_range() {
        let (c, v) = sets();
        let e = Map::new("c2v", &c, &v, 3, vec![0, 1, 2, -1, 1, 3]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::MapEntryOutOfRange {
                    position: 3,
                    value: -1,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn wrapping_entry_count_is_an_error() {
        let (c, v) = sets();
        // 2 * (usize::MAX / 2 + 1) wraps to 0: the empty table used to pass.
        let huge = usize::MAX / 2 + 1;
        let e = Map::new("wide", &c, &v, huge, vec![]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::SizeOverflow {
                    kind: "map",
                    quantity: "number of entries",
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("`wide`") && msg.contains("cells") && msg.contains(&huge.to_string()),
            "{msg}"
        );
        let e = Map::new("wide", &c, &v, usize::MAX, vec![]).unwrap_err();
        assert!(matches!(e, Error::SizeOverflow { .. }), "{e:?}");
    }

    #[test]
    fn arity_above_the_limit_is_an_error_even_from_an_empty_set() {
        let (_, v) = sets();
        let none = Set::new("none", 0).unwrap();
        for arity in [Map::MAX_ARITY + 1, usize::MAX / 2 + 1, usize::MAX] {
            let e = Map::new("m", &none, &v, arity, vec![]).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::ShapeTooLarge {
                        kind: "map",
                        quantity: "arity",
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(e.to_string().contains("`m`"), "{e}");
        }
        assert!(Map::new("m", &none, &v, 4, vec![]).is_ok());
    }

    #[test]
    fn identity_maps_each_element_to_itself() {
        let s = Set::with_regions(
            "cells",
            crate::SetRegions {
                core: 3,
                owned: 1,
                exec_halo: 1,
                nonexec_halo: 1,
            },
        )
        .unwrap();
        let m = Map::identity("same", &s);
        assert_eq!(m.name(), "same");
        assert_eq!(m.arity(), 1);
        assert_eq!(m.values(), &[0, 1, 2, 3, 4, 5]);
        assert!(m.from_set().same(&s) && m.to_set().same(&s));
        let empty = Set::new("empty", 0).unwrap();
        assert!(Map::identity("e", &empty).values().is_empty());
    }

    #[test]
    fn identity_makes_a_direct_write_a_coloured_target() {
        use crate::{Access, ArgData, ArgSpec, Dat, MapIndex, Reach};
        let cells = Set::new("cells", 4).unwrap();
        let ring = Map::new("ring", &cells, &cells, 1, vec![1, 2, 3, 0]).unwrap();
        let same = Map::identity("same", &cells);
        let res = Dat::<f64>::zeros("res", &cells, 1).unwrap();
        let through = |map| ArgSpec::through_map(ArgData::Dat(&res), Access::Inc, map, MapIndex::Entry(0));
        let direct = ArgSpec::direct(ArgData::Dat(&res), Access::Inc);
        let found = crate::conflicts(&[direct, through(&ring)]);
        assert_eq!(found.len(), 1, "a direct argument is not a conflict");
        let found = crate::conflicts(&[through(&same), through(&ring)]);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].group, found[1].group, "both target `res`");
        assert!(matches!(found[0].reach, Reach::Map(m, _) if m.same(&same)));
    }

    #[test]
    fn zero_arity_is_an_error() {
        let (c, v) = sets();
        let e = Map::new("empty", &c, &v, 0, vec![]).unwrap_err();
        assert!(matches!(e, Error::ZeroArity { .. }));
        assert!(e.to_string().contains("empty"));
    }
}
