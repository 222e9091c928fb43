use crate::{host_read, host_write, ArgRef, ArgSpec, Error, KernelInfo, Result};

/// Before a loop runs on the host (`seq`, `rayon`, `jit`): brings every
/// argument's host copy up to date (downloading what a device backend left
/// newer on the device) and marks written arguments as changed on the host.
/// Costs one uncontended lock per distinct argument when no device is in use.
pub fn sync_args_to_host(kernel: &KernelInfo, args: &[ArgSpec<'_>]) -> Result<()> {
    for (index, arg) in args.iter().enumerate() {
        if args[..index].iter().any(|a| a.data.id() == arg.data.id()) {
            continue;
        }
        let writes = args.iter().any(|a| a.data.id() == arg.data.id() && a.access.writes());
        let mut slot = arg.data.device().lock();
        let t = if writes {
            host_write(slot.state)
        } else {
            host_read(slot.state)
        };
        if t.download {
            // SAFETY: the runtime holds this argument's borrow (exclusive when
            // written); the device lock serialises downloads.
            let host = unsafe { std::slice::from_raw_parts_mut(arg.data.host_bytes(), arg.data.byte_len()) };
            slot.download(host).map_err(|e| Error::Transfer {
                name: format!(
                    "{}",
                    ArgRef {
                        loop_name: kernel.name.to_string(),
                        index,
                        name: arg.data.name().to_string()
                    }
                ),
                reason: e.to_string(),
            })?;
        }
        slot.state = t.after;
    }
    Ok(())
}
