//! One step of FLAME GPU's Circles benchmark, in one run: the hand-written
//! cell-list step (`op2_circles::step_by_hand`: a counting sort into cells,
//! then the agents on a rayon pool) and `op2_circles::Circles::step` (the
//! spatial message list's build, then one loop over the agents through
//! `list(NEAR)`) on `rayon` (and with `--features jit`, `jit`), 2 threads
//! each, at two sizes. Prints ms per step, the ratio DSL/hand-written per
//! size, and the growth of each version's step from the small size to the
//! large one (linear in N would be the ratio of the sizes, 10).
//!
//! `cargo bench --bench circles` (`CIRCLES_BENCH_AGENTS=SMALLxLARGE` changes
//! the sizes; default 100 000 and 1 000 000 agents at density 1, radius 2,
//! about 33 neighbours each within the radius and 216 candidates in the 27
//! bins). Every iteration times the same step from the same positions (the
//! start is restored untimed); the versions are checked to agree first.
//! Both versions visit the agents in bin order: the hand-written step
//! iterates its cell list, and the op2 model's first (untimed) step sorts
//! its agents in memory by bin (`MessageList::sort_senders`, every 10 steps
//! in a run; `circles --sort-every` shows the cost amortised in a run).

use std::time::{Duration, Instant};

use criterion::Criterion;
use op2::{Backend, Runtime, RuntimeOptions};
use op2_circles::{box_side, initial_positions, step_by_hand, CellList, Circles, Params};

mod support;

const GROUP: &str = "circles_step";
const THREADS: usize = 2;
const SEED: u64 = 11;
const DSL: [(&str, Backend); 2] = [("dsl_rayon_2", Backend::Rayon), ("dsl_jit_2", Backend::Jit)];
const HAND: &str = "handwritten_rayon_2";

fn name(version: &str, agents: usize) -> String {
    format!("{version}_{agents}")
}

fn bench(c: &mut Criterion) -> (Vec<String>, [usize; 2]) {
    let (small, large) = support::size_from_env("CIRCLES_BENCH_AGENTS", (100_000, 1_000_000));
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(10).measurement_time(Duration::from_secs(3));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool");
    let p = Params::default();
    let mut ran = Vec::new();
    for n in [small, large] {
        let side = box_side(n, 1.0);
        let start = initial_positions(n, side, SEED);
        let mut cells = CellList::default();
        let mut after = start.clone();
        pool.install(|| step_by_hand(&mut after, side, p, &mut cells));
        let id = name(HAND, n);
        group.bench_function(&id, |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let mut pos = start.clone();
                    let t = Instant::now();
                    pool.install(|| step_by_hand(&mut pos, side, p, &mut cells));
                    spent += t.elapsed();
                }
                spent
            })
        });
        ran.push(id);
        for (version, backend) in DSL {
            let rt = match Runtime::with_options(backend, RuntimeOptions::default().threads(THREADS)) {
                Ok(rt) => rt,
                Err(e) => {
                    println!("{version}: skipped: {e}");
                    continue;
                }
            };
            let mut model = Circles::new(&start, side, p).expect("the model");
            model.step(&rt).expect("a step (compiles jit loops)");
            let worst = model
                .positions()
                .iter()
                .flatten()
                .zip(after.iter().flatten())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(worst <= 1e-5, "{version}: {worst} from the hand-written step");
            let id = name(version, n);
            group.bench_function(&id, |b| {
                b.iter_custom(|iters| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        // Step 1: sorted at step 0, not again in this step.
                        model.restart(&start, 1).expect("the start");
                        let t = Instant::now();
                        model.step(&rt).expect("a step");
                        spent += t.elapsed();
                    }
                    spent
                })
            });
            ran.push(id);
        }
    }
    group.finish();
    (ran, [small, large])
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let (ran, sizes) = bench(&mut c);
    c.final_summary();
    let mean = |id: &str| support::mean_ns(GROUP, id).filter(|_| ran.iter().any(|r| r == id));
    println!("\ncircles at density 1, radius 2, {THREADS} threads:");
    for n in sizes {
        let Some(hand) = mean(&name(HAND, n)) else { continue };
        println!("circles: {:<30} {:>10.2} ms/step", name(HAND, n), hand / 1e6);
        for (version, _) in DSL {
            if let Some(t) = mean(&name(version, n)) {
                println!(
                    "circles: {:<30} {:>10.2} ms/step, ratio to hand-written = {:.3}",
                    name(version, n),
                    t / 1e6,
                    t / hand
                );
            }
        }
    }
    for version in [HAND, DSL[0].0, DSL[1].0] {
        if let (Some(a), Some(b)) = (mean(&name(version, sizes[0])), mean(&name(version, sizes[1]))) {
            println!(
                "circles: {version} step {} -> {} agents grows {:.2}x (the sizes grow {:.1}x)",
                sizes[0],
                sizes[1],
                b / a,
                sizes[1] as f64 / sizes[0] as f64
            );
        }
    }
}
