//! The loops a log's statistics come from: per element type and width of a
//! variable, one loop that sums its values and their squares and takes
//! their minimum and maximum (INC, MIN and MAX into Globals), and one that
//! counts them into histogram bins. They run on the simulation's runtime,
//! on whatever backend it is: the values never go to the host. Over a
//! network's nodes (a Set cut among ranks) the loops combine the ranks'
//! results themselves; over agents shared by space, only when given the
//! ranks (`Ranks`) to combine them over.

use op2_model::Simulation;

use crate::prelude::*;
use crate::{Result, ScalarType};

/// Most bins a histogram has (its counts are one Global).
pub const MAX_BINS: usize = 64;

/// The ranks a loop's reductions are combined over (`None`: this
/// process's agents alone; see `Global::reduce_across`).
pub(crate) type Ranks = Option<std::sync::Arc<dyn crate::AllReduce>>;

/// Sums, sums of squares, minima and maxima of each component of a
/// variable.
pub(crate) struct Moments {
    pub sum: Vec<f64>,
    pub sum_sq: Vec<f64>,
    pub min: Vec<f64>,
    pub max: Vec<f64>,
}

macro_rules! moments_kernel {
    ($name:ident, $t:ident, $d:tt) => {
        #[crate::kernel]
        fn $name(x: &[$t; $d], sum: &mut [f64; $d], sum_sq: &mut [f64; $d], lo: &mut [f64; $d], hi: &mut [f64; $d]) {
            for c in 0..$d {
                let v = x[c] as f64;
                sum[c] += v;
                sum_sq[c] += v * v;
                lo[c] = lo[c].min(v);
                hi[c] = hi[c].max(v);
            }
        }
    };
}

macro_rules! histogram_kernel {
    ($name:ident, $t:ident, $d:tt) => {
        /// Counts component `shape[0]` into `shape[1]` bins over
        /// `[range[0], range[1])`; values outside count nowhere.
        #[crate::kernel]
        fn $name(x: &[$t; $d], range: &[f64; 2], shape: &[i32; 2], counts: &mut [i64; 64]) {
            let v = x[shape[0] as usize] as f64;
            if v >= range[0] && v < range[1] {
                let mut k = ((v - range[0]) / (range[1] - range[0]) * shape[1] as f64) as i32;
                if k >= shape[1] {
                    k = shape[1] - 1;
                }
                counts[k as usize] += 1;
            }
        }
    };
}

moments_kernel!(moments_f64_1, f64, 1);
moments_kernel!(moments_f64_2, f64, 2);
moments_kernel!(moments_f64_3, f64, 3);
moments_kernel!(moments_f64_4, f64, 4);
moments_kernel!(moments_f32_1, f32, 1);
moments_kernel!(moments_f32_2, f32, 2);
moments_kernel!(moments_f32_3, f32, 3);
moments_kernel!(moments_f32_4, f32, 4);
moments_kernel!(moments_i32_1, i32, 1);
moments_kernel!(moments_i32_2, i32, 2);
moments_kernel!(moments_i32_3, i32, 3);
moments_kernel!(moments_i32_4, i32, 4);
moments_kernel!(moments_i64_1, i64, 1);
moments_kernel!(moments_i64_2, i64, 2);
moments_kernel!(moments_i64_3, i64, 3);
moments_kernel!(moments_i64_4, i64, 4);
moments_kernel!(moments_u32_1, u32, 1);
moments_kernel!(moments_u32_2, u32, 2);
moments_kernel!(moments_u32_3, u32, 3);
moments_kernel!(moments_u32_4, u32, 4);
histogram_kernel!(histogram_f64_1, f64, 1);
histogram_kernel!(histogram_f64_2, f64, 2);
histogram_kernel!(histogram_f64_3, f64, 3);
histogram_kernel!(histogram_f64_4, f64, 4);
histogram_kernel!(histogram_f32_1, f32, 1);
histogram_kernel!(histogram_f32_2, f32, 2);
histogram_kernel!(histogram_f32_3, f32, 3);
histogram_kernel!(histogram_f32_4, f32, 4);
histogram_kernel!(histogram_i32_1, i32, 1);
histogram_kernel!(histogram_i32_2, i32, 2);
histogram_kernel!(histogram_i32_3, i32, 3);
histogram_kernel!(histogram_i32_4, i32, 4);
histogram_kernel!(histogram_i64_1, i64, 1);
histogram_kernel!(histogram_i64_2, i64, 2);
histogram_kernel!(histogram_i64_3, i64, 3);
histogram_kernel!(histogram_i64_4, i64, 4);
histogram_kernel!(histogram_u32_1, u32, 1);
histogram_kernel!(histogram_u32_2, u32, 2);
histogram_kernel!(histogram_u32_3, u32, 3);
histogram_kernel!(histogram_u32_4, u32, 4);

