//! This process's place among the processes of its machine (its node): set
//! by `op2-mpi` when MPI starts (`MPI_Comm_split_type` over shared memory),
//! read by the device backends so that each rank of a node gets its own
//! device by default, as OP2 does: its node rank modulo the node's devices.

use std::sync::OnceLock;

/// A process's rank among the processes of its node, and how many there are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRank {
    /// This process's rank on its node, from 0.
    pub rank: usize,
    /// The processes on its node.
    pub ranks: usize,
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
}
