//! The host-device transfers of the carriers a device runtime's loops used,
//! by name, for the timing summary.
//!
//! Why counters of dropped carriers are folded away: agent models make a new
//! ragged map every step, and a log that kept each one's counter would grow
//! by two entries a step (and scan them all at every loop). A counter only
//! the log still holds belongs to a dropped carrier: its totals join those
//! of its name, and the counter goes.

use std::sync::Arc;

use op2_core::{TransferCounter, TransferStats};

/// Transfer counters by carrier name: live ones, and the totals of dropped
/// carriers.
#[derive(Default)]
pub(crate) struct TransferLog {
    live: Vec<(String, Arc<TransferCounter>)>,
    retired: Vec<(String, TransferStats)>,
}

impl TransferLog {
    /// Records that a loop used the carrier `name` counting into `counter`.
    pub(crate) fn note(&mut self, name: &str, counter: &Arc<TransferCounter>) {
        if self.live.iter().any(|(_, c)| Arc::ptr_eq(c, counter)) {
            return;
        }
        self.retire_dropped();
        self.live.push((name.to_string(), counter.clone()));
    }

    /// Folds the counters of dropped carriers into their names' totals.
    fn retire_dropped(&mut self) {
        let mut k = 0;
        while k < self.live.len() {
            if Arc::strong_count(&self.live[k].1) > 1 {
                k += 1;
                continue;
            }
            let (name, counter) = self.live.remove(k);
            let stats = counter.stats();
            match self.retired.iter_mut().find(|(n, _)| *n == name) {
                Some((_, total)) => *total = add(*total, stats),
                None => self.retired.push((name, stats)),
            }
        }
    }

    /// Every name's transfers (live and dropped carriers of one name
    /// together), names in first-use order of the live ones, then the rest.
    pub(crate) fn rows(&self) -> Vec<(String, TransferStats)> {
        let mut rows: Vec<(String, TransferStats)> = Vec::new();
        for (name, stats) in self
            .live
            .iter()
            .map(|(n, c)| (n, c.stats()))
            .chain(self.retired.iter().map(|(n, s)| (n, *s)))
        {
            match rows.iter_mut().find(|(n, _)| n == name) {
                Some((_, total)) => *total = add(*total, stats),
                None => rows.push((name.clone(), stats)),
            }
        }
        rows
    }

    /// Counters held now (live carriers only).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.live.len()
    }
}

fn add(a: TransferStats, b: TransferStats) -> TransferStats {
    TransferStats {
        uploads: a.uploads + b.uploads,
        downloads: a.downloads + b.downloads,
        bytes_up: a.bytes_up + b.bytes_up,
        bytes_down: a.bytes_down + b.bytes_down,
        halo_exchanges: a.halo_exchanges + b.halo_exchanges,
        halo_bytes_down: a.halo_bytes_down + b.halo_bytes_down,
        halo_bytes_up: a.halo_bytes_up + b.halo_bytes_up,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_carriers_fold_into_their_names() {
        let mut log = TransferLog::default();
        let kept = Arc::new(TransferCounter::default());
        kept.count_upload(8);
        log.note("x", &kept);
        for step in 0..100 {
            let brief = Arc::new(TransferCounter::default());
            brief.count_upload(4);
            log.note("links", &brief);
            log.note("links", &brief);
            drop(brief);
            assert!(log.held() <= 2, "step {step}: {} counters held", log.held());
        }
        let rows = log.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].0.as_str(), rows[0].1.uploads, rows[0].1.bytes_up), ("x", 1, 8));
        assert_eq!(
            (rows[1].0.as_str(), rows[1].1.uploads, rows[1].1.bytes_up),
            ("links", 100, 400)
        );
    }
}
