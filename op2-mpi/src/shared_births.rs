//! Children numbered across ranks: each round of births, every rank's
//! parents' ids are gathered, and a child gets the next id plus its
//! parent's rank among all of them, the id it would get on one rank
//! ([`op2_core::BirthNumbering`]'s rule).

use mpi::datatype::PartitionMut;
use mpi::traits::*;
use op2_core::{BirthNumbering, Error, Result};

use crate::halo_exchange::Comm;

/// The numbering an [`AgentDomain`](crate::AgentDomain) installs on its
/// agents' sets, on a communicator of its own.
pub(crate) struct SharedBirths {
    pub(crate) comm: Comm,
}

impl BirthNumbering for SharedBirths {
    fn number(&self, set: &str, parents: Option<&[u64]>, next: u64, children: &mut Vec<u64>) -> Result<u64> {
        let comm = &self.comm.0;
        let size = comm.size() as usize;
        // Whether each rank numbers, its parents and its next id.
        let mine = [
            u64::from(parents.is_some()),
            parents.map_or(0, |p| p.len() as u64),
            next,
        ];
        let mut all = vec![0u64; 3 * size];
        crate::waiting::all_gather_into(comm, &mine[..], &mut all[..]);
        let stop = |reason: String| {
            Err(Error::Mpi {
                reason: format!("{reason} while numbering the children of `{set}`; every rank stops"),
            })
        };
        if let Some(r) = all.chunks_exact(3).position(|h| h[0] == 0) {
            return stop(format!("rank {r} failed"));
        }
        let Some(parents) = parents else {
            unreachable!("a rank without parents stopped above")
        };
        let counts: Vec<u64> = all.chunks_exact(3).map(|h| h[1]).collect();
        let total: u64 = counts.iter().sum();
        if total > i32::MAX as u64 {
            return stop(format!("{total} children in one round (MPI counts them in i32)"));
        }
        let next = all.chunks_exact(3).map(|h| h[2]).max().unwrap_or(next);
        children.clear();
        if total == 0 {
            // Every rank knows: no second collective.
            return Ok(next);
        }
        let counts: Vec<i32> = counts.iter().map(|&c| c as i32).collect();
        let displs = displacements(&counts);
        let mut every = vec![0u64; total as usize];
        {
            let mut into = PartitionMut::new(&mut every[..], &counts[..], &displs[..]);
            crate::waiting::all_gather_varcount_into(comm, parents, &mut into);
        }
        every.sort_unstable();
        // Every rank sees the same ids, so all refuse a repeat alike.
        if let Some(w) = every.windows(2).find(|w| w[0] == w[1]) {
            return stop(format!(
                "agent {} is a parent on two ranks (agents must be numbered alike on every rank, each id once)",
                w[0]
            ));
        }
        children.extend(parents.iter().map(|p| next + every.partition_point(|q| q < p) as u64));
        Ok(next + total)
    }
}

/// Where each rank's part starts in a gathered buffer of parts of `counts`
/// (their exclusive prefix sums).
pub(crate) fn displacements(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}
