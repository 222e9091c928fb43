//! Device memory as op2's carriers see it: a backend-owned buffer behind a
//! small trait, the Dat's state, and transfer counters. OpenCL and CUDA share
//! this; the transitions are in `device_state.rs`.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::{before_loop, host_overwrite, host_read, host_write, DeviceState, LoopUse, Result};

/// A buffer in some device's memory, owned by the backend that made it.
pub trait DeviceBuffer: Send + Sync {
    /// The backend's own type, for downcasting when it launches kernels.
    fn as_any(&self) -> &dyn Any;
    /// Which device context made it (a backend compares this with its own).
    fn context_id(&self) -> u64;
    /// Copies `src` to the start of the buffer.
    fn upload(&self, src: &[u8]) -> Result<()>;
    /// Copies the start of the buffer (`dst.len()` bytes) to `dst`.
    fn download(&self, dst: &mut [u8]) -> Result<()>;
    /// The buffer's size in bytes (copies may cover less of it).
    fn bytes(&self) -> usize;
    /// Fills the first `bytes` bytes with copies of `pattern` (a value of 4
    /// or 8 bytes) on the device, in order with its other work and without
    /// the host waiting; `Ok(false)` where the backend cannot, and the
    /// caller uploads instead.
    fn fill(&self, pattern: &[u8], bytes: usize) -> Result<bool> {
        let _ = (pattern, bytes);
        Ok(false)
    }
}

/// Counts of one Dat's (or Global's, or Map's) transfers.
#[derive(Debug, Default)]
pub struct TransferCounter {
    uploads: AtomicU64,
    downloads: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
}

/// A snapshot of a [`TransferCounter`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Host-to-device copies.
    pub uploads: u64,
    /// Device-to-host copies.
    pub downloads: u64,
    /// Bytes copied to the device.
    pub bytes_up: u64,
    /// Bytes copied to the host.
    pub bytes_down: u64,
}

impl TransferCounter {
    /// Counts one upload of `bytes`.
    pub fn count_upload(&self, bytes: usize) {
        self.uploads.fetch_add(1, Ordering::Relaxed);
        self.bytes_up.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts one download of `bytes`.
    pub fn count_download(&self, bytes: usize) {
        self.downloads.fetch_add(1, Ordering::Relaxed);
        self.bytes_down.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn stats(&self) -> TransferStats {
        TransferStats {
            uploads: self.uploads.load(Ordering::Relaxed),
            downloads: self.downloads.load(Ordering::Relaxed),
            bytes_up: self.bytes_up.load(Ordering::Relaxed),
            bytes_down: self.bytes_down.load(Ordering::Relaxed),
        }
    }
}

/// A carrier's device side: its state, its buffer (if any) and its counters.
#[derive(Default)]
pub struct DeviceSlot {
    /// Where the valid data is.
    pub state: DeviceState,
    /// The device buffer, once allocated.
    pub buffer: Option<Box<dyn DeviceBuffer>>,
    /// Transfer counts (shared with runtimes that report them).
    pub counter: Arc<TransferCounter>,
}

impl DeviceSlot {
    /// Uploads `host` into the buffer and counts it.
    pub fn upload(&self, host: &[u8]) -> Result<()> {
        if let Some(b) = &self.buffer {
            b.upload(host)?;
            self.counter.count_upload(host.len());
        }
        Ok(())
    }

    /// Brings `host` (this carrier's host copy) up to date before the host
    /// reads it, or before it writes it (`write`), after which the device copy
    /// is stale: downloads only when the device holds newer data.
    pub fn sync_host(&mut self, host: &mut [u8], write: bool) -> Result<()> {
        let t = if write {
            host_write(self.state)
        } else {
            host_read(self.state)
        };
        if t.download {
            self.download(host)?;
        }
        self.state = t.after;
        Ok(())
    }

    /// Before the host overwrites every value: the device copy, newer or
    /// not, is dropped without a download.
    pub fn overwrite_host(&mut self) {
        self.state = host_overwrite(self.state).after;
    }

    /// Makes sure the slot has a buffer of at least `bytes` bytes made by
    /// the context `context`: one of another context, or too small, is
    /// retired first (any newer data it holds brought to `host`, the
    /// carrier's host copy), and a new one comes from `new_buffer`.
    ///
    /// # Errors
    /// Transfer errors; `new_buffer`'s.
    pub fn adopt(
        &mut self,
        context: u64,
        bytes: usize,
        host: &mut [u8],
        new_buffer: &dyn Fn(usize) -> Result<Box<dyn DeviceBuffer>>,
    ) -> Result<()> {
        if let Some(b) = &self.buffer {
            if b.context_id() == context && b.bytes() >= bytes {
                return Ok(());
            }
            self.sync_host(host, true)?;
            self.buffer = None;
            self.state = DeviceState::DeviceUnallocated;
        }
        self.buffer = Some(new_buffer(bytes)?);
        Ok(())
    }

    /// Brings the carrier's data to the device for a loop's (or device
    /// work's) `use_`, as the state machine says: a buffer of at least
    /// `bytes` in the context `context` ([`DeviceSlot::adopt`]), the host's
    /// newer data uploaded if the use needs it, and the state afterwards.
    ///
    /// # Errors
    /// Transfer errors; `new_buffer`'s.
    pub fn prepare(
        &mut self,
        context: u64,
        bytes: usize,
        host: &mut [u8],
        use_: LoopUse,
        new_buffer: &dyn Fn(usize) -> Result<Box<dyn DeviceBuffer>>,
    ) -> Result<()> {
        self.adopt(context, bytes, host, new_buffer)?;
        let t = before_loop(self.state, use_);
        if t.upload {
            self.upload(host)?;
        }
        self.state = t.after;
        Ok(())
    }

    /// Downloads the buffer into `host` and counts it.
    pub fn download(&self, host: &mut [u8]) -> Result<()> {
        if let Some(b) = &self.buffer {
            b.download(host)?;
            self.counter.count_download(host.len());
        }
        Ok(())
    }
}

/// The device slot of a carrier, behind a lock that serialises transfers.
#[derive(Default)]
pub struct DeviceCell(Mutex<DeviceSlot>);

impl DeviceCell {
    /// Locks the slot.
    pub fn lock(&self) -> MutexGuard<'_, DeviceSlot> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The transfer counts so far.
    pub fn stats(&self) -> TransferStats {
        self.lock().counter.stats()
    }
}
