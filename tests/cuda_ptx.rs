//! Every generated CUDA source compiles: the CUDA for every Airfoil loop and a
//! loop per access mode, form and element type, in both treatments of
//! indirect writes (colouring and atomics), goes through NVRTC to PTX for
//! sm_80 and sm_90 and is assembled with ptxas, and to the cubins the backend
//! loads. Without NVRTC the test skips
//! with a reason, unless `OP2_REQUIRE_NVRTC=1` (CI) makes that a failure.
#![cfg(feature = "cuda")]

#[path = "conformance/catalogue.rs"]
mod catalogue;
#[path = "conformance/kernels.rs"]
#[allow(dead_code)] // the suite's kernels; the catalogue uses some of them
mod kernels;

use std::process::Command;

use op2::prelude::*;
use op2::{Increments, RuntimeOptions};
use op2_backends::codegen::{cuda_source, Checks};
use op2_backends::IndirectWrites;

/// Runs the catalogue on `seq`, recording the loops' shapes.
fn recorded_runtime() -> Runtime {
    let rt = Runtime::with_options(Backend::Seq, RuntimeOptions::default().record_loops(true)).unwrap();
    catalogue::run_catalogue(&rt);
    rt
}

#[test]
fn every_generated_cuda_source_compiles_to_ptx() {
    if !op2_backends::cuda::nvrtc_available() {
        let msg =
            "NVRTC (libnvrtc.so) is not loadable: add the nvidia-cuda-nvrtc-cu12 lib directory to LD_LIBRARY_PATH";
        assert!(std::env::var_os("OP2_REQUIRE_NVRTC").is_none(), "{msg}");
        eprintln!("skipped: {msg}");
        return;
    }
    let ptxas = std::env::var("OP2_PTXAS").unwrap_or_else(|_| "ptxas".into());
    let have_ptxas = Command::new(&ptxas)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        have_ptxas || std::env::var_os("OP2_REQUIRE_NVRTC").is_none(),
        "ptxas `{ptxas}` not found"
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda-ptx");
    std::fs::create_dir_all(&dir).unwrap();
    let rt = recorded_runtime();
    let loops = rt.recorded_loops();
    let kernels: std::collections::BTreeSet<&str> = loops.iter().map(|(info, _)| info.name).collect();
    assert_eq!(loops.len(), kernels.len(), "one shape per catalogue loop");
    assert!(
        kernels.contains("random_draws"),
        "the catalogue has a loop with a random stream"
    );
    let mut atomic_loops = 0;
    for (info, shape) in &loops {
        let colouring = IndirectWrites::of(shape, Increments::Colouring);
        let atomics = IndirectWrites::of(shape, Increments::Atomics);
        let mut variants = vec![colouring];
        if atomics != colouring {
            variants.push(atomics);
            atomic_loops += 1;
        }
        // Unchecked for both architectures, checked for one.
        let builds = variants.into_iter().flat_map(|w| {
            [
                (w, "sm_80", Checks::Off),
                (w, "sm_90", Checks::Off),
                (w, "sm_90", Checks::On),
            ]
        });
        // And with its Dats in columns, where it has any.
        let columns = shape.in_columns();
        let layouts = std::iter::once(shape).chain(columns.as_ref());
        for ((writes, arch, checks), shape) in builds.flat_map(|b| layouts.clone().map(move |s| (b, s))) {
            let source = cuda_source(info, shape, writes, checks);
            let ptx = op2_backends::cuda::compile_to_ptx(info.name, &source, arch)
                .unwrap_or_else(|e| panic!("{}: NVRTC failed for {arch}: {e}", info.name));
            assert!(
                ptx.contains(".entry op2_loop"),
                "{}: no entry point in the PTX",
                info.name
            );
            // What the backend loads: machine code for the GPU's architecture.
            let cubin = op2_backends::cuda::compile_to_cubin(info.name, &source, arch)
                .unwrap_or_else(|e| panic!("{}: NVRTC cubin failed for {arch}: {e}", info.name));
            assert!(
                cubin.starts_with(b"\x7fELF"),
                "{}: the cubin is not an ELF image",
                info.name
            );
            if have_ptxas {
                let tag = match writes {
                    IndirectWrites::None => "direct",
                    IndirectWrites::Coloured { .. } => "coloured",
                    IndirectWrites::Atomic => "atomic",
                };
                let layout = if shape.args.iter().any(|a| a.columns) {
                    "-columns"
                } else {
                    ""
                };
                let file = dir.join(format!("{}-{tag}{layout}-{arch}.ptx", info.name));
                std::fs::write(&file, &ptx).unwrap();
                let out = Command::new(&ptxas)
                    .args(["-arch", arch, "-o", "/dev/null"])
                    .arg(&file)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}: ptxas failed for {arch} ({writes:?}):\n{}",
                    info.name,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    // res_calc, bres_calc and the catalogue's INC/MIN/MAX-through-map loops.
    assert!(atomic_loops >= 4, "only {atomic_loops} loops have an atomic variant");
}

#[test]
fn a_broken_cuda_source_returns_the_log_and_the_source() {
    if !op2_backends::cuda::nvrtc_available() {
        eprintln!("skipped: NVRTC not loadable");
        return;
    }
    let e = op2_backends::cuda::compile_to_ptx(
        "broken",
        "extern \"C\" __global__ void f() { undefined_thing; }",
        "sm_80",
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("undefined_thing") && msg.contains("broken"), "{msg}");
}

#[test]
fn runtime_new_cuda_is_an_error_not_a_panic() {
    if op2_backends::cuda::driver_available() {
        eprintln!("skipped: this machine has the NVIDIA driver");
        return;
    }
    let e = Runtime::new(Backend::Cuda).unwrap_err();
    assert!(
        matches!(e, op2::Error::DeviceUnavailable { backend: "cuda", .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("lib"), "{e}");
}

#[test]
fn the_device_builds_and_compactions_compile_to_ptx_with_every_entry_point() {
    if !op2_backends::cuda::nvrtc_available() {
        assert!(std::env::var_os("OP2_REQUIRE_NVRTC").is_none(), "NVRTC is not loadable");
        eprintln!("skipped: NVRTC not loadable");
        return;
    }
    use op2::ScalarType;
    use op2_backends::codegen::{binning_source, reorder_source, DeviceLanguage, BINNING_ENTRIES, REORDER_ENTRIES};
    let source = reorder_source(DeviceLanguage::Cuda);
    let ptx = op2_backends::cuda::compile_to_ptx("reorder", &source, "sm_80")
        .unwrap_or_else(|e| panic!("reorder: NVRTC failed: {e}"));
    for entry in REORDER_ENTRIES {
        assert!(ptx.contains(&format!(".entry {entry}")), "reorder: no {entry}");
    }
    let cubin = op2_backends::cuda::compile_to_cubin("reorder", &source, "sm_90")
        .unwrap_or_else(|e| panic!("reorder: NVRTC cubin failed: {e}"));
    assert!(cubin.starts_with(b"\x7fELF"));
    for (t, dims) in [(ScalarType::F32, 3), (ScalarType::F64, 2), (ScalarType::I32, 2)] {
        let source = binning_source(DeviceLanguage::Cuda, t, dims);
        let ptx = op2_backends::cuda::compile_to_ptx("message_build", &source, "sm_80")
            .unwrap_or_else(|e| panic!("{t:?} {dims}-D: NVRTC failed: {e}"));
        for entry in BINNING_ENTRIES {
            assert!(ptx.contains(&format!(".entry {entry}")), "{t:?} {dims}-D: no {entry}");
        }
        let cubin = op2_backends::cuda::compile_to_cubin("message_build", &source, "sm_90")
            .unwrap_or_else(|e| panic!("{t:?} {dims}-D: NVRTC cubin failed: {e}"));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}

#[test]
fn the_reduction_folds_compile_to_ptx_and_cubins_for_every_type() {
    if !op2_backends::cuda::nvrtc_available() {
        assert!(std::env::var_os("OP2_REQUIRE_NVRTC").is_none(), "NVRTC is not loadable");
        eprintln!("skipped: NVRTC not loadable");
        return;
    }
    use op2::ScalarType;
    use op2_backends::codegen::{reduction_source, DeviceLanguage, FOLD_ENTRIES, FOLD_THREADS};
    for t in ScalarType::ALL {
        let source = reduction_source(DeviceLanguage::Cuda, t, FOLD_THREADS);
        let ptx = op2_backends::cuda::compile_to_ptx("fold", &source, "sm_80")
            .unwrap_or_else(|e| panic!("{t:?}: NVRTC failed: {e}\n{source}"));
        for entry in FOLD_ENTRIES {
            assert!(ptx.contains(&format!(".entry {entry}")), "{t:?}: no {entry}");
        }
        let cubin = op2_backends::cuda::compile_to_cubin("fold", &source, "sm_90")
            .unwrap_or_else(|e| panic!("{t:?}: NVRTC cubin failed: {e}"));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}
