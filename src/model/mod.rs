//! Agent models described, ordered and run (`op2-model`), and their logs:
//! [`Log`] says what to log, computed by loops on the simulation's runtime
//! (`statistics.rs`), [`LogFile`] where, and [`Logging`] hangs them on a
//! [`Simulation`]. [`AgentReductions`] gives host code counts, sums,
//! extremes and histograms of agent variables, reduced over the ranks of a
//! distributed run. [`Ensemble`] runs many plans of a model over threads,
//! devices and ranks; with feature `hdf5`, `Checkpoints` writes a
//! simulation to a file and resumes it, on any rank count, and
//! `CheckpointEvery` does so every few steps.
//!
//! A model of walkers on a line that drift towards the mean of their
//! neighbours, described, run for a few steps and logged:
//!
//! ```
//! use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Log, Message, MessageKind, Model, Simulation};
//! use op2::prelude::*;
//!
//! /// A walker moves a tenth of the way towards the mean of the positions
//! /// within reach (its own among them).
//! #[op2::kernel]
//! fn drift(x: &mut [f64; 2], xs: &[[f64; 2]], near: &Spatial2d, rate: &f64) {
//!     let mut sum = 0.0;
//!     let mut n = 0.0;
//!     for j in near.near(x[0], x[1]) {
//!         sum += xs[j][0];
//!         n += 1.0;
//!     }
//!     x[0] += *rate * (sum / n - x[0]);
//! }
//!
//! fn main() -> op2::Result<()> {
//!     let mut model = Model::new("walkers");
//!     model.add_agent(AgentType::new("walker").variable::<f64>("x", 2, &[0.0, 0.0]))?;
//!     let line = MessageKind::spatial_2d([0.0, 0.0], [10.0, 1.0], 1.0, false);
//!     model.add_message(Message::new("where", "walker", line).carries("x"))?;
//!     model.add_environment(EnvProperty::constant("rate", &[0.1]))?;
//!     model.add_function(AgentFunction::new("tell", "walker").output("where"))?;
//!     let listen = AgentFunction::new("listen", "walker").updates("x").input("where");
//!     model.add_function(listen.environment("rate", Access::Read))?;
//!     assert_eq!(model.layers()?.to_string(), "layer 1: tell\nlayer 2: listen");
//!
//!     let rt = Runtime::new(Backend::Seq)?;
//!     let mut sim = Simulation::new(&model, &rt)?;
//!     let x: Vec<f64> = (0..20).flat_map(|i| [i as f64 * 0.5, 0.5]).collect();
//!     sim.populate("walker", Agents::new(20).set("x", x))?;
//!     sim.bind("listen", |c| {
//!         let (x, list, xs, rate) = (c.var::<f64>("x")?, c.input()?, c.message::<f64>("x")?, c.env::<f64>("rate")?);
//!         par_loop!(c.rt(), drift, c.agents(), x(RW), xs(READ, list[..]), list(NEAR), rate(READ))
//!     })?;
//!     let spread = Log::new().count("walker").mean("walker", "x").std_dev("walker", "x");
//!     sim.start()?;
//!     let before = spread.values(&sim)?;
//!     assert_eq!(sim.run(10)?, 10);
//!     let after = spread.values(&sim)?;
//!     // Twenty walkers; they drew together (the spread of x narrowed).
//!     assert_eq!(after[0], 20.0);
//!     assert!(after[3] < before[3], "{before:?} -> {after:?}");
//!     Ok(())
//! }
//! ```

pub use op2_model::*;

#[cfg(feature = "hdf5")]
mod checkpoint;
mod ensemble;
mod log;
mod reductions;
mod statistics;

#[cfg(feature = "hdf5")]
pub use checkpoint::{CheckpointEvery, Checkpoints, CHECKPOINT_FORMAT};
pub use ensemble::{Ensemble, RunPlan};
pub use log::{Log, LogFile, LogFormat, Logging, Statistic};
pub use reductions::AgentReductions;
pub use statistics::MAX_BINS;
