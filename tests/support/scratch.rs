//! A scratch directory for one test: empty when made, under the system's
//! temporary directory and named after the test and the process, and
//! removed when the test is done with it, so test runs leave nothing
//! behind; a failing test's is kept to look into.

use std::path::{Path, PathBuf};

/// A test's own directory, removed on drop unless the test is failing.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `op2-<name>-<process id>` under the temporary directory, emptied.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("op2-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
