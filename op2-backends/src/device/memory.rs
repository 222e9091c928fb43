//! Device memory as a core [`DeviceBuffer`]: the checks every API's copies
//! share (empty copies, copies larger than the buffer) in one place, over an
//! API's raw allocation.

use std::any::Any;

use op2_core::{DeviceBuffer, Error, Result};

/// One API's allocation: copies of checked sizes only.
pub trait RawMemory: Send + Sync + 'static {
    /// The backend's name, for messages.
    const BACKEND: &'static str;
    /// Copies `src` (not empty, no larger than the allocation) to the start.
    fn write(&self, src: &[u8]) -> Result<()>;
    /// Copies the first `dst.len()` bytes (not empty, no more than the
    /// allocation holds) into `dst`.
    fn read(&self, dst: &mut [u8]) -> Result<()>;
    /// Fills the first `bytes` bytes (a multiple of the pattern's length,
    /// no more than the allocation holds) with copies of `pattern`, queued;
    /// `Ok(false)` if the API cannot fill with this pattern.
    fn fill(&self, pattern: &[u8], bytes: usize) -> Result<bool> {
        let _ = (pattern, bytes);
        Ok(false)
    }
    /// The allocation's address for a GPU-aware MPI (`None`: none).
    fn address(&self) -> Option<u64> {
        None
    }
}

/// Page-locked host memory a device API allocated: where it is and how
/// large; the backend's type frees it when dropped.
pub trait PinnedAllocation: Send + 'static {
    /// Its first byte, valid for [`PinnedAllocation::size`] bytes while the
    /// allocation lives, and written through no other handle.
    fn ptr(&self) -> *mut u8;
    /// Its size in bytes.
    fn size(&self) -> usize;
}

/// A [`PinnedAllocation`] as the halo exchanges' host memory.
pub struct Pinned<A>(pub A);

impl<A: PinnedAllocation> op2_core::HostMemory for Pinned<A> {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` holds `size` bytes while the allocation lives.
        unsafe { std::slice::from_raw_parts(self.0.ptr(), self.0.size()) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.0.ptr(), self.0.size()) }
    }

    fn pinned(&self) -> bool {
        true
    }
}

/// A device allocation with checked copies.
pub struct Memory<R> {
    raw: R,
    bytes: usize,
    context_id: u64,
}

impl<R: RawMemory> Memory<R> {
    /// `raw`, an allocation of `bytes` bytes in the context `context_id`.
    pub fn new(raw: R, bytes: usize, context_id: u64) -> Memory<R> {
        Memory { raw, bytes, context_id }
    }

    /// The API's allocation.
    pub fn raw(&self) -> &R {
        &self.raw
    }
}

impl<R: RawMemory> DeviceBuffer for Memory<R> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn context_id(&self) -> u64 {
        self.context_id
    }

    fn upload(&self, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        check_copy(R::BACKEND, "upload", src.len(), self.bytes)?;
        op2_core::device_counts::count_wait();
        self.raw.write(src)
    }

    fn download(&self, dst: &mut [u8]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        check_copy(R::BACKEND, "download", dst.len(), self.bytes)?;
        op2_core::device_counts::count_wait();
        self.raw.read(dst)
    }

    fn bytes(&self) -> usize {
        self.bytes
    }

    fn fill(&self, pattern: &[u8], bytes: usize) -> Result<bool> {
        if pattern.is_empty() || bytes % pattern.len() != 0 {
            return Ok(false);
        }
        if bytes == 0 {
            return Ok(true);
        }
        check_copy(R::BACKEND, "fill", bytes, self.bytes)?;
        self.raw.fill(pattern, bytes)
    }

    fn device_address(&self) -> Option<u64> {
        self.raw.address()
    }
}

/// The error for a copy of `len` bytes to or from a buffer of `capacity`.
fn check_copy(backend: &'static str, what: &str, len: usize, capacity: usize) -> Result<()> {
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
