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
//! full speed; or none at all where MPI reads and writes device memory
//! (a CUDA-aware MPI, [`MpiDeviceBuffers`]). The Dat's transfer counter counts the records apart from
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

/// Whether halo records go to MPI in device memory (a GPU-aware MPI reads
/// and writes it) or through page-locked host memory
/// (`OP2_MPI_DEVICE_BUFFERS`, `RuntimeOptions::mpi_device_buffers`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MpiDeviceBuffers {
    /// Device memory where MPI says it takes it and the backend's buffers
    /// have addresses (CUDA), else host memory.
    #[default]
    Auto,
    /// Device memory, or an error naming why not.
    On,
    /// Host memory.
    Off,
}

/// A halo exchange of a Dat packed on a device, in flight.
pub struct DeviceHalo {
    lists: Arc<HaloLists>,
    /// The Dat's shape on the device when it was packed.
    shape: (usize, usize, usize),
    how: InFlight,
}

/// Where a packed halo's records travel.
enum InFlight {
    /// Through host memory: MPI fills `receive`, which then goes up.
    Host(Box<dyn PendingRecords>),
    /// In device memory: MPI reads `packed` and fills `received`, held here
    /// until it is done.
    Device {
        pending: Box<dyn crate::PendingExchange>,
        packed: Box<dyn DeviceBuffer>,
        received: Box<dyn DeviceBuffer>,
    },
}

/// Whether `dist`'s MPI takes `buffer`'s device memory, as `mode` asks.
///
/// # Errors
/// [`Error::InvalidOption`] for [`MpiDeviceBuffers::On`] where it cannot.
fn direct(mode: MpiDeviceBuffers, dist: &dyn Distribution, buffer: &dyn DeviceBuffer, device: &str) -> Result<bool> {
    let takes = dist.device_records().is_some_and(|d| d.takes_device_memory());
    let addressed = buffer.device_address().is_some();
    let refuse = |why: &str| Error::InvalidOption {
        option: "OP2_MPI_DEVICE_BUFFERS",
        reason: format!("`on` asks MPI to take device memory, but {why}; use `auto` or `off`"),
    };
    match mode {
        MpiDeviceBuffers::Off => Ok(false),
        MpiDeviceBuffers::Auto => Ok(takes && addressed),
        MpiDeviceBuffers::On if !addressed => Err(refuse(&format!(
            "the buffers of `{device}` have no address MPI can use (only CUDA's have)"
        ))),
        MpiDeviceBuffers::On if !takes => Err(refuse(
            "this MPI cannot read or write device memory (MPIX_Query_cuda_support says no)",
        )),
        MpiDeviceBuffers::On => Ok(true),
    }
}

/// Starts exchanging `dat`'s halo on `work`'s device, if it can go that
/// way: `dist` gives its lists in one piece and the device holds the
/// Dat's current values; else `None`, and the caller exchanges through the
/// host. The records go to MPI in device memory or through the host as
/// `mode` says; either way the host waits for the pack before MPI sends.
///
/// # Errors
/// Launch and transfer errors; the distribution's; as [`MpiDeviceBuffers`].
pub fn start(
    dat: &dyn DatHandle,
    dist: &dyn Distribution,
    work: &dyn DeviceWork,
    mode: MpiDeviceBuffers,
) -> Result<Option<DeviceHalo>> {
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
    let shape = shape_of(slot.layout, dat);
    // Elements the buffer holds (a column's length in columns): an
    // exchange reaching past them goes through the host.
    let held = |b: &dyn DeviceBuffer| match shape.2 {
        0 => b.bytes() / record.max(1),
        stride => stride,
    };
    let Some(buffer) = buffer.filter(|b| held(*b) >= lists.reach) else {
        return Ok(None);
    };
    let direct = direct(mode, dist, buffer, work.device_name())?;
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
    let into = lists.imports.len() * record;
    let how = match (direct, dist.device_records()) {
        (true, Some(mpi)) => {
            let received = bufs.take_records(work, into)?;
            // MPI reads device memory outside the queue: the pack first.
            work.finish()?;
            let addresses = (packed.device_address(), received.device_address());
            let (Some(send), Some(receive)) = addresses else {
                unreachable!("`direct` checked the backend's addresses")
            };
            // SAFETY: both are this device's allocations holding the
            // records and room for them; the pack has finished; `InFlight`
            // keeps them, untouched, until the exchange is waited for.
            let pending = unsafe { mpi.start_device_record_exchange(send, receive, record) }?;
            InFlight::Device {
                pending,
                packed,
                received,
            }
        }
        _ => {
            let mut send = bufs.take_host(work, bytes)?;
            packed.download(send.as_mut_slice())?;
            bufs.records.push(packed);
            let receive = bufs.take_host(work, into)?;
            InFlight::Host(dist.start_record_exchange(send, receive, record)?)
        }
    };
    drop(bufs);
    drop(slot);
    Ok(Some(DeviceHalo { lists, shape, how }))
}

