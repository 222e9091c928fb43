//! A mesh as each rank reads it from a file, before distribution: every set
//! cut into contiguous blocks of rows ([`block_rows`]), and of every map and
//! Dat only the rows of this rank's block. No rank holds any set whole;
//! `Mpi::distribute_blocks` moves the rows to the ranks that own them.

use std::ops::Range;

use op2_core::{Scalar, ScalarType};

use crate::block_rows;

/// One set: its name and global element count.
#[derive(Clone, Debug)]
pub(crate) struct BlockSet {
    pub(crate) name: String,
    pub(crate) size: usize,
}

/// One map: this rank's rows of its table, targets as global ids.
#[derive(Clone, Debug)]
pub(crate) struct BlockMap {
    pub(crate) name: String,
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) arity: usize,
    pub(crate) rows: Vec<i32>,
}

/// One Dat: this rank's rows, as the bytes of values of type `ty`.
#[derive(Clone, Debug)]
pub(crate) struct BlockDat {
    pub(crate) name: String,
    pub(crate) set: usize,
    pub(crate) dim: usize,
    pub(crate) ty: ScalarType,
    pub(crate) bytes: Vec<u8>,
}

impl BlockDat {
    /// Bytes per row.
    pub(crate) fn row_bytes(&self) -> usize {
        self.dim * self.ty.size()
    }
}

/// A set of a [`BlockMesh`], by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSetId(pub(crate) usize);

/// This rank's blocks of a mesh's sets, maps and Dats (see the module
/// documentation). Mistakes (a table of the wrong length, a target outside
/// its set, a name given twice) are kept and reported by
/// `Mpi::distribute_blocks` on every rank, so that a rank with bad input
/// never leaves the others waiting.
#[derive(Clone, Debug)]
pub struct BlockMesh {
    pub(crate) rank: u32,
    pub(crate) nranks: u32,
    pub(crate) sets: Vec<BlockSet>,
    pub(crate) maps: Vec<BlockMap>,
    pub(crate) dats: Vec<BlockDat>,
    /// The first mistake made filling it.
    pub(crate) error: Option<String>,
}

impl BlockMesh {
    /// Its sets and maps as every rank must have them: names, sizes,
    /// arities and the sets maps join (not this rank's rows).
    pub(crate) fn sets_and_maps(&self) -> String {
        let sets = self.sets.iter().map(|s| format!("set `{}` of {}", s.name, s.size));
        let maps = self.maps.iter().map(|m| {
            format!(
                "map `{}` from `{}` to `{}` of arity {}",
                m.name, self.sets[m.from].name, self.sets[m.to].name, m.arity
            )
        });
        sets.chain(maps).collect::<Vec<_>>().join(", ")
    }

    /// Its Dats as every rank must have them: names, sets, dims and types.
    pub(crate) fn dats_shape(&self) -> String {
        let dats = self.dats.iter().map(|d| {
            format!(
                "Dat `{}` on `{}` of dim {} and type {:?}",
                d.name, self.sets[d.set].name, d.dim, d.ty
            )
        });
        let all = dats.collect::<Vec<_>>().join(", ");
        if all.is_empty() {
            "no Dats".to_string()
        } else {
            all
        }
    }

    /// An empty mesh for rank `rank` of `nranks`.
    pub fn new(rank: u32, nranks: u32) -> BlockMesh {
        BlockMesh {
            rank,
            nranks: nranks.max(1),
            sets: Vec::new(),
            maps: Vec::new(),
            dats: Vec::new(),
            error: None,
        }
    }

    /// Records a mistake a reader found in this rank's rows (a value out of
    /// the range its meaning allows, say): `Mpi::distribute_blocks` then
    /// fails on every rank with the first rank's `reason`.
    pub fn refuse(&mut self, reason: String) {
        self.fail(reason);
    }

    fn fail(&mut self, reason: String) {
        if self.error.is_none() {
            self.error = Some(format!("distributing from blocks: {reason}"));
        }
    }

    fn name_taken(&self, name: &str) -> bool {
        self.sets.iter().any(|s| s.name == name)
            || self.maps.iter().any(|m| m.name == name)
            || self.dats.iter().any(|d| d.name == name)
    }

    /// Adds a set of `size` elements in all; returns its id.
    pub fn add_set(&mut self, name: &str, size: usize) -> BlockSetId {
        if self.name_taken(name) {
            self.fail(format!("the name `{name}` is given twice"));
        }
        if size > i32::MAX as usize {
            self.fail(format!(
                "set `{name}` has {size} elements, more than the i32::MAX that distribution over MPI ranks can index"
            ));
        }
        self.sets.push(BlockSet {
            name: name.to_string(),
            size,
        });
        BlockSetId(self.sets.len() - 1)
    }

    /// Whether `set` is one of this mesh's (not another mesh's id); a
    /// mistake recorded for `what` where it is not.
    fn own(&mut self, what: &str, set: BlockSetId) -> bool {
        let own = set.0 < self.sets.len();
        if !own {
            self.fail(format!("{what}: set id {} is not one of this mesh's", set.0));
        }
        own
    }

    /// The rows of `set` this rank holds: the block whose map and Dat rows
    /// [`BlockMesh::add_map`] and [`BlockMesh::add_dat`] take.
    ///
    /// # Panics
    /// If `set` is another mesh's.
    pub fn rows(&self, set: BlockSetId) -> Range<usize> {
        block_rows(self.sets[set.0].size, self.rank, self.nranks)
    }

