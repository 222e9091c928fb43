//! This process's place among the processes of its machine (its node): set
//! by `op2-mpi` when MPI starts (`MPI_Comm_split_type` over shared memory),
//! read by the device backends so that each rank of a node gets its own
//! device by default, as OP2 does: its node rank modulo the node's devices;
//! and by `rayon`, whose default threads are the rank's share of the node's
//! CPUs.

use std::sync::OnceLock;

/// A process's rank among the processes of its node, how many there are,
/// and the CPUs they share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRank {
    /// This process's rank on its node, from 0.
    pub rank: usize,
    /// The processes on its node.
    pub ranks: usize,
    /// The CPUs the node's processes may run on together (the union of
    /// their affinity masks), at least 1.
    pub cpus: usize,
}

impl NodeRank {
    /// This process's share of its node's CPUs: an equal share of
    /// [`cpus`](Self::cpus) among the node's ranks, no more than `own` (the
    /// CPUs this process may run on: one where ranks are bound a core
    /// each), at least 1.
    pub fn cpu_share(&self, own: usize) -> usize {
        (self.cpus / self.ranks.max(1)).min(own).max(1)
    }
}

static NODE_RANK: OnceLock<NodeRank> = OnceLock::new();

/// Records this process's node rank (the first call wins: MPI starts once).
pub fn set_node_rank(rank: NodeRank) {
    let _ = NODE_RANK.set(rank);
}

/// This process's node rank, if MPI has started (see [`set_node_rank`]).
pub fn node_rank() -> Option<NodeRank> {
    NODE_RANK.get().copied()
}

/// The device a process takes by default among `devices`: its node rank
/// modulo their number (the first when the rank is unknown, or there are
/// none, for the caller to report).
pub fn default_device_index(node_rank: Option<usize>, devices: usize) -> usize {
    match (node_rank, devices) {
        (Some(r), d) if d > 0 => r % d,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_a_node_share_its_devices_round_robin() {
        let picks: Vec<usize> = (0..5).map(|r| default_device_index(Some(r), 2)).collect();
        assert_eq!(picks, [0, 1, 0, 1, 0]);
        // Two ranks and one device (PoCL): both on it.
        assert_eq!(
            (default_device_index(Some(0), 1), default_device_index(Some(1), 1)),
            (0, 0)
        );
        assert_eq!(default_device_index(None, 4), 0, "no MPI: the first device");
        assert_eq!(default_device_index(Some(3), 0), 0, "no devices: the caller reports it");
    }

    #[test]
    fn ranks_of_a_node_share_its_cpus() {
        let node = |ranks, cpus| NodeRank { rank: 0, ranks, cpus };
        assert_eq!(node(4, 16).cpu_share(16), 4, "unbound: an equal share");
        assert_eq!(node(4, 16).cpu_share(1), 1, "bound to one core each");
        assert_eq!(node(3, 16).cpu_share(16), 5, "rounded down");
        assert_eq!(node(4, 2).cpu_share(2), 1, "more ranks than CPUs: one thread each");
        assert_eq!(node(1, 16).cpu_share(16), 16);
    }
}
