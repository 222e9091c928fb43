//! Loop timing: `Timings` collects, thread-safely, each loop's calls, seconds, bytes
//! moved and device launches and host waits (`LoopTiming`, `DeviceCounts`), plus the
//! exchanges of distributed agents (`ExchangeTiming`) and notes. `TimingSummary` prints them as a table with device transfers and fallbacks.
//! `estimate_bytes` guesses a loop's memory traffic as OP2 does. The `Runtime` in
//! op2-backends records into it and users read the summary.
use std::fmt;
use std::sync::Mutex;

use crate::{Access, ArgData, ArgRoute, MapArg, MapIndex, ParLoop};

/// Accumulated timing of one loop (all calls of one kernel).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopTiming {
    /// The loop's (kernel's) name.
    pub name: String,
    /// Number of calls.
    pub calls: u64,
    /// Total wall-clock seconds.
    pub seconds: f64,
    /// Estimated bytes the last call moved (see [`estimate_bytes`]); a
    /// name reused over sets of other sizes moves other amounts per call:
    /// [`LoopTiming::bytes`] sums them.
    pub bytes_per_call: u64,
    /// Estimated bytes moved over all calls.
    pub bytes_total: u64,
    /// Halo bytes received over all calls (distributed runs).
    pub halo_bytes: u64,
    /// Seconds spent starting and waiting for halo exchanges (distributed runs).
    pub exchange_seconds: f64,
    /// Device launches and host waits over all calls (device backends).
    pub device: DeviceCounts,
}

/// What a loop asked of a device: kernel launches (the loop's own and the
/// folds of its reductions) and the times the host waited for the device
/// to finish. Zero on host backends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounts {
    /// Kernel launches.
    pub launches: u64,
    /// Times the host waited for the device (a finish, a download).
    pub host_waits: u64,
}

impl DeviceCounts {
    /// What happened between `earlier` and `self` (counts that only grow).
    pub fn since(self, earlier: DeviceCounts) -> DeviceCounts {
        DeviceCounts {
            launches: self.launches - earlier.launches,
            host_waits: self.host_waits - earlier.host_waits,
        }
    }
}

impl LoopTiming {
    /// Milliseconds per call.
    pub fn ms_per_call(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            1e3 * self.seconds / self.calls as f64
        }
    }

    /// Estimated bytes moved over all calls.
    pub fn bytes(&self) -> f64 {
        self.bytes_total as f64
    }

    /// Estimated bytes moved per call, the mean over all calls.
    pub fn mean_bytes_per_call(&self) -> f64 {
        self.bytes() / self.calls.max(1) as f64
    }

    /// Achieved bandwidth in GB/s (10^9 bytes).
    pub fn gbytes_per_s(&self) -> f64 {
        if self.seconds == 0.0 {
            0.0
        } else {
            self.bytes() / self.seconds / 1e9
        }
    }
}

/// Accumulated timing of one exchange between processes that is not a
/// loop's halo: agents migrating to the rank that owns their place, ghost
/// messages sent to the ranks that read them (op2-mpi's agent domains).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExchangeTiming {
    /// What was exchanged (e.g. `migrate agents`, `ghosts location`).
    pub name: String,
    /// Number of exchanges.
    pub calls: u64,
    /// Total wall-clock seconds this process spent in them (waiting for
    /// the others included; transfers left in flight while other work ran
    /// are not counted).
    pub seconds: f64,
    /// Records (agents, messages) this process sent.
    pub records_sent: u64,
    /// Bytes this process sent.
    pub bytes_sent: u64,
}

impl ExchangeTiming {
    /// Milliseconds per exchange.
    pub fn ms_per_call(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            1e3 * self.seconds / self.calls as f64
        }
    }
}

/// Per-loop timings of a runtime, in first-call order, with the exchanges
/// of distributed agents and their notes. Thread-safe.
#[derive(Debug, Default)]
pub struct Timings {
    rows: Mutex<Vec<LoopTiming>>,
    exchanges: Mutex<Vec<ExchangeTiming>>,
    /// One line per key, the latest kept (e.g. a domain's balance).
    notes: Mutex<Vec<(String, String)>>,
}

impl Timings {
    /// Adds one call of the loop `name`.
    pub fn record(&self, name: &str, seconds: f64, bytes: u64) {
        self.record_loop(name, seconds, bytes, HaloTraffic::default(), DeviceCounts::default());
    }

