//! Checked mode on a device: a two-int buffer where failing threads leave the
//! lowest failing element and the union of their failure codes (see
//! `device_source`), read back after the loop.

use op2_core::{DeviceBuffer, Error, Result};

use super::DeviceApi;
use crate::codegen::{check_failure, Checks};

/// One loop's failure record on the device; empty when checks are off.
pub struct CheckReport {
    buffer: Option<Box<dyn DeviceBuffer>>,
}

impl CheckReport {
    /// A cleared record (lowest element `i32::MAX`, no codes), or none.
    pub fn new<A: DeviceApi>(api: &A, checks: Checks) -> Result<CheckReport> {
        let buffer = match checks {
            Checks::Off => None,
            Checks::On => {
                let b = api.new_buffer("checked-mode report", 8)?;
                b.upload(bytemuck::cast_slice(&[i32::MAX, 0i32]))?;
                Some(b)
            }
        };
        Ok(CheckReport { buffer })
    }

    /// The kernel argument: the buffer, or null when checks are off.
    pub fn mem<A: DeviceApi>(&self, api: &A) -> A::Mem {
        self.buffer.as_deref().map_or_else(|| api.null_mem(), |b| api.mem_of(b))
    }

    /// After the loop: the first failure as an error, if any.
    pub fn result(&self, loop_name: &str, backend: &'static str) -> Result<()> {
        let Some(b) = &self.buffer else { return Ok(()) };
        let mut bytes = [0u8; 8];
        b.download(&mut bytes)?;
        let element = i32::from_ne_bytes(bytes[..4].try_into().expect("4 bytes"));
        let codes = i32::from_ne_bytes(bytes[4..].try_into().expect("4 bytes"));
        if codes == 0 {
            return Ok(());
        }
        // Threads fail concurrently: the record has the lowest element and
        // every kind of failure, not which element failed which check.
        let check = (1..=3)
            .filter(|c| codes & (1 << c) != 0)
            .map(|c| check_failure(c, None))
            .collect::<Vec<_>>()
            .join("; ");
        Err(Error::KernelCheck {
            loop_name: loop_name.to_string(),
            backend,
            element: element.max(0) as usize,
            check,
        })
    }
}
