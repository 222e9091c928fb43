//! One Airfoil iteration on the 720 000-cell benchmark mesh, in one run: the
//! hand-written baseline, the DSL on `seq`, and the DSL on `rayon` and (with
//! `--features jit`) `jit` with 2 threads each, each with both host
//! schedules (partitions, then the plan's block colours, `_colours`). Then,
//! from the same run:
//!
//! - each backend's bandwidth per loop (the runtime's byte estimates over
//!   its timings),
//! - a STREAM triad (`a = b + s c`, 24 bytes per element) on 2 threads, over
//!   arrays far larger than the last-level cache: the machine's bandwidth,
//! - the floor: the iteration's bytes divided by that bandwidth, and each
//!   backend's fraction of it (floor / time: 1 would be an iteration at the
//!   machine's bandwidth), with the speed-ups between backends.
//!
//! - with `OP2_AIRFOIL_BUNDLE` pointing at a bundle of OP2-Common's own
//!   Airfoil built by the team's `op2_airfoil.sh` (`prepare`, then `cpu`),
//!   OP2's `genseq` and OpenMP (on the same threads) on the same mesh, and
//!   each threaded backend's time as a ratio to OP2's OpenMP
//!   (`support/op2_peer.rs`); without it, a line saying so.
//!
//! `cargo bench --bench airfoil` (`AIRFOIL_BENCH_MESH=IxJ` changes the mesh;
//! `--features jit` adds jit).

use std::time::Duration;

use criterion::{black_box, Criterion};
use op2::{Backend, HostSchedule, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants, Handwritten};

#[path = "support/op2_peer.rs"]
mod op2_peer;
mod support;

const GROUP: &str = "airfoil_iteration";
const THREADS: usize = 2;
/// The threaded backends compiled into this build, by benchmark name, with
/// the host schedule they run planned loops with (partitions, the default,
/// and the plan's block colours).
const THREADED: [(&str, Backend, HostSchedule); 4] = [
    ("dsl_rayon_2", Backend::Rayon, HostSchedule::Partitions),
    ("dsl_jit_2", Backend::Jit, HostSchedule::Partitions),
    ("rayon_2_colours", Backend::Rayon, HostSchedule::Colours),
    ("jit_2_colours", Backend::Jit, HostSchedule::Colours),
];

/// The runtimes benchmarked: `seq`, then the threaded backends built in.
fn runtimes() -> Vec<(&'static str, Runtime)> {
    let mut out = vec![("dsl_seq", Runtime::new(Backend::Seq).expect("seq backend"))];
    for (name, backend, schedule) in THREADED {
        let options = RuntimeOptions::default().threads(THREADS).host_schedule(schedule);
        if let Ok(rt) = Runtime::with_options(backend, options) {
            out.push((name, rt));
        }
    }
    out
}

fn bench(c: &mut Criterion, mesh: &op2_airfoil::Mesh) {
    let constants = Constants::default();
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(10).measurement_time(Duration::from_secs(6));

    let mut hand = Handwritten::new(mesh, &constants);
    group.bench_function("handwritten", |b| b.iter(|| black_box(hand.iteration())));

    for (name, rt) in runtimes() {
        let dsl = AirfoilDsl::new(mesh, &constants).expect("airfoil carriers");
        dsl.iteration(&rt).expect("warm-up (plans, jit compiles)");
        group.bench_function(name, |b| b.iter(|| black_box(dsl.iteration(&rt).expect("loop runs"))));
    }
    group.finish();
}

/// Bytes per iteration and each loop's GB/s on `rt`, from 10 iterations.
fn loop_bandwidths(rt: &Runtime, mesh: &op2_airfoil::Mesh) -> (f64, Vec<(String, f64, f64)>) {
    let dsl = AirfoilDsl::new(mesh, &Constants::default()).expect("airfoil carriers");
    dsl.iteration(rt).expect("warm-up");
    rt.reset_timings();
    let iterations = 10;
    for _ in 0..iterations {
        dsl.iteration(rt).expect("loop runs");
    }
    let rows = rt.timings();
    let bytes = rows.iter().map(op2::LoopTiming::bytes).sum::<f64>() / iterations as f64;
    let loops = rows
        .iter()
        .map(|r| (r.name.clone(), r.mean_bytes_per_call() / 1e6, r.gbytes_per_s()))
        .collect();
    (bytes, loops)
}

