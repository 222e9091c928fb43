//! Logs of a simulation (`op2::model::Log`): counts, sums, means, standard
//! deviations, minima, maxima and histograms computed by loops on every
//! backend agree with the same statistics computed on the host (histogram
//! bins and counts exactly), environment properties are logged as they
//! are, CSV and JSON lines files hold a row per logged step, and bad
//! entries are errors naming them.

use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Log, LogFile, Logging, Model, Simulation};
use op2::prelude::*;
use op2::Error;

#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

/// Particles `p` with a position `x` (f64 x 2), a level `n` (i32) and a
/// weight `w` (f32) that `drift` moves each step; property `gain`.
fn model() -> Model {
    let mut m = Model::new("particles");
    let p = AgentType::new("p")
        .variable::<f64>("x", 2, &[0.0, 0.0])
        .variable::<i32>("n", 1, &[0])
        .variable::<f32>("w", 1, &[1.0]);
    m.add_agent(p).unwrap();
    m.add_environment(EnvProperty::constant("gain", &[0.5f64, -2.0]))
        .unwrap();
    m.add_environment(EnvProperty::constant("scale", &[3.0f32])).unwrap();
    m.add_function(
        AgentFunction::new("drift", "p")
            .updates("x")
            .environment("gain", Access::Read),
    )
    .unwrap();
    m
}

#[op2::kernel]
fn drift(x: &mut [f64; 2], gain: &[f64; 2]) {
    x[0] = x[0] * gain[0] + 1.0;
    x[1] += gain[1];
}

fn simulation(rt: &Runtime, n: usize) -> Simulation<'_> {
    let mut sim = Simulation::new(&model(), rt).unwrap();
    let x: Vec<f64> = (0..2 * n).map(|i| ((i * 37) % 101) as f64 / 7.0 - 3.0).collect();
    let levels: Vec<i32> = (0..n).map(|i| ((i * 13) % 17) as i32 - 5).collect();
    let w: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.25).collect();
    sim.populate("p", Agents::new(n).set("x", x).set("n", levels).set("w", w))
        .unwrap();
    sim.bind("drift", |c| {
        let (x, gain) = (c.var::<f64>("x")?, c.env::<f64>("gain")?);
        par_loop!(c.rt(), drift, c.agents(), x(RW), gain(READ))
    })
    .unwrap();
    sim
}

fn log() -> Log {
    Log::new()
        .count("p")
        .sum("p", "x")
        .mean("p", "x")
        .std_dev("p", "n")
        .min("p", "n")
        .max("p", "w")
        .histogram("p", "x", 1, (-6.0, 6.0), 8)
        .histogram("p", "n", 0, (-5.0, 12.0), 17)
        .environment("gain")
}

/// The log's row computed on the host from the agents' values.
fn on_host(sim: &Simulation<'_>) -> Vec<f64> {
    let x = sim.variable::<f64>("p", "x").unwrap().to_vec();
    let n = sim.variable::<i32>("p", "n").unwrap().to_vec();
    let w = sim.variable::<f32>("p", "w").unwrap().to_vec();
    let count = n.len() as f64;
    let col = |c: usize| x.chunks(2).map(move |p| p[c]);
    let sums = [col(0).sum::<f64>(), col(1).sum::<f64>()];
    let mean_n = n.iter().map(|&v| v as f64).sum::<f64>() / count;
    let var_n = n.iter().map(|&v| (v as f64 - mean_n).powi(2)).sum::<f64>() / count;
    let mut row = vec![count, sums[0], sums[1], sums[0] / count, sums[1] / count, var_n.sqrt()];
    row.push(*n.iter().min().unwrap() as f64);
    row.push(w.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64);
    let hist = |values: Vec<f64>, lo: f64, hi: f64, bins: usize| {
        let mut h = vec![0.0; bins];
        for v in values {
            if v >= lo && v < hi {
                h[(((v - lo) / (hi - lo) * bins as f64) as usize).min(bins - 1)] += 1.0;
            }
        }
        h
    };
    row.extend(hist(col(1).collect(), -6.0, 6.0, 8));
    row.extend(hist(n.iter().map(|&v| v as f64).collect(), -5.0, 12.0, 17));
    row.extend([0.5, -2.0]);
    row
}

