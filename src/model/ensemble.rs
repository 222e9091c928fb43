//! Ensembles (FLAME GPU's): many runs of one model with their own
//! parameters, seeds and lengths ([`RunPlan`]), run concurrently. Each run
//! is a simulation on a runtime of its own, so its result depends only on
//! its plan: runs spread over host threads (each worker its own runtime;
//! with a device backend, each worker on one of the given devices) and,
//! under `mpirun`, over the ranks (rank r takes the runs r, r + P, ...).
//! The outputs come back in plan order, collected on rank 0.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::{Backend, Error, Result, Runtime, RuntimeOptions};

/// One run of an ensemble: its seed, its steps and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPlan {
    /// The seed of the run's random streams.
    pub seed: u64,
    /// Steps to run.
    pub steps: u64,
    /// Named parameters (say `p_infect`), in the order given.
    pub parameters: Vec<(String, f64)>,
}

impl RunPlan {
    /// A run of `steps` steps under `seed`, without parameters.
    pub fn new(seed: u64, steps: u64) -> RunPlan {
        RunPlan {
            seed,
            steps,
            parameters: Vec::new(),
        }
    }

    /// The plan with parameter `name` set to `value` (replacing it).
    pub fn with(mut self, name: impl Into<String>, value: f64) -> RunPlan {
        let name = name.into();
        self.parameters.retain(|(n, _)| *n != name);
        self.parameters.push((name, value));
        self
    }

    /// Parameter `name`.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] if the plan has no such parameter.
    pub fn parameter(&self, name: &str) -> Result<f64> {
        (self.parameters.iter().find(|(n, _)| n == name).map(|(_, v)| *v)).ok_or_else(|| Error::InvalidOption {
            option: "run plan",
            reason: format!("the plan has no parameter `{name}`"),
        })
    }
}

/// Where an ensemble's runs go: worker threads, devices and ranks.
pub struct Ensemble<'m> {
    backend: Backend,
    threads: usize,
    devices: Vec<String>,
    #[cfg(feature = "mpi")]
    mpi: Option<&'m crate::mpi::Mpi>,
    #[cfg(not(feature = "mpi"))]
    mpi: std::marker::PhantomData<&'m ()>,
}

