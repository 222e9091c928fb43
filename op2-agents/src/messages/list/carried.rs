//! The Dats a list carries: each a sender Dat and the message Dat its
//! values are copied to at a build (`Carried`), gathered in message order
//! on the host or in device memory, merged with ghosts' values.

use super::*;

/// A sender Dat and the message Dat its values are copied to.
pub(super) trait Carried: Send + Sync {
    fn source_id(&self) -> usize;
    fn source_name(&self) -> &str;
    fn scalar(&self) -> ScalarType;
    /// Bytes per element.
    fn element_bytes(&self) -> usize;
    fn message(&self) -> &dyn Any;
    /// The message Dat, as an argument (to stage it on a device).
    fn message_arg(&self) -> ArgData<'_>;
    /// Message `i` gets the value of sender `order[i]` (of a ghost, for an
    /// index past the senders).
    fn gather(&self, order: &[u32], ghosts: Option<GhostField<'_>>, workers: &dyn Workers) -> Result<()>;
    /// As [`Carried::gather`], in `work`'s device memory, for the first
    /// `n` entries of `order` there (the ghosts' values in `tail`).
    fn gather_on_device(
        &self,
        work: &dyn DeviceWork,
        order: &dyn DeviceBuffer,
        n: usize,
        tail: Option<GatherTail<'_>>,
    ) -> Result<()>;
    /// Merges ghosts into the messages in place (the merged list, `total`
    /// long, as `pieces`; ghost `k` at index `ghosts.first + k`).
    fn merge_in_place(&self, pieces: &[merge::Piece], total: usize, ghosts: GhostField<'_>) -> Result<()>;
    /// As [`Carried::merge_in_place`] in `work`'s device memory, into
    /// `out` (a scratch buffer); [`Carried::take_merged`] then copies it
    /// into the messages.
    fn merge_on_device(
        &self,
        work: &dyn DeviceWork,
        from: &dyn DeviceBuffer,
        n: usize,
        tail: GatherTail<'_>,
        out: &mut Option<Box<dyn DeviceBuffer>>,
    ) -> Result<()>;
    /// The first `n` elements of `merged` become the messages.
    fn take_merged(
        &self,
        work: &dyn DeviceWork,
        identity: &dyn DeviceBuffer,
        n: usize,
        merged: &dyn DeviceBuffer,
    ) -> Result<()>;
    /// Copies the senders' elements into records: sender `senders[k]`'s
    /// to `records[k * record + offset..]`; from `work`'s device through
    /// `packer` when the device alone holds the source's valid copy.
    fn pack_on(
        &self,
        work: Option<&dyn DeviceWork>,
        packer: &mut DevicePacker,
        senders: &[u32],
        records: &mut [u8],
        record: usize,
        offset: usize,
    ) -> Result<()>;
}

pub(super) struct CarriedDat<T: Scalar> {
    pub(super) source: Dat<T>,
    pub(super) message: Dat<T>,
}

impl<T: Scalar> Carried for CarriedDat<T> {
    fn source_id(&self) -> usize {
        DatHandle::id(&self.source)
    }

    fn source_name(&self) -> &str {
        self.source.name()
    }

    fn scalar(&self) -> ScalarType {
        T::TYPE
    }

    fn element_bytes(&self) -> usize {
        self.source.dim() * std::mem::size_of::<T>()
    }

    fn message(&self) -> &dyn Any {
        &self.message
    }

    fn message_arg(&self) -> ArgData<'_> {
        ArgData::Dat(&self.message)
    }

    fn gather(&self, order: &[u32], ghosts: Option<GhostField<'_>>, workers: &dyn Workers) -> Result<()> {
        let src = self.source.try_data_ro()?;
        let mut dst = self.message.try_data_mut()?;
        let n = order.len();
        let parts = parts_for(workers, n);
        let Some(g) = ghosts else {
            // Every step's build: typed copies, no ghost test per message.
            let (src, d) = (&*src, self.source.dim());
            run_on_pieces(workers, &mut dst[..n * d], d, parts, &|i, part| {
                for (to, &from) in part.chunks_exact_mut(d).zip(&order[piece(n, parts, i)]) {
                    let from = from as usize * d;
                    to.copy_from_slice(&src[from..from + d]);
                }
            });
            return Ok(());
        };
        let eb = self.element_bytes();
        let src: &[u8] = bytemuck::cast_slice(&src);
        let dst: &mut [u8] = bytemuck::cast_slice_mut(&mut dst);
        run_on_pieces(workers, &mut dst[..n * eb], eb, parts, &|i, part| {
            for (to, &from) in part.chunks_exact_mut(eb).zip(&order[piece(n, parts, i)]) {
                if from >= g.first {
                    to.copy_from_slice(g.element(from, eb));
                } else {
                    let from = from as usize * eb;
                    to.copy_from_slice(&src[from..from + eb]);
                }
            }
        });
        Ok(())
    }

    fn gather_on_device(
        &self,
        work: &dyn DeviceWork,
        order: &dyn DeviceBuffer,
        n: usize,
        tail: Option<GatherTail<'_>>,
    ) -> Result<()> {
        let src = stage(work, ArgData::Dat(&self.source), READ, 0)?;
        let dst = stage(work, ArgData::Dat(&self.message), OVERWRITE, 0)?;
        work.gather(&GatherJob {
            n,
            words: self.source.dim() * std::mem::size_of::<T>() / 4,
            order,
            src: src.buffer(),
            dst: dst.buffer(),
            dst_first: 0,
            tail,
        })
    }

    fn merge_in_place(&self, pieces: &[merge::Piece], total: usize, ghosts: GhostField<'_>) -> Result<()> {
        let mut data = self.message.try_data_mut()?;
        let eb = self.element_bytes();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut data);
        merge::apply_pieces(&mut bytes[..total * eb], eb, pieces, &|k, to| {
            to.copy_from_slice(ghosts.element(ghosts.first + k, eb))
        });
        Ok(())
    }

