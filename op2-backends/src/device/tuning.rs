//! [`Increments::Auto`](crate::Increments::Auto): each loop tries its
//! variants at its first calls, timed, and keeps the fastest: coloured or
//! atomic increments where it has both, and, where the options leave the
//! block size open, blocks of 128, 256 and 512 threads. Which is faster
//! depends on the loop and the device (on an H100, atomics won Airfoil
//! overall while colouring keeps results the same bits run to run), so it is
//! measured rather than guessed, once per loop shape and executor.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::codegen::LoopShape;
use crate::IndirectWrites;

/// Timed calls of each variant; the fastest minimum wins.
pub const TIMED_ROUNDS: usize = 2;

/// The block sizes a trial tries where the options give none.
pub const TRIAL_BLOCK_SIZES: [usize; 3] = [128, 256, 512];

/// One way to run a loop: how its indirect writes are made safe, and its
/// threads per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// Coloured or atomic increments.
    pub writes: IndirectWrites,
    /// Threads per block.
    pub block_size: usize,
}

/// Where one loop shape's trial stands.
enum Trial {
    /// Calls so far, and each variant's best time.
    Running { calls: usize, best: Vec<f64> },
    /// The winner.
    Chosen(Variant),
}

/// What a call of a loop under trial runs.
pub struct TrialCall {
    /// The variant to run.
    pub variant: Variant,
    /// Whether to time it (the host then waits before and after it).
    pub timed: bool,
}

/// The trials of one executor, by loop shape.
#[derive(Default)]
pub struct Tuner {
    trials: Mutex<HashMap<LoopShape, Trial>>,
}

impl Tuner {
    /// The variant chosen for `shape`, once its trial has ended (or
    /// [`Tuner::settle`] fixed it): what every later call runs.
    pub fn chosen(&self, shape: &LoopShape) -> Option<Variant> {
        let trials = self.trials.lock().unwrap_or_else(|p| p.into_inner());
        match trials.get(shape) {
            Some(Trial::Chosen(v)) => Some(*v),
            _ => None,
        }
    }

    /// Whether `shape` has a trial running or a variant chosen.
    pub fn started(&self, shape: &LoopShape) -> bool {
        self.trials
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(shape)
    }

    /// Fixes `shape`'s variant without a trial (it has only one).
    pub fn settle(&self, shape: &LoopShape, variant: Variant) {
        let mut trials = self.trials.lock().unwrap_or_else(|p| p.into_inner());
        trials.insert(shape.clone(), Trial::Chosen(variant));
    }

    /// The variant the next call of `shape` runs, of `variants` (the same
    /// list at every call of the shape): each once untimed (compiling and
    /// warming it), then [`TIMED_ROUNDS`] timed rounds of all, then the
    /// fastest.
    pub fn next(&self, shape: &LoopShape, variants: &[Variant]) -> TrialCall {
        let mut trials = self.trials.lock().unwrap_or_else(|p| p.into_inner());
        let trial = trials.entry(shape.clone()).or_insert_with(|| Trial::Running {
            calls: 0,
            best: vec![f64::INFINITY; variants.len()],
        });
        match trial {
            Trial::Chosen(v) => TrialCall {
                variant: *v,
                timed: false,
            },
            Trial::Running { calls, .. } => TrialCall {
                variant: variants[*calls % variants.len()],
                timed: *calls >= variants.len(),
            },
        }
    }

    /// Records a call of `shape` that ran `variant` (timed: in `seconds`);
    /// after the last timed call, the fastest variant is chosen and a line
    /// saying so is returned (for the timing summary and the log).
    pub fn record(
        &self,
        loop_name: &str,
        shape: &LoopShape,
        variants: &[Variant],
        variant: Variant,
        seconds: Option<f64>,
    ) -> Option<String> {
        let mut trials = self.trials.lock().unwrap_or_else(|p| p.into_inner());
        let Some(Trial::Running { calls, best }) = trials.get_mut(shape) else {
            return None;
        };
        if let (Some(s), Some(k)) = (seconds, variants.iter().position(|v| *v == variant)) {
            best[k] = best[k].min(s);
        }
        *calls += 1;
        if *calls < variants.len() * (1 + TIMED_ROUNDS) {
            return None;
        }
        let mut order: Vec<usize> = (0..variants.len()).collect();
        order.sort_by(|&a, &b| best[a].total_cmp(&best[b]));
        let (first, second) = (order[0], order[1]);
        let note = format!(
            "loop `{loop_name}`: {} ({:.3} ms a call; next {}, {:.3} ms), measured",
            describe(variants[first]),
            best[first] * 1e3,
            describe(variants[second]),
            best[second] * 1e3,
        );
        trials.insert(shape.clone(), Trial::Chosen(variants[first]));
        Some(note)
    }
}

/// `atomics, 256 threads a block`.
pub(super) fn describe(v: Variant) -> String {
    let writes = match v.writes {
        IndirectWrites::Atomic => "atomics",
        IndirectWrites::Coloured { .. } => "colouring",
        IndirectWrites::None => "direct",
    };
    format!("{writes}, {} threads a block", v.block_size)
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

    const COLOURED: IndirectWrites = IndirectWrites::Coloured { whole_body: false };

    #[test]
    fn every_variant_is_warmed_timed_twice_and_the_fastest_kept() {
        let variants = [
            Variant {
                writes: COLOURED,
                block_size: 128,
            },
            Variant {
                writes: IndirectWrites::Atomic,
                block_size: 128,
            },
            Variant {
                writes: IndirectWrites::Atomic,
                block_size: 256,
            },
        ];
        // Atomics in blocks of 256 take 1 ms, the others 2 and 3.
        let time = |v: Variant| match (v.writes, v.block_size) {
            (IndirectWrites::Atomic, 256) => 1e-3,
            (IndirectWrites::Atomic, _) => 2e-3,
            _ => 3e-3,
        };
        let t = Tuner::default();
        let s = shape();
        let mut runs = Vec::new();
        let mut note = None;
        for _ in 0..9 {
            let call = t.next(&s, &variants);
            runs.push((call.variant, call.timed));
            let secs = call.timed.then(|| time(call.variant));
            note = t.record("k", &s, &variants, call.variant, secs).or(note);
        }
        let want: Vec<(Variant, bool)> = (0..9).map(|i| (variants[i % 3], i >= 3)).collect();
        assert_eq!(runs, want);
        let note = note.expect("a choice after nine calls");
        assert!(
            note.contains("`k`: atomics, 256 threads a block (1.000 ms")
                && note.contains("next atomics, 128 threads a block, 2.000 ms"),
            "{note}"
        );
        for _ in 0..3 {
            let call = t.next(&s, &variants);
            assert_eq!((call.variant, call.timed), (variants[2], false));
            assert!(t.record("k", &s, &variants, call.variant, None).is_none());
        }
        assert_eq!(t.chosen(&s), Some(variants[2]));
    }

    #[test]
    fn a_shape_is_chosen_only_after_its_trial_or_when_settled() {
        let t = Tuner::default();
        let s = shape();
        let v = Variant {
            writes: COLOURED,
            block_size: 64,
        };
        assert_eq!(t.chosen(&s), None);
        assert!(!t.started(&s));
        let _ = t.next(&s, &[v, v]);
        assert!(t.started(&s), "its first call starts the trial");
        assert_eq!(t.chosen(&s), None, "a running trial has no choice yet");
        t.settle(&s, v);
        assert_eq!(t.chosen(&s), Some(v));
    }
}
