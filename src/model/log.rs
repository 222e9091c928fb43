//! Logs of a simulation (FLAME GPU's step and exit logging configs): what
//! to log ([`Log`]: counts of agents, sums, means, standard deviations,
//! minima and maxima of their variables, histograms, environment
//! properties), computed by loops on the simulation's runtime
//! (`statistics.rs`) and reduced over the ranks of a distributed run, and
//! where ([`LogFile`]: CSV or JSON lines, written by rank 0 alone, so a
//! distributed run gives one log). [`Logging`] hangs them on a simulation.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use op2_model::Simulation;

use super::statistics::{self, MAX_BINS};
use crate::{Access, Error, Result, ScalarType};

/// A statistic of a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// The sum.
    Sum,
    /// The mean (NaN with no agents).
    Mean,
    /// The population standard deviation, from the sums of the values and
    /// of their squares (NaN with no agents).
    StdDev,
    /// The minimum (+inf with no agents).
    Min,
    /// The maximum (-inf with no agents).
    Max,
}

impl Statistic {
    fn name(self) -> &'static str {
        match self {
            Statistic::Sum => "sum",
            Statistic::Mean => "mean",
            Statistic::StdDev => "std_dev",
            Statistic::Min => "min",
            Statistic::Max => "max",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Count(String),
    States(String),
    Variable(String, String, Statistic),
    Histogram {
        agent: String,
        variable: String,
        component: usize,
        range: (f64, f64),
        bins: usize,
    },
    Environment(String),
}

/// What a log holds: a row of named values per logged step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log {
    entries: Vec<Entry>,
}

/// How the values of one row are reduced over the ranks of a run.
type Reduce<'a> = &'a dyn Fn(&mut [f64], Access);

impl Log {
    /// A log of nothing yet.
    pub fn new() -> Log {
        Log::default()
    }

    /// Logs how many agents of type `agent` there are (column
    /// `agent.count`).
    pub fn count(mut self, agent: impl Into<String>) -> Log {
        self.entries.push(Entry::Count(agent.into()));
        self
    }

    /// Logs how many agents of type `agent` are in each of its states
    /// (columns `agent.<state>`), counted by a loop.
    pub fn count_states(mut self, agent: impl Into<String>) -> Log {
        self.entries.push(Entry::States(agent.into()));
        self
    }

    /// Logs `statistic` of every component of `agent.variable` (column
    /// `agent.variable.sum`; for a variable of several values one column
    /// per component, `agent.variable[c].sum`).
    pub fn stat(mut self, agent: impl Into<String>, variable: impl Into<String>, statistic: Statistic) -> Log {
        self.entries
            .push(Entry::Variable(agent.into(), variable.into(), statistic));
        self
    }

    /// Logs the sum of `agent.variable`.
    pub fn sum(self, agent: impl Into<String>, variable: impl Into<String>) -> Log {
        self.stat(agent, variable, Statistic::Sum)
    }

    /// Logs the mean of `agent.variable`.
    pub fn mean(self, agent: impl Into<String>, variable: impl Into<String>) -> Log {
        self.stat(agent, variable, Statistic::Mean)
    }

    /// Logs the standard deviation of `agent.variable`.
    pub fn std_dev(self, agent: impl Into<String>, variable: impl Into<String>) -> Log {
        self.stat(agent, variable, Statistic::StdDev)
    }

    /// Logs the minimum of `agent.variable`.
    pub fn min(self, agent: impl Into<String>, variable: impl Into<String>) -> Log {
        self.stat(agent, variable, Statistic::Min)
    }

    /// Logs the maximum of `agent.variable`.
    pub fn max(self, agent: impl Into<String>, variable: impl Into<String>) -> Log {
        self.stat(agent, variable, Statistic::Max)
    }

    /// Logs a histogram of component `component` of `agent.variable`:
    /// the agents in each of `bins` equal bins over `[range.0, range.1)`
    /// (bin `k` holds `lo + k w <= x < lo + (k + 1) w`, `w = (hi - lo) /
    /// bins`, as `((x - lo) / (hi - lo) * bins)` rounds down); values
    /// outside count in no bin. Columns `agent.variable.hist[k]` (or
    /// `agent.variable[c].hist[k]`).
    pub fn histogram(
        mut self,
        agent: impl Into<String>,
        variable: impl Into<String>,
        component: usize,
        range: (f64, f64),
        bins: usize,
    ) -> Log {
        self.entries.push(Entry::Histogram {
            agent: agent.into(),
            variable: variable.into(),
            component,
            range,
            bins,
        });
        self
    }

    /// Logs environment property `property` (column `property`, or
    /// `property[k]` for each of several values).
    pub fn environment(mut self, property: impl Into<String>) -> Log {
        self.entries.push(Entry::Environment(property.into()));
        self
    }

