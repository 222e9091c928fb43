use op2_core::{ArgSpec, DeviceBuffer, ReductionLayout, Result};

use super::{as_bytes, DeviceApi};

/// A loop's reduction partials on the device: one slot per unit (thread
/// block), initialised on the host, combined on the host in unit order so
/// that results do not depend on scheduling.
pub struct DevicePartials {
    host: Vec<u64>,
    buffer: Option<Box<dyn DeviceBuffer>>,
}

impl DevicePartials {
    /// Partials for `units` units (no buffer when the loop has no reduction).
    pub fn new<A: DeviceApi>(api: &A, layout: &ReductionLayout, args: &[ArgSpec<'_>], units: usize) -> Result<Self> {
        let host = layout.new_partials(args, units);
        let buffer = if layout.words_per_chunk() > 0 {
            let b = api.new_buffer("reduction partials", host.len() * 8)?;
            b.upload(as_bytes(&host))?;
            Some(b)
        } else {
            None
        };
        Ok(DevicePartials { host, buffer })
    }

    /// The kernel argument for the partials.
    pub fn mem<A: DeviceApi>(&self, api: &A) -> A::Mem {
        self.buffer.as_deref().map_or_else(|| api.null_mem(), |b| api.mem_of(b))
    }

    /// After the launches: brings the partials back and folds them into the
    /// Globals, counting the transfers on each reduction Global.
    pub fn combine(mut self, layout: &ReductionLayout, args: &[ArgSpec<'_>]) -> Result<()> {
        let Some(b) = self.buffer.take() else {
            return Ok(());
        };
        // SAFETY: u64 has no padding and every byte pattern is valid.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(self.host.as_mut_ptr() as *mut u8, std::mem::size_of_val(&self.host[..]))
        };
        b.download(bytes)?;
        layout.combine_all(args, &self.host);
        let n = bytes.len();
        for a in args.iter().filter(|a| a.is_global() && a.access.is_reduction()) {
            let c = a.data.device().lock().counter.clone();
            c.count_upload(n);
            c.count_download(n);
        }
        Ok(())
    }
}
