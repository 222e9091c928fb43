//! The on-disk cache of compiled loops, `DiskCache`: it names the object and source files
//! for a key, and writes them atomically (temporary file and rename) with a checksum
//! trailer, so a truncated or damaged file is rebuilt rather than loaded. The `jit`
//! backend keeps its shared objects here and the `cuda` backend its compiled kernels.
// The jit, cuda and opencl backends each use a part of it.
#![cfg_attr(not(all(feature = "jit", feature = "cuda")), allow(dead_code))]
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::hash::checksum;

/// Every cached object ends with this magic and the SHA-256 of the bytes
/// before it. ELF loaders ignore trailing bytes; a truncated or corrupt file
/// fails the check and is rebuilt instead of loaded.
const TRAILER_MAGIC: &[u8; 8] = b"op2-obj2";
/// The length of the trailer: the magic and the checksum.
const TRAILER_LEN: usize = TRAILER_MAGIC.len() + 32;

/// The length of the body of a sealed file's `bytes`, or `None` when the
/// trailer is missing or does not match the body.
fn sealed_body_len(bytes: &[u8]) -> Option<usize> {
    let body_len = bytes.len().checked_sub(TRAILER_LEN)?;
    let (body, trailer) = bytes.split_at(body_len);
    let (magic, sum) = trailer.split_at(TRAILER_MAGIC.len());
    (magic == TRAILER_MAGIC && sum == checksum(body)).then_some(body_len)
}

/// The trailer that seals `body`: the magic and the checksum.
fn trailer_for(body: &[u8]) -> Vec<u8> {
    let mut t = Vec::with_capacity(TRAILER_LEN);
    t.extend_from_slice(TRAILER_MAGIC);
    t.extend_from_slice(&checksum(body));
    t
}

/// Compiled loops on disk, shared by processes (MPI ranks) and runs.
#[derive(Clone, Debug)]
pub struct DiskCache {
    dir: PathBuf,
}

/// The default cache directory: `OP2_CACHE_DIR`, else `$XDG_CACHE_HOME/op2`,
/// else `~/.cache/op2`, else a directory under the system temp dir (read by
/// [`Env::default_cache_dir`](crate::config::Env::default_cache_dir)).
pub fn default_dir() -> PathBuf {
    crate::config::Env::process().default_cache_dir()
}

/// A name no other process or thread uses at the same time.
fn temp_name(final_path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut name = final_path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.{n}.{nanos}.tmp", std::process::id()));
    final_path.with_file_name(name)
}

/// How to choose another cache directory, for the end of every cache error.
const CHOOSE_ANOTHER: &str = "choose another directory with OP2_CACHE_DIR or RuntimeOptions::cache_dir";

impl DiskCache {
    /// A cache in `dir` (created if missing); the error names `dir` and how
    /// to choose another.
    pub fn new(dir: PathBuf) -> op2_core::Result<DiskCache> {
        match fs::create_dir_all(&dir) {
            Ok(()) => Ok(DiskCache { dir }),
            Err(e) => Err(op2_core::Error::Io {
                path: dir,
                reason: format!("cannot create the code cache directory: {e}; {CHOOSE_ANOTHER}"),
            }),
        }
    }

