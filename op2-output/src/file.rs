//! Writing an output file whole.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use op2_core::{Error, Result};

/// Temporary files this process made, numbered so that two writers of one
/// path (two threads, or two processes: the pid is in the name) never
/// share one.
static WRITES: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` whole: to a temporary file of this write's own
/// beside it, flushed to disk, then renamed over it, so that a reader never
/// sees half a file, even after a crash. A failed write leaves no temporary
/// file behind.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = PathBuf::from(tmp);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        // Nothing to do if it is not there.
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_of_one_path_each_write_whole_and_leave_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("op2-output-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.txt");
        let texts: Vec<Vec<u8>> = (0..8u8).map(|k| vec![b'a' + k; 100_000]).collect();
        std::thread::scope(|s| {
            for t in &texts {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_file(path, t).unwrap();
                    }
                });
            }
        });
        let got = std::fs::read(&path).unwrap();
        assert!(texts.contains(&got), "one writer's text, whole");
        // A write that cannot be made leaves no temporary file.
        assert!(write_file(&dir.join("no/such/folder.txt"), b"x").is_err());
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("out.txt")],
            "no temporary files left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
