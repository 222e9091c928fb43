//! Reduction partials on the device: `DevicePartials` gives each thread block one slot,
//! set up on the host from the `ReductionLayout` and combined back on the host in block
//! order, so results do not depend on scheduling. `PartialsPool` keeps one executor's
//! partials buffer between loops, saving a device allocation per loop.
use std::sync::Mutex;

use op2_core::{ArgSpec, DeviceBuffer, ReductionLayout, Result};

use super::DeviceApi;

/// A buffer with its capacity in bytes.
type Pooled = (usize, Box<dyn DeviceBuffer>);

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
/// block), initialised on the host, combined on the host in unit order so
/// that results do not depend on scheduling.
pub struct DevicePartials<'p> {
    host: Vec<u64>,
    buffer: Option<Pooled>,
    pool: &'p PartialsPool,
}

impl<'p> DevicePartials<'p> {
    /// Partials for `units` units (no buffer when the loop has no reduction).
    pub fn new<A: DeviceApi>(
        api: &A,
        pool: &'p PartialsPool,
        layout: &ReductionLayout,
        args: &[ArgSpec<'_>],
        units: usize,
    ) -> Result<Self> {
        let host = layout.new_partials(args, units);
        let buffer = if layout.words_per_chunk() > 0 {
            let b = pool.take(api, host.len() * 8)?;
            b.1.upload(bytemuck::cast_slice(&host))?;
            Some(b)
        } else {
            None
        };
        Ok(DevicePartials { host, buffer, pool })
    }

    /// The kernel argument for the partials.
    pub fn mem<A: DeviceApi>(&self, api: &A) -> A::Mem {
        self.buffer
            .as_ref()
            .map_or_else(|| api.null_mem(), |b| api.mem_of(&*b.1))
    }

    /// After the launches: brings the partials back and folds them into the
    /// Globals, counting the transfers on each reduction Global.
    pub fn combine(mut self, layout: &ReductionLayout, args: &[ArgSpec<'_>]) -> Result<()> {
        let Some(b) = self.buffer.take() else {
            return Ok(());
        };
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.host[..]);
        b.1.download(bytes)?;
        let n = bytes.len();
        self.pool.give(b);
        layout.combine_all(args, &self.host);
        for a in args.iter().filter(|a| a.is_global() && a.access.is_reduction()) {
            let c = a.data.device().lock().counter.clone();
            c.count_upload(n);
            c.count_download(n);
        }
        Ok(())
    }
}
