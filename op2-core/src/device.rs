//! Device memory as op2's carriers see it: a backend-owned buffer behind a
//! small trait, the Dat's state, how its values lie in the buffer (element
//! by element, or component by component: transfers transpose), and
//! transfer counters. OpenCL and CUDA share this; the transitions are in
//! `device_state.rs`.

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
    /// The buffer's address in a unified address space that a GPU-aware
    /// MPI can read and write (CUDA's device pointers); `None` where the
    /// API has none (OpenCL buffers are handles).
    fn device_address(&self) -> Option<u64> {
        None
    }
}

/// Counts of one Dat's (or Global's, or Map's) transfers.
#[derive(Debug, Default)]
pub struct TransferCounter {
    uploads: AtomicU64,
    downloads: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
    halo_exchanges: AtomicU64,
    halo_bytes_down: AtomicU64,
    halo_bytes_up: AtomicU64,
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
    /// Halo exchanges packed and unpacked on the device (distributed runs):
    /// only their records crossed, counted apart from the copies above.
    pub halo_exchanges: u64,
    /// Bytes of those exchanges' records copied to the host (packed on the
    /// device, sent to other ranks).
    pub halo_bytes_down: u64,
    /// Bytes of records received from other ranks copied to the device
    /// (and unpacked into the halo there).
    pub halo_bytes_up: u64,
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

    /// Counts one halo exchange made on the device: `down` bytes of
    /// packed records to the host, `up` bytes of received ones to the device.
    pub fn count_halo(&self, down: usize, up: usize) {
        self.halo_exchanges.fetch_add(1, Ordering::Relaxed);
        self.halo_bytes_down.fetch_add(down as u64, Ordering::Relaxed);
        self.halo_bytes_up.fetch_add(up as u64, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn stats(&self) -> TransferStats {
        TransferStats {
            uploads: self.uploads.load(Ordering::Relaxed),
            downloads: self.downloads.load(Ordering::Relaxed),
            bytes_up: self.bytes_up.load(Ordering::Relaxed),
            bytes_down: self.bytes_down.load(Ordering::Relaxed),
            halo_exchanges: self.halo_exchanges.load(Ordering::Relaxed),
            halo_bytes_down: self.halo_bytes_down.load(Ordering::Relaxed),
            halo_bytes_up: self.halo_bytes_up.load(Ordering::Relaxed),
        }
    }
}

/// How a Dat's values lie in device memory. Its host copy always holds
/// them element by element (`v[e * dim + c]`); kernels see the same values
/// whatever the choice, and transfers transpose.
///
/// Struct of arrays lets the threads of a block, which run consecutive
/// elements, read consecutive addresses for each component (coalesced
/// loads on a GPU); OP2's `--force_soa` build halves Airfoil's `res_calc`
/// with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceLayout {
    /// The runtime's choice (`RuntimeOptions::device_layout` in
    /// `op2-backends`): by default, on a GPU, struct of arrays for a Dat of
    /// more than one value per element on a set of fixed size, whose buffer
    /// nothing has needed element by element (a ragged or whole-Dat
    /// argument, an agent operation); array of structs otherwise, and on
    /// CPU devices (PoCL), where rows are faster.
    #[default]
    Auto,
    /// Element by element, as on the host: component `c` of element `e` at
    /// `e * dim + c`.
    ArrayOfStructs,
    /// Component by component: component `c` of element `e` at
    /// `c * stride + e`, `stride` being the buffer's element capacity. A
    /// loop that reaches the Dat through a ragged map or reads it whole
    /// still gets it element by element (the kernel then holds row
    /// pointers), after a transposition through the host.
    StructOfArrays,
}

/// A layout of values component by component: `dim` values of
/// `value_bytes` bytes per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColumnShape {
    /// Values per element.
    pub dim: usize,
    /// Bytes per value.
    pub value_bytes: usize,
}

/// How the values of a [`DeviceSlot`]'s buffer lie in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferLayout {
    /// As on the host, element by element.
    #[default]
    Rows,
    /// Component by component, `stride` elements apart.
    Columns {
        /// Values per element and their size.
        shape: ColumnShape,
        /// Elements per column (the buffer's capacity in elements).
        stride: usize,
    },
}

impl BufferLayout {
    /// The stride of a column layout; `None` for rows.
    pub fn stride(&self) -> Option<usize> {
        match self {
            BufferLayout::Rows => None,
            BufferLayout::Columns { stride, .. } => Some(*stride),
        }
    }
}

