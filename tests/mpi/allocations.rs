//! A global allocator that, while armed, records the size of every Rust
//! allocation this process makes (MPI's, HDF5's and Scotch's C allocations
//! are not seen), so that a test can say what a distribution allocated.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Sizes recorded at most (the test fails if more were made).
const CAPACITY: usize = 1 << 20;

pub struct Recording;

static ARMED: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);
static SIZES: [AtomicUsize; CAPACITY] = [const { AtomicUsize::new(0) }; CAPACITY];

// SAFETY: every call goes to the system allocator; recording only stores
// into statics (it allocates nothing).
unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

fn record(size: usize) {
    if ARMED.load(Ordering::Relaxed) {
        let i = COUNT.fetch_add(1, Ordering::Relaxed);
        if i < CAPACITY {
            SIZES[i].store(size, Ordering::Relaxed);
        }
    }
}

/// The sizes of the allocations `f` makes, and what it returns.
pub fn sizes_during<R>(f: impl FnOnce() -> R) -> (Vec<usize>, R) {
    COUNT.store(0, Ordering::SeqCst);
    ARMED.store(true, Ordering::SeqCst);
    let out = f();
    ARMED.store(false, Ordering::SeqCst);
    let n = COUNT.load(Ordering::SeqCst);
    assert!(n <= CAPACITY, "{n} allocations, more than the {CAPACITY} recorded");
    (SIZES[..n].iter().map(|s| s.load(Ordering::Relaxed)).collect(), out)
}
