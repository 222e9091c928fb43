//! Links PT-Scotch when the `ptscotch` feature is on: the static libraries
//! `scripts/build_ptscotch.sh` installs (built against MPICH), found under
//! `OP2_PTSCOTCH_DIR`, else `~/.cache/op2-ptscotch`, else `/usr/local`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=OP2_PTSCOTCH_DIR");
    if std::env::var_os("CARGO_FEATURE_PTSCOTCH").is_none() {
        return;
    }
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("OP2_PTSCOTCH_DIR") {
        candidates.push(PathBuf::from(dir));
    } else {
        if let Some(home) = std::env::var_os("HOME") {
            candidates.push(PathBuf::from(home).join(".cache/op2-ptscotch"));
        }
        candidates.push(PathBuf::from("/usr/local"));
    }
    let found = candidates
        .iter()
        .find(|d| d.join("lib/libptscotch.a").exists() && d.join("include/ptscotch.h").exists());
    let Some(dir) = found else {
        panic!(
            "op2-mpi's `ptscotch` feature needs PT-Scotch built against MPICH; none in {}. \
             Run scripts/build_ptscotch.sh (it installs into ~/.cache/op2-ptscotch), or set OP2_PTSCOTCH_DIR \
             to a directory holding lib/libptscotch.a and include/ptscotch.h",
            candidates
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    println!("cargo:rerun-if-changed={}", dir.join("lib/libptscotch.a").display());
    println!("cargo:rustc-link-search=native={}", dir.join("lib").display());
    for lib in ["ptscotch", "scotch", "ptscotcherr"] {
        println!("cargo:rustc-link-lib=static={lib}");
    }
    println!("cargo:rustc-link-lib=m");
}
