//! What an `AgentDomain` did: its exchanges' counts, bytes and times, and
//! its balance, as the timing summary shows them.

/// What an [`AgentDomain`](super::AgentDomain) has done on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DomainStats {
    /// Migrations run (one per [`AgentDomain::migrate_on`](super::AgentDomain::migrate_on), each
    /// [`AgentDomain::exchange_on`](super::AgentDomain::exchange_on) included).
    pub exchanges: u64,
    /// Decompositions made (the first included).
    pub rebalances: u64,
    /// The busiest rank's agents over the mean, at the last exchange
    /// (before it moved agents).
    pub imbalance: f64,
    /// Agents this rank sent to others, over all exchanges.
    pub agents_sent: u64,
    /// Bytes of agents this rank sent, over all exchanges.
    pub migrated_bytes: u64,
    /// Ghost messages this rank sent, over all exchanges.
    pub ghosts_sent: u64,
    /// Bytes of ghost messages this rank sent, over all exchanges.
    pub ghost_bytes: u64,
    /// Bytes of agents sent at the last migration.
    pub last_migrated_bytes: u64,
    /// Bytes of ghost messages sent since the last migration.
    pub last_ghost_bytes: u64,
    /// Times a receive buffer grew (past its largest so far).
    pub buffer_growths: u64,
    /// Migrations of a set (one per set per [`AgentDomain::migrate_on`](super::AgentDomain::migrate_on)) in
    /// which some rank sent agents past its neighbours (the ranks next to
    /// its box), as the first one after a cut often does: every rank then
    /// swapped headers with every rank, where the others' go to
    /// neighbours alone.
    pub migrations_beyond_neighbours: u64,
    /// Seconds of work that ran while ghost messages were in flight, over
    /// all exchanges: a build's own (gathering its senders' ids,
    /// [`AgentDomain::build_on`](super::AgentDomain::build_on)), or the loop over the agents that read
    /// no ghost ([`AgentDomain::build_overlapped_on`](super::AgentDomain::build_overlapped_on)).
    pub overlapped_seconds: f64,
    /// Seconds spent waiting for ghost messages after that work, over all
    /// exchanges: what the overlap did not hide (a run with and one
    /// without [`AgentDomain::build_overlapped_on`](super::AgentDomain::build_overlapped_on) tell what it saves).
    pub ghost_wait_seconds: f64,
}

impl DomainStats {
    /// The stats, then the bytes migrated and of ghosts per step over
    /// `steps` steps: an example's closing line.
    pub fn per_step(&self, steps: u64) -> String {
        let per_step = |b: u64| b as f64 / steps.max(1) as f64 / 1e3;
        format!(
            "{self}; per step {:.1} kB migrated, {:.1} kB of ghosts",
            per_step(self.migrated_bytes),
            per_step(self.ghost_bytes)
        )
    }
}

impl std::fmt::Display for DomainStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} exchanges, {} rebalances, imbalance {:.3}; sent {} agents ({} B) and {} ghost messages ({} B); {} buffer growths; {:.1} ms of work while ghosts travelled, {:.1} ms waiting for them",
            self.exchanges,
            self.rebalances,
            self.imbalance,
            self.agents_sent,
            self.migrated_bytes,
            self.ghosts_sent,
            self.ghost_bytes,
            self.buffer_growths,
            1e3 * self.overlapped_seconds,
            1e3 * self.ghost_wait_seconds
        )
    }
}
