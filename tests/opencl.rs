//! The OpenCL backend's lazy transfers (counted per Dat) and error paths.
#![cfg(feature = "opencl")]

use std::process::Command;

use op2::prelude::*;
use op2::{Error, RuntimeOptions, TransferStats};
use op2_airfoil::{generate, AirfoilDsl, Constants};

#[op2::kernel]
fn axpy(y: &mut f64, x: &f64) {
    *y += 2.0 * *x;
}

#[op2::kernel]
fn fill(out: &mut f64, x: &f64) {
    *out = *x + 1.0;
}

#[op2::kernel]
fn gather_sum(out: &mut f64, v: &[[f64; 1]; 2]) {
    *out = v[0][0] + v[1][0];
}

fn rt() -> Runtime {
    Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)")
}

fn ups(s: TransferStats) -> u64 {
    s.uploads
}

#[test]
fn a_dat_only_read_in_ten_loops_is_uploaded_once() {
    let rt = rt();
    let s = Set::new("s", 100);
    let x = Dat::from_vec("x", &s, 1, (0..100).map(f64::from).collect()).unwrap();
    let y = Dat::<f64>::zeros("y", &s, 1);
    for _ in 0..10 {
        par_loop!(rt, axpy, s, y(INC), x(READ)).unwrap();
    }
    assert_eq!(ups(x.transfer_stats()), 1);
    assert_eq!(x.transfer_stats().downloads, 0);
    assert_eq!(y.data_ro()[7], 10.0 * 2.0 * 7.0);
}

#[test]
fn a_write_only_argument_is_not_uploaded() {
    let rt = rt();
    let s = Set::new("s", 50);
    let x = Dat::<f64>::filled("x", &s, 1, 1.0);
    let out = Dat::<f64>::filled("out", &s, 1, -5.0);
    par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
    assert_eq!(ups(out.transfer_stats()), 0);
    assert_eq!(out.data_ro()[49], 2.0);
}

#[test]
fn host_reads_after_a_device_write_download_once() {
    let rt = rt();
    let s = Set::new("s", 50);
    let x = Dat::<f64>::filled("x", &s, 1, 1.0);
    let out = Dat::<f64>::zeros("out", &s, 1);
    par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
    assert_eq!(
        out.transfer_stats().downloads,
        0,
        "nothing downloaded before the host asks"
    );
    assert_eq!(out.data_ro()[0], 2.0);
    assert_eq!(out.data_ro()[1], 2.0);
    assert_eq!(out.transfer_stats().downloads, 1, "two reads, one download");
    assert_eq!(out.transfer_stats().bytes_down, 50 * 8);
}

#[test]
fn a_host_write_makes_the_next_loop_upload_again() {
    let rt = rt();
    let s = Set::new("s", 20);
    let x = Dat::<f64>::filled("x", &s, 1, 1.0);
    let out = Dat::<f64>::zeros("out", &s, 1);
    par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
    x.data_mut()[3] = 10.0;
    par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
    assert_eq!(ups(x.transfer_stats()), 2);
    assert_eq!(out.data_ro()[3], 11.0, "the loop saw the host's change");
}

#[test]
fn maps_are_uploaded_once() {
    let rt = rt();
    let nodes = Set::new("nodes", 4);
    let edges = Set::new("edges", 3);
    let e2n = Map::new("e2n", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3]).unwrap();
    let x = Dat::from_vec("x", &nodes, 1, vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let out = Dat::<f64>::zeros("out", &edges, 1);
    for _ in 0..5 {
        par_loop!(rt, gather_sum, edges, out(WRITE), x(READ, e2n)).unwrap();
    }
    assert_eq!(e2n.device().stats().uploads, 1);
    assert_eq!(out.to_vec(), vec![3.0, 5.0, 7.0]);
}

#[test]
fn a_native_loop_after_a_device_loop_sees_the_device_data() {
    let cl = rt();
    let seq = Runtime::new(Backend::Seq).unwrap();
    let s = Set::new("s", 10);
    let x = Dat::<f64>::filled("x", &s, 1, 1.0);
    let y = Dat::<f64>::zeros("y", &s, 1);
    par_loop!(cl, axpy, s, y(INC), x(READ)).unwrap(); // y = 2 on the device
    par_loop!(seq, axpy, s, y(INC), x(READ)).unwrap(); // downloads y first: 4
    par_loop!(cl, axpy, s, y(INC), x(READ)).unwrap(); // uploads y again: 6
    assert_eq!(y.to_vec(), vec![6.0; 10]);
}