/// Runs `$kernel` chosen by the variable's type and width.
macro_rules! by_shape {
    ($scalar:expr, $dim:expr, $run:ident, [$($t:ident: $k1:ident $k2:ident $k3:ident $k4:ident),*]) => {
        match ($scalar, $dim) {
            $(
                (ScalarType::$t, 1) => $run!($k1),
                (ScalarType::$t, 2) => $run!($k2),
                (ScalarType::$t, 3) => $run!($k3),
                (ScalarType::$t, 4) => $run!($k4),
            )*
            _ => unreachable!("the log checked the width"),
        }
    };
}

/// The type and width of `agent.variable`, or why no statistic takes it
/// (not declared, or not 1 to 4 values): what logs and host reductions
/// both check.
pub(crate) fn shape(
    sim: &Simulation<'_>,
    agent: &str,
    variable: &str,
) -> std::result::Result<(ScalarType, usize), String> {
    let v = (sim.model().agent(agent)).and_then(|a| a.variable_named(variable));
    let v = v.ok_or_else(|| format!("`{agent}.{variable}`, which the model does not declare"))?;
    if !(1..=4).contains(&v.dim()) {
        return Err(format!(
            "`{agent}.{variable}` of {} values: statistics take 1 to 4",
            v.dim()
        ));
    }
    Ok((v.scalar(), v.dim()))
}

/// Why a histogram of component `component` of `agent.variable` (`dim`
/// values) in `bins` equal bins over `[lo, hi)` cannot be made, if it
/// cannot: the bounds must be finite and ordered, with a finite width.
pub(crate) fn histogram_fault(
    (agent, variable, dim): (&str, &str, usize),
    component: usize,
    (lo, hi): (f64, f64),
    bins: usize,
) -> Option<String> {
    let ordered = lo < hi && (hi - lo).is_finite();
    (component >= dim || !(1..=MAX_BINS).contains(&bins) || !ordered).then(|| {
        format!(
            "a histogram of component {component} of `{agent}.{variable}` ({dim} per agent) in {bins} bins over \
             [{lo}, {hi}): it needs a component below {dim}, 1 to {MAX_BINS} bins and finite lo < hi (a range from \
             lower to higher)"
        )
    })
}

/// The Dat of `agent.variable` as the kernel's element type.
fn typed<'a, T: crate::Scalar>(sim: &'a Simulation<'_>, agent: &str, variable: &str) -> Result<&'a Dat<T>> {
    sim.variable::<T>(agent, variable)
}