    /// Adds one call of the loop `name`, with its halo traffic and what it
    /// asked of a device.
    pub fn record_loop(&self, name: &str, seconds: f64, bytes: u64, halo: HaloTraffic, device: DeviceCounts) {
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        match rows.iter_mut().find(|r| r.name == name) {
            Some(r) => {
                r.calls += 1;
                r.seconds += seconds;
                r.bytes_per_call = bytes;
                r.bytes_total = r.bytes_total.saturating_add(bytes);
                r.halo_bytes += halo.bytes;
                r.exchange_seconds += halo.seconds;
                r.device.launches += device.launches;
                r.device.host_waits += device.host_waits;
            }
            None => rows.push(LoopTiming {
                name: name.to_string(),
                calls: 1,
                seconds,
                bytes_per_call: bytes,
                bytes_total: bytes,
                halo_bytes: halo.bytes,
                exchange_seconds: halo.seconds,
                device,
            }),
        }
    }

    /// Adds one exchange `name` between processes: the seconds it took
    /// here, and the records and bytes this process sent.
    pub fn record_exchange(&self, name: &str, seconds: f64, records: u64, bytes: u64) {
        let mut rows = self.exchanges.lock().unwrap_or_else(|p| p.into_inner());
        let row = match rows.iter().position(|r| r.name == name) {
            Some(i) => &mut rows[i],
            None => {
                rows.push(ExchangeTiming {
                    name: name.to_string(),
                    ..ExchangeTiming::default()
                });
                rows.last_mut().expect("just pushed")
            }
        };
        row.calls += 1;
        row.seconds += seconds;
        row.records_sent += records;
        row.bytes_sent += bytes;
    }

    /// Sets the note `key` of the summary to `line` (replacing the last one).
    pub fn set_note(&self, key: &str, line: String) {
        let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        match notes.iter_mut().find(|(k, _)| k == key) {
            Some(n) => n.1 = line,
            None => notes.push((key.to_string(), line)),
        }
    }

