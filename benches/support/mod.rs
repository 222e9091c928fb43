//! What the benchmarks share: sizes from the environment and the
//! mean times criterion saved, for the ratios they print.

use std::path::PathBuf;

/// `AIRFOIL_BENCH_MESH=IxJ`, else `default`.
#[allow(dead_code, reason = "the Airfoil benchmarks' mesh; not every benchmark has one")]
pub fn mesh_size(default: (usize, usize)) -> (usize, usize) {
    size_from_env("AIRFOIL_BENCH_MESH", default)
}

/// The size `AxB` (both at least 1) in the environment variable `var`, else
/// `default` when it is unset or empty (values trimmed, as `op2::config`
/// reads its variables).
///
/// # Panics
/// On any other value, naming the variable.
pub fn size_from_env(var: &str, default: (usize, usize)) -> (usize, usize) {
    let value = std::env::var(var).unwrap_or_default();
    let value = value.trim();
    if value.is_empty() {
        return default;
    }
    value
        .split_once('x')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .filter(|&(a, b)| a >= 1 && b >= 1)
        .unwrap_or_else(|| panic!("{var}={value:?}: expected AxB with A, B >= 1 (e.g. 512x512)"))
}

/// The whole number in the environment variable `var`, else `default` when
/// it is unset or empty (trimmed).
///
/// # Panics
/// On any other value, naming the variable.
#[allow(dead_code, reason = "sizes of the benchmarks without criterion")]
pub fn number_from_env(var: &str, default: u64) -> u64 {
    let value = std::env::var(var).unwrap_or_default();
    match value.trim() {
        "" => default,
        v => v
            .parse()
            .unwrap_or_else(|_| panic!("{var}={v:?}: expected a whole number")),
    }
}

/// Mean time of benchmark `name` of `group` from criterion's saved estimates, in ns.
#[allow(dead_code, reason = "the criterion benchmarks' ratios; not every benchmark has them")]
pub fn mean_ns(group: &str, name: &str) -> Option<f64> {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let text = std::fs::read_to_string(dir.join("criterion").join(group).join(name).join("new/estimates.json")).ok()?;
    let estimates: serde_json::Value = serde_json::from_str(&text).ok()?;
    estimates["mean"]["point_estimate"].as_f64()
}
