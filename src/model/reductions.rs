//! Reductions of an agent type's variable that host code asks for between
//! steps (FLAME GPU's host agent reductions): how many agents hold a value
//! ([`AgentReductions::count`], [`AgentReductions::count_each`]), sums,
//! minima and maxima, histograms. Each is one loop on the simulation's
//! runtime (the values stay where they are), and in a distributed run its
//! Globals are shared by the ranks, so every rank gets the whole run's
//! answer.

use op2_model::Simulation;

use super::statistics::{self, MAX_BINS};
use crate::prelude::*;
use crate::{Error, Result, Scalar, ScalarType};

macro_rules! count_kernel {
    ($name:ident, $t:ident) => {
        /// Counts the element under the first of `values[..n]` it equals.
        #[crate::kernel]
        fn $name(x: &$t, values: &[$t; 64], n: &i32, counts: &mut [i64; 64]) {
            let mut k = 0;
            let mut found = 0;
            while k < *n && found == 0 {
                if *x == values[k as usize] {
                    counts[k as usize] += 1;
                    found = 1;
                }
                k += 1;
            }
        }
    };
}

count_kernel!(count_f64, f64);
count_kernel!(count_f32, f32);
count_kernel!(count_i32, i32);
count_kernel!(count_i64, i64);
count_kernel!(count_u32, u32);

/// Reductions of agent variables, computed on the simulation's runtime and
/// combined over the ranks of a distributed run (so, in one, collective:
/// every rank asks for the same reductions in the same order).
pub trait AgentReductions {
    /// How many agents of type `agent` hold `value` in `variable` (one
    /// value per agent, of type `T`). Floating-point values count by `==`:
    /// NaN never, -0.0 as 0.0.
    ///
    /// # Errors
    /// As [`AgentReductions::count_each`].
    fn count<T: Scalar>(&self, agent: &str, variable: &str, value: T) -> Result<u64> {
        Ok(self.count_each(agent, variable, &[value])?[0])
    }

    /// How many agents of type `agent` hold each of `values` in `variable`,
    /// in one loop: say, the agents in each of an epidemic's states.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the model has no such variable, it holds
    /// more than one value per agent or values of another type than `T`,
    /// a value repeats, or there are more than [`MAX_BINS`] values;
    /// [`Error::InvalidModel`] before the simulation starts; the loop's
    /// errors.
    fn count_each<T: Scalar>(&self, agent: &str, variable: &str, values: &[T]) -> Result<Vec<u64>>;

    /// The sum of each of `agent.variable`'s components (1 to 4) over the
    /// agents, in f64.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] if the model has no such variable or it holds
    /// more than 4 values; the loop's errors.
    fn sum(&self, agent: &str, variable: &str) -> Result<Vec<f64>>;

    /// The minimum of each component (+inf with no agents).
    ///
    /// # Errors
    /// As [`AgentReductions::sum`].
    fn min(&self, agent: &str, variable: &str) -> Result<Vec<f64>>;

    /// The maximum of each component (-inf with no agents).
    ///
    /// # Errors
    /// As [`AgentReductions::sum`].
    fn max(&self, agent: &str, variable: &str) -> Result<Vec<f64>>;

    /// How many agents' component `component` of `variable` falls in each
    /// of `bins` equal bins over `[lo, hi)` (FLAME GPU's `histogramEven`);
    /// values outside count nowhere.
    ///
    /// # Errors
    /// As [`AgentReductions::sum`]; [`Error::InvalidModel`] if `component`
    /// is not one of the variable's, `bins` is 0 or more than
    /// [`MAX_BINS`], or `lo < hi` do not hold with both (and `hi - lo`)
    /// finite.
    fn histogram(
        &self,
        agent: &str,
        variable: &str,
        component: usize,
        range: (f64, f64),
        bins: usize,
    ) -> Result<Vec<u64>>;
}

