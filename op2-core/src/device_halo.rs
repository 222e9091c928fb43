//! Halo exchanges of Dats whose data is in device memory (distributed runs
//! on `opencl` or `cuda`): one launch gathers every neighbour's exported
//! elements into one buffer of records on the device, only those records
//! cross to the host and go to the other ranks, and the received records go
//! up and one launch scatters them into the halo. The Dat's device copy
//! stays the valid one: no whole-Dat download or upload. The distribution
//! gives the lists in one piece ([`HaloLists`]); they go to the device once
//! per device context, and the buffers are reused from exchange to
//! exchange: on the host, page-locked memory where the backend has it
//! ([`DeviceWork::pinned_memory`]), so that the records cross at the bus's
//! full speed. The Dat's transfer counter counts the records apart from
//! whole-Dat copies ([`crate::TransferStats::halo_exchanges`]).

use std::sync::Arc;

use crate::{
    scratch_buffer, BufferLayout, DatHandle, DeviceBuffer, DeviceState, DeviceWork, Distribution, Error, HaloJob,
    HaloLists, HostMemory, PendingRecords, RecordBuffer, Result,
};

/// The device copies of one set's lists and the buffers its exchanges reuse.
#[derive(Default)]
pub struct HaloBuffers {
    /// The device context the lists were uploaded to.
    context: Option<u64>,
    exports: Option<Box<dyn DeviceBuffer>>,
    imports: Option<Box<dyn DeviceBuffer>>,
    /// Device buffers of records, free for the next exchange.
    records: Vec<Box<dyn DeviceBuffer>>,
    /// Host memory for records, free for the next exchange.
    host: Vec<Box<dyn HostMemory>>,
}

impl HaloBuffers {
    /// The lists on `work`'s device, uploaded on first use there.
    fn lists(&mut self, work: &dyn DeviceWork, lists: &HaloLists) -> Result<()> {
        if self.context == Some(work.context_id()) {
            return Ok(());
        }
        self.context = None;
        self.records.clear();
        self.host.clear();
        scratch_buffer(work, &mut self.exports, "halo exports", 4 * lists.exports.len())?
            .upload(bytemuck::cast_slice(&lists.exports))?;
        scratch_buffer(work, &mut self.imports, "halo imports", 4 * lists.imports.len())?
            .upload(bytemuck::cast_slice(&lists.imports))?;
        self.context = Some(work.context_id());
        Ok(())
    }

    /// A device buffer of at least `bytes` bytes, free or new.
    fn take_records(&mut self, work: &dyn DeviceWork, bytes: usize) -> Result<Box<dyn DeviceBuffer>> {
        match self.records.iter().position(|b| b.bytes() >= bytes) {
            Some(k) => Ok(self.records.swap_remove(k)),
            None => work.new_buffer("halo records", bytes.max(8)),
        }
    }

    /// `bytes` bytes of host memory: the smallest free piece that holds
    /// them, else new (pinned where `work` can).
    fn take_host(&mut self, work: &dyn DeviceWork, bytes: usize) -> Result<RecordBuffer> {
        let fits = self.host.iter().enumerate().filter(|(_, m)| m.bytes().len() >= bytes);
        let memory = match fits.min_by_key(|(_, m)| m.bytes().len()).map(|(k, _)| k) {
            Some(k) => self.host.swap_remove(k),
            None => match work.pinned_memory(bytes)? {
                Some(m) => m,
                None => Box::new(vec![0u8; bytes]),
            },
        };
        Ok(RecordBuffer::new(memory, bytes))
    }

    fn list(cell: &Option<Box<dyn DeviceBuffer>>) -> &dyn DeviceBuffer {
        match cell.as_deref() {
            Some(b) => b,
            None => unreachable!("uploaded by HaloBuffers::lists"),
        }
    }
}

/// How a Dat's values lie in its device buffer, as a [`HaloJob`] reads them:
/// values per element, 32-bit words per value, column stride (`0`: rows).
fn shape_of(layout: BufferLayout, dat: &dyn DatHandle) -> (usize, usize, usize) {
    match layout {
        BufferLayout::Rows => (dat.dim(), dat.scalar().size() / 4, 0),
        BufferLayout::Columns { shape, stride } => (shape.dim, shape.value_bytes / 4, stride),
    }
}

