//! Planning time of Airfoil's res_calc loop (1 438 600 edges incrementing
//! through pecell) on the 720 000-cell mesh, per block size. A plan is built
//! once per loop and cached; this is that one-off cost. The host backends'
//! partitions of the plan (`Plan::partitions`) are built on first use:
//! their cost and shape are printed too.
//!
//! `cargo bench --bench planner`

use std::time::Duration;

use criterion::{black_box, BenchmarkId, Criterion};
use op2_airfoil::{generate, AirfoilDsl, Constants};
use op2_core::{conflicts, Access, ArgData, ArgSpec, MapIndex, Plan};

fn main() {
    let mesh = generate(400, 600);
    let a = AirfoilDsl::new(&mesh, &Constants::default()).expect("airfoil carriers");
    let inc = |i| ArgSpec::through_map(ArgData::Dat(&a.res), Access::Inc, &a.pecell, MapIndex::Entry(i));
    let args = [inc(0), inc(1)];
    let conflicts = conflicts(&args);
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut group = c.benchmark_group("plan_res_calc_720k");
    for block_size in [256usize, 1024, 4096] {
        let plan = Plan::build(0..a.edges.size(), block_size, &conflicts);
        println!(
            "block size {block_size}: {} blocks, {} colours",
            plan.nblocks(),
            plan.ncolours()
        );
        group.bench_with_input(BenchmarkId::from_parameter(block_size), &block_size, |b, &bs| {
            b.iter(|| black_box(Plan::build(0..a.edges.size(), bs, &conflicts).ncolours()))
        });
        let start = std::time::Instant::now();
        let s = plan.partitions();
        let took = start.elapsed();
        let interiors: usize = s.phase(0).flat_map(|u| s.unit(u)).map(|r| r.len()).sum();
        println!(
            "block size {block_size}: partitions built in {:.1} ms: {} interiors holding {:.1}% of the edges, then {} boundary colours",
            took.as_secs_f64() * 1e3,
            s.phase(0).len(),
            100.0 * interiors as f64 / a.edges.size() as f64,
            s.nphases() - 1
        );
    }
    group.finish();
    c.final_summary();
}
