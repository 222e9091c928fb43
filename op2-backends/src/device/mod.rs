//! What the OpenCL and CUDA executors share: bringing a loop's Dats, Maps and
//! Globals to the device by the state machine of `op2-core`, the plan's block
//! lists and element colours on the device, the launches of one loop, and
//! the reduction partials. Each backend supplies buffers and launches
//! through [`DeviceApi`].

mod args;
mod check_report;
mod launches;
mod partials;
mod plan_buffers;
mod prepared;

pub use check_report::CheckReport;
pub use partials::PartialsPool;
pub use plan_buffers::PlanBuffersCache;
pub use prepared::prepare_loop;

use op2_core::{DeviceBuffer, Error, Result};

/// A device backend's buffers, as the shared code needs them.
pub trait DeviceApi {
    /// What a kernel argument for a buffer is (`cl_mem`, a device pointer).
    type Mem: Copy;
    /// The id that buffers made by this context report.
    fn context_id(&self) -> u64;
    /// A new buffer of `bytes` bytes for the carrier `name`.
    fn new_buffer(&self, name: &str, bytes: usize) -> Result<Box<dyn DeviceBuffer>>;
    /// The kernel argument for one of this context's buffers.
    fn mem_of(&self, buffer: &dyn DeviceBuffer) -> Self::Mem;
    /// The kernel argument for "no buffer" (a null pointer).
    fn null_mem(&self) -> Self::Mem;
}

/// Views a slice of plain integers as bytes.
pub fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: used for u32, i32 and u64 only: no padding, any byte is valid to read.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// The error for a copy of `len` bytes to or from a buffer of `capacity`.
pub fn check_copy(backend: &'static str, what: &str, len: usize, capacity: usize) -> Result<()> {
    if len <= capacity {
        return Ok(());
    }
    Err(Error::Transfer {
        name: format!("{backend} device buffer"),
        reason: format!(
            "{what} of {} into a buffer of {}",
            op2_core::plural(len, "byte", "bytes"),
            op2_core::plural(capacity, "byte", "bytes")
        ),
    })
}
