//! How an `AgentDomain` shares its agents: when it cuts its grid again.

/// How an [`AgentDomain`](super::AgentDomain) shares its agents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DomainOptions {
    pub(super) rebalance_above: f64,
}

impl Default for DomainOptions {
    /// Rebalances when the busiest rank holds 1.25 x the mean.
    fn default() -> DomainOptions {
        DomainOptions { rebalance_above: 1.25 }
    }
}

impl DomainOptions {
    /// Cut the domain again when the busiest rank holds more than `ratio`
    /// times the mean number of agents (at least 1; `f64::INFINITY`: never
    /// after the first cut). When a cut cannot reach the ratio (agents
    /// crowded into a few bins), the next try waits until the imbalance
    /// is worse than that cut's, or for 2, 4, ... 64 exchanges.
    pub fn rebalance_above(self, ratio: f64) -> DomainOptions {
        DomainOptions { rebalance_above: ratio }
    }
}
