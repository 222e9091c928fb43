//! The agents' ids in device memory. A sort of the agents on a device
//! ([`Population::permute_by_device_order`]) moves their ids there with
//! their Dats, so that it needs no round trip through the host; the host's
//! copy is brought back only when something on the host reads the ids (or
//! a change made on the host renumbers them), and a message list's build
//! copies them from device to device.

use std::sync::MutexGuard;

use super::{Ids, Population};
use crate::{scratch_buffer, DeviceBuffer, DeviceWork, GatherJob, Result};

/// The ids on a device: current there, and newer than the host's while
/// `host_stale`.
pub(super) struct DeviceIds {
    /// The ids (`u64`, one per agent).
    current: Box<dyn DeviceBuffer>,
    /// The buffer the next permutation gathers into.
    spare: Option<Box<dyn DeviceBuffer>>,
    /// Whether a permutation ran since the host last read them.
    host_stale: bool,
}

impl DeviceIds {
    /// Whether the host's copy lags.
    pub(super) fn host_stale(&self) -> bool {
        self.host_stale
    }
}

impl Ids {
    /// Brings the device's newer ids back to the host (the device copy
    /// stays valid).
    fn bring_home(&mut self) -> Result<()> {
        let Some(d) = self.device.as_mut().filter(|d| d.host_stale) else {
            return Ok(());
        };
        d.current.download(bytemuck::cast_slice_mut(&mut self.ids))?;
        d.host_stale = false;
        self.changed();
        Ok(())
    }

    /// The ids on `work`'s device, uploaded unless already there.
    fn on_device(&mut self, work: &dyn DeviceWork) -> Result<&mut DeviceIds> {
        if self
            .device
            .as_ref()
            .is_some_and(|d| d.current.context_id() != work.context_id())
        {
            // Another device's: the host takes them back, then this one.
            self.bring_home()?;
            self.device = None;
        }
        if self.device.is_none() {
            let mut cell = None;
            scratch_buffer(work, &mut cell, "agent ids", 8 * self.ids.len())?
                .upload(bytemuck::cast_slice(&self.ids))?;
            self.device = cell.map(|current| DeviceIds {
                current,
                spare: None,
                host_stale: false,
            });
        }
        match self.device.as_mut() {
            Some(d) => Ok(d),
            None => unreachable!("uploaded above"),
        }
    }
}

impl Population {
    /// The ids, brought to the host first if a sort on a device moved them.
    ///
    /// # Errors
    /// [`crate::Error::Transfer`] if they cannot be brought back.
    pub(super) fn host_ids(&self) -> Result<MutexGuard<'_, Ids>> {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        ids.bring_home()?;
        Ok(ids)
    }

    /// Before a change made on the host side of the ids (births, deaths,
    /// migration, a permutation given on the host): the host takes the ids
    /// back and the device copy goes, so the change renumbers the only copy.
    ///
    /// # Errors
    /// As [`Population::host_ids`].
    pub(super) fn take_ids_home(&self) -> Result<()> {
        self.host_ids()?.device = None;
        Ok(())
    }

    /// Queues the gather of the ids into `order` (element `k` afterwards
    /// is element `order[k]` before) on `work`'s device, into the spare
    /// buffer; [`Population::swap_device_ids`] makes it current.
    ///
    /// # Errors
    /// Transfer and launch errors; nothing has changed then.
    pub(super) fn gather_device_ids(&self, work: &dyn DeviceWork, order: &dyn DeviceBuffer) -> Result<()> {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        let n = ids.ids.len();
        let d = ids.on_device(work)?;
        let spare = scratch_buffer(work, &mut d.spare, "agent ids", 8 * n)?;
        work.gather(&GatherJob {
            n,
            words: 2,
            order,
            src: d.current.as_ref(),
            dst: spare,
            dst_first: 0,
            tail: None,
        })
    }

    /// Makes the ids [`Population::gather_device_ids`] gathered current:
    /// the host's copy lags from now on, and they no longer ascend.
    pub(super) fn swap_device_ids(&self) {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = ids.device.as_mut() {
            if let Some(spare) = d.spare.take() {
                d.spare = Some(std::mem::replace(&mut d.current, spare));
                d.host_stale = true;
            }
        }
        ids.ascending = false;
        ids.by_id = None;
    }

    /// Copies the ids (as `i64`, one per agent) into `dst` on `work`'s
    /// device without the host if they are there; `Ok(false)` if not (the
    /// caller uploads the host's).
    ///
    /// # Errors
    /// Launch errors.
    pub fn ids_to_device(&self, work: &dyn DeviceWork, dst: &dyn DeviceBuffer) -> Result<bool> {
        let ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        match ids.device.as_ref() {
            Some(d) if d.current.context_id() == work.context_id() => {
                work.copy_words(d.current.as_ref(), dst, 0, 2 * ids.ids.len())?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
