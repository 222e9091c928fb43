//! Writing an output file whole.

use std::io::Write;
use std::path::Path;

use op2_core::{Error, Result};

/// Writes `bytes` to `path` whole: to a temporary file beside it, renamed
/// over it, so that a reader never sees half a file.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io)
}