    /// The error for `what` failing on `path` in this cache with `e`: it
    /// names the file, the cache directory and how to choose another.
    pub fn error(&self, path: &Path, what: &str, e: std::io::Error) -> op2_core::Error {
        op2_core::Error::Io {
            path: path.to_path_buf(),
            reason: format!(
                "{what} in the code cache directory {}: {e}; {CHOOSE_ANOTHER}",
                self.dir.display()
            ),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the object and the source for `stem` live.
    pub fn paths(&self, stem: &str) -> (PathBuf, PathBuf) {
        (self.dir.join(format!("{stem}.so")), self.dir.join(format!("{stem}.c")))
    }

    /// Whether the object at `path` exists and is whole.
    pub fn is_valid(path: &Path) -> Option<bool> {
        let bytes = fs::read(path).ok()?;
        Some(sealed_body_len(&bytes).is_some())
    }

    /// The body of the sealed file at `path` (without its trailer), or `None`
    /// when it is missing or damaged.
    pub fn read_sealed(path: &Path) -> Option<Vec<u8>> {
        let mut bytes = fs::read(path).ok()?;
        let body_len = sealed_body_len(&bytes)?;
        bytes.truncate(body_len);
        Some(bytes)
    }

    /// Writes `body` and its trailer to `path` atomically.
    pub fn write_sealed(path: &Path, body: &[u8]) -> std::io::Result<()> {
        let mut contents = body.to_vec();
        contents.extend_from_slice(&trailer_for(body));
        Self::write_atomically(path, &contents)
    }

    /// Writes `contents` to `path` through a temporary file and a rename, so
    /// that readers never see half a file.
    pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
        let tmp = temp_name(path);
        fs::write(&tmp, contents)
            .and_then(|()| fs::rename(&tmp, path))
            .inspect_err(|_| {
                let _ = fs::remove_file(&tmp);
            })
    }

    /// A temporary path next to `path` for the compiler to write to.
    pub fn temp_for(path: &Path) -> PathBuf {
        temp_name(path)
    }

    /// Seals a freshly compiled object (appends the checksum trailer) and
    /// moves it to `path` atomically.
    pub fn publish(built: &Path, path: &Path) -> std::io::Result<()> {
        let body = fs::read(built)?;
        let mut f = fs::OpenOptions::new().append(true).open(built)?;
        f.write_all(&trailer_for(&body))?;
        f.sync_all()?;
        drop(f);
        fs::rename(built, path).inspect_err(|_| {
            let _ = fs::remove_file(built);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_files_read_back_and_damaged_ones_do_not() {
        let dir = std::env::temp_dir().join(format!("op2-sealed-{}", std::process::id()));
        let cache = DiskCache::new(dir.clone()).unwrap();
        let path = cache.dir().join("loop.ptx");
        DiskCache::write_sealed(&path, b"// ptx text").unwrap();
        assert_eq!(DiskCache::read_sealed(&path).unwrap(), b"// ptx text");
        // One flipped byte, or a truncated file, is rejected.
        let mut bytes = fs::read(&path).unwrap();
        bytes[3] ^= 1;
        fs::write(&path, &bytes).unwrap();
        assert_eq!(DiskCache::read_sealed(&path), None);
        fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(DiskCache::read_sealed(&path), None);
        assert_eq!(DiskCache::read_sealed(&dir.join("missing.ptx")), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn errors_name_the_directory_and_how_to_choose_another() {
        let file = std::env::temp_dir().join(format!("op2-cache-file-{}", std::process::id()));
        fs::write(&file, b"not a directory").unwrap();
        let dir = file.join("cache");
        let e = DiskCache::new(dir.clone()).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: cannot create the code cache directory", dir.display())),
            "{e}"
        );
        assert!(
            e.contains("OP2_CACHE_DIR") && e.contains("RuntimeOptions::cache_dir"),
            "{e}"
        );
        let cache = DiskCache { dir: dir.clone() };
        let (object, source) = cache.paths("loop");
        let e = DiskCache::write_atomically(&source, b"int x;")
            .map_err(|e| cache.error(&source, "cannot write a loop's source", e))
            .unwrap_err()
            .to_string();
        let want = format!(
            "{}: cannot write a loop's source in the code cache directory {}: ",
            source.display(),
            dir.display()
        );
        assert!(
            e.starts_with(&want) && e.ends_with("OP2_CACHE_DIR or RuntimeOptions::cache_dir"),
            "{e}"
        );
        assert!(object.starts_with(&dir));
        let _ = fs::remove_file(&file);
    }
}
