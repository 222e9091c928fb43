//! The MPI world of a distributed run: initialising MPI (and checking that
//! the launcher belongs to the MPI library op2 was built with), this
//! process's rank, and messages and aborts that reach every rank.

use std::sync::Arc;

use mpi::environment::Universe;
use mpi::traits::*;
use op2_core::{Error, Result};

use crate::halo_exchange::Comm;

/// An initialised MPI environment (finalised on drop).
pub struct Mpi {
    _universe: Universe,
    pub(crate) comm: Arc<Comm>,
}

impl Mpi {
    /// Initialises MPI. Fails when MPI was initialised already, and when the
    /// launcher says it started N processes (`PMI_SIZE`, `OMPI_COMM_WORLD_SIZE`
    /// or `SLURM_NTASKS`; see `op2_backends::config`) but MPI sees a different
    /// world (an `mpirun` of another MPI library than the one op2 was built
    /// with).
    ///
    /// Also replaces the panic hook with one that prints the panic's report
    /// (what the default hook prints, backtrace included when `RUST_BACKTRACE`
    /// asks) as one whole write to stderr, every line prefixed with
    /// `[rank r/size]`, and then aborts every rank: a panic on one rank must
    /// end the run, not leave the others waiting in a collective forever.
    pub fn init() -> Result<Mpi> {
        // Read before MPI starts: a bad value stops this rank before it
        // could leave the others waiting in a collective.
        let wait = op2_backends::config::Env::process()
            .mpi_wait()?
            .unwrap_or(op2_backends::config::MpiWait::Auto);
        let universe = mpi::initialize().ok_or_else(|| Error::Mpi {
            reason: "MPI is already initialised in this process".into(),
        })?;
        let world = universe.world();
        let size = world.size() as usize;
        // The launchers' variables: see op2_backends::config.
        for (var, n) in op2_backends::config::Env::process().launcher_sizes() {
            if n != size {
                return Err(Error::Mpi {
                    reason: format!(
                        "the launcher started {} ({var}={n}) but MPI reports a world of {size}: \
                         this mpirun does not belong to the MPI library op2 was built with (MPICH)",
                        op2_core::plural(n, "process", "processes")
                    ),
                });
            }
        }
        let rank = world.rank() as usize;
        std::panic::set_hook(Box::new(move |info| {
            // Straight to stderr, whole: test harnesses capture `eprintln!` (and
            // the default hook's output), and the abort below ends the process
            // before they would print it.
            // After `Mpi` was dropped (MPI finalised) there is no run to abort.
            let finalized = mpi::environment::is_finalized();
            let then = if finalized {
                "op2-mpi: rank panicked after MPI was finalised"
            } else {
                "op2-mpi: rank panicked, aborting the whole run"
            };
            let _ = crate::write_rank_message(rank, size, &crate::report::panic_report(info, then));
            if !finalized {
                let_output_reach_the_launcher();
                // SAFETY: MPI is initialised and not finalised; MPI_Abort does
                // not return.
                unsafe {
                    mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 101);
                }
            }
        }));
        // Where this rank sits on its node: device backends give each rank
        // of a node its own device by default, and `rayon` its share of the
        // node's CPUs.
        let node = world.split_shared(rank as i32);
        let cpus = crate::waiting::node_cpus(&node);
        crate::waiting::decide(&world, &node, cpus, wait);
        op2_core::set_node_rank(op2_core::NodeRank {
            rank: node.rank() as usize,
            ranks: node.size() as usize,
            cpus,
        });
        Ok(Mpi {
            _universe: universe,
            comm: Arc::new(Comm(world)),
        })
    }

    /// Prints `message` to stderr as one whole write, every line prefixed with
    /// `[rank r/size]` (see [`write_rank_message`](crate::write_rank_message)),
    /// so that messages of several ranks never interleave mid-line. Use it
    /// instead of `eprintln!` for a rank's errors and warnings.
    pub fn eprintln(&self, message: impl std::fmt::Display) {
        let _ = crate::write_rank_message(self.rank(), self.size(), &message);
    }

    /// Prints `message` as [`Mpi::eprintln`] does, then ends every rank of the
    /// run with `code`.
    pub fn abort_with(&self, code: i32, message: impl std::fmt::Display) -> ! {
        self.eprintln(message);
        let_output_reach_the_launcher();
        self.abort(code)
    }

    /// Whether this run's waits for MPI sleep between polls
    /// ([`MpiWait`](op2_backends::config::MpiWait), `OP2_MPI_WAIT`): by
    /// default where a node runs more ranks than it has CPUs for them. The
    /// same on every rank.
    pub fn sleeps_while_waiting(&self) -> bool {
        crate::waiting::sleeps()
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.comm.0.rank() as usize
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.comm.0.size() as usize
    }

    /// Ends every rank of the run with `code` (after an error on one rank, so
    /// that the others never wait forever).
    pub fn abort(&self, code: i32) -> ! {
        self.comm.0.abort(code)
    }

    /// Sums `values` over all ranks, in place (e.g. counts of agents).
    pub fn sum_u64(&self, values: &mut [u64]) {
        let mine = values.to_vec();
        crate::waiting::all_reduce_into(&self.comm.0, &mine[..], values, mpi::collective::SystemOperation::sum());
    }

    /// Reduces `values` element by element over all ranks, in place: sums
    /// for INC, minima for MIN, maxima for MAX (e.g. a log's statistics).
    /// Sums of floats add the ranks' partial sums, so they may differ from
    /// one rank's in the last bits.
    pub fn reduce_f64(&self, values: &mut [f64], op: op2_core::Access) {
        use mpi::collective::SystemOperation;
        let mine = values.to_vec();
        let op = match op {
            op2_core::Access::Min => SystemOperation::min(),
            op2_core::Access::Max => SystemOperation::max(),
            _ => SystemOperation::sum(),
        };
        crate::waiting::all_reduce_into(&self.comm.0, &mine[..], values, op);
    }

    /// The ranks' reduction for Globals they share
    /// ([`op2_core::Global::reduce_across`]), on a communicator of its own
    /// (a duplicate of this one's). Collective: every rank asks, in the
    /// same order.
    pub fn all_reduce(&self) -> std::sync::Arc<dyn op2_core::AllReduce> {
        std::sync::Arc::new(RankReduction(crate::halo_exchange::Comm(self.comm.0.duplicate())))
    }

    /// Every rank's `bytes`, in rank order, on rank 0 (`None` on the
    /// others): output gathered to be written by one rank. Collective.
    ///
    /// # Errors
    /// [`Error::Mpi`] on every rank if a rank gives more than `i32::MAX`
    /// bytes or all of them together more (MPI counts them in `i32`).
    pub fn gather_bytes(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
        use mpi::datatype::PartitionMut;
        let comm = &self.comm.0;
        let root = comm.process_at_rank(0);
        let mine = bytes.len() as u64;
        let mut lens = vec![0u64; self.size()];
        crate::waiting::all_gather_into(comm, &mine, &mut lens[..]);
        let total: u64 = lens.iter().sum();
        if total > i32::MAX as u64 {
            return Err(Error::Mpi {
                reason: format!("{total} bytes to gather on one rank (MPI counts them in i32): write in parts"),
            });
        }
        if self.rank() != 0 {
            crate::waiting::gather_varcount_into(&root, bytes);
            return Ok(None);
        }
        let counts: Vec<i32> = lens.iter().map(|&c| c as i32).collect();
        let displs = crate::shared_births::displacements(&counts);
        let mut all = vec![0u8; total as usize];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            crate::waiting::gather_varcount_into_root(&root, bytes, &mut into);
        }
        let parts = (displs.iter().zip(&counts))
            .map(|(&d, &c)| all[d as usize..(d + c) as usize].to_vec())
            .collect();
        Ok(Some(parts))
    }

    /// The maximum of `value` over all ranks.
    pub fn max_f64(&self, value: f64) -> f64 {
        let mut bytes = value.to_ne_bytes();
        crate::halo_exchange::all_reduce(&self.comm, &mut bytes, op2_core::ScalarType::F64, op2_core::Access::Max);
        f64::from_ne_bytes(bytes)
    }
}

/// [`Mpi::all_reduce`]'s reduction, over its own communicator.
struct RankReduction(crate::halo_exchange::Comm);

impl op2_core::AllReduce for RankReduction {
    fn all_reduce(
        &self,
        values: &mut [u8],
        scalar: op2_core::ScalarType,
        op: op2_core::Access,
    ) -> op2_core::Result<()> {
        crate::halo_exchange::all_reduce(&self.0, values, scalar, op);
        Ok(())
    }
}

/// Waits a moment before `MPI_Abort`, so that what this rank has just
/// written reaches `mpirun`: the launcher kills every rank as soon as it
/// hears of the abort, and may drop output it has not read yet from their
/// pipes (with MPICH's Hydra, about one run in twenty printed nothing).
fn let_output_reach_the_launcher() {
    std::thread::sleep(std::time::Duration::from_millis(200));
}