impl<'m> Ensemble<'m> {
    /// Runs on `backend`, one worker thread (each run's runtime has one
    /// thread of its own: the runs are the parallelism).
    pub fn new(backend: Backend) -> Ensemble<'m> {
        Ensemble {
            backend,
            threads: 1,
            devices: Vec::new(),
            mpi: Default::default(),
        }
    }

    /// `n` worker threads (at least 1), each running one run at a time.
    pub fn threads(mut self, n: usize) -> Ensemble<'m> {
        self.threads = n.max(1);
        self
    }

    /// For a device backend: worker `w` runs on device `devices[w % len]`
    /// (ordinals for `cuda`, as `OP2_CUDA_DEVICE` takes them).
    pub fn devices<S: Into<String>>(mut self, devices: impl IntoIterator<Item = S>) -> Ensemble<'m> {
        self.devices = devices.into_iter().map(Into::into).collect();
        self
    }

    /// Shares the runs among the ranks of `mpi` (collective: every rank
    /// calls [`Ensemble::run`] with the same plans).
    #[cfg(feature = "mpi")]
    pub fn across(mut self, mpi: &'m crate::mpi::Mpi) -> Ensemble<'m> {
        self.mpi = Some(mpi);
        self
    }

    /// This process's rank and the number of ranks.
    fn ranks(&self) -> (usize, usize) {
        #[cfg(feature = "mpi")]
        if let Some(mpi) = self.mpi {
            return (mpi.rank(), mpi.size());
        }
        (0, 1)
    }

    /// Runs every plan: `run(k, plan, rt)` makes and runs plan `k`'s
    /// simulation on `rt` and returns its output (a log, a row). Returns
    /// every output in plan order (under MPI on rank 0; the other ranks
    /// get an empty list).
    ///
    /// # Errors
    /// The first failed run's error (by plan order), naming the run, on
    /// every rank; [`Error::InvalidOption`] if a worker's runtime cannot be
    /// made.
    pub fn run<F>(&self, plans: &[RunPlan], run: F) -> Result<Vec<String>>
    where
        F: Fn(usize, &RunPlan, &Runtime) -> Result<String> + Sync,
    {
        let (rank, ranks) = self.ranks();
        let mine: Vec<usize> = (rank..plans.len()).step_by(ranks).collect();
        let outputs = self.run_here(plans, &mine, &run);
        self.collect(plans.len(), &mine, outputs)
    }

    /// Runs plans `mine` on this process's workers: each output or error.
    fn run_here<F>(&self, plans: &[RunPlan], mine: &[usize], run: &F) -> Vec<Result<String>>
    where
        F: Fn(usize, &RunPlan, &Runtime) -> Result<String> + Sync,
    {
        let next = AtomicUsize::new(0);
        let done: Mutex<Vec<Option<Result<String>>>> = Mutex::new((0..mine.len()).map(|_| None).collect());
        std::thread::scope(|scope| {
            for worker in 0..self.threads.min(mine.len()) {
                let (next, done) = (&next, &done);
                scope.spawn(move || {
                    let mut options = RuntimeOptions::default().threads(1);
                    if !self.devices.is_empty() {
                        options = options.device(self.devices[worker % self.devices.len()].clone());
                    }
                    let rt = Runtime::with_options(self.backend, options);
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&k) = mine.get(j) else { break };
                        let out = match &rt {
                            Ok(rt) => run(k, &plans[k], rt).map_err(|e| run_failed(k, &e.to_string())),
                            Err(e) => Err(run_failed(k, &format!("worker {worker} has no runtime: {e}"))),
                        };
                        done.lock().unwrap_or_else(|p| p.into_inner())[j] = Some(out);
                    }
                });
            }
        });
        let done = done.into_inner().unwrap_or_else(|p| p.into_inner());
        (done.into_iter().zip(mine))
            .map(|(o, &k)| o.unwrap_or_else(|| Err(run_failed(k, "no worker ran it"))))
            .collect()
    }

    /// The outputs of every rank's runs, in plan order, on rank 0; the
    /// first failure on every rank.
    fn collect(&self, total: usize, mine: &[usize], outputs: Vec<Result<String>>) -> Result<Vec<String>> {
        let failed = outputs.iter().position(Result::is_err);
        #[cfg(feature = "mpi")]
        if let Some(mpi) = self.mpi {
            // The first failed run of each rank (u64::MAX: none), then the least.
            let mut first = vec![0u64; mpi.size()];
            first[mpi.rank()] = failed.map_or(u64::MAX, |j| mine[j] as u64);
            mpi.sum_u64(&mut first);
            let least = first.iter().copied().filter(|&k| k != u64::MAX).min();
            if let Some(k) = least {
                return match failed.filter(|&j| mine[j] as u64 == k) {
                    Some(j) => Err(outputs.into_iter().nth(j).and_then(Result::err).expect("it failed")),
                    None => Err(run_failed(
                        k as usize,
                        "on another rank (its error is in that rank's output)",
                    )),
                };
            }
            // Each run as a record: its index, its text's length, its text.
            let mut records = Vec::new();
            for (&k, out) in mine.iter().zip(&outputs) {
                let text = out.as_ref().expect("none failed").as_bytes();
                records.extend_from_slice(&(k as u64).to_le_bytes());
                records.extend_from_slice(&(text.len() as u64).to_le_bytes());
                records.extend_from_slice(text);
            }
            let Some(parts) = mpi.gather_bytes(&records)? else {
                return Ok(Vec::new());
            };
            let mut texts: Vec<Option<String>> = vec![None; total];
            for part in &parts {
                let mut at = 0;
                while at < part.len() {
                    let word = |at: usize| u64::from_le_bytes(part[at..at + 8].try_into().expect("8 bytes"));
                    let (k, len) = (word(at) as usize, word(at + 8) as usize);
                    texts[k] = Some(String::from_utf8_lossy(&part[at + 16..at + 16 + len]).into_owned());
                    at += 16 + len;
                }
            }
            return (texts.into_iter().enumerate())
                .map(|(k, t)| t.ok_or_else(|| run_failed(k, "no rank ran it")))
                .collect();
        }
        let _ = (total, mine, failed);
        // One process: `mine` is every plan, in order.
        outputs.into_iter().collect()
    }
}

fn run_failed(k: usize, why: &str) -> Error {
    Error::InvalidOption {
        option: "ensemble",
        reason: format!("run {k} failed: {why}"),
    }
}
