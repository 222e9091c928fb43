//! Launch planning for the device backends: `Launch` is one kernel launch over a run of
//! the plan's blocks, and `launches` gives one launch per block colour of a `Plan`, or
//! one over all blocks when the loop has no plan. `prepared.rs` uses it to set up a loop.
use op2_core::Plan;

/// One kernel launch: thread blocks `0..count` run units
/// `offset..offset + count` of the plan's block lists (or blocks
/// `0..count` of a loop without a plan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// First unit.
    pub offset: usize,
    /// Thread blocks.
    pub count: usize,
}

/// The launches of a loop over `n` elements: one per block colour of `plan`,
/// or one over all blocks when there is no plan.
pub fn launches(plan: Option<&Plan>, n: usize, block_size: usize) -> Vec<Launch> {
    let Some(p) = plan else {
        return vec![Launch {
            offset: 0,
            count: n.div_ceil(block_size),
        }];
    };
    let mut offset = 0;
    (0..p.ncolours())
        .map(|c| {
            let count = p.blocks_of_colour(c).len();
            offset += count;
            Launch {
                offset: offset - count,
                count,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use op2_core::{Conflict, Map, MapIndex, Reach, Set};

    #[test]
    fn one_launch_per_colour_covering_every_block_once() {
        let edges = Set::new("edges", 6).unwrap();
        let nodes = Set::new("nodes", 4).unwrap();
        // A ring: neighbouring edges share a node.
        let m = Map::new("ring", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3, 3, 0, 0, 2, 1, 3]).unwrap();
        let plan = Plan::build(
            0..6,
            1,
            &[Conflict {
                reach: Reach::Map(&m, MapIndex::All),
                group: 0,
            }],
        );
        let ls = launches(Some(&plan), 6, 1);
        assert_eq!(ls.len(), plan.ncolours());
        assert_eq!(ls.iter().map(|l| l.count).sum::<usize>(), plan.nblocks());
        for (l, next) in ls.iter().zip(ls.iter().skip(1)) {
            assert_eq!(l.offset + l.count, next.offset);
        }
        assert_eq!(launches(None, 10, 4), vec![Launch { offset: 0, count: 3 }]);
    }
}