/// The moments of `agent.variable` (`scalar`, `dim` values each, dim 1 to 4).
pub(crate) fn moments(
    sim: &Simulation<'_>,
    agent: &str,
    variable: &str,
    scalar: ScalarType,
    dim: usize,
    ranks: Ranks,
) -> Result<Moments> {
    let set = sim.population(agent)?;
    let sum = Global::<f64>::zeros("log.sum", dim)?;
    let sum_sq = Global::<f64>::zeros("log.sum_sq", dim)?;
    let lo = Global::new("log.min", vec![f64::INFINITY; dim])?;
    let hi = Global::new("log.max", vec![f64::NEG_INFINITY; dim])?;
    for g in [&sum, &sum_sq, &lo, &hi] {
        g.reduce_across(ranks.clone());
    }
    macro_rules! run {
        ($k:ident) => {{
            let x = typed(sim, agent, variable)?;
            par_loop!(sim.rt(), $k, set, x(READ), sum(INC), sum_sq(INC), lo(MIN), hi(MAX))?
        }};
    }
    by_shape!(scalar, dim, run, [
        F64: moments_f64_1 moments_f64_2 moments_f64_3 moments_f64_4,
        F32: moments_f32_1 moments_f32_2 moments_f32_3 moments_f32_4,
        I32: moments_i32_1 moments_i32_2 moments_i32_3 moments_i32_4,
        I64: moments_i64_1 moments_i64_2 moments_i64_3 moments_i64_4,
        U32: moments_u32_1 moments_u32_2 moments_u32_3 moments_u32_4
    ]);
    let moments = Moments {
        sum: sum.try_data_ro()?.to_vec(),
        sum_sq: sum_sq.try_data_ro()?.to_vec(),
        min: lo.try_data_ro()?.to_vec(),
        max: hi.try_data_ro()?.to_vec(),
    };
    Ok(moments)
}

/// How many agents of `agent` are in each of its `states` states, by the
/// histogram loop over their state Dat.
pub(crate) fn state_counts(sim: &Simulation<'_>, agent: &str, states: usize) -> Result<Vec<u64>> {
    let (set, state) = (sim.population(agent)?, sim.states(agent)?);
    let range = Global::new("log.range", vec![0.0, states as f64])?;
    let shape = Global::new("log.shape", vec![0, states as i32])?;
    let counts = Global::<i64>::zeros("log.counts", MAX_BINS)?;
    par_loop!(
        sim.rt(),
        histogram_i32_1,
        set,
        state(READ),
        range(READ),
        shape(READ),
        counts(INC)
    )?;
    let counts: Vec<u64> = counts.try_data_ro()?[..states].iter().map(|&c| c as u64).collect();
    Ok(counts)
}

/// The counts of component `component` of `agent.variable` in `bins`
/// equal bins over `[lo, hi)`.
#[allow(clippy::too_many_arguments)] // what one histogram is
pub(crate) fn histogram(
    sim: &Simulation<'_>,
    agent: &str,
    variable: &str,
    scalar: ScalarType,
    dim: usize,
    component: usize,
    (lo, hi): (f64, f64),
    bins: usize,
    ranks: Ranks,
) -> Result<Vec<u64>> {
    let set = sim.population(agent)?;
    let range = Global::new("log.range", vec![lo, hi])?;
    let shape = Global::new("log.shape", vec![component as i32, bins as i32])?;
    let counts = Global::<i64>::zeros("log.counts", MAX_BINS)?;
    counts.reduce_across(ranks);
    macro_rules! run {
        ($k:ident) => {{
            let x = typed(sim, agent, variable)?;
            par_loop!(sim.rt(), $k, set, x(READ), range(READ), shape(READ), counts(INC))?
        }};
    }
    by_shape!(scalar, dim, run, [
        F64: histogram_f64_1 histogram_f64_2 histogram_f64_3 histogram_f64_4,
        F32: histogram_f32_1 histogram_f32_2 histogram_f32_3 histogram_f32_4,
        I32: histogram_i32_1 histogram_i32_2 histogram_i32_3 histogram_i32_4,
        I64: histogram_i64_1 histogram_i64_2 histogram_i64_3 histogram_i64_4,
        U32: histogram_u32_1 histogram_u32_2 histogram_u32_3 histogram_u32_4
    ]);
    let counts: Vec<u64> = counts.try_data_ro()?[..bins].iter().map(|&c| c as u64).collect();
    Ok(counts)
}