    /// A snapshot of the rows.
    pub fn rows(&self) -> Vec<LoopTiming> {
        self.rows.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A snapshot of the exchanges.
    pub fn exchanges(&self) -> Vec<ExchangeTiming> {
        self.exchanges.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Forgets everything recorded so far (the notes stay: they describe
    /// the present).
    pub fn reset(&self) {
        self.rows.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.exchanges.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The rows as a printable table.
    pub fn summary(&self) -> TimingSummary {
        let notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        TimingSummary {
            loops: self.rows(),
            exchanges: self.exchanges(),
            notes: notes.iter().map(|(_, line)| line.clone()).collect(),
            transfers: Vec::new(),
            fallbacks: Vec::new(),
        }
    }
}

/// Halo traffic of one call of a distributed loop.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HaloTraffic {
    /// Bytes received into halos.
    pub bytes: u64,
    /// Seconds spent starting exchanges and waiting for them.
    pub seconds: f64,
}

/// A printable timing table: one row per loop with calls, total seconds,
/// milliseconds per call, bytes moved per call and GB/s; then, for
/// distributed agents, their exchanges and notes (balance, rebalances);
/// then, for device backends, host-device transfers per Dat, Global and
/// Map.
#[derive(Clone, Debug)]
pub struct TimingSummary {
    /// One row per loop.
    pub loops: Vec<LoopTiming>,
    /// One row per exchange of distributed agents or messages.
    pub exchanges: Vec<ExchangeTiming>,
    /// Lines about the run (e.g. an agent domain's balance).
    pub notes: Vec<String>,
    /// Transfers per carrier (by name) that loops of the runtime used.
    pub transfers: Vec<(String, crate::TransferStats)>,
    /// What the backend did otherwise than asked, one line each (see
    /// [`Executor::fallbacks`](crate::Executor::fallbacks)).
    pub fallbacks: Vec<String>,
}

impl fmt::Display for TimingSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<16} {:>8} {:>10} {:>10} {:>12} {:>8}",
            "loop", "calls", "total s", "ms/call", "MB/call", "GB/s"
        )?;
        let mut total = 0.0;
        for r in &self.loops {
            total += r.seconds;
            // Work whose traffic is not estimated (a list's build) has none.
            let (mb, gbs) = match r.bytes_total {
                0 => ("-".to_string(), "-".to_string()),
                _ => (
                    format!("{:.3}", r.mean_bytes_per_call() / 1e6),
                    format!("{:.2}", r.gbytes_per_s()),
                ),
            };
            writeln!(
                f,
                "{:<16} {:>8} {:>10.4} {:>10.4} {:>12} {:>8}",
                r.name,
                r.calls,
                r.seconds,
                r.ms_per_call(),
                mb,
                gbs
            )?;
        }
        write!(f, "{:<16} {:>8} {:>10.4}", "total", "", total)?;
        if !self.exchanges.is_empty() {
            write!(
                f,
                "\n\n{:<16} {:>8} {:>10} {:>10} {:>12} {:>10}",
                "exchanges", "calls", "total s", "ms/call", "MB sent", "sent"
            )?;
            for r in &self.exchanges {
                write!(
                    f,
                    "\n{:<16} {:>8} {:>10.4} {:>10.4} {:>12.3} {:>10}",
                    r.name,
                    r.calls,
                    r.seconds,
                    r.ms_per_call(),
                    r.bytes_sent as f64 / 1e6,
                    r.records_sent
                )?;
            }
        }
        for note in &self.notes {
            write!(f, "\n{note}")?;
        }
        if self.loops.iter().any(|r| r.halo_bytes > 0 || r.exchange_seconds > 0.0) {
            write!(
                f,
                "\n\n{:<16} {:>14} {:>16}",
                "halo exchanges", "MB received", "exchange s"
            )?;
            for r in &self.loops {
                write!(
                    f,
                    "\n{:<16} {:>14.3} {:>16.4}",
                    r.name,
                    r.halo_bytes as f64 / 1e6,
                    r.exchange_seconds
                )?;
            }
        }
        if self.loops.iter().any(|r| r.device.launches > 0) {
            write!(
                f,
                "\n\n{:<16} {:>14} {:>16}",
                "device", "launches/call", "host waits/call"
            )?;
            for r in &self.loops {
                let per_call = |n: u64| n as f64 / r.calls.max(1) as f64;
                write!(
                    f,
                    "\n{:<16} {:>14.2} {:>16.2}",
                    r.name,
                    per_call(r.device.launches),
                    per_call(r.device.host_waits)
                )?;
            }
        }
        if !self.transfers.is_empty() {
            writeln!(f, "\n")?;
            write!(
                f,
                "{:<16} {:>8} {:>10} {:>10} {:>10}",
                "transfers", "uploads", "MB up", "downloads", "MB down"
            )?;
            // Halos packed on a device: their records apart from whole copies.
            let halos = self.transfers.iter().any(|(_, t)| t.halo_exchanges > 0);
            if halos {
                write!(f, " {:>10} {:>13} {:>11}", "halo exch.", "halo MB down", "halo MB up")?;
            }
            for (name, t) in &self.transfers {
                write!(
                    f,
                    "\n{:<16} {:>8} {:>10.3} {:>10} {:>10.3}",
                    name,
                    t.uploads,
                    t.bytes_up as f64 / 1e6,
                    t.downloads,
                    t.bytes_down as f64 / 1e6
                )?;
                if halos {
                    write!(
                        f,
                        " {:>10} {:>13.3} {:>11.3}",
                        t.halo_exchanges,
                        t.halo_bytes_down as f64 / 1e6,
                        t.halo_bytes_up as f64 / 1e6
                    )?;
                }
            }
        }
        for note in &self.fallbacks {
            write!(f, "\nnote: {note}")?;
        }
        Ok(())
    }
}

/// How many targets the elements a loop visits have in all through a ragged map.
fn ragged_targets(r: &crate::RaggedMap, lp: &ParLoop<'_>) -> usize {
    let o = r.offsets();
    let range = &lp.range;
    match lp.elements() {
        Some(ix) => ix[range.clone()].iter().map(|&e| r.degree(e as usize)).sum(),
        None => match (o.get(range.start), o.get(range.end)) {
            (Some(&a), Some(&b)) => (b - a) as usize,
            _ => 0,
        },
    }
}

