//! Globals shared by the ranks of a run (`Global::reduce_across`), with a
//! stand-in for the ranks: a reduction that combines this process's value
//! with a second rank's, which holds the same. Every backend: a loop over a
//! set that is not distributed reduces on this rank, then the ranks
//! combine (INC adds the value before once, MIN and MAX take the extreme);
//! an empty subset still takes part; a loop refused before it runs does not.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use op2::prelude::*;
use op2::{AllReduce, Error, ScalarType};

#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

/// Two ranks holding the same values: sums double, extremes stay; counts
/// its calls.
#[derive(Default)]
struct TwinRanks(AtomicUsize);

impl AllReduce for TwinRanks {
    fn all_reduce(&self, values: &mut [u8], scalar: ScalarType, op: Access) -> op2::Result<()> {
        self.0.fetch_add(1, Ordering::Relaxed);
        assert_eq!(scalar, ScalarType::F64);
        if op == Access::Inc {
            for v in values.chunks_exact_mut(8) {
                let x = 2.0 * f64::from_ne_bytes(v.try_into().unwrap());
                v.copy_from_slice(&x.to_ne_bytes());
            }
        }
        Ok(())
    }
}

#[op2::kernel]
fn tally(x: &f64, sum: &mut f64, low: &mut f64, high: &mut f64) {
    *sum += *x;
    if *x < *low {
        *low = *x;
    }
    if *x > *high {
        *high = *x;
    }
}

#[test]
fn shared_globals_combine_the_ranks_after_each_loop() {
    for rt in backends() {
        let b = rt.backend();
        let agents = Set::new("agents", 6).unwrap();
        let x = Dat::from_vec("x", &agents, 1, vec![3.0, -1.0, 4.0, 1.5, 9.0, 2.0]).unwrap();
        let sum = Global::scalar("sum", 10.0);
        let (low, high) = (Global::scalar("low", 0.0), Global::scalar("high", 5.0));
        let ranks = Arc::new(TwinRanks::default());
        for g in [&sum, &low, &high] {
            g.reduce_across(Some(ranks.clone()));
        }
        par_loop!(rt, tally, agents, x(READ), sum(INC), low(MIN), high(MAX)).unwrap();
        // 10 before, and each rank's 18.5.
        assert_eq!(sum.value(), 10.0 + 2.0 * 18.5, "{b}");
        assert_eq!((low.value(), high.value()), (-1.0, 9.0), "{b}");
        assert_eq!(ranks.0.load(Ordering::Relaxed), 3, "{b}: one reduction per Global");
        // An empty subset reduces nothing here and still takes part.
        let none = Subset::new("none", &agents, vec![]).unwrap();
        par_loop!(rt, tally, none, x(READ), sum(INC), low(MIN), high(MAX)).unwrap();
        assert_eq!(ranks.0.load(Ordering::Relaxed), 6, "{b}: the empty subset's");
        assert_eq!(sum.value(), 47.0, "{b}");
        // Shared no more: this process's alone.
        sum.reduce_across(None);
        par_loop!(rt, tally, agents, x(READ), sum(INC), low(MIN), high(MAX)).unwrap();
        assert_eq!(sum.value(), 47.0 + 18.5, "{b}");
        assert_eq!(ranks.0.load(Ordering::Relaxed), 8, "{b}: low and high only");
    }
}

/// A loop refused before it runs (here, a Dat of another set) leaves the
/// shared Global as it was: the refusal comes before anything collective,
/// as it does on every rank alike.
#[test]
fn a_refused_loop_reduces_nothing() {
    let rt = Runtime::new(Backend::Seq).unwrap();
    let (a, other) = (Set::new("a", 2).unwrap(), Set::new("other", 2).unwrap());
    let x = Dat::from_vec("x", &other, 1, vec![1.0, 2.0]).unwrap();
    let (sum, low, high) = (
        Global::scalar("sum", 1.0),
        Global::scalar("low", 0.0),
        Global::scalar("high", 0.0),
    );
    let ranks = Arc::new(TwinRanks::default());
    sum.reduce_across(Some(ranks.clone()));
    let e = par_loop!(rt, tally, a, x(READ), sum(INC), low(MIN), high(MAX)).unwrap_err();
    assert!(!matches!(e, Error::Mpi { .. }), "{e}");
    assert_eq!((sum.value(), ranks.0.load(Ordering::Relaxed)), (1.0, 0));
}
