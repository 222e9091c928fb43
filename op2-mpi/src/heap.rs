//! Freed heap memory given back to the system between the stages of a
//! distribution. Distributing a mesh from blocks frees large transient
//! tables (the partitioner's graph and its own workspace, the rows in
//! flight); glibc keeps such memory mapped when its adaptive threshold has
//! moved large blocks onto the heap, and the tables made next land
//! between the holes, so a rank's resident peak grew by what it had freed.
//! Trimming after each stage keeps the peak at what the rank holds.

/// Returns the heap's free pages to the system (glibc's `malloc_trim`);
/// nothing elsewhere.
pub(crate) fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages; it touches no live
    // allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}
