//! How the primary set is cut among the ranks: METIS on the mesh's graph (the
//! default), contiguous blocks, or owners the caller gives.

/// How `Mpi::distribute_with` assigns the primary set's elements to ranks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Partitioner {
    /// METIS k-way on the graph of the primary set (elements joined when a
    /// map joins them); contiguous blocks when no map reaches it.
    #[default]
    Metis,
    /// Contiguous blocks of element indices of about equal size, cut only at
    /// multiples of `unit`: on a lattice numbered row by row, `unit` = the
    /// width gives strips of whole rows, which a `Stencil` needs to stay
    /// computed once distributed (and which need no METIS).
    Blocks {
        /// Blocks start at multiples of this (at least 1).
        unit: usize,
    },
    /// The owner rank of every element of the primary set, the same on every
    /// rank.
    Given(Vec<u32>),
}

impl Partitioner {
    /// The owners of `n` elements on `nranks` ranks, or `None` for METIS
    /// (computed elsewhere); `Err` says what is wrong with the choice.
    pub fn fixed_owners(&self, n: usize, nranks: u32) -> Option<Result<Vec<u32>, String>> {
        match self {
            Partitioner::Metis => None,
            Partitioner::Blocks { unit: 0 } => Some(Err("blocks of unit 0: the unit must be at least 1".into())),
            Partitioner::Blocks { unit } => {
                let units = n.div_ceil(*unit);
                Some(Ok((0..n)
                    .map(|e| crate::block_owner(e / unit, units, nranks))
                    .collect()))
            }
            Partitioner::Given(owners) if owners.len() != n => Some(Err(format!(
                "{} owners given for the {n} elements of the primary set",
                owners.len()
            ))),
            Partitioner::Given(owners) => Some(match owners.iter().position(|&r| r >= nranks) {
                Some(e) => Err(format!(
                    "element {e} is given to rank {}, but there are {}",
                    owners[e],
                    op2_core::plural(nranks as usize, "rank", "ranks")
                )),
                None => Ok(owners.clone()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cut_only_at_multiples_of_the_unit() {
        // A 4-wide lattice of 5 rows on 2 ranks: rows 0-2 and 3-4 (whole rows).
        let owners = Partitioner::Blocks { unit: 4 }.fixed_owners(20, 2).unwrap().unwrap();
        assert_eq!(owners, [[0; 12].as_slice(), &[1; 8]].concat());
        // Unit 1: plain blocks, every rank gets some.
        let owners = Partitioner::Blocks { unit: 1 }.fixed_owners(7, 3).unwrap().unwrap();
        assert_eq!(owners, [0, 0, 0, 1, 1, 2, 2]);
        for p in 1..5u32 {
            let owners = Partitioner::Blocks { unit: 3 }.fixed_owners(31, p).unwrap().unwrap();
            assert!(owners.windows(2).all(|w| w[0] <= w[1]), "blocks are contiguous");
            for (e, w) in owners.windows(2).enumerate() {
                if w[0] != w[1] {
                    assert_eq!((e + 1) % 3, 0, "{p} ranks: a cut at {}", e + 1);
                }
            }
        }
    }

    #[test]
    fn given_owners_are_checked() {
        assert_eq!(
            Partitioner::Given(vec![1, 0, 1]).fixed_owners(3, 2),
            Some(Ok(vec![1, 0, 1]))
        );
        let e = Partitioner::Given(vec![0, 1]).fixed_owners(3, 2).unwrap().unwrap_err();
        assert!(e.contains("2 owners given for the 3 elements"), "{e}");
        let e = Partitioner::Given(vec![0, 2, 1])
            .fixed_owners(3, 2)
            .unwrap()
            .unwrap_err();
        assert!(e.contains("element 1 is given to rank 2, but there are 2 ranks"), "{e}");
        let e = Partitioner::Blocks { unit: 0 }.fixed_owners(3, 2).unwrap().unwrap_err();
        assert!(e.contains("unit must be at least 1"), "{e}");
        assert_eq!(Partitioner::Metis.fixed_owners(3, 2), None);
    }
}
