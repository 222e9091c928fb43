//! Agent models described, ordered and run (`op2-model`), and their logs:
//! [`Log`] says what to log, computed by loops on the simulation's runtime
//! (`statistics.rs`), [`LogFile`] where, and [`Logging`] hangs them on a
//! [`Simulation`].

pub use op2_model::*;

mod log;
mod statistics;

pub use log::{Log, LogFile, LogFormat, Logging, Statistic};
pub use statistics::MAX_BINS;
