//! Random streams as a loop argument: a kernel parameter `rng: &mut Philox`
//! given `streams(DRAW)` gets, at element `e` of the `n`-th loop that draws
//! from `streams`, the stream `Philox::new(seed, global id of e, n)`.
//!
//! Why the loop counter lives here: a model that draws in several loops per
//! step, or several steps, must never reuse a stream, and must give the same
//! bits on every backend, thread count and rank count. Counting the loops
//! that use one `RandomStreams` (every rank runs the same loops in the same
//! order) gives that without the model threading a counter through its code.
//!
//! `par_loop!` turns the argument into two ordinary ones: the set's global
//! ids as a Dat of `i64` (built once per set and kept, so devices upload it
//! once) and a READ Global `[seed, counter]`. The `&mut Philox` parameter is
//! two hidden parameters of those types in the kernel's metadata and its C
//! translation, which starts with `Philox::new(seed, id, counter)`; the
//! native body makes the stream itself. So every backend runs it unchanged.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

use crate::{Dat, Error, Global, Philox, Result, Set};

/// Per-element random streams for the loops that draw from them (a kernel
/// parameter `rng: &mut Philox`, the loop argument `streams(DRAW)`).
///
/// Element `e` of the `n`-th such loop (counting from 0) draws from
/// `Philox::new(seed, set.global_id(e), n)`: the same bits on every backend,
/// thread count and rank count.
///
/// (A tested example is in the `op2` crate's guide, "Agents".)
///
/// ```text
/// use op2::prelude::*;
///
/// #[op2::kernel]
/// fn coin(heads: &mut i32, rng: &mut Philox) {
///     *heads = if rng.bernoulli(0.5) { 1 } else { 0 };
/// }
///
/// let rt = Runtime::new(Backend::Seq)?;
/// let agents = Set::new("agents", 100)?;
/// let heads = Dat::<i32>::zeros("heads", &agents, 1)?;
/// let streams = RandomStreams::new("coins", 7);
/// par_loop!(rt, coin, agents, heads(WRITE), streams(DRAW))?;
/// // Agent 3's stream in loop 0, drawn again on the host:
/// let mut again = streams.stream_of(&agents, 3, 0).unwrap();
/// assert_eq!(heads.data_ro()[3], i32::from(again.bernoulli(0.5)));
/// assert_eq!(streams.loops(), 1);
/// ```
pub struct RandomStreams {
    name: String,
    seed: u64,
    /// Loops run so far: the counter of the next.
    loops: AtomicU32,
    /// Whether the loop with counter `u32::MAX` ran: no counter is left.
    exhausted: AtomicBool,
    /// The global ids of each set drawn over (the Dat's set), as the `i64`
    /// Dat the loops read, with the generation of a dynamic set they were
    /// written for. An entry goes when only streams' ids Dats still hold
    /// the set (`Set::kept_by_op2`): nothing can loop over it again.
    ids: Mutex<Vec<(u64, Dat<i64>)>>,
}

impl RandomStreams {
    /// Streams under `seed`, no loop run yet.
    pub fn new(name: impl Into<String>, seed: u64) -> RandomStreams {
        RandomStreams {
            name: name.into(),
            seed,
            loops: AtomicU32::new(0),
            exhausted: AtomicBool::new(false),
            ids: Mutex::new(Vec::new()),
        }
    }

    /// The name (in the loop's argument errors).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Loops that have drawn from these streams: the counter the next loop
    /// uses (`u32::MAX` also once every counter is used, when a loop
    /// drawing from them is an [`Error::StreamsExhausted`]).
    pub fn loops(&self) -> u32 {
        self.loops.load(Ordering::Relaxed)
    }

    /// Makes the next loop use counter `n` (to resume a run from a checkpoint
    /// taken after `n` loops).
    pub fn set_loops(&self, n: u32) {
        self.loops.store(n, Ordering::Relaxed);
        self.exhausted.store(false, Ordering::Relaxed);
    }

    /// The stream element `e` of `set` gets in loop `n`, for checking or
    /// reproducing draws on the host; `None` if `e` is not an element of
    /// `set` on this process.
    pub fn stream_of(&self, set: &Set, e: usize, n: u32) -> Option<Philox> {
        set.global_id(e).map(|id| Philox::new(self.seed, id, n))
    }

    /// The two loop arguments for a loop over `set`: the global ids (built
    /// once per set) and `[seed, counter]`.
    ///
    /// # Errors
    /// [`Error::StreamsExhausted`] once a loop with counter `u32::MAX` ran;
    /// [`Error::HostBorrow`] if the ids must be rewritten while borrowed.
    #[doc(hidden)]
    pub fn loop_args(&self, set: &Set) -> Result<DrawArgs> {
        if self.exhausted.load(Ordering::Relaxed) {
            return Err(Error::StreamsExhausted {
                streams: self.name.clone(),
            });
        }
        let mut cache = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        // Sets dropped since: only the ids Dats of streams hold them.
        cache.retain(|(_, d)| {
            let keep = d.set().in_use_outside_op2();
            if !keep {
                d.set().kept_by_op2(false);
            }
            keep
        });
        let ids = match cache.iter_mut().find(|(_, d)| d.set().same(set)) {
            Some((generation, d)) => {
                if *generation != set.generation() {
                    // Births and deaths renumbered the set (the Dat followed,
                    // but children copied their parents' ids): rewrite it.
                    if let Some(p) = set.population() {
                        p.copy_ids(&mut d.try_data_mut()?)?;
                    }
                    *generation = set.generation();
                }
                d.clone()
            }
            None => {
                // Ids are u64; the Dat holds their bits (`as u64` gives them back).
                let ids: Vec<i64> = set.try_global_ids()?.iter().map(|&g| g as i64).collect();
                let d = Dat::from_vec(format!("{}.stream_ids", self.name), set, 1, ids)?;
                set.kept_by_op2(true);
                cache.push((set.generation(), d.clone()));
                d
            }
        };
        let counter = self.loops();
        let key = Global::new(format!("{}_key", self.name), vec![self.seed as i64, i64::from(counter)])?;
        Ok(DrawArgs {
            ids,
            key,
            seed: self.seed,
            counter,
        })
    }

    /// How many sets' ids the streams keep (those of sets still in use).
    #[doc(hidden)]
    pub fn sets_kept(&self) -> usize {
        self.ids.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Called after a loop that drew from these streams ran: the next
    /// counter, or, after `u32::MAX`, none (the next loop is refused
    /// rather than reusing loop 0's streams).
    #[doc(hidden)]
    pub fn loop_ran(&self) {
        if self
            .loops
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1))
            .is_err()
        {
            self.exhausted.store(true, Ordering::Relaxed);
        }
    }
}

/// What one loop drawing from [`RandomStreams`] passes (for `par_loop!`).
#[doc(hidden)]
pub struct DrawArgs {
    /// The loop's set's global ids, as `i64` bits.
    pub ids: Dat<i64>,
    /// `[seed, counter]`.
    pub key: Global<i64>,
    /// The seed.
    pub seed: u64,
    /// The loop counter.
    pub counter: u32,
}

impl Drop for RandomStreams {
    fn drop(&mut self) {
        for (_, d) in self.ids.get_mut().unwrap_or_else(|p| p.into_inner()).drain(..) {
            d.set().kept_by_op2(false);
        }
    }
}

impl std::fmt::Debug for RandomStreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RandomStreams")
            .field("name", &self.name)
            .field("seed", &self.seed)
            .field("loops", &self.loops())
            .finish()
    }
}
