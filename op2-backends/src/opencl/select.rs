//! Choosing an OpenCL device: `OP2_OPENCL_DEVICE` (or the runtime option) as
//! an index into the list of all devices or a substring of a device's name;
//! by default the first GPU, else the first device, or under MPI the node
//! rank's modulo the GPUs (else the devices).

use op2_core::{Error, Result};
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::{ClError, CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_RUNTIME_LOAD_FAILED};
use opencl3::platform::get_platforms;

fn unavailable(reason: impl Into<String>) -> Error {
    Error::DeviceUnavailable {
        backend: "opencl",
        reason: reason.into(),
    }
}

/// Maps the errors of the first OpenCL calls to what is missing.
fn platform_error(e: ClError) -> Error {
    match e.0 {
        DLOPEN_RUNTIME_LOAD_FAILED => unavailable(
            "no OpenCL runtime: libOpenCL.so could not be loaded; install an ICD loader and a driver \
             (e.g. the Debian packages ocl-icd-libopencl1 and pocl-opencl-icd)",
        ),
        CL_PLATFORM_NOT_FOUND_KHR => {
            unavailable("no OpenCL platform found: no driver (ICD) is registered under /etc/OpenCL/vendors")
        }
        _ => unavailable(format!("listing OpenCL platforms failed: {e}")),
    }
}

/// Serialises device discovery and context creation: some OpenCL
/// implementations (PoCL among them) are not thread-safe while they start.
pub static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every device of every platform: (device, "name (platform)", is a GPU).
fn all_devices() -> Result<Vec<(Device, String, bool)>> {
    let platforms = get_platforms().map_err(platform_error)?;
    if platforms.is_empty() {
        return Err(unavailable("no OpenCL platform found"));
    }
    let mut out = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_default();
        let ids = p
            .get_devices(CL_DEVICE_TYPE_ALL)
            .map_err(|e| unavailable(format!("listing the devices of platform `{pname}` failed: {e}")))?;
        for id in ids {
            let d = Device::new(id);
            let name = d.name().unwrap_or_else(|_| "unnamed device".into());
            let gpu = d.dev_type().map(|t| t & CL_DEVICE_TYPE_GPU != 0).unwrap_or(false);
            out.push((d, format!("{name} ({pname})"), gpu));
        }
    }
    if out.is_empty() {
        return Err(unavailable("the OpenCL platforms have no devices"));
    }
    Ok(out)
}

/// The devices as `0: name; 1: name`, for messages.
fn listing(names: &[&str]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{i}: {n}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The error for device index `index` when only `names` exist.
fn index_out_of_range(index: usize, names: &[&str]) -> Error {
    let only = match names.len() {
        1 => "there is only 1 device".to_string(),
        n => format!("there are only {n} devices"),
    };
    unavailable(format!(
        "device {index} was asked for (OP2_OPENCL_DEVICE or RuntimeOptions::device), but {only} ({})",
        listing(names)
    ))
}

/// The default among devices that are GPUs or not (`gpu`): the GPUs, node
/// rank modulo their number, else all devices so.
fn default_pick(gpu: &[bool], node_rank: Option<usize>) -> usize {
    let gpus: Vec<usize> = (0..gpu.len()).filter(|&i| gpu[i]).collect();
    match gpus.is_empty() {
        false => gpus[op2_core::default_device_index(node_rank, gpus.len())],
        true => op2_core::default_device_index(node_rank, gpu.len()),
    }
}

/// The device `wanted` names, or the default (the GPUs, else all devices,
/// shared among a node's ranks by `node_rank`); an error lists what exists.
pub fn select_device(wanted: Option<&str>, node_rank: Option<usize>) -> Result<(Device, String)> {
    let devices = all_devices()?;
    let names: Vec<&str> = devices.iter().map(|d| d.1.as_str()).collect();
    let pick = match wanted.map(str::trim).filter(|w| !w.is_empty()) {
        None => default_pick(&devices.iter().map(|d| d.2).collect::<Vec<_>>(), node_rank),
        Some(w) => match w.parse::<usize>() {
            Ok(i) if i < devices.len() => i,
            Ok(i) => return Err(index_out_of_range(i, &names)),
            Err(_) => {
                let lw = w.to_lowercase();
                match devices.iter().position(|d| d.1.to_lowercase().contains(&lw)) {
                    Some(i) => i,
                    None => {
                        return Err(unavailable(format!(
                            "no OpenCL device matches `{w}`; devices: {}",
                            listing(&names)
                        )))
                    }
                }
            }
        },
    };
    let (d, n, _) = &devices[pick];
    Ok((Device::new(d.id()), n.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_runtime_names_the_library_and_packages() {
        let e = platform_error(ClError(DLOPEN_RUNTIME_LOAD_FAILED));
        assert!(matches!(e, Error::DeviceUnavailable { backend: "opencl", .. }));
        let msg = e.to_string();
        assert!(msg.contains("libOpenCL.so") && msg.contains("pocl-opencl-icd"), "{msg}");
        let e = platform_error(ClError(CL_PLATFORM_NOT_FOUND_KHR));
        assert!(e.to_string().contains("no OpenCL platform"), "{e}");
    }

    #[test]
    fn ranks_of_a_node_take_its_gpus_in_turn_else_its_devices() {
        // A CPU at 0, GPUs at 1 and 2.
        let gpu = [false, true, true];
        let picks: Vec<usize> = (0..3).map(|r| default_pick(&gpu, Some(r))).collect();
        assert_eq!(picks, [1, 2, 1]);
        assert_eq!(default_pick(&gpu, None), 1, "one process: the first GPU");
        // PoCL alone: every rank on it.
        assert_eq!(
            (default_pick(&[false], Some(0)), default_pick(&[false], Some(1))),
            (0, 0)
        );
    }

    #[test]
    fn an_index_past_the_devices_counts_them_in_the_right_number() {
        let e = index_out_of_range(1, &["cpu (PoCL)"]);
        assert_eq!(
            e.to_string(),
            "opencl: device 1 was asked for (OP2_OPENCL_DEVICE or RuntimeOptions::device), \
             but there is only 1 device (0: cpu (PoCL))"
        );
        let e = index_out_of_range(5, &["gpu (A)", "cpu (B)"]);
        assert!(
            e.to_string()
                .contains("there are only 2 devices (0: gpu (A); 1: cpu (B))"),
            "{e}"
        );
    }
}