#[test]
fn statistics_by_loops_match_the_host_on_every_backend() {
    for rt in backends() {
        let mut sim = simulation(&rt, 1000);
        sim.run(3).unwrap();
        let log = log();
        let columns = log.columns(&sim).unwrap();
        assert_eq!(columns.len(), 1 + 2 + 2 + 1 + 1 + 1 + 8 + 17 + 2);
        assert_eq!(&columns[..4], ["p.count", "p.x[0].sum", "p.x[1].sum", "p.x[0].mean"]);
        assert_eq!(columns[8], "p.x[1].hist[0]");
        assert_eq!(columns[columns.len() - 1], "gain[1]");
        let got = log.values(&sim).unwrap();
        let want = on_host(&sim);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let exact = k == 0 || k == 6 || k == 7 || (8..8 + 25).contains(&k) || k >= 33;
            if exact {
                assert_eq!(g, w, "{}: {} is exact", rt.backend(), columns[k]);
            } else {
                assert!(
                    (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                    "{}: {} = {g}, host {w}",
                    rt.backend(),
                    columns[k]
                );
            }
        }
        // Some particles fell in the histograms, and not all in one bin.
        let hist = &got[8..16];
        assert!(
            hist.iter().sum::<f64>() > 100.0 && hist.iter().filter(|&&c| c > 0.0).count() > 2,
            "{hist:?}"
        );
    }
}

#[test]
fn logs_go_to_csv_and_json_lines_every_k_steps() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model_log");
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, json) = (dir.join("steps.csv"), dir.join("steps.jsonl"));
    let mut sim = simulation(&rt, 50);
    let small = Log::new().count("p").mean("p", "x");
    Logging::new(small.clone(), LogFile::create(&csv).unwrap())
        .steps(&mut sim, 2)
        .unwrap();
    Logging::new(small.clone(), LogFile::create(&json).unwrap())
        .exit(&mut sim)
        .unwrap();
    assert_eq!(sim.run(5).unwrap(), 5);
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "step,p.count,p.x[0].mean,p.x[1].mean");
    let steps: Vec<&str> = lines[1..].iter().map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(steps, ["0", "2", "4"]);
    let last: Vec<f64> = lines[3].split(',').map(|v| v.parse().unwrap()).collect();
    // After 4 steps x[1] fell by 2 a step from its start.
    let start = simulation(&rt, 50);
    let mut start = start;
    start.start().unwrap();
    let x1: f64 = small.values(&start).unwrap()[2];
    assert!((last[3] - (x1 - 8.0)).abs() < 1e-12, "{last:?} from {x1}");
    let json_text = std::fs::read_to_string(&json).unwrap();
    let rows: Vec<serde_json::Value> = json_text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 1, "one row at exit");
    assert_eq!(rows[0]["step"], 5);
    assert_eq!(rows[0]["p.count"], 50.0);
}

#[test]
fn bad_log_entries_are_named() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = simulation(&rt, 10);
    sim.start().unwrap();
    let cases = [
        (Log::new().count("q"), "counts agent type `q`"),
        (
            Log::new().mean("p", "y"),
            "logs `p.y`, which the model does not declare",
        ),
        (Log::new().histogram("p", "x", 2, (0.0, 1.0), 4), "component 2"),
        (Log::new().histogram("p", "n", 0, (0.0, 1.0), 65), "1 to 64 bins"),
        (
            Log::new().histogram("p", "n", 0, (1.0, 1.0), 4),
            "a range from lower to higher",
        ),
        (
            Log::new().histogram("p", "n", 0, (0.0, f64::INFINITY), 4),
            "finite lo < hi",
        ),
        (Log::new().environment("g"), "environment property `g`"),
    ];
    for (log, want) in cases {
        match log.values(&sim) {
            Err(Error::InvalidModel { reason, .. }) => assert!(reason.contains(want), "{reason}"),
            other => panic!("expected an error naming {want}, got {other:?}"),
        }
    }
}

/// A property some code holds for writing cannot be logged: an error
/// naming it, whatever its type, not a panic.
#[test]
fn a_property_held_for_writing_is_an_error_to_log() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let mut sim = simulation(&rt, 10);
    sim.start().unwrap();
    assert_eq!(Log::new().environment("scale").values(&sim).unwrap(), vec![3.0]);
    let scale = sim.environment::<f32>("scale").unwrap();
    let held = scale.data_mut();
    let e = Log::new().environment("scale").values(&sim).unwrap_err();
    assert!(e.to_string().contains("scale"), "{e}");
    drop(held);
}
