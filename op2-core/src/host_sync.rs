//! Host synchronisation before host access: `sync_to_host` brings one Dat's or Global's
//! host copy up to date from the device, and `sync_args_to_host` does so for every
//! argument of a loop that runs on the host (`seq`, `rayon`, `jit`). Both go through the
//! device state machine behind each carrier's `DeviceCell`.
use crate::{ArgData, ArgRef, ArgSpec, Error, KernelInfo, Result};

/// Brings one Dat's or Global's host copy up to date (downloading what a
/// device left newer) before the host reads it, or before it writes it
/// (`write`), after which the device copy is stale. The caller holds the
/// data's borrow; the device lock serialises downloads.
pub fn sync_to_host(data: ArgData<'_>, write: bool) -> Result<()> {
    // SAFETY: the caller holds the data's borrow (exclusive when writing).
    let host = unsafe { std::slice::from_raw_parts_mut(data.host_bytes(), data.byte_len()) };
    data.device().lock().sync_host(host, write)
}

/// Before a loop runs on the host (`seq`, `rayon`, `jit`): brings every
/// argument's host copy up to date and marks written arguments as changed on
/// the host. Costs one uncontended lock per distinct argument when no device
/// is in use.
pub fn sync_args_to_host(kernel: &KernelInfo, args: &[ArgSpec<'_>]) -> Result<()> {
    for (index, arg) in args.iter().enumerate() {
        if args[..index].iter().any(|a| a.data.id() == arg.data.id()) {
            continue;
        }
        let writes = args.iter().any(|a| a.data.id() == arg.data.id() && a.access.writes());
        sync_to_host(arg.data, writes).map_err(|e| Error::Transfer {
            name: ArgRef {
                loop_name: kernel.name.to_string(),
                index,
                name: arg.data.name().to_string(),
            }
            .to_string(),
            reason: e.to_string(),
        })?;
    }
    Ok(())
}