    fn invalid(sim: &Simulation<'_>, reason: String) -> Error {
        Error::InvalidModel {
            model: sim.model().name().to_string(),
            reason: format!("the log: {reason}"),
        }
    }

    /// The variable `agent.variable` of `sim`'s model: its type and width
    /// (1 to 4 values for a statistic).
    fn shape(sim: &Simulation<'_>, agent: &str, variable: &str) -> Result<(ScalarType, usize)> {
        statistics::shape(sim, agent, variable).map_err(|reason| Log::invalid(sim, format!("logs {reason}")))
    }

    /// The names of a row's values, in order (after the step).
    ///
    /// # Errors
    /// [`Error::InvalidModel`] naming an agent type, variable or property
    /// the model does not declare, a variable of more than 4 values, a
    /// component past its width, or a histogram of no bins, more than
    /// [`MAX_BINS`], or an empty range.
    pub fn columns(&self, sim: &Simulation<'_>) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let component = |name: String, dim: usize, c: usize| match dim {
            1 => name,
            _ => format!("{name}[{c}]"),
        };
        for e in &self.entries {
            match e {
                Entry::Count(agent) => {
                    if sim.model().agent(agent).is_none() {
                        return Err(Log::invalid(
                            sim,
                            format!("counts agent type `{agent}`, which the model does not have"),
                        ));
                    }
                    out.push(format!("{agent}.count"));
                }
                Entry::States(agent) => {
                    let states = sim
                        .model()
                        .agent(agent)
                        .map(|a| a.state_names().to_vec())
                        .unwrap_or_default();
                    if states.is_empty() || states.len() > MAX_BINS {
                        return Err(Log::invalid(
                            sim,
                            format!("counts the states of `{agent}`: a type of 1 to {MAX_BINS} states"),
                        ));
                    }
                    out.extend(states.iter().map(|s| format!("{agent}.{s}")));
                }
                Entry::Variable(agent, variable, s) => {
                    let (_, dim) = Log::shape(sim, agent, variable)?;
                    let name = format!("{agent}.{variable}");
                    out.extend((0..dim).map(|c| format!("{}.{}", component(name.clone(), dim, c), s.name())));
                }
                Entry::Histogram {
                    agent,
                    variable,
                    component: c,
                    range,
                    bins,
                } => {
                    let (_, dim) = Log::shape(sim, agent, variable)?;
                    if let Some(fault) = statistics::histogram_fault((agent, variable, dim), *c, *range, *bins) {
                        return Err(Log::invalid(sim, fault));
                    }
                    let name = component(format!("{agent}.{variable}"), dim, *c);
                    out.extend((0..*bins).map(|k| format!("{name}.hist[{k}]")));
                }
                Entry::Environment(p) => {
                    let prop = sim.model().environment_property(p).ok_or_else(|| {
                        Log::invalid(
                            sim,
                            format!("logs environment property `{p}`, which the model does not declare"),
                        )
                    })?;
                    out.extend((0..prop.len()).map(|k| component(p.clone(), prop.len(), k)));
                }
            }
        }
        Ok(out)
    }

    /// The values of a row now, on one process.
    ///
    /// # Errors
    /// As [`Log::columns`]; the loops' errors.
    pub fn values(&self, sim: &Simulation<'_>) -> Result<Vec<f64>> {
        self.values_reduced(sim, &|_, _| {})
    }

    /// The values of a row now, every rank's agents together (collective).
    ///
    /// # Errors
    /// As [`Log::values`].
    #[cfg(feature = "mpi")]
    pub fn values_across(&self, sim: &Simulation<'_>, mpi: &crate::mpi::Mpi) -> Result<Vec<f64>> {
        self.values_reduced(sim, &|v, op| mpi.reduce_f64(v, op))
    }

    fn values_reduced(&self, sim: &Simulation<'_>, reduce: Reduce<'_>) -> Result<Vec<f64>> {
        self.columns(sim)?;
        // A loop over a set cut among the ranks (a network's nodes) reduces
        // its Globals across the ranks itself: its results are reduced once.
        let none: Reduce<'_> = &|_, _| {};
        let looped = |agent: &str| -> Result<Reduce<'_>> {
            Ok(match sim.population(agent)?.distribution() {
                Some(_) => none,
                None => reduce,
            })
        };
        let mut out = Vec::new();
        let mut moments: Vec<(String, String, f64, statistics::Moments)> = Vec::new();
        for e in &self.entries {
            match e {
                Entry::Count(agent) => {
                    let mut n = [sim.population(agent)?.size() as f64];
                    reduce(&mut n, Access::Inc);
                    out.push(n[0]);
                }
                Entry::States(agent) => {
                    let states = sim.model().agent(agent).map_or(0, |a| a.state_names().len());
                    let mut counts: Vec<f64> = (statistics::state_counts(sim, agent, states)?.iter())
                        .map(|&c| c as f64)
                        .collect();
                    looped(agent)?(&mut counts, Access::Inc);
                    out.extend(counts);
                }
                Entry::Variable(agent, variable, s) => {
                    let (scalar, dim) = Log::shape(sim, agent, variable)?;
                    // One loop (and one set of reductions) per variable, however
                    // many of its statistics the row holds.
                    let k = match moments.iter().position(|(a, v, _, _)| a == agent && v == variable) {
                        Some(k) => k,
                        None => {
                            let mut m = statistics::moments(sim, agent, variable, scalar, dim, None)?;
                            let mut n = [sim.population(agent)?.size() as f64];
                            reduce(&mut n, Access::Inc);
                            let reduce = looped(agent)?;
                            reduce(&mut m.sum, Access::Inc);
                            reduce(&mut m.sum_sq, Access::Inc);
                            reduce(&mut m.min, Access::Min);
                            reduce(&mut m.max, Access::Max);
                            moments.push((agent.clone(), variable.clone(), n[0], m));
                            moments.len() - 1
                        }
                    };
                    let (_, _, n, m) = &moments[k];
                    let (n, sum, sum_sq, min, max) = (*n, &m.sum, &m.sum_sq, &m.min, &m.max);
                    out.extend((0..dim).map(|c| {
                        let mean = sum[c] / n;
                        match s {
                            Statistic::Sum => sum[c],
                            Statistic::Mean => mean,
                            Statistic::StdDev => (sum_sq[c] / n - mean * mean).max(0.0).sqrt(),
                            Statistic::Min => min[c],
                            Statistic::Max => max[c],
                        }
                    }));
                }
                Entry::Histogram {
                    agent,
                    variable,
                    component,
                    range,
                    bins,
                } => {
                    let (scalar, dim) = Log::shape(sim, agent, variable)?;
                    let counts =
                        statistics::histogram(sim, agent, variable, scalar, dim, *component, *range, *bins, None)?;
                    let mut counts: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
                    looped(agent)?(&mut counts, Access::Inc);
                    out.extend(counts);
                }
                Entry::Environment(p) => out.extend(environment_values(sim, p)?),
            }
        }
        Ok(out)
    }
}

