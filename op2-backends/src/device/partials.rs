//! Reduction partials on the device: `DevicePartials` gives each thread block one slot of
//! the `ReductionLayout`, which the block writes whole, and folds them in block order
//! into each reduction Global's device copy, so results do not depend on scheduling and
//! the host waits for nothing. `PartialsPool` keeps one executor's partials buffer
//! between loops, saving a device allocation per loop.
use std::sync::Mutex;

use op2_core::{Access, ArgData, ArgSpec, DeviceBuffer, ReductionLayout, Result, ScalarType};

use super::{DeviceApi, UtilityArg};

/// A buffer with its capacity in bytes.
type Pooled = (usize, Box<dyn DeviceBuffer>);

/// Enqueues one fold: the Global's element type, the access, the fold's
/// arguments (`codegen/reduction_c.rs`).
pub type EnqueueFold<'f, M> = dyn FnMut(ScalarType, Access, &[UtilityArg<M>]) -> Result<()> + 'f;

/// One executor's partials buffer, kept between loops: reductions run every
/// iteration, and a device allocation per loop would cost more than the copy.
#[derive(Default)]
pub struct PartialsPool {
    free: Mutex<Option<Pooled>>,
}

impl PartialsPool {
    fn take<A: DeviceApi>(&self, api: &A, bytes: usize) -> Result<Pooled> {
        let kept = self.free.lock().unwrap_or_else(|p| p.into_inner()).take();
        match kept {
            Some((cap, b)) if cap >= bytes => Ok((cap, b)),
            _ => {
                let cap = bytes.next_power_of_two();
                Ok((cap, api.new_buffer("reduction partials", cap)?))
            }
        }
    }

    fn give(&self, buffer: Pooled) {
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) = Some(buffer);
    }
}

/// A loop's reduction partials on the device: one slot per unit (thread
/// block), each written whole by its block, then folded in unit order into
/// each reduction Global's device copy (`codegen/reduction_c.rs`), so that
/// results do not depend on scheduling and nothing comes back to the host.
pub struct DevicePartials<'p> {
    buffer: Option<Pooled>,
    units: usize,
    pool: &'p PartialsPool,
}

impl<'p> DevicePartials<'p> {
    /// Partials for `units` units (no buffer when the loop has no reduction).
    pub fn new<A: DeviceApi>(api: &A, pool: &'p PartialsPool, layout: &ReductionLayout, units: usize) -> Result<Self> {
        let bytes = units * layout.words_per_chunk() * 8;
        let buffer = (bytes > 0).then(|| pool.take(api, bytes)).transpose()?;
        Ok(DevicePartials { buffer, units, pool })
    }

    /// The kernel argument for the partials.
    pub fn mem<A: DeviceApi>(&self, api: &A) -> A::Mem {
        self.buffer
            .as_ref()
            .map_or_else(|| api.null_mem(), |b| api.mem_of(&*b.1))
    }

    /// After the launches: enqueues, for each reduction argument, the fold
    /// of its partials into its Global's device copy (`globals[k]`, the
    /// buffer of argument `k`), with `fold` (the Global's element type,
    /// the access, then the fold's arguments). Returns whether it folded
    /// anything.
    pub fn fold<A: DeviceApi>(
        mut self,
        api: &A,
        layout: &ReductionLayout,
        args: &[ArgSpec<'_>],
        globals: &[A::Mem],
        fold: &mut EnqueueFold<'_, A::Mem>,
    ) -> Result<bool> {
        let Some(b) = self.buffer.take() else {
            return Ok(false);
        };
        let words = layout.words_per_chunk();
        let mut folded = Ok(());
        for (k, a) in args.iter().enumerate() {
            let (Some(offset), ArgData::Global(g)) = (layout.slot_offset(k), a.data) else {
                continue;
            };
            // Partials in units of the Global's type: a slot starts on a word.
            let per_word = 8 / g.scalar().size();
            let fold_args = [
                UtilityArg::Long(self.units as i64),
                UtilityArg::Long((words * per_word) as i64),
                UtilityArg::Long((offset * per_word) as i64),
                UtilityArg::Long(g.dim() as i64),
                UtilityArg::Mem(api.mem_of(&*b.1)),
                UtilityArg::Mem(globals[k]),
            ];
            folded = fold(g.scalar(), a.access, &fold_args);
            if folded.is_err() {
                break;
            }
        }
        // Back to the pool: the queue runs in order, so the next loop's
        // blocks write it only after these folds have read it.
        self.pool.give(b);
        folded.map(|()| true)
    }
}
