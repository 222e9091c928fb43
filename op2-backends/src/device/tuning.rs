//! [`Increments::Auto`](crate::Increments::Auto): each loop whose indirect
//! increments can be coloured or atomic tries both at its first calls,
//! timed, and keeps the faster. Which is faster depends on the loop and the
//! device (on an H100, atomics won Airfoil's `res_calc` overall while
//! colouring keeps results the same bits run to run), so it is measured
//! rather than guessed, once per loop shape and executor.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::codegen::LoopShape;
use crate::IndirectWrites;

/// The calls a loop spends trying: each variant once untimed (compiling
/// and warming it), then [`TIMED_ROUNDS`] timed rounds of both.
const WARM_UP_CALLS: usize = 2;
/// Timed calls of each variant; the faster minimum wins.
pub const TIMED_ROUNDS: usize = 2;

/// Where one loop shape's trial stands.
enum Trial {
    /// `calls` so far; the best time of each variant (colouring, atomics).
    Running { calls: usize, best: [f64; 2] },
    /// The winner.
    Chosen(IndirectWrites),
}

/// What a call of a loop under trial runs.
pub struct TrialCall {
    /// The variant to run.
    pub writes: IndirectWrites,
    /// Whether to time it (the host then waits before and after it).
    pub timed: bool,
}

/// The trials of one executor, by loop shape.
#[derive(Default)]
pub struct IncrementsTuner {
    trials: Mutex<HashMap<LoopShape, Trial>>,
}

impl IncrementsTuner {
    /// The variant the next call of `shape` runs, given its two forms.
    pub fn next(&self, shape: &LoopShape, variants: [IndirectWrites; 2]) -> TrialCall {
        let mut trials = self.trials.lock().unwrap_or_else(|p| p.into_inner());
        let trial = trials.entry(shape.clone()).or_insert(Trial::Running {
            calls: 0,
            best: [f64::INFINITY; 2],
        });
        match trial {
            Trial::Chosen(w) => TrialCall {
                writes: *w,
                timed: false,
            },
            Trial::Running { calls, .. } => TrialCall {
                writes: variants[*calls % 2],
                timed: *calls >= WARM_UP_CALLS,
            },
        }
    }

    /// Records a call of `shape` that ran `writes` (timed: in `seconds`);
    /// after the last timed call, the faster variant is chosen and a line
    /// saying so is returned (for the timing summary and the log).
    pub fn record(
        &self,
        loop_name: &str,
        shape: &LoopShape,
        variants: [IndirectWrites; 2],
        writes: IndirectWrites,
        seconds: Option<f64>,
    ) -> Option<String> {
        let mut trials = self.trials.lock().unwrap_or_else(|p| p.into_inner());
        let Some(Trial::Running { calls, best }) = trials.get_mut(shape) else {
            return None;
        };
        let k = usize::from(writes == variants[1]);
        if let Some(s) = seconds {
            best[k] = best[k].min(s);
        }
        *calls += 1;
        if *calls < WARM_UP_CALLS + 2 * TIMED_ROUNDS {
            return None;
        }
        let faster = usize::from(best[1] < best[0]);
        let note = format!(
            "loop `{loop_name}`: increments by {} ({:.3} ms a call against {:.3} ms by {}), measured",
            name(variants[faster]),
            best[faster] * 1e3,
            best[1 - faster] * 1e3,
            name(variants[1 - faster]),
        );
        trials.insert(shape.clone(), Trial::Chosen(variants[faster]));
        Some(note)
    }
}

fn name(w: IndirectWrites) -> &'static str {
    match w {
        IndirectWrites::Atomic => "atomics",
        _ => "colouring",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> LoopShape {
        LoopShape {
            kernel: "k",
            source_id: 0,
            args: Vec::new(),
            partial_words: 0,
            subset: false,
        }
    }

    const VARIANTS: [IndirectWrites; 2] = [IndirectWrites::Coloured { whole_body: false }, IndirectWrites::Atomic];

    #[test]
    fn both_variants_are_warmed_timed_twice_and_the_faster_kept() {
        let t = IncrementsTuner::default();
        let s = shape();
        let mut runs = Vec::new();
        let mut note = None;
        // Atomics take 1 ms, colouring 2 ms.
        for _ in 0..6 {
            let call = t.next(&s, VARIANTS);
            runs.push((call.writes, call.timed));
            let secs = call.timed.then_some(if call.writes == IndirectWrites::Atomic {
                1e-3
            } else {
                2e-3
            });
            note = t.record("k", &s, VARIANTS, call.writes, secs).or(note);
        }
        let (c, a) = (VARIANTS[0], VARIANTS[1]);
        assert_eq!(
            runs,
            [(c, false), (a, false), (c, true), (a, true), (c, true), (a, true)]
        );
        let note = note.expect("a choice after six calls");
        assert!(
            note.contains("`k`: increments by atomics (1.000 ms") && note.contains("2.000 ms by colouring"),
            "{note}"
        );
        for _ in 0..3 {
            let call = t.next(&s, VARIANTS);
            assert_eq!((call.writes, call.timed), (a, false));
            assert!(t.record("k", &s, VARIANTS, call.writes, None).is_none());
        }
    }
}
