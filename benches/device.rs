//! Colouring against atomics for indirect increments, on each device backend
//! compiled in and present here: one Airfoil iteration per sample, then the
//! ratio atomics/colouring per backend and each runtime's per-loop table
//! (ms per call, MB moved per call, GB/s).
//!
//! `cargo bench --features opencl,cuda --bench device`. The mesh is the
//! benchmark's 720 000 cells when a GPU is present, else 180 000 cells;
//! `AIRFOIL_BENCH_MESH=IxJ` overrides it. Backends that cannot start print why.

use std::time::Duration;

use criterion::{black_box, Criterion};
use op2::{Backend, Increments, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants};

mod support;

const GROUP: &str = "device_increments";

/// The device runtimes that start here, named `<backend>_<increments>`.
fn runtimes() -> Vec<(String, Runtime)> {
    let mut out = Vec::new();
    for backend in [Backend::OpenCl, Backend::Cuda] {
        for inc in [Increments::Colouring, Increments::Atomics] {
            match Runtime::with_options(backend, RuntimeOptions::default().increments(inc)) {
                Ok(rt) => out.push((format!("{backend}_{inc}"), rt)),
                Err(e) if inc == Increments::Colouring => println!("{backend}: skipped: {e}"),
                Err(_) => {}
            }
        }
    }
    out
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let runtimes = runtimes();
    let gpu = runtimes.iter().any(|(_, rt)| rt.backend() == Backend::Cuda);
    let (i, j) = support::mesh_size(if gpu { (400, 600) } else { (200, 300) });
    let mesh = generate(i, j);
    let constants = Constants::default();
    {
        let mut group = c.benchmark_group(GROUP);
        group.sample_size(20).measurement_time(Duration::from_secs(8));
        for (name, rt) in &runtimes {
            let dsl = AirfoilDsl::new(&mesh, &constants).expect("airfoil carriers");
            dsl.iteration(rt).expect("warm-up (compiles the loops, moves the data)");
            group.bench_function(name.as_str(), |b| {
                b.iter(|| black_box(dsl.iteration(rt).expect("loop runs")))
            });
        }
        group.finish();
    }
    c.final_summary();
    for (name, rt) in &runtimes {
        println!(
            "\n{name} ({} cells), per loop over all iterations:\n{}",
            3 * i * j,
            rt.timing_summary()
        );
    }
    for backend in [Backend::OpenCl, Backend::Cuda] {
        let mean = |inc: Increments| support::mean_ns(GROUP, &format!("{backend}_{inc}"));
        if let (Some(col), Some(atom)) = (mean(Increments::Colouring), mean(Increments::Atomics)) {
            println!(
                "airfoil {i}x{j} on {backend}: colouring {:.3} ms, atomics {:.3} ms per iteration, \
                 ratio atomics/colouring = {:.3}",
                col / 1e6,
                atom / 1e6,
                atom / col
            );
        }
    }
}
