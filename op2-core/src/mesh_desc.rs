//! The global mesh as distribution and renumbering see it: set sizes and
//! map tables, checked by [`MeshDesc::validate`] before either trusts them.

use crate::{Error, Result};

/// A map between two sets of a [`MeshDesc`], by set index.
#[derive(Clone, Copy, Debug)]
pub struct MapDesc<'a> {
    /// Source set.
    pub from: usize,
    /// Target set.
    pub to: usize,
    /// Entries per source element (0 for a ragged map).
    pub arity: usize,
    /// The global table (`size(from) * arity` entries), or a ragged map's
    /// targets.
    pub values: &'a [i32],
    /// A ragged map's CSR offsets (`size(from) + 1`); `None` for a map of
    /// fixed arity.
    pub offsets: Option<&'a [i32]>,
}

impl MapDesc<'_> {
    /// The targets of source element `e`. Panics where `e` or the table is
    /// out of range: call it on maps [`MeshDesc::validate`] has passed.
    pub fn row(&self, e: usize) -> &[i32] {
        match self.offsets {
            Some(o) => &self.values[o[e] as usize..o[e + 1] as usize],
            None => &self.values[e * self.arity..(e + 1) * self.arity],
        }
    }

    /// Whether this map fits sets of `set_sizes`: both sets exist, the
    /// table has a row per source element (`size(from) * arity` entries,
    /// or offsets that start at 0, never fall and end at the targets'
    /// length) and every entry names an element of the target set. `name`
    /// says which map in the error.
    pub fn validate(&self, set_sizes: &[usize], name: &str) -> Result<()> {
        let bad = |reason: String| {
            Err(Error::InvalidMeshDesc {
                reason: format!("{name}: {reason}"),
            })
        };
        let sets = set_sizes.len();
        for (role, set) in [("source", self.from), ("target", self.to)] {
            if set >= sets {
                return bad(format!(
                    "its {role} set is {set}, but the mesh has {}",
                    crate::plural(sets, "set", "sets")
                ));
            }
        }
        let (from, to) = (set_sizes[self.from], set_sizes[self.to]);
        match self.offsets {
            Some(offsets) => {
                if offsets.len() != from + 1 {
                    return bad(format!(
                        "a ragged map from a set of {from} needs {} offsets, got {}",
                        from + 1,
                        offsets.len()
                    ));
                }
                if offsets[0] != 0 {
                    return bad(format!("its first offset must be 0, not {}", offsets[0]));
                }
                if let Some(e) = offsets.windows(2).position(|w| w[1] < w[0]) {
                    return bad(format!(
                        "offsets fall at element {e} ({} then {}); each row must end where the next starts",
                        offsets[e],
                        offsets[e + 1]
                    ));
                }
                if offsets[from] as usize != self.values.len() {
                    return bad(format!(
                        "its offsets end at {}, but it has {}",
                        offsets[from],
                        crate::plural(self.values.len(), "target", "targets")
                    ));
                }
            }
            None => {
                if self.arity == 0 {
                    return bad("a map of fixed arity needs arity at least 1 (give offsets for a ragged map)".into());
                }
                let expected = from.checked_mul(self.arity);
                if expected != Some(self.values.len()) {
                    return bad(format!(
                        "{from} source elements x arity {} need {} entries, got {}",
                        self.arity,
                        expected.map_or("more than memory holds".to_string(), |n| n.to_string()),
                        self.values.len()
                    ));
                }
            }
        }
        if let Some(k) = self.values.iter().position(|&t| t < 0 || t as usize >= to) {
            return bad(format!(
                "entry {k} is {}, outside its target set of {}",
                self.values[k],
                crate::plural(to, "element", "elements")
            ));
        }
        Ok(())
    }
}

/// Every set's global size and every map, identical on all ranks.
#[derive(Clone, Debug, Default)]
pub struct MeshDesc<'a> {
    /// Global size of each set.
    pub set_sizes: Vec<usize>,
    /// The maps.
    pub maps: Vec<MapDesc<'a>>,
}

impl MeshDesc<'_> {
    /// Checks every map against the sets ([`MapDesc::validate`]) and that
    /// every set's elements can be numbered in 32 bits, as the graphs and
    /// orders built from a description are.
    pub fn validate(&self) -> Result<()> {
        if let Some(s) = self.set_sizes.iter().position(|&n| n > i32::MAX as usize) {
            return Err(Error::InvalidMeshDesc {
                reason: format!(
                    "set {s} has {} elements; graphs and renumberings number at most {} (i32::MAX)",
                    self.set_sizes[s],
                    i32::MAX
                ),
            });
        }
        for (k, m) in self.maps.iter().enumerate() {
            m.validate(&self.set_sizes, &format!("map {k}"))?;
        }
        Ok(())
    }

    /// Checks that `set` is one of the description's sets; `what` names it
    /// in the error.
    pub(crate) fn check_set(&self, set: usize, what: &str) -> Result<()> {
        if set < self.set_sizes.len() {
            return Ok(());
        }
        Err(Error::InvalidMeshDesc {
            reason: format!(
                "{what} is set {set}, but the mesh has {}",
                crate::plural(self.set_sizes.len(), "set", "sets")
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules `dual_graph`'s tests do not reach: each broken one names
    /// what is wrong.
    #[test]
    fn every_rule_of_a_description_has_its_error() {
        let ragged = |offsets: &'static [i32], values: &'static [i32]| MapDesc {
            from: 0,
            to: 1,
            arity: 0,
            values,
            offsets: Some(offsets),
        };
        let fixed = |arity, values: &'static [i32]| MapDesc {
            from: 0,
            to: 1,
            arity,
            values,
            offsets: None,
        };
        let cases: [(Vec<usize>, MapDesc<'static>, &str); 6] = [
            (vec![2, 3], ragged(&[0, 1], &[0]), "needs 3 offsets, got 2"),
            (
                vec![2, 3],
                ragged(&[1, 1, 2], &[0, 1]),
                "its first offset must be 0, not 1",
            ),
            (
                vec![2, 3],
                ragged(&[0, 1, 3], &[0, 1]),
                "its offsets end at 3, but it has 2 targets",
            ),
            (vec![2, 3], fixed(0, &[]), "needs arity at least 1"),
            (
                vec![2, 3],
                fixed(1, &[0, -1]),
                "entry 1 is -1, outside its target set of 3 elements",
            ),
            (
                vec![2, i32::MAX as usize + 1],
                fixed(1, &[0, 0]),
                "set 1 has 2147483648 elements",
            ),
        ];
        for (set_sizes, map, want) in cases {
            let mesh = MeshDesc {
                set_sizes,
                maps: vec![map],
            };
            let err = mesh.validate().unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
        let fine = MeshDesc {
            set_sizes: vec![2, 3],
            maps: vec![ragged(&[0, 2, 2], &[2, 0])],
        };
        fine.validate().unwrap();
    }
}