    fn merge_on_device(
        &self,
        work: &dyn DeviceWork,
        from: &dyn DeviceBuffer,
        n: usize,
        tail: GatherTail<'_>,
        out: &mut Option<Box<dyn DeviceBuffer>>,
    ) -> Result<()> {
        let eb = self.element_bytes();
        let src = stage(work, ArgData::Dat(&self.message), READ, 0)?;
        let dst = op2_core::scratch_buffer(work, out, "merged messages", n * eb)?;
        work.gather(&GatherJob {
            n,
            words: eb / 4,
            order: from,
            src: src.buffer(),
            dst,
            dst_first: 0,
            tail: Some(tail),
        })
    }

    fn take_merged(
        &self,
        work: &dyn DeviceWork,
        identity: &dyn DeviceBuffer,
        n: usize,
        merged: &dyn DeviceBuffer,
    ) -> Result<()> {
        let dst = stage(work, ArgData::Dat(&self.message), OVERWRITE, 0)?;
        work.gather(&GatherJob {
            n,
            words: self.element_bytes() / 4,
            order: identity,
            src: merged,
            dst: dst.buffer(),
            dst_first: 0,
            tail: None,
        })
    }

    fn pack_on(
        &self,
        work: Option<&dyn DeviceWork>,
        packer: &mut DevicePacker,
        senders: &[u32],
        records: &mut [u8],
        record: usize,
        offset: usize,
    ) -> Result<()> {
        let eb = self.element_bytes();
        if let Some(work) = work {
            let _read = ReadBorrow::take(self.source.borrow_flag(), self.source.name())?;
            let slot = self.source.device().lock();
            if let Some(src) = DevicePacker::on_device(Some(work), &slot, eb) {
                return packer.column(work, (src, &slot.counter), eb, senders, records, record, offset);
            }
        }
        let src = self.source.try_data_ro()?;
        let src: &[u8] = bytemuck::cast_slice(&src);
        for (r, &e) in records.chunks_exact_mut(record).zip(senders) {
            let e = e as usize * eb;
            r[offset..offset + eb].copy_from_slice(&src[e..e + eb]);
        }
        Ok(())
    }
}
