//! Messages of one rank on stderr, written whole: with several ranks writing
//! to one terminal or log, a message written in pieces (as `eprintln!` and the
//! default panic hook do) can be cut mid-line by another rank's.

use std::fmt;
use std::io::Write as _;

/// `message` with every line prefixed by `[rank r/size] ` and ending in a
/// newline: what [`write_rank_message`] writes.
pub fn rank_message(rank: usize, size: usize, message: &dyn fmt::Display) -> String {
    let text = message.to_string();
    let prefix = format!("[rank {rank}/{size}] ");
    let mut out = String::with_capacity(text.len() + prefix.len() + 1);
    for line in text.lines() {
        out.push_str(&prefix);
        out.push_str(line);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(prefix.trim_end());
        out.push('\n');
    }
    out
}

/// Writes `message` to stderr as one `write_all` on the locked handle, every
/// line prefixed by `[rank r/size] `, so that messages of different ranks (and
/// threads) never interleave mid-line.
pub fn write_rank_message(rank: usize, size: usize, message: &dyn fmt::Display) -> std::io::Result<()> {
    let text = rank_message(rank, size, message);
    let mut err = std::io::stderr().lock();
    err.write_all(text.as_bytes())?;
    err.flush()
}

/// The whole report of a panic, as the default hook prints it (thread,
/// location, message, backtrace or the hint to get one), then `then`.
#[cfg(feature = "mpi")]
pub(crate) fn panic_report(info: &std::panic::PanicHookInfo<'_>, then: &str) -> String {
    let thread = std::thread::current();
    let backtrace = std::backtrace::Backtrace::capture();
    let trace = match backtrace.status() {
        std::backtrace::BacktraceStatus::Captured => format!("stack backtrace:\n{backtrace}\n"),
        _ => "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n".to_string(),
    };
    format_panic(thread.name(), info.location(), info.payload(), &trace, then)
}

#[cfg(any(feature = "mpi", test))]
fn format_panic(
    thread: Option<&str>,
    location: Option<&std::panic::Location<'_>>,
    payload: &(dyn std::any::Any + Send),
    trace: &str,
    then: &str,
) -> String {
    let name = thread.unwrap_or("<unnamed>");
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("Box<dyn Any>");
    let at = location.map(|l| format!(" at {l}")).unwrap_or_default();
    format!("thread '{name}' panicked{at}:\n{what}\n{trace}{then}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_prefixed_and_the_message_ends_in_a_newline() {
        assert_eq!(rank_message(2, 4, &"error: bad map"), "[rank 2/4] error: bad map\n");
        assert_eq!(
            rank_message(0, 3, &format_args!("a {}\nb\n", 1)),
            "[rank 0/3] a 1\n[rank 0/3] b\n"
        );
        assert_eq!(rank_message(1, 2, &""), "[rank 1/2]\n");
    }

    #[test]
    fn panic_reports_name_thread_location_and_message() {
        let here = std::panic::Location::caller();
        let payload: Box<dyn std::any::Any + Send> = Box::new(format!("bad value {}", 7));
        let report = format_panic(Some("worker"), Some(here), &*payload, "note: hint\n", "aborting");
        let want = format!("thread 'worker' panicked at {here}:\nbad value 7\nnote: hint\naborting");
        assert_eq!(report, want);
        let payload: Box<dyn std::any::Any + Send> = Box::new("static");
        let report = format_panic(None, None, &*payload, "", "then");
        assert_eq!(report, "thread '<unnamed>' panicked:\nstatic\nthen");
        // Whole, with the rank on every line.
        let text = rank_message(1, 2, &report);
        assert_eq!(
            text,
            "[rank 1/2] thread '<unnamed>' panicked:\n[rank 1/2] static\n[rank 1/2] then\n"
        );
    }
}
