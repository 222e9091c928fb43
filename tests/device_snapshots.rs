//! Snapshots of the generated CUDA (`tests/snapshots/cuda/<kernel>-<variant>.cu`),
//! reviewed like code: every catalogue loop (the five Airfoil kernels and a
//! kernel per access mode, form and element type), coloured and, where it
//! differs, atomic; with Dats in rows, and where it differs in columns
//! (`-columns`, struct of arrays). The OpenCL programs come from the same generator and
//! differ in spelling only. `OP2_UPDATE_SNAPSHOTS=1 cargo test --test
//! device_snapshots` rewrites them.

#[path = "conformance/catalogue.rs"]
mod catalogue;
#[path = "conformance/kernels.rs"]
#[allow(dead_code)] // the suite's kernels; the catalogue uses some of them
mod kernels;

use std::path::Path;

use op2::prelude::*;
use op2::{Increments, RuntimeOptions};
use op2_backends::codegen::{cuda_source, opencl_source, Checks};
use op2_backends::IndirectWrites;

fn tag(w: IndirectWrites) -> &'static str {
    match w {
        IndirectWrites::None => "direct",
        IndirectWrites::Coloured { whole_body: false } => "coloured",
        IndirectWrites::Coloured { whole_body: true } => "coloured-whole",
        IndirectWrites::Atomic => "atomic",
    }
}

#[test]
fn generated_cuda_matches_snapshots() {
    let rt = Runtime::with_options(Backend::Seq, RuntimeOptions::default().record_loops(true)).unwrap();
    catalogue::run_catalogue(&rt);
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/cuda");
    let update = std::env::var_os("OP2_UPDATE_SNAPSHOTS").is_some();
    std::fs::create_dir_all(&snapshots).unwrap();
    let mut mismatched = Vec::new();
    let mut written = 0;
    let mut in_columns = 0;
    for (info, rows) in rt.recorded_loops() {
        // Each loop as a device lays out Dats in rows, and in columns where
        // it can (`-columns`).
        let columns = rows.in_columns();
        in_columns += usize::from(columns.is_some());
        for (shape, layout) in std::iter::once((rows, "")).chain(columns.map(|c| (c, "-columns"))) {
            let mut variants = vec![IndirectWrites::of(&shape, Increments::Colouring)];
            let atomic = IndirectWrites::of(&shape, Increments::Atomics);
            if atomic != variants[0] {
                variants.push(atomic);
            }
            for w in variants {
                let text = cuda_source(info, &shape, w, Checks::Off);
                // The OpenCL program is the same code in other words.
                let cl = opencl_source(info, &shape, w, Checks::Off);
                assert!(cl.contains("__kernel void op2_loop") && cl.contains(&format!("op2_kernel_{}(", info.name)));
                let name = format!("{}-{}{layout}.cu", info.name, tag(w));
                let snap = snapshots.join(&name);
                if update {
                    std::fs::write(&snap, &text).unwrap();
                } else if std::fs::read_to_string(&snap).ok().as_deref() != Some(text.as_str()) {
                    mismatched.push(name);
                }
                written += 1;
            }
        }
    }
    assert!(written >= 17, "only {written} sources");
    // The Airfoil kernels and the catalogue's vector Dats.
    assert!(in_columns >= 5, "only {in_columns} loops have Dats in columns");
    assert!(
        mismatched.is_empty(),
        "generated CUDA differs from tests/snapshots/cuda for {mismatched:?}; review and rerun with OP2_UPDATE_SNAPSHOTS=1"
    );
}
