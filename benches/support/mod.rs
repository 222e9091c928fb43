//! What the benchmarks share: the mesh size from the environment and the
//! mean times criterion saved, for the ratios they print.

use std::path::PathBuf;

/// `AIRFOIL_BENCH_MESH=IxJ`, else `default`.
pub fn mesh_size(default: (usize, usize)) -> (usize, usize) {
    std::env::var("AIRFOIL_BENCH_MESH")
        .ok()
        .and_then(|v| {
            let (i, j) = v.split_once('x')?;
            Some((i.parse().ok()?, j.parse().ok()?))
        })
        .unwrap_or(default)
}

/// Mean time of benchmark `name` of `group` from criterion's saved estimates, in ns.
pub fn mean_ns(group: &str, name: &str) -> Option<f64> {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let text = std::fs::read_to_string(dir.join("criterion").join(group).join(name).join("new/estimates.json")).ok()?;
    let estimates: serde_json::Value = serde_json::from_str(&text).ok()?;
    estimates["mean"]["point_estimate"].as_f64()
}
