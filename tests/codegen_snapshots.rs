//! Snapshots of the generated C (`tests/snapshots/jit/<kernel>.c`), reviewed
//! like code: the five Airfoil kernels and a kernel per access mode, form and
//! element type, unchecked. Each must also compile without warnings under
//! `-Wall`, unchecked and checked.
//! `OP2_UPDATE_SNAPSHOTS=1 cargo test --features jit --test codegen_snapshots`
//! rewrites them.
#![cfg(feature = "jit")]

#[path = "conformance/catalogue.rs"]
mod catalogue;
#[path = "conformance/kernels.rs"]
#[allow(dead_code)] // the suite's kernels; the catalogue uses some of them
mod kernels;

use std::path::{Path, PathBuf};
use std::process::Command;

use op2::prelude::*;
use op2::RuntimeOptions;

/// Runs the catalogue with the jit backend in a fresh cache directory and
/// returns the sources it holds then, sorted.
fn generate_sources(checked: bool) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("jit-snapshots-checked-{checked}"));
    let _ = std::fs::remove_dir_all(&dir);
    let options = RuntimeOptions::default().threads(1).cache_dir(&dir).checked(checked);
    let rt = Runtime::with_options(Backend::Jit, options).unwrap();
    catalogue::run_catalogue(&rt);
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    sources
}

/// Compiles `src` with `-Wall -Werror`.
fn assert_compiles_cleanly(src: &Path) {
    let out = Command::new(std::env::var("OP2_CC").unwrap_or_else(|_| "cc".into()))
        .args(["-Wall", "-Werror", "-fopenmp", "-O2", "-c", "-o", "/dev/null"])
        .arg(src)
        .output()
        .expect("a C compiler");
    assert!(
        out.status.success(),
        "{}: warnings or errors under -Wall:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `op2_<kernel>_<hash>.c` -> `<kernel>`.
fn kernel_of(file: &Path) -> String {
    let stem = file.file_stem().unwrap().to_string_lossy();
    let stem = stem.strip_prefix("op2_").unwrap();
    stem[..stem.rfind('_').unwrap()].to_string()
}

#[test]
fn generated_c_matches_snapshots_and_compiles_cleanly() {
    let sources = generate_sources(false);
    let names: Vec<String> = sources.iter().map(|p| kernel_of(p)).collect();
    for airfoil in ["save_soln", "adt_calc", "res_calc", "bres_calc", "update"] {
        assert!(names.iter().any(|n| n == airfoil), "no source for {airfoil}: {names:?}");
    }
    let kernels: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(sources.len(), kernels.len(), "one shape per kernel: {names:?}");

    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/jit");
    let update = std::env::var_os("OP2_UPDATE_SNAPSHOTS").is_some();
    std::fs::create_dir_all(&snapshots).unwrap();
    let mut mismatched = Vec::new();
    for (src, name) in sources.iter().zip(&names) {
        let text = std::fs::read_to_string(src).unwrap();
        let snap = snapshots.join(format!("{name}.c"));
        if update {
            std::fs::write(&snap, &text).unwrap();
        } else if std::fs::read_to_string(&snap).ok().as_deref() != Some(text.as_str()) {
            mismatched.push(name.clone());
        }
        assert_compiles_cleanly(src);
    }
    let checked = generate_sources(true);
    assert_eq!(checked.len(), sources.len());
    for src in &checked {
        assert!(std::fs::read_to_string(src).unwrap().contains("#define OP2_CHECKED 1"));
        assert_compiles_cleanly(src);
    }
    assert!(
        mismatched.is_empty(),
        "generated C differs from tests/snapshots/jit for {mismatched:?}; review and rerun with OP2_UPDATE_SNAPSHOTS=1"
    );
}
