//! Device launches and host waits, counted per host thread: a loop (or a list's build)
//! runs on the thread that calls it, so the counts before and after it tell exactly
//! what it asked of the device, whatever other threads do meanwhile. The device
//! backends count each launch, each wait for the queue and each copy (a copy between
//! host and device waits for the work queued before it); the runtime and the agent
//! layer put the differences in the timing summary ([`DeviceCounts`]).
use std::cell::Cell;

use crate::DeviceCounts;

thread_local! {
    static COUNTS: Cell<DeviceCounts> = const { Cell::new(DeviceCounts { launches: 0, host_waits: 0 }) };
}

/// What this thread has asked of devices so far.
pub fn this_thread() -> DeviceCounts {
    COUNTS.with(Cell::get)
}

/// Counts one kernel launch by this thread (device backends call it).
pub fn count_launch() {
    COUNTS.with(|c| {
        let mut n = c.get();
        n.launches += 1;
        c.set(n);
    });
}

/// Counts one wait of this thread for a device: a finish, or a copy
/// between host and device (device backends call it).
pub fn count_wait() {
    COUNTS.with(|c| {
        let mut n = c.get();
        n.host_waits += 1;
        c.set(n);
    });
}