    /// The name and size of a set.
    ///
    /// # Panics
    /// If `set` is another mesh's.
    pub fn set_name_and_size(&self, set: BlockSetId) -> (&str, usize) {
        (&self.sets[set.0].name, self.sets[set.0].size)
    }

    /// Adds a map from `from` to `to` of `arity` targets per element: `rows`
    /// holds this rank's rows ([`BlockMesh::rows`] of `from`), targets as
    /// global element numbers of `to`.
    pub fn add_map(&mut self, name: &str, from: BlockSetId, to: BlockSetId, arity: usize, rows: Vec<i32>) {
        if self.name_taken(name) {
            self.fail(format!("the name `{name}` is given twice"));
        }
        let what = format!("map `{name}`");
        if !(self.own(&what, from) && self.own(&what, to)) {
            return;
        }
        let want = self.rows(from).len().saturating_mul(arity);
        let to_size = self.sets[to.0].size;
        if arity == 0 {
            self.fail(format!("map `{name}` has arity 0"));
        } else if rows.len() != want {
            self.fail(format!(
                "map `{name}`: {} values given for rows {:?} of `{}` at arity {arity}, {want} expected",
                rows.len(),
                self.rows(from),
                self.sets[from.0].name
            ));
        } else if let Some(i) = rows.iter().position(|&t| t < 0 || t as usize >= to_size) {
            self.fail(format!(
                "map `{name}`: row {} points to {}, outside `{}` (0..{to_size})",
                self.rows(from).start + i / arity,
                rows[i],
                self.sets[to.0].name
            ));
        }
        self.maps.push(BlockMap {
            name: name.to_string(),
            from: from.0,
            to: to.0,
            arity,
            rows,
        });
    }

    /// Adds a Dat of `dim` values per element of `set`: `values` holds this
    /// rank's rows ([`BlockMesh::rows`]).
    pub fn add_dat<T: Scalar>(&mut self, name: &str, set: BlockSetId, dim: usize, values: Vec<T>) {
        if self.name_taken(name) {
            self.fail(format!("the name `{name}` is given twice"));
        }
        if !self.own(&format!("dat `{name}`"), set) {
            return;
        }
        let want = self.rows(set).len().saturating_mul(dim);
        if dim == 0 {
            self.fail(format!("dat `{name}` has dim 0"));
        } else if values.len() != want {
            self.fail(format!(
                "dat `{name}`: {} values given for rows {:?} of `{}` at dim {dim}, {want} expected",
                values.len(),
                self.rows(set),
                self.sets[set.0].name
            ));
        }
        self.dats.push(BlockDat {
            name: name.to_string(),
            set: set.0,
            dim,
            ty: T::TYPE,
            bytes: bytemuck::cast_slice(&values).to_vec(),
        });
    }

    /// The set named `name`.
    pub(crate) fn set_index(&self, name: &str) -> Option<usize> {
        self.sets.iter().position(|s| s.name == name)
    }

    /// The bytes of every map and Dat row this rank holds, a measure of what
    /// it read.
    pub fn bytes(&self) -> usize {
        self.maps.iter().map(|m| m.rows.len() * 4).sum::<usize>()
            + self.dats.iter().map(|d| d.bytes.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_meshs_set_is_a_mistake_not_a_panic() {
        let mut other = BlockMesh::new(0, 1);
        other.add_set("a", 3);
        let foreign = other.add_set("b", 3);
        let mut m = BlockMesh::new(0, 1);
        let cells = m.add_set("cells", 3);
        m.add_map("m", cells, foreign, 1, vec![0, 0, 0]);
        m.add_dat("d", foreign, 1, vec![0.0f64; 3]);
        assert!(
            m.error
                .as_deref()
                .is_some_and(|e| e.contains("map `m`: set id 1 is not one of this mesh's")),
            "{:?}",
            m.error
        );
        assert!(m.maps.is_empty() && m.dats.is_empty());
        m.add_set("huge", i32::MAX as usize + 1);
    }

    #[test]
    fn mistakes_are_kept_with_their_names() {
        let mut m = BlockMesh::new(1, 2);
        let cells = m.add_set("cells", 5);
        let nodes = m.add_set("nodes", 4);
        // Rank 1 of 2 holds cells 3 and 4.
        assert_eq!(m.rows(cells), 3..5);
        m.add_map("pcell", cells, nodes, 2, vec![0, 1, 2, 3]);
        assert!(m.error.is_none());
        m.add_map("bad", cells, nodes, 2, vec![0, 1, 2, 4]);
        let e = m.error.clone().unwrap();
        assert!(
            e.contains("map `bad`: row 4 points to 4, outside `nodes` (0..4)"),
            "{e}"
        );
        let mut m = BlockMesh::new(0, 2);
        let cells = m.add_set("cells", 5);
        m.add_dat("q", cells, 2, vec![0.0f64; 5]);
        let e = m.error.clone().unwrap();
        assert!(
            e.contains("dat `q`: 5 values given for rows 0..3 of `cells` at dim 2, 6 expected"),
            "{e}"
        );
        let mut m = BlockMesh::new(0, 1);
        m.add_set("cells", 5);
        m.add_set("cells", 5);
        assert!(m.error.unwrap().contains("`cells` is given twice"));
    }
}