/// A carrier's device side: its state, its buffer (if any) and how values
/// lie in it, the layout its owner asked for, and its counters.
#[derive(Default)]
pub struct DeviceSlot {
    /// Where the valid data is.
    pub state: DeviceState,
    /// The device buffer, once allocated.
    pub buffer: Option<Box<dyn DeviceBuffer>>,
    /// How the values lie in `buffer` (chosen when it was made).
    pub layout: BufferLayout,
    /// The layout the carrier's owner asked for
    /// ([`Dat::set_device_layout`](crate::Dat::set_device_layout)).
    pub requested: DeviceLayout,
    /// Whether something has needed the buffer element by element (a
    /// ragged or whole-Dat argument, device work): [`DeviceLayout::Auto`]
    /// then keeps rows, so that uses do not transpose back and forth.
    pub rows_needed: bool,
    /// Transfer counts (shared with runtimes that report them).
    pub counter: Arc<TransferCounter>,
}

impl DeviceSlot {
    /// Uploads `host` into the buffer (transposed for a column layout) and
    /// counts it.
    pub fn upload(&self, host: &[u8]) -> Result<()> {
        if let Some(b) = &self.buffer {
            match self.layout {
                BufferLayout::Rows => b.upload(host)?,
                BufferLayout::Columns { shape, stride } => b.upload(&to_columns(host, shape, stride))?,
            }
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
        columns: Option<ColumnShape>,
        new_buffer: &dyn Fn(usize) -> Result<Box<dyn DeviceBuffer>>,
    ) -> Result<()> {
        if let Some(b) = &self.buffer {
            let same_layout = match (self.layout, columns) {
                (BufferLayout::Rows, None) => true,
                (BufferLayout::Columns { shape, .. }, Some(wanted)) => shape == wanted,
                _ => false,
            };
            if b.context_id() == context && b.bytes() >= bytes && same_layout {
                return Ok(());
            }
            // Brought to the host in the old layout, uploaded in the new.
            self.sync_host(host, true)?;
            self.buffer = None;
            self.state = DeviceState::DeviceUnallocated;
        }
        self.buffer = Some(new_buffer(bytes)?);
        self.layout = match columns {
            None => BufferLayout::Rows,
            Some(shape) => BufferLayout::Columns {
                shape,
                stride: bytes / (shape.dim * shape.value_bytes).max(1),
            },
        };
        Ok(())
    }

    /// Brings the carrier's data to the device for a loop's (or device
    /// work's) `use_`, as the state machine says: a buffer of at least
    /// `bytes` in the context `context`, its values in columns of `columns`
    /// or in rows ([`DeviceSlot::adopt`]), the host's newer data uploaded if
    /// the use needs it, and the state afterwards.
    ///
    /// # Errors
    /// Transfer errors; `new_buffer`'s.
    pub fn prepare(
        &mut self,
        context: u64,
        bytes: usize,
        host: &mut [u8],
        use_: LoopUse,
        columns: Option<ColumnShape>,
        new_buffer: &dyn Fn(usize) -> Result<Box<dyn DeviceBuffer>>,
    ) -> Result<()> {
        self.adopt(context, bytes, host, columns, new_buffer)?;
        let t = before_loop(self.state, use_);
        if t.upload {
            self.upload(host)?;
        }
        self.state = t.after;
        Ok(())
    }

    /// Downloads the buffer into `host` (transposed back from a column
    /// layout) and counts it.
    pub fn download(&self, host: &mut [u8]) -> Result<()> {
        if let Some(b) = &self.buffer {
            match self.layout {
                BufferLayout::Rows => b.download(host)?,
                BufferLayout::Columns { shape, stride } => {
                    let mut columns = vec![0u8; columns_len(host.len(), shape, stride)];
                    b.download(&mut columns)?;
                    from_columns(&columns, host, shape, stride);
                }
            }
            self.counter.count_download(host.len());
        }
        Ok(())
    }
}

/// Bytes that the columns of `host_len` bytes of rows cover: every column
/// but the last in full, the last up to the last element.
fn columns_len(host_len: usize, shape: ColumnShape, stride: usize) -> usize {
    let row = shape.dim * shape.value_bytes;
    let n = host_len / row.max(1);
    match shape.dim {
        0 => 0,
        dim => ((dim - 1) * stride + n) * shape.value_bytes,
    }
}

/// `rows` (element by element) laid out in columns of `stride` elements.
fn to_columns(rows: &[u8], shape: ColumnShape, stride: usize) -> Vec<u8> {
    let vb = shape.value_bytes;
    let mut out = vec![0u8; columns_len(rows.len(), shape, stride)];
    for (e, row) in rows.chunks_exact(shape.dim * vb).enumerate() {
        for (c, value) in row.chunks_exact(vb).enumerate() {
            let at = (c * stride + e) * vb;
            out[at..at + vb].copy_from_slice(value);
        }
    }
    out
}

/// The inverse of [`to_columns`]: `columns` written back into `rows`.
fn from_columns(columns: &[u8], rows: &mut [u8], shape: ColumnShape, stride: usize) {
    let vb = shape.value_bytes;
    for (e, row) in rows.chunks_exact_mut(shape.dim * vb).enumerate() {
        for (c, value) in row.chunks_exact_mut(vb).enumerate() {
            let at = (c * stride + e) * vb;
            value.copy_from_slice(&columns[at..at + vb]);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer in host memory, standing in for a device's.
    struct HostBuffer(Mutex<Vec<u8>>);

    impl DeviceBuffer for HostBuffer {
        fn as_any(&self) -> &dyn Any {
            self
        }
        fn context_id(&self) -> u64 {
            7
        }
        fn upload(&self, src: &[u8]) -> Result<()> {
            self.0.lock().unwrap()[..src.len()].copy_from_slice(src);
            Ok(())
        }
        fn download(&self, dst: &mut [u8]) -> Result<()> {
            dst.copy_from_slice(&self.0.lock().unwrap()[..dst.len()]);
            Ok(())
        }
        fn bytes(&self) -> usize {
            self.0.lock().unwrap().len()
        }
    }

    fn new_buffer(bytes: usize) -> Result<Box<dyn DeviceBuffer>> {
        Ok(Box::new(HostBuffer(Mutex::new(vec![0xee; bytes]))))
    }

    fn device_values(slot: &DeviceSlot) -> Vec<u16> {
        let b = slot
            .buffer
            .as_ref()
            .unwrap()
            .as_any()
            .downcast_ref::<HostBuffer>()
            .unwrap();
        b.0.lock()
            .unwrap()
            .chunks_exact(2)
            .map(|v| u16::from_ne_bytes([v[0], v[1]]))
            .collect()
    }

    const UPLOAD: LoopUse = LoopUse {
        needs_data: true,
        writes: true,
    };

    #[test]
    fn columns_transpose_on_the_way_up_and_back() {
        // 3 elements of 2 values, in a buffer with room for 4 elements.
        let rows: Vec<u16> = vec![10, 11, 20, 21, 30, 31];
        let mut host = rows.clone();
        let shape = ColumnShape { dim: 2, value_bytes: 2 };
        let mut slot = DeviceSlot::default();
        let bytes = bytemuck::cast_slice_mut(&mut host);
        slot.prepare(7, 16, bytes, UPLOAD, Some(shape), &new_buffer).unwrap();
        assert_eq!(slot.layout, BufferLayout::Columns { shape, stride: 4 });
        assert_eq!(slot.layout.stride(), Some(4));
        // The gap between columns is uploaded too (zeros); past the last
        // element of the last column nothing is.
        assert_eq!(device_values(&slot), vec![10, 20, 30, 0, 11, 21, 31, 0xeeee]);
        let mut back = vec![0u16; 6];
        slot.download(bytemuck::cast_slice_mut(&mut back)).unwrap();
        assert_eq!(back, rows);
        assert_eq!(slot.counter.stats().bytes_up, 12, "the host's bytes are counted");
    }

    #[test]
    fn a_change_of_layout_goes_through_the_host_with_the_newer_values() {
        let mut host: Vec<u16> = vec![1, 2, 3, 4];
        let shape = ColumnShape { dim: 2, value_bytes: 2 };
        let mut slot = DeviceSlot::default();
        slot.prepare(
            7,
            8,
            bytemuck::cast_slice_mut(&mut host),
            UPLOAD,
            Some(shape),
            &new_buffer,
        )
        .unwrap();
        // The device's copy changes (a loop wrote it): column 0 becomes 5, 6.
        slot.buffer
            .as_ref()
            .unwrap()
            .upload(bytemuck::cast_slice(&[5u16, 6]))
            .unwrap();
        assert_eq!(slot.state, DeviceState::Device);
        // Now wanted in rows: downloaded (transposed), then uploaded as rows.
        slot.prepare(7, 8, bytemuck::cast_slice_mut(&mut host), UPLOAD, None, &new_buffer)
            .unwrap();
        assert_eq!(host, vec![5, 2, 6, 4]);
        assert_eq!(slot.layout, BufferLayout::Rows);
        assert_eq!(device_values(&slot), vec![5, 2, 6, 4]);
    }
}
