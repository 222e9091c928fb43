//! The grid reader allocates in proportion to the file it reads, never to
//! what the file's header claims: each reader call here is measured by a
//! counting allocator (per thread, so parallel tests do not mix).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

use op2_airfoil::{grid_file, AirfoilError};

thread_local! {
    /// Bytes this thread has asked the allocator for.
    static REQUESTED: Cell<usize> = const { Cell::new(0) };
}

/// The system allocator, counting each thread's requests (failed ones too).
struct Counting;

fn count(bytes: usize) {
    let _ = REQUESTED.try_with(|r| r.set(r.get().saturating_add(bytes)));
}

// SAFETY: every call is passed unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Writes `text` to a temporary file, reads it back as a grid, and returns
/// the result with the bytes the read asked the allocator for.
fn read_counting(name: &str, text: &str) -> (Result<op2_airfoil::Mesh, AirfoilError>, usize) {
    let path: PathBuf = std::env::temp_dir().join(format!("op2-airfoil-alloc-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let before = REQUESTED.with(Cell::get);
    let result = grid_file::read(&path);
    let requested = REQUESTED.with(Cell::get) - before;
    std::fs::remove_file(&path).ok();
    (result, requested)
}

/// The reader's fixed costs: a 64 KiB read buffer, a line buffer, messages.
const FIXED: usize = 80 << 10;

#[track_caller]
fn assert_parse_error(result: Result<op2_airfoil::Mesh, AirfoilError>, line: usize, needle: &str) {
    match result {
        Err(AirfoilError::Parse { line: l, message, .. }) => {
            assert_eq!(l, line, "{message}");
            assert!(message.contains(needle), "`{needle}` not in: {message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn a_one_line_file_claiming_two_billion_of_everything_allocates_almost_nothing() {
    let (result, requested) = read_counting("2e9.dat", "2000000000 2000000000 2000000000 2000000000\n");
    assert_parse_error(result, 2, "unexpected end of file");
    assert!(requested < FIXED, "{requested} bytes requested");
}

#[test]
fn headers_beyond_op2_sets_allocate_almost_nothing() {
    for (name, text) in [
        ("1e12.dat", "1000000000000 1 1 1\n"),
        (
            "u64max.dat",
            "18446744073709551615 18446744073709551615 18446744073709551615 18446744073709551615\n",
        ),
    ] {
        let (result, requested) = read_counting(name, text);
        assert_parse_error(result, 1, "too large");
        assert!(requested < FIXED, "{name}: {requested} bytes requested");
    }
}

#[test]
fn a_truncated_file_allocates_in_proportion_to_what_it_holds() {
    // 1000 nodes of the 2 billion the header claims: room for those 1000
    // (16 bytes each) at most, however the memory is reserved.
    let text = format!("2000000000 1 1 1\n{}", "0 0\n".repeat(1000));
    let (result, requested) = read_counting("partial.dat", &text);
    assert_parse_error(result, 1002, "node 1001 of 2000000000");
    assert!(requested < FIXED + 4 * 16 * 1000, "{requested} bytes requested");
}