impl AgentReductions for Simulation<'_> {
    fn count_each<T: Scalar>(&self, agent: &str, variable: &str, values: &[T]) -> Result<Vec<u64>> {
        let (scalar, dim) = shape(self, agent, variable)?;
        if scalar != T::TYPE || dim != 1 {
            return Err(invalid(
                self,
                format!(
                    "counts `{agent}.{variable}` as single `{}` values, and it holds {dim} `{}` per agent",
                    T::TYPE.rust_name(),
                    scalar.rust_name()
                ),
            ));
        }
        if values.len() > MAX_BINS {
            return Err(invalid(
                self,
                format!(
                    "counts {} values of `{agent}.{variable}` in one loop: at most {MAX_BINS}",
                    values.len()
                ),
            ));
        }
        if let Some(k) = (1..values.len()).find(|&k| values[..k].iter().any(|v| v == &values[k])) {
            return Err(invalid(
                self,
                format!("counts `{agent}.{variable}` equal to {:?} twice", values[k]),
            ));
        }
        let set = self.population(agent)?;
        let mut padded = vec![T::default(); MAX_BINS];
        padded[..values.len()].copy_from_slice(values);
        let n = Global::new("count.n", vec![values.len() as i32])?;
        let counts = Global::<i64>::zeros("count.counts", MAX_BINS)?;
        counts.reduce_across(self.ranks());
        macro_rules! run {
            ($k:ident, $t:ty) => {{
                let x = self.variable::<$t>(agent, variable)?;
                let values = Global::new("count.values", bytemuck::cast_slice::<T, $t>(&padded).to_vec())?;
                par_loop!(self.rt(), $k, set, x(READ), values(READ), n(READ), counts(INC))?
            }};
        }
        match scalar {
            ScalarType::F64 => run!(count_f64, f64),
            ScalarType::F32 => run!(count_f32, f32),
            ScalarType::I32 => run!(count_i32, i32),
            ScalarType::I64 => run!(count_i64, i64),
            ScalarType::U32 => run!(count_u32, u32),
        }
        let counts = counts.try_data_ro()?;
        Ok(counts[..values.len()].iter().map(|&c| c as u64).collect())
    }

    fn sum(&self, agent: &str, variable: &str) -> Result<Vec<f64>> {
        Ok(moments(self, agent, variable)?.sum)
    }

    fn min(&self, agent: &str, variable: &str) -> Result<Vec<f64>> {
        Ok(moments(self, agent, variable)?.min)
    }

    fn max(&self, agent: &str, variable: &str) -> Result<Vec<f64>> {
        Ok(moments(self, agent, variable)?.max)
    }

    fn histogram(
        &self,
        agent: &str,
        variable: &str,
        component: usize,
        (lo, hi): (f64, f64),
        bins: usize,
    ) -> Result<Vec<u64>> {
        let (scalar, dim) = shape(self, agent, variable)?;
        if let Some(fault) = statistics::histogram_fault((agent, variable, dim), component, (lo, hi), bins) {
            return Err(invalid(self, fault));
        }
        let range = (lo, hi);
        statistics::histogram(self, agent, variable, scalar, dim, component, range, bins, self.ranks())
    }
}

/// The sums, minima and maxima of `agent.variable` over the run.
fn moments(sim: &Simulation<'_>, agent: &str, variable: &str) -> Result<statistics::Moments> {
    let (scalar, dim) = shape(sim, agent, variable)?;
    statistics::moments(sim, agent, variable, scalar, dim, sim.ranks())
}

/// The type and width of `agent.variable`, if the model declares it with
/// 1 to 4 values.
fn shape(sim: &Simulation<'_>, agent: &str, variable: &str) -> Result<(ScalarType, usize)> {
    statistics::shape(sim, agent, variable).map_err(|reason| invalid(sim, reason))
}

fn invalid(sim: &Simulation<'_>, reason: String) -> Error {
    Error::InvalidModel {
        model: sim.model().name().to_string(),
        reason: format!("a reduction of agents: {reason}"),
    }
}