fn main() {
    let (i, j) = support::mesh_size((400, 600));
    let mesh = generate(i, j);
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &mesh);
    c.final_summary();
    let Some(seq) = support::mean_ns(GROUP, "dsl_seq") else {
        return; // a filtered run (e.g. `cargo bench -- handwritten`)
    };
    let triad = match op2_airfoil::triad::stream_triad_gbytes_per_s(THREADS) {
        Ok(gbs) => gbs,
        Err(e) => {
            eprintln!("airfoil bench: no bandwidth floor: {e}");
            return;
        }
    };
    let mut bytes = 0.0;
    let mut table: Vec<(String, f64, Vec<f64>)> = Vec::new();
    let mut names = Vec::new();
    for (name, rt) in runtimes() {
        let (b, loops) = loop_bandwidths(&rt, &mesh);
        bytes = b;
        names.push(name);
        for (k, (loop_name, mb, gbs)) in loops.into_iter().enumerate() {
            if table.len() <= k {
                table.push((loop_name, mb, Vec::new()));
            }
            table[k].2.push(gbs);
        }
    }
    let floor_ms = bytes / triad / 1e6;
    println!(
        "\nairfoil {i}x{j} ({} cells), {THREADS} threads for the threaded backends",
        3 * i * j
    );
    println!(
        "triad bandwidth {triad:.2} GB/s ({THREADS} threads); iteration moves {:.1} MB: floor {floor_ms:.2} ms/iteration",
        bytes / 1e6
    );
    println!(
        "\n{:<12}{:>10}{}",
        "loop",
        "MB/call",
        names
            .iter()
            .map(|n| format!("{:>22}", format!("{n} GB/s")))
            .collect::<String>()
    );
    for (loop_name, mb, gbs) in &table {
        let cols: String = gbs.iter().map(|g| format!("{g:>22.2}")).collect();
        println!("{loop_name:<12}{mb:>10.3}{cols}");
    }
    println!("\n{:<14}{:>14}{:>18}", "backend", "ms/iteration", "fraction of floor");
    let report = |name: &str, ns: f64| println!("{name:<14}{:>14.3}{:>18.3}", ns / 1e6, floor_ms * 1e6 / ns);
    if let Some(hand) = support::mean_ns(GROUP, "handwritten") {
        report("handwritten", hand);
    }
    report("dsl_seq", seq);
    for (name, ..) in THREADED {
        if let Some(t) = support::mean_ns(GROUP, name) {
            report(name, t);
        }
    }
    println!();
    if let Some(hand) = support::mean_ns(GROUP, "handwritten") {
        println!("ratio dsl_seq/handwritten = {:.3}", seq / hand);
    }
    for (name, ..) in THREADED {
        if let Some(t) = support::mean_ns(GROUP, name) {
            println!("speed-up dsl_seq/{name} = {:.2}", seq / t);
        }
    }
    if let (Some(r), Some(jt)) = (
        support::mean_ns(GROUP, "dsl_rayon_2"),
        support::mean_ns(GROUP, "dsl_jit_2"),
    ) {
        println!("ratio dsl_jit_2/dsl_rayon_2 = {:.3}", jt / r);
    }
    for (partitions, colours) in [("dsl_rayon_2", "rayon_2_colours"), ("dsl_jit_2", "jit_2_colours")] {
        if let (Some(p), Some(c)) = (support::mean_ns(GROUP, partitions), support::mean_ns(GROUP, colours)) {
            println!("ratio {partitions}/{colours} (partitions to colours) = {:.3}", p / c);
        }
    }
    match op2_peer::op2_times(&mesh, THREADS) {
        Ok(times) => {
            println!("\nOP2-Common's Airfoil, same mesh, same run (one-off costs excluded):");
            for (label, ms) in &times {
                println!("op2_{label:<10}{ms:>14.3}{:>18.3}", floor_ms / ms);
            }
            if let Some(&(_, omp)) = times.iter().find(|t| t.0 == "openmp") {
                for (name, ..) in THREADED {
                    if let Some(t) = support::mean_ns(GROUP, name) {
                        println!("ratio {name}/op2_openmp = {:.3}", t / 1e6 / omp);
                    }
                }
            }
        }
        Err(why) => println!("\nOP2's own Airfoil not timed: {why}"),
    }
}