/// Bytes a loop moves, estimated as OP2 does: each distinct Dat once over the
/// elements it touches, twice when it is both read and written (RW, INC, MIN,
/// MAX), plus each distinct map table (and a subset's indices). A Dat reached
/// through a map touches at most `elements visited x entries used` elements,
/// and at most its whole set.
pub fn estimate_bytes(lp: &ParLoop<'_>) -> u64 {
    let mut maps_seen: Vec<u64> = Vec::new();
    // A subset's indices are read once, like a map of arity 1.
    let mut bytes = if lp.subset.is_some() {
        lp.range.len() as u64 * 4
    } else {
        0
    };
    for (index, arg) in lp.args.iter().enumerate() {
        match arg.route {
            ArgRoute::Map(m) if !maps_seen.contains(&m.map.id()) => {
                maps_seen.push(m.map.id());
                bytes += (lp.range.len() * m.map.arity() * 4) as u64;
            }
            ArgRoute::Ragged(r) if !maps_seen.contains(&r.id()) => {
                maps_seen.push(r.id());
                // The offsets of the range and its targets.
                bytes += ((lp.range.len() + 1 + ragged_targets(r, lp)) * 4) as u64;
            }
            _ => {}
        }
        if lp.args[..index].iter().any(|a| a.data.id() == arg.data.id()) {
            continue;
        }
        let elems = match arg.data {
            ArgData::Global(_) => 1,
            ArgData::Dat(d) => {
                let mut reached = 0;
                for a in lp.args.iter().filter(|a| a.data.id() == arg.data.id()) {
                    reached += match a.route {
                        ArgRoute::Direct | ArgRoute::Whole(_) => lp.range.len(),
                        ArgRoute::Ragged(r) => ragged_targets(r, lp),
                        ArgRoute::Map(MapArg {
                            index: MapIndex::Entry(_),
                            ..
                        }) => lp.range.len(),
                        ArgRoute::Map(MapArg {
                            map,
                            index: MapIndex::All,
                            ..
                        }) => lp.range.len() * map.arity(),
                    };
                }
                reached.min(d.set().size())
            }
        };
        let once = (elems * arg.data.dim() * arg.data.scalar().size()) as u64;
        let times = match arg.access {
            Access::Read | Access::Write => 1,
            Access::Rw | Access::Inc | Access::Min | Access::Max => 2,
        };
        bytes += once * times;
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_and_notes_join_the_summary() {
        let t = Timings::default();
        t.record("build list", 0.002, 0);
        t.record_exchange("migrate agents", 0.004, 10, 240);
        t.record_exchange("ghosts list", 0.001, 3, 72);
        t.record_exchange("migrate agents", 0.002, 5, 120);
        t.set_note("domain", "imbalance 1.500".into());
        t.set_note("domain", "imbalance 1.010".into());
        let s = t.summary();
        let m = &s.exchanges[0];
        assert_eq!(
            (m.name.as_str(), m.calls, m.records_sent, m.bytes_sent),
            ("migrate agents", 2, 15, 360)
        );
        assert!((m.ms_per_call() - 3.0).abs() < 1e-9);
        assert_eq!(s.notes, ["imbalance 1.010"]);
        let text = s.to_string();
        assert!(
            text.contains("ghosts list") && text.contains("imbalance 1.010"),
            "{text}"
        );
        assert!(!text.contains("1.500"), "the note was replaced: {text}");
        // Untimed traffic shows as a dash, not as 0 GB/s.
        let build = text.lines().find(|l| l.starts_with("build list")).unwrap();
        assert!(build.trim_end().ends_with('-'), "{build}");
        t.reset();
        let s = t.summary();
        assert!(s.exchanges.is_empty() && s.loops.is_empty());
        assert_eq!(s.notes.len(), 1, "notes describe the present and stay");
    }

    #[test]
    fn records_accumulate_in_first_call_order() {
        let t = Timings::default();
        t.record("b", 0.5, 1000);
        t.record("a", 0.25, 10);
        t.record("b", 0.5, 1000);
        let rows = t.rows();
        assert_eq!(rows[0].name, "b");
        assert_eq!(rows[0].calls, 2);
        assert!((rows[0].ms_per_call() - 500.0).abs() < 1e-9);
        assert!((rows[0].gbytes_per_s() - 2e-6).abs() < 1e-15);
        assert_eq!(rows[1].calls, 1);
        // One name over sets of two sizes: the bytes of each call count.
        t.record("c", 1.0, 100);
        t.record("c", 1.0, 300);
        let c = &t.rows()[2];
        assert_eq!((c.bytes(), c.bytes_per_call), (400.0, 300));
        assert_eq!(c.mean_bytes_per_call(), 200.0);
        assert!((c.gbytes_per_s() - 2e-7).abs() < 1e-18);
        let table = t.summary().to_string();
        assert!(table.contains("GB/s") && table.lines().count() == 5, "{table}");
        let mut summary = t.summary();
        summary.fallbacks.push("loop `b`: coloured".to_string());
        let table = summary.to_string();
        assert!(table.ends_with("\nnote: loop `b`: coloured"), "{table}");
        t.reset();
        assert!(t.rows().is_empty());
    }
}
