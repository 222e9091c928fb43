//! The OpenCL backend (docs/ARCHITECTURE.md, Backends): the translated kernel inside a
//! generated OpenCL program per loop shape, built once per context; data
//! moves lazily by the device state machine of `op2-core`; one work-item per
//! element and one work-group per plan block; indirect writes by element
//! colours (one launch per block colour) or atomics (see [`Increments`](crate::Increments));
//! Global reductions by a tree per work-group and a fixed-order fold of the
//! groups' partials on the device. The loop machinery is the shared
//! [`DeviceExecutor`]; this module supplies OpenCL as its [`DeviceApi`](crate::device::DeviceApi).

mod api;
mod buffer;
mod select;

pub use api::OpenCl;
use op2_core::{Error, Result};
use select::select_device;

use crate::device::DeviceExecutor;
use crate::RuntimeOptions;

/// Elements per work-group when the options do not say.
pub const DEFAULT_BLOCK_SIZE: usize = 256;

/// The `opencl` backend: the shared device executor over OpenCL.
pub type OpenClExecutor = DeviceExecutor<OpenCl>;

impl DeviceExecutor<OpenCl> {
    /// An executor on the device `options.device` names (a
    /// [`Runtime`](crate::Runtime) fills it from `OP2_OPENCL_DEVICE`), else
    /// the first GPU, else the first device, or, for rank `options.node_rank`
    /// of a node, its rank modulo the GPUs (else the devices).
    pub fn new(options: &RuntimeOptions) -> Result<OpenClExecutor> {
        let wanted = options.device.clone();
        let _init = select::INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let (device, name) = select_device(wanted.as_deref(), options.node_rank)?;
        DeviceExecutor::with_api(OpenCl::open(&device, name)?, options, DEFAULT_BLOCK_SIZE)
    }
}

/// A failed OpenCL call on `device`.
fn cl_error(device: &str, call: &str, e: impl std::fmt::Display) -> Error {
    Error::Device {
        backend: "opencl",
        device: device.to_string(),
        call: call.to_string(),
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use op2_core::DeviceBuffer;

    #[test]
    fn an_impossible_allocation_is_out_of_device_memory() {
        let Ok(exec) = OpenClExecutor::new(&RuntimeOptions::default()) else {
            eprintln!("skipped: no OpenCL device");
            return;
        };
        let e = exec
            .api()
            .new_cl_buffer("huge", 1 << 60)
            .err()
            .expect("2^60 bytes cannot be allocated");
        assert!(
            matches!(e, Error::DeviceOutOfMemory { bytes, .. } if bytes == 1 << 60),
            "{e:?}"
        );
        assert!(e.to_string().contains("huge"), "{e}");
    }

    #[test]
    fn a_copy_larger_than_the_buffer_is_an_error() {
        let Ok(exec) = OpenClExecutor::new(&RuntimeOptions::default()) else {
            eprintln!("skipped: no OpenCL device");
            return;
        };
        let b = exec.api().new_cl_buffer("small", 8).unwrap();
        let e = b.upload(&[0u8; 16]).unwrap_err();
        assert!(
            matches!(e, Error::Transfer { .. }) && e.to_string().contains("16 bytes"),
            "{e}"
        );
        let e = b.download(&mut [0u8; 9]).unwrap_err();
        assert!(e.to_string().contains("9 bytes"), "{e}");
        b.upload(&[1u8; 8]).unwrap();
    }
}
