//! Files that appear whole or not at all: a checkpoint is written to
//! `<name>.writing` and renamed to its name only once every byte is
//! written, so that a crash during a write never leaves a broken file
//! under the name a run resumes from. Under `mpirun`, `agree` tells every
//! rank whether every rank managed a stage, so that all of them go on or
//! all stop. [`checkpoints_before`] lists a folder's earlier checkpoints,
//! for a resumed run that keeps the last few.

use std::path::{Path, PathBuf};

use op2_core::{Error, Result};

/// Where a file is written before it takes the name `path`.
pub fn writing_name(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".writing");
    PathBuf::from(name)
}

/// Gives the file written at `writing` the name `path`, or removes it if
/// writing failed (returning that failure). The file is synced to the
/// disk before the rename, and the folder after it, so that on a local
/// file system even a power cut leaves the old file or the whole new one
/// under `path`. (A file several machines wrote through MPI-IO on a
/// parallel file system is as durable as that file system makes a closed
/// file; the rename still comes only after every rank's rows are in.)
///
/// # Errors
/// `written`'s error; [`Error::MeshFile`] if the file cannot be synced
/// or renamed.
pub fn rename_when_whole(written: Result<()>, writing: &Path, path: &Path) -> Result<()> {
    let synced = written.and_then(|()| {
        std::fs::File::open(writing)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::mesh_file(writing, "/", format!("cannot sync to the disk: {e}")))
    });
    if let Err(e) = synced {
        let _ = std::fs::remove_file(writing);
        return Err(e);
    }
    std::fs::rename(writing, path)
        .map_err(|e| Error::mesh_file(path, "/", format!("cannot rename {} to it: {e}", writing.display())))?;
    // The folder's entry too; a file system that cannot sync a folder
    // (some network ones) still has the renamed file.
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let _ = std::fs::File::open(folder).and_then(|f| f.sync_all());
    Ok(())
}

/// Whether every rank of `mpi` managed `stage` of writing or reading
/// `path` (collective): this rank's own error if it failed, an error
/// naming the first rank that failed if another did.
///
/// # Errors
/// As above.
#[cfg(feature = "mpi")]
pub fn agree<T>(mpi: &op2_mpi::Mpi, path: &Path, mine: Result<T>, stage: &str) -> Result<T> {
    let mut failed = vec![0u64; mpi.size()];
    failed[mpi.rank()] = u64::from(mine.is_err());
    mpi.sum_u64(&mut failed);
    let mine = mine?;
    match failed.iter().position(|&f| f != 0) {
        Some(r) => Err(Error::mesh_file(
            path,
            "/",
            format!("rank {r} failed where every rank {stage} (its error is in its output)"),
        )),
        None => Ok(mine),
    }
}

/// The checkpoints `dir/step_<k>.h5` with `k` before `step`, oldest first:
/// those a run resumed at `step` into the same folder counts among the
/// files it keeps.
pub fn checkpoints_before(dir: &Path, step: u64) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?;
            let k = name.strip_prefix("step_")?.strip_suffix(".h5")?.parse::<u64>().ok()?;
            (k < step).then_some((k, path))
        })
        .collect();
    found.sort();
    found.into_iter().map(|f| f.1).collect()
}
