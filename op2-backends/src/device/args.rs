//! A loop's arguments as device kernel arguments: `prepare_args` brings each Dat and
//! Global to the device through op2-core's host/device state machine (uploading only
//! what is stale), and uploads map tables once and keeps them. A reduction leaves its
//! Global's newer value on the device. The result, `DeviceArgs`, feeds `prepare_loop` in
//! `prepared.rs`.
use op2_core::{ArgRoute, ColumnShape, DeviceCell, DeviceSlot, DeviceState, LoopUse, MapTable, ParLoop, Result};

use super::DeviceApi;

/// Each argument's data buffer and map buffer (if any), as kernel arguments.
pub struct DeviceArgs<M> {
    /// Data, in argument order (arguments on one Dat share its buffer).
    pub data: Vec<M>,
    /// Per argument, the elements per column of a Dat in columns (`None`
    /// for rows and Globals).
    pub strides: Vec<Option<i64>>,
    /// Map buffers per argument: a map's table, or a ragged map's offsets
    /// then targets (none for direct arguments and Globals).
    pub maps: Vec<[Option<M>; 2]>,
}

/// Each argument's data (and map) on the device, in argument order: Dats by
/// the state machine (uploaded only when the device copy is stale; a WRITE
/// over a subset or through a map keeps the elements it does not write), Maps
/// uploaded once and kept, Globals like Dats: a reduction reads the value
/// (MIN and MAX start from it, INC adds to it) and leaves the new one on the
/// device, for the host to download only when it reads it. Argument `k`'s
/// Dat lies in columns of `columns[k]` (a Dat's first argument decides).
pub fn prepare_args<A: DeviceApi>(
    api: &A,
    lp: &ParLoop<'_>,
    columns: &[Option<ColumnShape>],
) -> Result<DeviceArgs<A::Mem>> {
    let mut data: Vec<A::Mem> = Vec::with_capacity(lp.args.len());
    let mut strides = Vec::with_capacity(lp.args.len());
    let mut maps = Vec::with_capacity(lp.args.len());
    for (k, arg) in lp.args.iter().enumerate() {
        let first = lp.args[..k].iter().position(|a| a.data.id() == arg.data.id());
        // SAFETY: the runtime holds this argument's borrow for the loop.
        let host = unsafe { std::slice::from_raw_parts_mut(arg.data.host_bytes(), arg.data.byte_len()) };
        let (mem, stride) = match (first, arg.data) {
            (Some(j), _) => (data[j], strides[j]),
            (None, _) => {
                // Every argument on this Dat together decides its transition.
                // A loop over a subset, like an indirect one, writes some
                // elements only: the others' values must be on the device too.
                let partial = lp.subset.is_some();
                let use_ = lp
                    .args
                    .iter()
                    .filter(|a| a.data.id() == arg.data.id())
                    .map(|a| LoopUse::of(a.access, a.is_indirect() || partial))
                    .fold(
                        LoopUse {
                            needs_data: false,
                            writes: false,
                        },
                        |u, v| LoopUse {
                            needs_data: u.needs_data || v.needs_data,
                            writes: u.writes || v.writes,
                        },
                    );
                let mut slot = arg.data.device().lock();
                let name = arg.data.name();
                slot.prepare(api.context_id(), host.len(), host, use_, columns[k], &|bytes| {
                    api.new_buffer(name, bytes)
                })?;
                let stride = slot.layout.stride().map(|s| s as i64);
                (mem_of(api, &slot), stride)
            }
        };
        data.push(mem);
        strides.push(stride);
        maps.push(match arg.route {
            ArgRoute::Map(m) => [
                Some(match m.map.table() {
                    MapTable::Narrow(values) => prepare_table(api, m.map.device(), m.map.name(), values)?,
                    MapTable::Long(values) => prepare_table(api, m.map.device(), m.map.name(), values)?,
                }),
                None,
            ],
            ArgRoute::Ragged(r) => [
                Some(prepare_table(api, r.offsets_device(), r.name(), r.offsets())?),
                Some(prepare_table(api, r.targets_device(), r.name(), r.targets())?),
            ],
            // A Dat read whole: its count (uploaded again after it changes).
            ArgRoute::Whole(w) => [
                Some(prepare_table(api, w.count.device(), w.list, &w.count.table())?),
                None,
            ],
            ArgRoute::Direct => [None, None],
        });
    }
    Ok(DeviceArgs { data, strides, maps })
}

pub(super) fn mem_of<A: DeviceApi>(api: &A, slot: &DeviceSlot) -> A::Mem {
    slot.buffer.as_deref().map_or_else(|| api.null_mem(), |b| api.mem_of(b))
}

/// A map's table (or a subset's elements, or a whole Dat's count) on this
/// device: uploaded when the cell has no buffer here, or its copy is stale,
/// and kept (maps and subsets never change; a count marks its copy stale
/// when it changes). A one-entry table already on the device (a list's
/// count, which changes at every build) is set by a queued fill instead:
/// an upload would wait for the device's queue.
pub(super) fn prepare_table<A: DeviceApi, V: bytemuck::Pod>(
    api: &A,
    cell: &DeviceCell,
    name: &str,
    values: &[V],
) -> Result<A::Mem> {
    let mut slot = cell.lock();
    let bytes = bytemuck::cast_slice(values);
    let here = slot
        .buffer
        .as_ref()
        .is_some_and(|b| b.context_id() == api.context_id() && b.bytes() >= bytes.len());
    if !here {
        slot.buffer = Some(api.new_buffer(name, bytes.len())?);
        slot.state = DeviceState::Host;
    }
    if slot.state != DeviceState::Both {
        let filled = match (&slot.buffer, values.len()) {
            (Some(b), 1) if here => b.fill(bytes, bytes.len())?,
            _ => false,
        };
        if !filled {
            slot.upload(bytes)?;
        }
        slot.state = DeviceState::Both;
    }
    Ok(mem_of(api, &slot))
}