/// Environment property `p`'s values as f64.
fn environment_values(sim: &Simulation<'_>, p: &str) -> Result<Vec<f64>> {
    let scalar = sim.model().environment_property(p).map(|q| q.scalar());
    Ok(match scalar {
        Some(ScalarType::F64) => sim.environment::<f64>(p)?.try_data_ro()?.to_vec(),
        Some(ScalarType::F32) => sim
            .environment::<f32>(p)?
            .try_data_ro()?
            .iter()
            .map(|&v| v as f64)
            .collect(),
        Some(ScalarType::I32) => sim
            .environment::<i32>(p)?
            .try_data_ro()?
            .iter()
            .map(|&v| v as f64)
            .collect(),
        Some(ScalarType::I64) => sim
            .environment::<i64>(p)?
            .try_data_ro()?
            .iter()
            .map(|&v| v as f64)
            .collect(),
        Some(ScalarType::U32) => sim
            .environment::<u32>(p)?
            .try_data_ro()?
            .iter()
            .map(|&v| v as f64)
            .collect(),
        None => sim.environment::<f64>(p)?.try_data_ro()?.to_vec(),
    })
}

/// The form of a log file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// A header `step,<columns>`, then a line per logged step.
    Csv,
    /// A JSON object per line: `{"step":N,"<column>":value,...}` (NaN and
    /// infinities as null).
    JsonLines,
}

impl LogFormat {
    /// JSON lines for a path ending in `.json` or `.jsonl`, else CSV.
    pub fn of_path(path: &Path) -> LogFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json" | "jsonl") => LogFormat::JsonLines,
            _ => LogFormat::Csv,
        }
    }
}

/// Where a log's rows go: a file on rank 0, nothing on the others.
pub struct LogFile {
    format: LogFormat,
    out: Option<BufWriter<File>>,
    path: String,
    header: bool,
}

impl LogFile {
    /// A log file at `path`, in the form its name says
    /// ([`LogFormat::of_path`]).
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be created.
    pub fn create(path: impl AsRef<Path>) -> Result<LogFile> {
        LogFile::on_rank(path, 0)
    }

