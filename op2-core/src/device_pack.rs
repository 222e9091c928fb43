//! Packing some elements of Dats into records ([`AgentPack`](crate::AgentPack)s
//! of agents or messages that move between processes) where the Dats'
//! valid data is: a Dat whose only valid copy is on a device has the
//! elements gathered there and only they come back, never the whole Dat;
//! any other is read on the host, where its data is valid already.

use crate::{
    scratch_buffer, BorrowFlag, DeviceBuffer, DeviceSlot, DeviceState, DeviceWork, Error, GatherJob, Result,
    TransferCounter,
};

/// Device buffers kept from pack to pack (grown by doubling): the indices
/// packed, and one column of gathered elements.
#[derive(Default)]
pub struct DevicePacker {
    indices: Option<Box<dyn DeviceBuffer>>,
    /// The context and count the indices were uploaded for (this pack's).
    uploaded: Option<(u64, usize)>,
    column: Option<Box<dyn DeviceBuffer>>,
    host: Vec<u8>,
}

impl DevicePacker {
    /// Starts a pack: the next columns gather the elements `indices`
    /// (uploaded on the first column that needs them).
    pub fn begin(&mut self) {
        self.uploaded = None;
    }

    /// The device copy in `slot` of a carrier with elements of `bytes`
    /// bytes if it is packed on the device: its only valid copy is there,
    /// in `work`'s context, and it moves in 32-bit words.
    pub fn on_device<'s>(
        work: Option<&dyn DeviceWork>,
        slot: &'s DeviceSlot,
        bytes: usize,
    ) -> Option<&'s dyn DeviceBuffer> {
        let device_only = matches!(slot.state, DeviceState::Device | DeviceState::HostUnallocated);
        let work = work.filter(|_| device_only && bytes % 4 == 0)?;
        slot.buffer.as_deref().filter(|b| b.context_id() == work.context_id())
    }

    /// Gathers the elements `indices` (of `bytes` bytes each) of `src`, a
    /// carrier's device copy ([`DevicePacker::on_device`]), and writes
    /// element `k` into `records[k * record + offset..]`: one gather, one
    /// download of just those elements (counted in `counter`, the
    /// carrier's).
    ///
    /// # Errors
    /// The device's.
    #[allow(clippy::too_many_arguments)]
    pub fn column(
        &mut self,
        work: &dyn DeviceWork,
        (src, counter): (&dyn DeviceBuffer, &TransferCounter),
        bytes: usize,
        indices: &[u32],
        records: &mut [u8],
        record: usize,
        offset: usize,
    ) -> Result<()> {
        let m = indices.len();
        if m == 0 {
            return Ok(());
        }
        let key = (work.context_id(), m);
        let order = scratch_buffer(work, &mut self.indices, "packed indices", 4 * m)?;
        if self.uploaded != Some(key) {
            order.upload(bytemuck::cast_slice(indices))?;
            self.uploaded = Some(key);
        }
        let column = scratch_buffer(work, &mut self.column, "packed elements", bytes * m)?;
        work.gather(&GatherJob {
            n: m,
            words: bytes / 4,
            order,
            src,
            dst: column,
            dst_first: 0,
            tail: None,
        })?;
        self.host.resize(bytes * m, 0);
        column.download(&mut self.host)?;
        counter.count_download(self.host.len());
        for (r, e) in records.chunks_exact_mut(record).zip(self.host.chunks_exact(bytes)) {
            r[offset..offset + bytes].copy_from_slice(e);
        }
        Ok(())
    }
}

/// A shared borrow of a carrier's host flag, released when dropped (so
/// that a device read of its copy cannot meet a writer).
pub struct ReadBorrow<'a>(&'a BorrowFlag);

impl<'a> ReadBorrow<'a> {
    /// The shared borrow of `flag` (the carrier `name`'s).
    ///
    /// # Errors
    /// [`Error::HostBorrow`] if it is borrowed for writing.
    pub fn take(flag: &'a BorrowFlag, name: &str) -> Result<ReadBorrow<'a>> {
        flag.try_borrow(false).map_err(|how| Error::HostBorrow {
            name: name.to_string(),
            how,
        })?;
        Ok(ReadBorrow(flag))
    }
}

impl Drop for ReadBorrow<'_> {
    fn drop(&mut self) {
        self.0.release(false);
    }
}
