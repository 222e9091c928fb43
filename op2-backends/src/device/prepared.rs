//! One loop made ready to launch on a device: `prepare_loop` brings the arguments (and a
//! subset's elements) to the device, fetches the plan's buffers when indirect writes need
//! one, and sets up the launches and reduction partials, all in a `PreparedLoop`. It ties
//! together `args.rs`, `launches.rs`, `partials.rs` and `plan_buffers.rs`.
use std::sync::Arc;

use op2_core::{ColumnShape, Error, ParLoop, ReductionLayout, Result};

use super::args::{prepare_args, prepare_table, DeviceArgs};
use super::launches::{launches, Launch};
use super::partials::{DevicePartials, PartialsPool};
use super::plan_buffers::{PlanBuffers, PlanBuffersCache};
use super::DeviceApi;
use crate::IndirectWrites;

/// Everything a device backend launches one loop with, except its code.
pub struct PreparedLoop<'p, M> {
    /// Data and map buffers, in argument order.
    pub args: DeviceArgs<M>,
    /// One launch per block colour (one in all without a plan).
    pub launches: Vec<Launch>,
    /// The reduction partials of every launched block.
    pub partials: DevicePartials<'p>,
    /// The plan's block lists (null without a plan).
    pub units: M,
    /// The plan's element colours (null without a plan).
    pub colours: M,
    /// The plan's colour count per block (null without a plan).
    pub ncolours: M,
    /// A subset's elements (`None` for a loop over a whole set).
    pub elems: Option<M>,
    /// Keeps the plan's buffers alive while the launches use them.
    _plan: Option<Arc<PlanBuffers>>,
}

/// The executor's caches a loop draws on.
pub struct LoopCaches<'p> {
    /// Plans' buffers on the device.
    pub plans: &'p PlanBuffersCache,
    /// Reduction partials.
    pub partials: &'p PartialsPool,
}

/// A subset's elements on this device: where a selection on it left them
/// (they never crossed to the host), or uploaded from the host as a map's
/// table is.
fn prepare_subset<A: DeviceApi>(api: &A, subset: &op2_core::Subset) -> Result<A::Mem> {
    {
        let slot = subset.device().lock();
        let selected_here = slot.state == op2_core::DeviceState::Device
            && slot.buffer.as_ref().is_some_and(|b| b.context_id() == api.context_id());
        if selected_here {
            return Ok(super::args::mem_of(api, &slot));
        }
    }
    let indices = subset.try_indices()?;
    prepare_table(api, subset.device(), subset.name(), indices)
}

/// Brings a loop's data to the device (and a subset's elements; each Dat in
/// the layout `columns` gives), and its plan when `writes` needs one, and
/// sets up its launches and partials.
pub fn prepare_loop<'p, A: DeviceApi>(
    api: &A,
    lp: &ParLoop<'_>,
    layout: &ReductionLayout,
    columns: &[Option<ColumnShape>],
    writes: IndirectWrites,
    block_size: usize,
    caches: LoopCaches<'p>,
) -> Result<PreparedLoop<'p, A::Mem>> {
    let LoopCaches { plans, partials: pool } = caches;
    let args = prepare_args(api, lp, columns)?;
    let elems = lp.subset.map(|s| prepare_subset(api, s)).transpose()?;
    let plan = if writes.needs_plan() {
        // A plan is made on the host, from the subset's elements: read them
        // back here (an error, not a panic, if that fails).
        if let Some(s) = lp.subset {
            s.try_indices()?;
        }
        lp.plan(block_size)
    } else {
        None
    };
    // A plan grows its blocks rather than number more than u32::MAX of
    // them; a device block is also a thread block, so here that is refused.
    if let Some(grown) = plan.as_ref().map(|p| p.block_size()).filter(|&b| b != block_size) {
        return Err(Error::InvalidOption {
            option: "block_size",
            reason: format!(
                "loop `{}`: {} elements in blocks of {block_size} make more than {} blocks, the most a plan numbers; use a block size of at least {grown}",
                lp.kernel.name,
                lp.range.len(),
                u32::MAX
            ),
        });
    }
    let plan_buffers = plan.as_ref().map(|p| plans.get(api, p)).transpose()?;
    let launches = launches(plan.as_deref(), lp.range.len(), block_size);
    let total_units: usize = launches.iter().map(|l| l.count).sum();
    let partials = DevicePartials::new(api, pool, layout, total_units)?;
    let mem = |pick: fn(&PlanBuffers) -> &dyn op2_core::DeviceBuffer| {
        plan_buffers
            .as_deref()
            .map_or_else(|| api.null_mem(), |p| api.mem_of(pick(p)))
    };
    Ok(PreparedLoop {
        units: mem(|p| &*p.units),
        colours: mem(|p| &*p.colours),
        ncolours: mem(|p| &*p.ncolours),
        elems,
        args,
        launches,
        partials,
        _plan: plan_buffers,
    })
}
