//! Ensembles over the ranks: 64 runs of the network SIR shared among the
//! ranks (and 1 or 4 worker threads on each) give, collected on rank 0,
//! every run's output exactly as a lone run with that plan gives it; a
//! run that fails on one rank is an error on every rank.

use op2::model::Ensemble;
use op2::mpi::Mpi;
use op2::prelude::*;

use crate::sir_ensemble::{epidemic_log, lone_logs, plans, small_network};

pub fn ensembles_over_ranks_give_every_lone_run(mpi: &Mpi) {
    let (ids, edges) = small_network();
    let plans = plans(64);
    let alone = lone_logs(&ids, &edges, &plans);
    for threads in [1, 4] {
        let got = Ensemble::new(Backend::Seq)
            .threads(threads)
            .across(mpi)
            .run(&plans, |_, plan, rt| epidemic_log(rt, &ids, &edges, plan))
            .unwrap();
        match mpi.rank() {
            0 => assert!(
                got == alone,
                "{threads} threads on {} ranks: every run as alone",
                mpi.size()
            ),
            _ => assert!(got.is_empty(), "the outputs are rank 0's"),
        }
    }
    // Run 5 fails, on whichever rank runs it: every rank returns the error.
    let mut bad = plans.clone();
    bad[5] = bad[5].clone().with("p_recover", -1.0);
    let e = Ensemble::new(Backend::Seq)
        .threads(2)
        .across(mpi)
        .run(&bad, |_, plan, rt| epidemic_log(rt, &ids, &edges, plan))
        .unwrap_err();
    let here = 5 % mpi.size() == mpi.rank();
    let text = e.to_string();
    // Every rank names the run; the one that ran it says why.
    assert!(
        text.contains("run 5 failed") && (text.contains("p-recover") || !here),
        "rank {}: {text}",
        mpi.rank()
    );
}
