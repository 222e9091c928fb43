//! OP2-Common's own Airfoil as a peer in the Airfoil benchmark: the classic
//! variant's `airfoil_genseq` and `airfoil_openmp`, built by the team's
//! `op2_airfoil.sh cpu BUNDLE` into the bundle `OP2_AIRFOIL_BUNDLE` names,
//! run on the benchmark's mesh (written as OP2's `new_grid.dat`) in the same
//! run. Each runs twice, `FEW` and `FEW + MORE` iterations: the difference
//! of the two loop times over `MORE` is an iteration's time without the
//! one-off costs (OpenMP's plans are built in the first iteration).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Iterations of the short run and the extra ones of the long run.
const FEW: usize = 10;
const MORE: usize = 40;

/// Where the bundle keeps the classic Airfoil's binaries.
const APP_DIR: &str = "OP2-Common/apps/c/airfoil/airfoil_plain/dp_classic";

/// OP2's ms per iteration for each binary (`genseq`, `openmp` on `threads`
/// threads) on `mesh`, or why there are none.
pub fn op2_times(mesh: &op2_airfoil::Mesh, threads: usize) -> Result<Vec<(&'static str, f64)>, String> {
    let bundle = std::env::var_os("OP2_AIRFOIL_BUNDLE")
        .filter(|b| !b.is_empty())
        .ok_or("OP2_AIRFOIL_BUNDLE is not set: point it at a bundle built by op2_airfoil.sh (prepare, then cpu) to time OP2 here")?;
    let apps = PathBuf::from(bundle).join(APP_DIR);
    let binaries = [("genseq", "airfoil_genseq"), ("openmp", "airfoil_openmp")];
    for (_, b) in binaries {
        if !apps.join(b).is_file() {
            return Err(format!(
                "{} is missing: build the bundle's CPU binaries first (op2_airfoil.sh cpu BUNDLE)",
                apps.join(b).display()
            ));
        }
    }
    let grid = std::env::temp_dir().join(format!("op2-airfoil-peer-{}", std::process::id()));
    std::fs::create_dir_all(&grid).map_err(|e| format!("{}: {e}", grid.display()))?;
    op2_airfoil::grid_file::write(&grid.join("new_grid.dat"), mesh).map_err(|e| e.to_string())?;
    let times = binaries
        .iter()
        .map(|&(label, b)| {
            let run = |n: usize| loop_seconds(&apps.join(b), &grid, n, threads);
            Ok((label, 1e3 * (run(FEW + MORE)? - run(FEW)?) / MORE as f64))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&grid);
    times
}

/// The loop time OP2's binary prints ("Max total runtime = <s>") for
/// `iterations` iterations, run in `grid`.
fn loop_seconds(binary: &Path, grid: &Path, iterations: usize, threads: usize) -> Result<f64, String> {
    let out = Command::new(binary)
        .current_dir(grid)
        .env("NITER", iterations.to_string())
        .env("OMP_NUM_THREADS", threads.to_string())
        .output()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{} failed ({}): {text}", binary.display(), out.status));
    }
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Max total runtime = ")?.trim().parse().ok())
        .ok_or_else(|| format!("{} printed no \"Max total runtime\"", binary.display()))
}
