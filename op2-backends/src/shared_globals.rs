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
    /// A Global whose device value could not come to the host: the loop
    /// must not run, and the ranks still combine.
    failed: Option<op2_core::Error>,
}

impl<'a> SharedReductions<'a> {
    /// Starts the loop's reductions into shared Globals: for INC, each
    /// rank's loop adds to zero (the value before is added back once).
    /// Every shared Global is started, even after a failure here (kept for
    /// [`SharedReductions::take_failure`]), so that every rank combines
    /// the same Globals.
    pub(crate) fn begin(exec: &dyn Executor, args: &'a [ArgSpec<'a>]) -> SharedReductions<'a> {
        let (mut started, mut failed) = (Vec::new(), None);
        for (k, a) in args.iter().enumerate().filter(|(_, a)| a.access.is_reduction()) {
            // A Global given twice is combined across the ranks once.
            if args[..k].iter().any(|b| b.data.id() == a.data.id()) {
                continue;
            }
            let ArgData::Global(g) = a.data else { continue };
            let Some(ranks) = g.across_ranks() else { continue };
            if let Err(e) = on_host(exec, g) {
                failed.get_or_insert(e);
            }
            started.push(Started {
                access: a.access,
                global: g,
                ranks,
                saved: g.begin_distributed_reduction(a.access),
            });
        }
        SharedReductions { started, failed }
    }

    /// The failure of [`SharedReductions::begin`], if any: the loop must
    /// not run, and [`SharedReductions::end`] must still be called.
    pub(crate) fn take_failure(&mut self) -> Option<op2_core::Error> {
        self.failed.take()
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
            // Combined even if the device value could not come back: the
            // other ranks are waiting in the reduction.
            let synced = on_host(exec, g);
            let combined = g.end_distributed_reduction(s.access, &s.saved, &mut |bytes| {
                s.ranks.all_reduce(bytes, g.scalar(), s.access)
            });
            ended = ended.and(synced).and(combined);
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