/// A halo exchange of a Dat packed on a device, in flight.
pub struct DeviceHalo {
    lists: Arc<HaloLists>,
    pending: Box<dyn PendingRecords>,
    /// The Dat's shape on the device when it was packed.
    shape: (usize, usize, usize),
}

/// Starts exchanging `dat`'s halo on `work`'s device, if it can go that
/// way: `dist` gives its lists in one piece and the device holds the
/// Dat's current values; else `None`, and the caller exchanges through the
/// host. The host waits for the pack (its download) before MPI sends.
///
/// # Errors
/// Launch and transfer errors; the distribution's.
pub fn start(dat: &dyn DatHandle, dist: &dyn Distribution, work: &dyn DeviceWork) -> Result<Option<DeviceHalo>> {
    let Some(lists) = dist.halo_lists() else {
        return Ok(None);
    };
    let record = dat.dim() * dat.scalar().size();
    let slot = dat.device().lock();
    let current = matches!(
        slot.state,
        DeviceState::Device | DeviceState::Both | DeviceState::HostUnallocated
    );
    let buffer = slot
        .buffer
        .as_deref()
        .filter(|b| current && b.context_id() == work.context_id());
    let Some(buffer) = buffer else {
        return Ok(None);
    };
    let shape = shape_of(slot.layout, dat);
    let mut bufs = lists.device.lock().unwrap_or_else(|p| p.into_inner());
    bufs.lists(work, &lists)?;
    let bytes = lists.exports.len() * record;
    let packed = bufs.take_records(work, bytes)?;
    work.pack_halo(&HaloJob {
        n: lists.exports.len(),
        list: HaloBuffers::list(&bufs.exports),
        dat: buffer,
        comps: shape.0,
        comp_words: shape.1,
        stride: shape.2,
        records: packed.as_ref(),
        first: 0,
    })?;
    let mut send = bufs.take_host(work, bytes)?;
    packed.download(send.as_mut_slice())?;
    bufs.records.push(packed);
    let receive = bufs.take_host(work, lists.imports.len() * record)?;
    drop(bufs);
    drop(slot);
    let pending = dist.start_record_exchange(send, receive, record)?;
    Ok(Some(DeviceHalo { lists, pending, shape }))
}

impl DeviceHalo {
    /// Waits for the records, takes them up and unpacks them into `dat`'s
    /// halo on `work`'s device; the device copy stays the valid one.
    ///
    /// # Errors
    /// The distribution's; launch and transfer errors; [`Error::Device`]
    /// if the Dat's device copy changed while its halo was in flight.
    pub fn finish(self, dat: &dyn DatHandle, work: &dyn DeviceWork) -> Result<()> {
        let (send, receive) = self.pending.wait()?;
        let mut slot = dat.device().lock();
        let changed = || Error::Device {
            backend: "device",
            device: work.device_name().to_string(),
            call: "halo exchange".to_string(),
            reason: format!(
                "the device copy of `{}` changed while its halo was in flight",
                dat.name()
            ),
        };
        if shape_of(slot.layout, dat) != self.shape {
            return Err(changed());
        }
        let Some(buffer) = slot.buffer.as_deref().filter(|b| b.context_id() == work.context_id()) else {
            return Err(changed());
        };
        let mut bufs = self.lists.device.lock().unwrap_or_else(|p| p.into_inner());
        bufs.lists(work, &self.lists)?;
        let received = bufs.take_records(work, receive.len())?;
        received.upload(receive.as_slice())?;
        work.unpack_halo(&HaloJob {
            n: self.lists.imports.len(),
            list: HaloBuffers::list(&bufs.imports),
            dat: buffer,
            comps: self.shape.0,
            comp_words: self.shape.1,
            stride: self.shape.2,
            records: received.as_ref(),
            first: self.lists.first,
        })?;
        // In-order queues: a later upload into it waits for the unpack.
        bufs.records.push(received);
        slot.counter.count_halo(send.len(), receive.len());
        // The host's halo values are older now.
        if slot.state == DeviceState::Both {
            slot.state = DeviceState::Device;
        }
        bufs.host.push(send.into_memory());
        bufs.host.push(receive.into_memory());
        Ok(())
    }
}