impl DeviceHalo {
    /// Waits for the records, takes them up (unless MPI wrote them in
    /// device memory) and unpacks them into `dat`'s halo on `work`'s
    /// device; the device copy stays the valid one.
    ///
    /// # Errors
    /// The distribution's; launch and transfer errors; [`Error::Device`]
    /// if the Dat's device copy changed while its halo was in flight.
    pub fn finish(self, dat: &dyn DatHandle, work: &dyn DeviceWork) -> Result<()> {
        let (host, device) = match self.how {
            InFlight::Host(pending) => (Some(pending.wait()?), None),
            InFlight::Device {
                pending,
                packed,
                received,
            } => {
                pending.wait()?;
                (None, Some((packed, received)))
            }
        };
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
        let (received, crossed) = match (host, device) {
            (Some((send, receive)), _) => {
                let received = bufs.take_records(work, receive.len())?;
                received.upload(receive.as_slice())?;
                let crossed = (send.len(), receive.len());
                bufs.host.push(send.into_memory());
                bufs.host.push(receive.into_memory());
                (received, crossed)
            }
            (None, Some((packed, received))) => {
                bufs.records.push(packed);
                (received, (0, 0))
            }
            (None, None) => unreachable!("one way or the other"),
        };
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
        slot.counter.count_halo(crossed.0, crossed.1);
        // The host's halo values are older now.
        if slot.state == DeviceState::Both {
            slot.state = DeviceState::Device;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Access, PendingExchange, ScalarType};

    /// A distribution whose MPI takes device memory or not.
    struct Mpi(bool);

    impl Distribution for Mpi {
        fn start_exchange(&self, _: &dyn DatHandle) -> Result<Box<dyn PendingExchange>> {
            unreachable!("not exchanged here")
        }
        fn all_reduce(&self, _: &mut [u8], _: ScalarType, _: Access) -> Result<()> {
            Ok(())
        }
        fn rank_and_size(&self) -> (usize, usize) {
            (0, 1)
        }
        fn device_records(&self) -> Option<&dyn crate::DeviceRecordExchange> {
            Some(self)
        }
    }

    impl crate::DeviceRecordExchange for Mpi {
        fn takes_device_memory(&self) -> bool {
            self.0
        }
        unsafe fn start_device_record_exchange(&self, _: u64, _: u64, _: usize) -> Result<Box<dyn PendingExchange>> {
            unreachable!("not exchanged here")
        }
    }

    /// A buffer with or without a device address.
    struct Buffer(Option<u64>);

    impl DeviceBuffer for Buffer {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn context_id(&self) -> u64 {
            0
        }
        fn upload(&self, _: &[u8]) -> Result<()> {
            Ok(())
        }
        fn download(&self, _: &mut [u8]) -> Result<()> {
            Ok(())
        }
        fn bytes(&self) -> usize {
            0
        }
        fn device_address(&self) -> Option<u64> {
            self.0
        }
    }

    #[test]
    fn records_go_to_mpi_in_device_memory_only_where_both_sides_can() {
        use MpiDeviceBuffers::{Auto, Off, On};
        let (cuda, opencl) = (Buffer(Some(0x1000)), Buffer(None));
        let (aware, plain) = (Mpi(true), Mpi(false));
        assert!(direct(Auto, &aware, &cuda, "gpu").unwrap());
        assert!(!direct(Auto, &plain, &cuda, "gpu").unwrap());
        assert!(!direct(Auto, &aware, &opencl, "gpu").unwrap());
        assert!(!direct(Off, &aware, &cuda, "gpu").unwrap());
        assert!(direct(On, &aware, &cuda, "gpu").unwrap());
        for (mpi, buffer, why) in [
            (&plain, &cuda, "cannot read or write device memory"),
            (&aware, &opencl, "no address"),
        ] {
            let e = direct(On, mpi, buffer, "gpu").unwrap_err();
            assert!(
                matches!(&e, Error::InvalidOption { option: "OP2_MPI_DEVICE_BUFFERS", reason } if reason.contains(why)),
                "{e}"
            );
        }
    }
}
