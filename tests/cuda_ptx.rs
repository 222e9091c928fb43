//! Every generated CUDA source compiles: the CUDA for every Airfoil loop and a
//! loop per access mode, form and element type goes through NVRTC to PTX for
//! sm_80 and sm_90 and is assembled with ptxas. Without NVRTC the test skips
//! with a reason, unless `OP2_REQUIRE_NVRTC=1` (CI) makes that a failure.
#![cfg(feature = "cuda")]

#[path = "conformance/kernels.rs"]
#[allow(dead_code)] // the suite's kernels; this test uses some of them
mod kernels;

use std::process::Command;

use kernels::*;
use op2::prelude::*;
use op2::RuntimeOptions;
use op2_airfoil::{generate, AirfoilDsl, Constants};
use op2_backends::codegen::cuda_source;

/// Runs the loops on `seq`, recording their shapes.
fn recorded_runtime() -> Runtime {
    let rt = Runtime::with_options(Backend::Seq, RuntimeOptions::default().record_loops(true)).unwrap();
    AirfoilDsl::new(&generate(4, 3), &Constants::default())
        .unwrap()
        .iteration(&rt)
        .unwrap();
    let nodes = Set::new("nodes", 5);
    let edges = Set::new("edges", 4);
    let cells = Set::new("cells", 2);
    let e2n = Map::new("e2n", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3, 3, 4]).unwrap();
    let c2n = Map::new("c2n", &cells, &nodes, 3, vec![0, 1, 2, 2, 3, 4]).unwrap();
    let on_edges = Dat::<f64>::zeros("on_edges", &edges, 1);
    let on_nodes = Dat::<f64>::zeros("on_nodes", &nodes, 1);
    let pairs = Dat::<f64>::zeros("pairs", &nodes, 2);
    let on_cells = Dat::<f64>::zeros("on_cells", &cells, 1);
    let g2 = Global::new("g2", vec![0.0, 0.0]).unwrap();
    let lo = Global::scalar("lo", 0.0);
    let hi = Global::scalar("hi", 0.0);
    par_loop!(rt, cell_scatter, cells, on_cells(READ), pairs(INC, c2n)).unwrap();
    par_loop!(rt, reduce_all, nodes, pairs(READ), g2(INC), lo(MIN), hi(MAX)).unwrap();
    par_loop!(rt, node_min_via_map, edges, on_edges(READ), on_nodes(MIN, e2n[1])).unwrap();
    par_loop!(rt, node_max_via_map, edges, on_edges(READ), on_nodes(MAX, e2n[0])).unwrap();
    par_loop!(rt, node_write_via_map, edges, on_edges(READ), on_nodes(WRITE, e2n[0])).unwrap();
    par_loop!(rt, node_rw_via_map, edges, pairs(RW, e2n[0])).unwrap();
    par_loop!(rt, all_min_via_map, cells, on_cells(READ), on_nodes(MIN, c2n)).unwrap();
    let ints = Dat::<i32>::zeros("ints", &nodes, 1);
    let count = Global::<i32>::scalar("count", 0);
    let biggest = Global::<i32>::scalar("biggest", 0);
    par_loop!(rt, int_ops, nodes, ints(RW), count(INC), biggest(MAX)).unwrap();
    let f = Dat::<f32>::zeros("f", &nodes, 2);
    let total = Global::<f32>::scalar("total", 0.0);
    par_loop!(rt, f32_ops, nodes, f(RW), total(INC)).unwrap();
    let a = Dat::<u32>::zeros("a", &nodes, 1);
    let b = Dat::<i64>::zeros("b", &nodes, 1);
    par_loop!(rt, u32_i64_ops, nodes, a(READ), b(INC)).unwrap();
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
    assert!(loops.len() >= 15, "{} loops recorded", loops.len());
    for (info, shape) in &loops {
        let source = cuda_source(info, shape);
        for arch in ["sm_80", "sm_90"] {
            let ptx = op2_backends::cuda::compile_to_ptx(info.name, &source, arch)
                .unwrap_or_else(|e| panic!("{}: NVRTC failed for {arch}: {e}", info.name));
            assert!(
                ptx.contains(".entry op2_loop"),
                "{}: no entry point in the PTX",
                info.name
            );
            if have_ptxas {
                let file = dir.join(format!("{}-{arch}.ptx", info.name));
                std::fs::write(&file, &ptx).unwrap();
                let out = Command::new(&ptxas)
                    .args(["-arch", arch, "-o", "/dev/null"])
                    .arg(&file)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}: ptxas failed for {arch}:\n{}",
                    info.name,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
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
    let e = Runtime::new(Backend::Cuda).unwrap_err();
    assert!(
        matches!(e, op2::Error::DeviceUnavailable { backend: "cuda", .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("lib"), "{e}");
}
