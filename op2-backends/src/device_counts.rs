//! Device launches and host waits, counted per host thread: a loop runs on the thread
//! that calls it, so the counts before and after a loop tell exactly what that loop
//! asked of the device, whatever other threads do meanwhile. The `Runtime` puts them in
//! the timing summary (`DeviceCounts`).
use std::cell::Cell;

use op2_core::DeviceCounts;

thread_local! {
    static COUNTS: Cell<DeviceCounts> = const { Cell::new(DeviceCounts { launches: 0, host_waits: 0 }) };
}

/// What this thread has asked of devices so far.
pub fn this_thread() -> DeviceCounts {
    COUNTS.with(Cell::get)
}

/// Counts one kernel launch by this thread.
#[cfg(any(feature = "opencl", feature = "cuda"))]
pub(crate) fn count_launch() {
    COUNTS.with(|c| {
        let mut n = c.get();
        n.launches += 1;
        c.set(n);
    });
}

/// Counts one wait of this thread for a device.
#[cfg(any(feature = "opencl", feature = "cuda"))]
pub(crate) fn count_wait() {
    COUNTS.with(|c| {
        let mut n = c.get();
        n.host_waits += 1;
        c.set(n);
    });
}
