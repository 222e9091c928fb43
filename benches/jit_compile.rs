//! JIT compile latency: one Airfoil iteration (5 distinct loops) on a tiny
//! mesh, where running costs next to nothing, with a cold disk cache, a warm
//! disk cache (new runtime), and warm memory (same runtime). Needs
//! `--features jit`: `cargo bench --features jit --bench jit_compile`.

use std::path::PathBuf;
use std::time::Duration;

use criterion::{black_box, BatchSize, Criterion};
use op2::{Backend, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants};

fn main() {
    let mesh = generate(4, 3);
    let constants = Constants::default();
    let base = std::env::temp_dir().join(format!("op2-jit-bench-{}", std::process::id()));
    let options = |dir: &PathBuf| RuntimeOptions::default().threads(1).cache_dir(dir);
    if Runtime::with_options(Backend::Jit, options(&base)).is_err() {
        eprintln!("jit backend not available in this build: run with --features jit");
        return;
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = c.benchmark_group("jit_airfoil_iteration_5_loops");
    let mut n = 0;
    group.bench_function("cold_disk_cache", |b| {
        b.iter_batched(
            || {
                n += 1;
                let dir = base.join(format!("cold-{n}"));
                let _ = std::fs::remove_dir_all(&dir);
                (Runtime::with_options(Backend::Jit, options(&dir)).unwrap(), dir)
            },
            |(rt, _dir)| black_box(AirfoilDsl::new(&mesh, &constants).unwrap().iteration(&rt).unwrap()),
            BatchSize::PerIteration,
        )
    });
    let warm = base.join("warm");
    let rt = Runtime::with_options(Backend::Jit, options(&warm)).unwrap();
    AirfoilDsl::new(&mesh, &constants).unwrap().iteration(&rt).unwrap();
    group.bench_function("warm_disk_cache", |b| {
        b.iter_batched(
            || Runtime::with_options(Backend::Jit, options(&warm)).unwrap(),
            |rt| black_box(AirfoilDsl::new(&mesh, &constants).unwrap().iteration(&rt).unwrap()),
            BatchSize::PerIteration,
        )
    });
    let dsl = AirfoilDsl::new(&mesh, &constants).unwrap();
    group.bench_function("warm_memory", |b| b.iter(|| black_box(dsl.iteration(&rt).unwrap())));
    group.finish();
    c.final_summary();
    let _ = std::fs::remove_dir_all(&base);
}
