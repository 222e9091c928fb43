use std::fmt;
use std::sync::Arc;

use crate::{Error, Result, Set};

/// A fixed-arity table from each element of one set to `arity` elements of
/// another (cell -> its 3 vertices). Immutable once built; a cheap cloneable handle.
#[derive(Clone)]
pub struct Map(Arc<MapInner>);

struct MapInner {
    id: u64,
    device: crate::DeviceCell,
    name: String,
    from: Set,
    to: Set,
    arity: usize,
    values: Vec<i32>,
}

impl Map {
    /// Builds a map from a flat, element-major table of `from.total_size() * arity`
    /// entries, each inside `to`.
    pub fn new(name: impl Into<String>, from: &Set, to: &Set, arity: usize, values: Vec<i32>) -> Result<Map> {
        let name = name.into();
        if arity == 0 {
            return Err(Error::ZeroArity { map: name });
        }
        let expected = from.total_size() * arity;
        if values.len() != expected {
            return Err(Error::MapLength {
                map: name,
                from_size: from.total_size(),
                arity,
                expected,
                found: values.len(),
            });
        }
        let target_size = to.total_size();
        if let Some(position) = values.iter().position(|&v| v < 0 || v as usize >= target_size) {
            return Err(Error::MapEntryOutOfRange {
                map: name,
                position,
                element: position / arity,
                slot: position % arity,
                value: values[position] as i64,
                target: to.name().to_string(),
                target_size,
            });
        }
        Ok(Map(Arc::new(MapInner {
            id: crate::id::next_id(),
            device: crate::DeviceCell::default(),
            name,
            from: from.clone(),
            to: to.clone(),
            arity,
            values,
        })))
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

    /// The flat table, element-major.
    pub fn values(&self) -> &[i32] {
        &self.0.values
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
        (Set::new("cells", 2), Set::new("vertices", 4))
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
    fn zero_arity_is_an_error() {
        let (c, v) = sets();
        let e = Map::new("empty", &c, &v, 0, vec![]).unwrap_err();
        assert!(matches!(e, Error::ZeroArity { .. }));
        assert!(e.to_string().contains("empty"));
    }
}
