//! One Airfoil iteration on a mid-size mesh, in one run: the hand-written
//! baseline, the DSL on `seq`, and the DSL on `rayon` and (with
//! `--features jit`) `jit` with 2 threads each. Prints the ratios at the end.
//!
//! `cargo bench --bench airfoil` (set `AIRFOIL_BENCH_MESH=IxJ` to change the
//! mesh; default 200x300, 180 000 cells).

use std::path::PathBuf;
use std::time::Duration;

use criterion::{black_box, Criterion};
use op2::{Backend, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants, Handwritten};

const GROUP: &str = "airfoil_iteration";

fn mesh_size() -> (usize, usize) {
    std::env::var("AIRFOIL_BENCH_MESH")
        .ok()
        .and_then(|v| {
            let (i, j) = v.split_once('x')?;
            Some((i.parse().ok()?, j.parse().ok()?))
        })
        .unwrap_or((200, 300))
}

fn bench(c: &mut Criterion) {
    let (i, j) = mesh_size();
    let mesh = generate(i, j);
    let constants = Constants::default();
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(20).measurement_time(Duration::from_secs(8));

    let mut hand = Handwritten::new(&mesh, &constants);
    group.bench_function("handwritten", |b| b.iter(|| black_box(hand.iteration())));

    let rt = Runtime::new(Backend::Seq).expect("seq backend");
    let dsl = AirfoilDsl::new(&mesh, &constants).expect("airfoil carriers");
    group.bench_function("dsl_seq", |b| {
        b.iter(|| black_box(dsl.iteration(&rt).expect("loop runs")))
    });

    // The threaded backends compiled into this build, 2 threads each.
    for (name, backend) in [("dsl_rayon_2", Backend::Rayon), ("dsl_jit_2", Backend::Jit)] {
        if let Ok(rt) = Runtime::with_options(backend, RuntimeOptions::default().threads(2)) {
            let dsl = AirfoilDsl::new(&mesh, &constants).expect("airfoil carriers");
            dsl.iteration(&rt).expect("warm-up (compiles jit loops)");
            group.bench_function(name, |b| b.iter(|| black_box(dsl.iteration(&rt).expect("loop runs"))));
        }
    }
    group.finish();
}

/// Mean time of one benchmark from criterion's saved estimates, in ns.
fn mean_ns(name: &str) -> Option<f64> {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let text = std::fs::read_to_string(dir.join("criterion").join(GROUP).join(name).join("new/estimates.json")).ok()?;
    let mean = &text[text.find("\"mean\"")?..];
    let at = mean.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let rest = &mean[at..];
    rest[..rest.find([',', '}'])?].trim().parse().ok()
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    let (i, j) = mesh_size();
    if let (Some(hand), Some(seq)) = (mean_ns("handwritten"), mean_ns("dsl_seq")) {
        println!(
            "\nairfoil {i}x{j} ({} cells): handwritten {:.3} ms, dsl_seq {:.3} ms, ratio dsl_seq/handwritten = {:.3}",
            3 * i * j,
            hand / 1e6,
            seq / 1e6,
            seq / hand
        );
        for name in ["dsl_rayon_2", "dsl_jit_2"] {
            if let Some(t) = mean_ns(name) {
                println!(
                    "airfoil {i}x{j}: {name} {:.3} ms, speed-up dsl_seq/{name} = {:.2}",
                    t / 1e6,
                    seq / t
                );
            }
        }
        if let (Some(r), Some(jt)) = (mean_ns("dsl_rayon_2"), mean_ns("dsl_jit_2")) {
            println!("airfoil {i}x{j}: ratio dsl_jit_2/dsl_rayon_2 = {:.3}", jt / r);
        }
    }
}