#[test]
fn after_the_first_airfoil_iteration_only_rms_moves() {
    let rt = rt();
    let a = AirfoilDsl::new(&generate(8, 6), &Constants::default()).unwrap();
    a.iteration(&rt).unwrap();
    let dats = [&a.x, &a.q, &a.qold, &a.adt, &a.res];
    let before: Vec<TransferStats> = dats.iter().map(|d| d.transfer_stats()).collect();
    let consts_before: Vec<TransferStats> = [&a.gam, &a.gm1, &a.cfl, &a.eps, &a.qinf]
        .iter()
        .map(|g| g.transfer_stats())
        .collect();
    let rms_before = a.rms.transfer_stats();
    for _ in 0..3 {
        a.iteration(&rt).unwrap();
    }
    let after: Vec<TransferStats> = dats.iter().map(|d| d.transfer_stats()).collect();
    let consts_after: Vec<TransferStats> = [&a.gam, &a.gm1, &a.cfl, &a.eps, &a.qinf]
        .iter()
        .map(|g| g.transfer_stats())
        .collect();
    assert_eq!(before, after, "no Dat moves after the first iteration");
    assert_eq!(consts_before, consts_after, "constants stay on the device");
    assert!(
        a.rms.transfer_stats().downloads > rms_before.downloads,
        "the rms reduction comes back"
    );
    // Every Dat of the mesh was uploaded at most once, and bound once.
    assert!(after.iter().all(|s| s.uploads <= 1), "{after:?}");
}

#[test]
fn no_matching_device_lists_the_devices() {
    let e = Runtime::with_options(Backend::OpenCl, RuntimeOptions::default().device("no-such-device-xyz")).unwrap_err();
    assert!(matches!(e, Error::DeviceUnavailable { backend: "opencl", .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("no-such-device-xyz") && msg.contains("0: "), "{msg}");
    let e = Runtime::with_options(Backend::OpenCl, RuntimeOptions::default().device("99")).unwrap_err();
    assert!(e.to_string().contains("only"), "{e}");
}

static BROKEN_PARAMS: [op2::ParamInfo; 1] = [op2::ParamInfo::scalar::<f64>("x", true)];
static BROKEN: op2::KernelInfo = op2::KernelInfo {
    name: "broken",
    params: &BROKEN_PARAMS,
    c_source: "void op2_kernel_broken(double *x) { *x = not_defined_anywhere; }",
};

#[test]
fn a_kernel_that_fails_to_build_returns_the_log_and_the_source() {
    let rt = rt();
    let s = Set::new("s", 3);
    let x = Dat::<f64>::zeros("x", &s, 1);
    let args = [op2::__private::DirectArg::arg_spec(&x, Access::Rw)];
    let e = rt.par_loop(&BROKEN, &s, &args, &|_, _| {}).unwrap_err();
    match &e {
        Error::DeviceBuild {
            loop_name,
            log,
            source_text,
            ..
        } => {
            assert_eq!(loop_name, "broken");
            assert!(log.contains("not_defined_anywhere"), "{log}");
            assert!(source_text.contains("__kernel void op2_loop"));
        }
        other => panic!("expected DeviceBuild, got {other:?}"),
    }
    assert!(x.try_data_mut().is_ok());
}

/// Run in a child process with no OpenCL driver registered.
#[test]
#[ignore = "run as a child process"]
fn child_without_platforms() {
    if std::env::var_os("OCL_ICD_VENDORS").is_none() {
        return;
    }
    let e = Runtime::new(Backend::OpenCl).unwrap_err();
    println!("\nERROR {e}");
}

#[test]
fn no_platform_is_a_clear_error() {
    let empty = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-opencl-vendors");
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_without_platforms", "--ignored", "--nocapture"])
        .env("OCL_ICD_VENDORS", &empty)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("ERROR opencl: no OpenCL platform"), "{text}");
}

#[test]
fn the_timing_summary_shows_transfers() {
    let rt = rt();
    let s = Set::new("s", 10);
    let x = Dat::<f64>::filled("xvalues", &s, 1, 1.0);
    let y = Dat::<f64>::zeros("yvalues", &s, 1);
    par_loop!(rt, axpy, s, y(INC), x(READ)).unwrap();
    let _ = y.data_ro();
    let summary = rt.timing_summary();
    let y_row = summary
        .transfers
        .iter()
        .find(|(n, _)| n == "yvalues")
        .expect("y listed");
    assert_eq!((y_row.1.uploads, y_row.1.downloads), (1, 1));
    let text = summary.to_string();
    assert!(text.contains("transfers") && text.contains("xvalues"), "{text}");
}
