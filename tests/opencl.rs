//! The OpenCL backend's error paths (its transfers are tested with CUDA's in
//! `device_transfers.rs`).
#![cfg(feature = "opencl")]

use std::process::Command;

use op2::prelude::*;
use op2::{Error, RuntimeOptions};

fn rt() -> Runtime {
    Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)")
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

static BROKEN_PARAMS: [op2::ParamInfo; 1] = [op2::ParamInfo::scalar("x", op2::ScalarType::F64, true)];
static BROKEN: op2::KernelInfo = op2::KernelInfo {
    name: "broken",
    params: &BROKEN_PARAMS,
    c_source: "void op2_kernel_broken(double *x) { *x = not_defined_anywhere; }",
    uses: op2::KernelUses::NOTHING,
};

#[test]
fn a_kernel_that_fails_to_build_returns_the_log_and_the_source() {
    let rt = rt();
    let s = Set::new("s", 3).unwrap();
    let x = Dat::<f64>::zeros("x", &s, 1).unwrap();
    let args = [op2::__private::DirectArg::arg_spec(&x, Access::Rw)];
    let e = rt.par_loop(&BROKEN, &s, None, &args, &|_, _| {}).unwrap_err();
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
fn a_block_larger_than_a_work_group_is_an_error() {
    let e = Runtime::with_options(Backend::OpenCl, RuntimeOptions::default().block_size(1 << 24)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidOption {
                option: "block_size",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("16777216") && e.to_string().contains("work-items"),
        "{e}"
    );
}
