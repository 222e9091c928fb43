//! Reading a user's file line by line, and the errors that name its lines.
//!
//! Files are streamed rather than read whole: an edge list can be larger than
//! the edges it holds once parsed.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind};
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

/// `text` in backquotes for a message, trimmed and cut after 40 characters so
/// that a runaway line does not flood the message.
pub(crate) fn quoted(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("`{}...`", &text[..end]),
        None => format!("`{text}`"),
    }
}

/// Opens `path` for [`Lines`]; a file that cannot be opened is an error at line 0.
pub(crate) fn open(path: &Path) -> Result<BufReader<File>> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|e| input_error(path, 0, format!("cannot open the file: {e}")))
}

/// The lines of one input, numbered from 1, without their line endings.
pub(crate) struct Lines<'p, R> {
    input: R,
    path: &'p Path,
    buf: String,
    number: usize,
}

impl<'p, R: BufRead> Lines<'p, R> {
    /// The lines of `input`, named `path` in errors.
    pub(crate) fn new(input: R, path: &'p Path) -> Self {
        Lines {
            input,
            path,
            buf: String::new(),
            number: 0,
        }
    }

    /// The next line and its number, or `None` at the end of the input (after
    /// which [`Lines::number`] is the line after the last).
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &str)>> {
        self.number += 1;
        self.buf.clear();
        match self.input.read_line(&mut self.buf) {
            Ok(0) => Ok(None),
            Ok(_) => {
                let line = self.buf.strip_suffix('\n').unwrap_or(&self.buf);
                let line = line.strip_suffix('\r').unwrap_or(line);
                Ok(Some((self.number, line)))
            }
            Err(e) if e.kind() == ErrorKind::InvalidData => {
                Err(input_error(self.path, self.number, "the line is not UTF-8 text"))
            }
            Err(e) => Err(input_error(
                self.path,
                self.number,
                format!("cannot read the file: {e}"),
            )),
        }
    }

    /// The number of the line last returned; after the end, of the line after the last.
    pub(crate) fn number(&self) -> usize {
        self.number
    }

    /// The input's name, for errors.
    pub(crate) fn path(&self) -> &'p Path {
        self.path
    }
}

/// Whether a line holds nothing to parse: blank, or a comment starting with
/// one of `markers` (after leading whitespace).
pub(crate) fn is_skipped(line: &str, markers: &[char]) -> bool {
    let line = line.trim_start();
    line.is_empty() || line.starts_with(markers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_are_removed_and_lines_numbered_from_one() {
        let path = Path::new("t");
        let mut lines = Lines::new("a\r\nb\n\nc".as_bytes(), path);
        let mut seen = Vec::new();
        while let Some((n, line)) = lines.next_line().unwrap() {
            seen.push((n, line.to_string()));
        }
        let expected = [(1, "a"), (2, "b"), (3, ""), (4, "c")].map(|(n, s)| (n, s.to_string()));
        assert_eq!(seen, expected);
        assert_eq!(lines.number(), 5);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_at_its_line() {
        let path = Path::new("bytes.txt");
        let mut lines = Lines::new(&b"1 2\n3 \xff\n"[..], path);
        assert!(lines.next_line().unwrap().is_some());
        let e = lines.next_line().unwrap_err();
        assert_eq!(e.to_string(), "bytes.txt:2: the line is not UTF-8 text");
    }

    #[test]
    fn long_text_is_cut_in_messages() {
        assert_eq!(quoted("  12 "), "`12`");
        let long = "9".repeat(100);
        assert_eq!(quoted(&long), format!("`{}...`", "9".repeat(40)));
    }
}
