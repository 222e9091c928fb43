//! The device backends' lazy transfers (counted per Dat, Global and Map),
//! written once and run on OpenCL (PoCL in CI) and CUDA (on a GPU; without one
//! the CUDA tests print why they skip, unless `OP2_REQUIRE_GPU=1`), each with
//! colouring and with atomics.
#![cfg(any(feature = "opencl", feature = "cuda"))]

mod cases {
    use op2::prelude::*;
    use op2::TransferStats;
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

    fn ups(s: TransferStats) -> u64 {
        s.uploads
    }

    pub fn a_dat_only_read_in_ten_loops_is_uploaded_once(rt: Runtime) {
        let s = Set::new("s", 100).unwrap();
        let x = Dat::from_vec("x", &s, 1, (0..100).map(f64::from).collect()).unwrap();
        let y = Dat::<f64>::zeros("y", &s, 1).unwrap();
        for _ in 0..10 {
            par_loop!(rt, axpy, s, y(INC), x(READ)).unwrap();
        }
        assert_eq!(ups(x.transfer_stats()), 1);
        assert_eq!(x.transfer_stats().downloads, 0);
        assert_eq!(y.data_ro()[7], 10.0 * 2.0 * 7.0);
    }

    pub fn a_write_only_argument_is_not_uploaded(rt: Runtime) {
        let s = Set::new("s", 50).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let out = Dat::<f64>::filled("out", &s, 1, -5.0).unwrap();
        par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
        assert_eq!(ups(out.transfer_stats()), 0);
        assert_eq!(out.data_ro()[49], 2.0);
    }

    pub fn host_reads_after_a_device_write_download_once(rt: Runtime) {
        let s = Set::new("s", 50).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let out = Dat::<f64>::zeros("out", &s, 1).unwrap();
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

    pub fn a_host_write_makes_the_next_loop_upload_again(rt: Runtime) {
        let s = Set::new("s", 20).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let out = Dat::<f64>::zeros("out", &s, 1).unwrap();
        par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
        x.data_mut()[3] = 10.0;
        par_loop!(rt, fill, s, out(WRITE), x(READ)).unwrap();
        assert_eq!(ups(x.transfer_stats()), 2);
        assert_eq!(out.data_ro()[3], 11.0, "the loop saw the host's change");
    }

    pub fn maps_are_uploaded_once(rt: Runtime) {
        let nodes = Set::new("nodes", 4).unwrap();
        let edges = Set::new("edges", 3).unwrap();
        let e2n = Map::new("e2n", &edges, &nodes, 2, vec![0, 1, 1, 2, 2, 3]).unwrap();
        let x = Dat::from_vec("x", &nodes, 1, vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let out = Dat::<f64>::zeros("out", &edges, 1).unwrap();
        for _ in 0..5 {
            par_loop!(rt, gather_sum, edges, out(WRITE), x(READ, e2n)).unwrap();
        }
        assert_eq!(e2n.device().stats().uploads, 1);
        assert_eq!(out.to_vec(), vec![3.0, 5.0, 7.0]);
    }

    pub fn a_native_loop_after_a_device_loop_sees_the_device_data(cl: Runtime) {
        let seq = Runtime::new(Backend::Seq).unwrap();
        let s = Set::new("s", 10).unwrap();
        let x = Dat::<f64>::filled("x", &s, 1, 1.0).unwrap();
        let y = Dat::<f64>::zeros("y", &s, 1).unwrap();
        par_loop!(cl, axpy, s, y(INC), x(READ)).unwrap(); // y = 2 on the device
        par_loop!(seq, axpy, s, y(INC), x(READ)).unwrap(); // downloads y first: 4
        par_loop!(cl, axpy, s, y(INC), x(READ)).unwrap(); // uploads y again: 6
        assert_eq!(y.to_vec(), vec![6.0; 10]);
    }

    pub fn after_the_first_airfoil_iteration_only_rms_moves(rt: Runtime) {
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

    pub fn the_timing_summary_shows_transfers(rt: Runtime) {
        let s = Set::new("s", 10).unwrap();
        let x = Dat::<f64>::filled("xvalues", &s, 1, 1.0).unwrap();
        let y = Dat::<f64>::zeros("yvalues", &s, 1).unwrap();
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
}

/// Whether to skip: the backend cannot start here (printed), unless the
/// run demands a GPU.
#[allow(dead_code)]
fn missing(made: &op2::Result<op2::Runtime>, optional: bool) -> bool {
    match made {
        Ok(_) => false,
        Err(e) => {
            assert!(
                optional && std::env::var_os("OP2_REQUIRE_GPU").is_none(),
                "backend unavailable: {e}"
            );
            eprintln!("skipped: {e}");
            true
        }
    }
}

macro_rules! device_cases {
    ($module:ident, $backend:expr, $increments:expr, $optional:expr) => {
        mod $module {
            use op2::{Backend, Increments, Runtime, RuntimeOptions};

            fn rt() -> Option<Runtime> {
                let made = Runtime::with_options($backend, RuntimeOptions::default().increments($increments));
                (!super::missing(&made, $optional)).then(|| made.unwrap())
            }

            device_cases!(@tests
                a_dat_only_read_in_ten_loops_is_uploaded_once,
                a_write_only_argument_is_not_uploaded,
                host_reads_after_a_device_write_download_once,
                a_host_write_makes_the_next_loop_upload_again,
                maps_are_uploaded_once,
                a_native_loop_after_a_device_loop_sees_the_device_data,
                after_the_first_airfoil_iteration_only_rms_moves,
                the_timing_summary_shows_transfers
            );
        }
    };
    (@tests $($test:ident),*) => {
        $(
            #[test]
            fn $test() {
                if let Some(rt) = rt() {
                    super::cases::$test(rt);
                }
            }
        )*
    };
}

#[cfg(feature = "opencl")]
device_cases!(opencl_colouring, Backend::OpenCl, Increments::Colouring, false);
#[cfg(feature = "opencl")]
device_cases!(opencl_atomics, Backend::OpenCl, Increments::Atomics, false);
#[cfg(feature = "cuda")]
device_cases!(cuda_colouring, Backend::Cuda, Increments::Colouring, true);
#[cfg(feature = "cuda")]
device_cases!(cuda_atomics, Backend::Cuda, Increments::Atomics, true);
