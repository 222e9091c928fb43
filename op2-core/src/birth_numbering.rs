//! How children get their ids. Within one round of births (one
//! `op2_agents::Lifecycle::apply`), the children are
//! numbered from the set's next id in the order of their parents' ids. That
//! order does not depend on where the parents sit in memory (agents sorted
//! by place, thread counts) nor on which process holds them: a distributed
//! run installs a [`BirthNumbering`] that ranks every process's parents
//! together, and each child gets the id it would get on one process.

use crate::Result;

/// Numbers one round of children across processes (installed on a dynamic
/// set with `op2_agents::AgentSet::number_births_with`,
/// e.g. by a distributed agent domain).
///
/// The rule every implementation follows, so that ids do not depend on the
/// process count: with `next` the largest next id of all processes and `P`
/// all processes' parents of this round, the child of parent `p` gets
/// `next + (the number of parents in P with an id below p's)`, and the next
/// id afterwards is `next + |P|`.
///
/// It is collective: every process calls it once per round, in the same
/// order, even a process that failed before numbering (then with `parents`
/// `None`, so that the others learn of the failure and stop instead of
/// waiting).
pub trait BirthNumbering: Send + Sync {
    /// Numbers this process's `parents` (their ids, in the order the
    /// children are appended), writing each one's child id into `children`
    /// (cleared first, one per parent); `next` is this process's next id.
    /// Returns the next id after the round.
    ///
    /// # Errors
    /// An error naming the process that failed (every process returns
    /// one when any passes `None` or fails).
    fn number(&self, set: &str, parents: Option<&[u64]>, next: u64, children: &mut Vec<u64>) -> Result<u64>;
}

/// Numbers one process's children by their parents' ids: the child of the
/// parent with the `k`-th smallest id gets `next + k`. Returns the next id
/// afterwards.
pub fn number_by_parent_id(parents: &[u64], next: u64, children: &mut Vec<u64>) -> u64 {
    children.clear();
    if parents.windows(2).all(|w| w[0] < w[1]) {
        // Parents in id order (ids ascend unless agents were sorted).
        children.extend(next..next + parents.len() as u64);
    } else {
        let mut order: Vec<u32> = (0..parents.len() as u32).collect();
        order.sort_unstable_by_key(|&k| parents[k as usize]);
        children.resize(parents.len(), 0);
        for (rank, &k) in order.iter().enumerate() {
            children[k as usize] = next + rank as u64;
        }
    }
    next + parents.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_follow_their_parents_ids_not_their_places() {
        let mut out = Vec::new();
        assert_eq!(number_by_parent_id(&[3, 9, 12], 20, &mut out), 23);
        assert_eq!(out, [20, 21, 22]);
        assert_eq!(number_by_parent_id(&[12, 3, 9], 20, &mut out), 23);
        assert_eq!(out, [22, 20, 21]);
        assert_eq!(number_by_parent_id(&[], 5, &mut out), 5);
        assert!(out.is_empty());
    }
}
