//! Process-wide unique ids for carriers (sets, maps, data). Ids are never reused, unlike
//! addresses, so caches keyed by them (plans, device state) cannot mistake a dropped
//! carrier for a new one.
use std::sync::atomic::{AtomicU64, Ordering};

/// A process-wide unique identity for a carrier, never reused (unlike an
/// address), so caches keyed by it cannot confuse a dropped set or map with a
/// new one.
pub(crate) fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
