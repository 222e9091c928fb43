//! One Airfoil iteration on a mid-size mesh, in one run: the hand-written
//! baseline, the DSL on `seq`, and the DSL on `rayon` and (with
//! `--features jit`) `jit` with 2 threads each. Prints the ratios at the end.
//!
//! `cargo bench --bench airfoil` (set `AIRFOIL_BENCH_MESH=IxJ` to change the
//! mesh; default 200x300, 180 000 cells).

use std::time::Duration;

use criterion::{black_box, Criterion};
use op2::{Backend, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants, Handwritten};

mod support;

const GROUP: &str = "airfoil_iteration";

fn bench(c: &mut Criterion) {
    let (i, j) = support::mesh_size((200, 300));
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

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    let (i, j) = support::mesh_size((200, 300));
    if let (Some(hand), Some(seq)) = (
        support::mean_ns(GROUP, "handwritten"),
        support::mean_ns(GROUP, "dsl_seq"),
    ) {
        println!(
            "\nairfoil {i}x{j} ({} cells): handwritten {:.3} ms, dsl_seq {:.3} ms, ratio dsl_seq/handwritten = {:.3}",
            3 * i * j,
            hand / 1e6,
            seq / 1e6,
            seq / hand
        );
        for name in ["dsl_rayon_2", "dsl_jit_2"] {
            if let Some(t) = support::mean_ns(GROUP, name) {
                println!(
                    "airfoil {i}x{j}: {name} {:.3} ms, speed-up dsl_seq/{name} = {:.2}",
                    t / 1e6,
                    seq / t
                );
            }
        }
        if let (Some(r), Some(jt)) = (
            support::mean_ns(GROUP, "dsl_rayon_2"),
            support::mean_ns(GROUP, "dsl_jit_2"),
        ) {
            println!("airfoil {i}x{j}: ratio dsl_jit_2/dsl_rayon_2 = {:.3}", jt / r);
        }
    }
}
