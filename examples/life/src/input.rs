//! Reading a pattern file as text, and the errors that name its lines.

use std::path::Path;

use op2_core::{Error, Result};

/// An [`Error::InputFile`] at `line` of `path`.
pub(crate) fn input_error(path: &Path, line: usize, reason: impl Into<String>) -> Error {
    Error::InputFile {
        path: path.to_path_buf(),
        line,
        reason: reason.into(),
    }
}

/// The text of the file at `path`. Pattern files are small, so they are read
/// whole; one that cannot be read is an error at line 0, one that is not
/// UTF-8 an error at the line of the first bad byte.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| input_error(path, 0, format!("cannot read the file: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        input_error(path, line, "the line is not UTF-8 text")
    })
}

/// `text` in backquotes for a message, trimmed and cut after 40 characters so
/// that a runaway line does not flood the message.
pub(crate) fn quoted(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("`{}...`", &text[..end]),
        None => format!("`{text}`"),
    }
}

/// The number of the line after the last of `text`, where "the end of the
/// file" is reported.
pub(crate) fn end_line(text: &str) -> usize {
    text.lines().count() + 1
}
