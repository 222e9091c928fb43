//! Globals shared by the ranks of a run (`Global::reduce_across`): a loop
//! over a set that is not distributed (say, one rank's agents) reduces into
//! them on each rank, then the ranks combine their contributions, as a loop
//! over a distributed set does in the halo loop (`halo_loop.rs`).

use std::sync::Arc;

use op2_core::{Access, AllReduce, ArgData, ArgSpec, Executor, GlobalHandle, Result};

/// One reduction of a loop into a shared Global.
struct Started<'a> {
    access: Access,
    global: &'a dyn GlobalHandle,
    ranks: Arc<dyn AllReduce>,
    /// Its value before the loop.
    saved: Vec<u8>,
}

/// The reductions of one loop into shared Globals.
pub(crate) struct SharedReductions<'a> {
    started: Vec<Started<'a>>,
}

impl<'a> SharedReductions<'a> {
    /// Starts the loop's reductions into shared Globals: for INC, each
    /// rank's loop adds to zero (the value before is added back once).
    pub(crate) fn begin(exec: &dyn Executor, args: &'a [ArgSpec<'a>]) -> Result<SharedReductions<'a>> {
        let mut started = Vec::new();
        for a in args.iter().filter(|a| a.access.is_reduction()) {
            let ArgData::Global(g) = a.data else { continue };
            let Some(ranks) = g.across_ranks() else { continue };
            on_host(exec, g)?;
            started.push(Started {
                access: a.access,
                global: g,
                ranks,
                saved: g.begin_distributed_reduction(a.access),
            });
        }
        Ok(SharedReductions { started })
    }

    /// Whether the loop reduces into no shared Global.
    pub(crate) fn is_empty(&self) -> bool {
        self.started.is_empty()
    }

    /// Combines the ranks' contributions (collective), after the loop ran
    /// or failed (`ran`): every rank takes part either way, so none waits
    /// for one that left; returns the loop's error first.
    pub(crate) fn end(self, exec: &dyn Executor, ran: Result<()>) -> Result<()> {
        let mut ended = Ok(());
        for s in self.started {
            let g = s.global;
            let combined = on_host(exec, g).and_then(|()| {
                g.end_distributed_reduction(s.access, &s.saved, &mut |bytes| {
                    s.ranks.all_reduce(bytes, g.scalar(), s.access)
                })
            });
            ended = ended.and(combined);
        }
        ran.and(ended)
    }
}

/// A device loop leaves a reduction's value on the device: the ranks
/// combine values on the host, which then holds the newer copy.
fn on_host(exec: &dyn Executor, g: &dyn GlobalHandle) -> Result<()> {
    match exec.is_device() {
        true => op2_core::sync_to_host(ArgData::Global(g), true),
        false => Ok(()),
    }
}
