//! Ensembles (`op2::model::Ensemble`): 64 runs of the network SIR, each
//! with its own seed and probabilities, give every run's output exactly as
//! a lone run with that plan gives it, whatever the number of worker
//! threads (1 and 4) and on every backend; a failed run is an error naming
//! it. (On 3 ranks: `tests/mpi.rs`.)

use op2::model::{Ensemble, RunPlan};
use op2::prelude::*;

#[path = "support/sir_ensemble.rs"]
mod sir_ensemble;
use sir_ensemble::{epidemic_log, lone_logs, plans, small_network};

#[test]
fn every_run_of_an_ensemble_is_its_lone_run() {
    let (ids, edges) = small_network();
    let plans = plans(64);
    let alone = lone_logs(&ids, &edges, &plans);
    // The runs differ (else the comparison would say little).
    let distinct: std::collections::HashSet<&String> = alone.iter().collect();
    assert!(distinct.len() > 32, "{} distinct logs", distinct.len());
    let backends = [
        Backend::Seq,
        Backend::Rayon,
        Backend::Jit,
        Backend::OpenCl,
        Backend::Cuda,
    ];
    for backend in backends {
        if let Err(e) = Runtime::new(backend) {
            // Not built in, or no GPU; with OP2_REQUIRE_GPU set, cuda must run.
            let required = backend == Backend::Cuda && std::env::var_os("OP2_REQUIRE_GPU").is_some();
            assert!(!required, "OP2_REQUIRE_GPU is set: {e}");
            continue;
        }
        for threads in [1, 4] {
            let ensemble = Ensemble::new(backend).threads(threads);
            let got = ensemble
                .run(&plans, |_, plan, rt| epidemic_log(rt, &ids, &edges, plan))
                .unwrap();
            assert!(got == alone, "{backend}, {threads} threads: every run as alone");
        }
    }
}

#[test]
fn a_failed_run_is_an_error_naming_it() {
    let (ids, edges) = small_network();
    let mut plans = plans(10);
    plans[6] = plans[6].clone().with("p_infect", 1.5);
    let e = Ensemble::new(Backend::Seq)
        .threads(3)
        .run(&plans, |_, plan, rt| epidemic_log(rt, &ids, &edges, plan))
        .unwrap_err();
    assert!(
        e.to_string().contains("run 6 failed") && e.to_string().contains("p-infect"),
        "{e}"
    );
    let e = RunPlan::new(1, 1).parameter("beta").unwrap_err();
    assert!(e.to_string().contains("`beta`"), "{e}");
}

#[test]
fn workers_without_a_runtime_fail_every_run_naming_it() {
    let (ids, edges) = small_network();
    let plans = plans(3);
    // No OpenCL device has this name (nor is OpenCL built in everywhere).
    let e = Ensemble::new(Backend::OpenCl)
        .devices(["no-such-device"])
        .threads(2)
        .run(&plans, |_, plan, rt| epidemic_log(rt, &ids, &edges, plan))
        .unwrap_err()
        .to_string();
    assert!(e.contains("run 0 failed") && e.contains("has no runtime"), "{e}");
}