    /// A log file at `path` written by rank 0 only (`rank` is this
    /// process's): every rank computes the rows, one writes them.
    ///
    /// # Errors
    /// As [`LogFile::create`] (on rank 0).
    pub fn on_rank(path: impl AsRef<Path>, rank: usize) -> Result<LogFile> {
        let path = path.as_ref();
        let out = match rank {
            0 => Some(BufWriter::new(File::create(path).map_err(|e| io_error(path, e))?)),
            _ => None,
        };
        Ok(LogFile {
            format: LogFormat::of_path(path),
            out,
            path: path.display().to_string(),
            header: false,
        })
    }

    /// Writes the row of step `step`.
    ///
    /// # Errors
    /// [`Error::Io`] if the write fails.
    pub fn write(&mut self, step: u64, columns: &[String], values: &[f64]) -> Result<()> {
        let Some(out) = &mut self.out else { return Ok(()) };
        let mut line = String::new();
        match self.format {
            LogFormat::Csv => {
                if !self.header {
                    line += "step";
                    for c in columns {
                        line += ",";
                        line += c;
                    }
                    line += "\n";
                    self.header = true;
                }
                line += &step.to_string();
                for v in values {
                    line += &format!(",{v}");
                }
            }
            LogFormat::JsonLines => {
                line += &format!("{{\"step\":{step}");
                for (c, v) in columns.iter().zip(values) {
                    let v = if v.is_finite() {
                        format!("{v}")
                    } else {
                        "null".to_string()
                    };
                    line += &format!(",{}:{v}", serde_json_string(c));
                }
                line += "}";
            }
        }
        line += "\n";
        let path = &self.path;
        out.write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| io_error(Path::new(path), e))
    }
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// `s` as a JSON string.
fn serde_json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            c if (c as u32) < 0x20 => out += &format!("\\u{:04x}", c as u32),
            c => out.push(c),
        }
    }
    out + "\""
}

/// A log hung on a simulation: [`Logging::steps`] logs every K steps (and
/// when the simulation starts, step 0), [`Logging::exit`] once at the end
/// of the run.
pub struct Logging<'rt> {
    log: Log,
    file: LogFile,
    #[cfg(feature = "mpi")]
    mpi: Option<&'rt crate::mpi::Mpi>,
    #[cfg(not(feature = "mpi"))]
    _rt: std::marker::PhantomData<&'rt ()>,
}

impl<'rt> Logging<'rt> {
    /// `log`'s rows to `file`.
    pub fn new(log: Log, file: LogFile) -> Logging<'rt> {
        Logging {
            log,
            file,
            #[cfg(feature = "mpi")]
            mpi: None,
            #[cfg(not(feature = "mpi"))]
            _rt: std::marker::PhantomData,
        }
    }

    /// Rows of every rank's agents together (the simulation is distributed
    /// on `mpi`'s ranks; give every rank's `LogFile` with
    /// [`LogFile::on_rank`]).
    #[cfg(feature = "mpi")]
    pub fn across(mut self, mpi: &'rt crate::mpi::Mpi) -> Logging<'rt> {
        self.mpi = Some(mpi);
        self
    }

    fn row(&mut self, sim: &Simulation<'_>) -> Result<()> {
        let columns = self.log.columns(sim)?;
        #[cfg(feature = "mpi")]
        let values = match self.mpi {
            Some(mpi) => self.log.values_across(sim, mpi)?,
            None => self.log.values(sim)?,
        };
        #[cfg(not(feature = "mpi"))]
        let values = self.log.values(sim)?;
        self.file.write(sim.steps(), &columns, &values)
    }

    /// Logs a row when `sim` starts (step 0; at once if it has) and after
    /// every `every` steps.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] if `every` is 0; as [`Log::columns`], now.
    pub fn steps(self, sim: &mut Simulation<'rt>, every: u64) -> Result<()> {
        if every == 0 {
            return Err(Error::InvalidOption {
                option: "log every",
                reason: "log every 1 step or more".to_string(),
            });
        }
        self.log.columns(sim)?;
        let shared = std::rc::Rc::new(std::cell::RefCell::new(self));
        if sim.is_started() {
            shared.borrow_mut().row(sim)?;
        } else {
            let at_start = shared.clone();
            sim.add_init_function(move |sim| at_start.borrow_mut().row(sim));
        }
        sim.add_step_function(move |sim| match sim.steps() % every {
            0 => shared.borrow_mut().row(sim),
            _ => Ok(()),
        });
        Ok(())
    }

    /// Logs one row when `sim`'s run ends (its exit functions).
    ///
    /// # Errors
    /// As [`Log::columns`], now.
    pub fn exit(mut self, sim: &mut Simulation<'rt>) -> Result<()> {
        self.log.columns(sim)?;
        sim.add_exit_function(move |sim| self.row(sim));
        Ok(())
    }
}
