//! The global mesh as distribution sees it: set sizes and map tables.

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
    /// The targets of source element `e`.
    pub fn row(&self, e: usize) -> &[i32] {
        match self.offsets {
            Some(o) => &self.values[o[e] as usize..o[e + 1] as usize],
            None => &self.values[e * self.arity..(e + 1) * self.arity],
        }
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
