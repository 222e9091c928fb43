//! OP2's `new_grid.dat` format (ASCII, 0-based): a line
//! `nnode ncell nedge nbedge`, then nnode lines `x y`, ncell lines of 4 node
//! ids, nedge lines `n1 n2 c1 c2`, nbedge lines `n1 n2 cell bound`.
//!
//! [`read`] trusts nothing in the file. Its header only bounds what is read:
//! memory is reserved for no more records than the rest of the file can hold
//! and grows as lines arrive, so a header claiming billions of nodes in a
//! one-line file is an error at line 2, not an allocation failure. Every
//! problem is an [`AirfoilError::Parse`] naming the line, what was expected
//! and what was found: a header count that is negative, not a number or
//! larger than an op2 set can be; an empty mesh; a missing record; a line
//! with too few or too many numbers; a token that is not a number; a node or
//! cell id out of range; a `bound` other than 1 or 2; anything but blank
//! lines after the last record. Blank lines are skipped everywhere.

use std::fmt::{self, Write as _};
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::Path;

use crate::{AirfoilError, Mesh};

/// The longest line accepted, in bytes. A record needs far less; a longer
/// line is an error rather than an unbounded line buffer.
const MAX_LINE: usize = 4096;

/// The largest count of any set: op2 sets and map entries are `i32`
/// (`op2::Set::new` refuses more), so ids below it fit the mesh's `i32`s.
const MAX_COUNT: u64 = i32::MAX as u64;

/// One kind of record: its name and the names of its columns.
struct Section {
    kind: &'static str,
    columns: &'static [&'static str],
}

const HEADER: Section = Section {
    kind: "the header",
    columns: &["nnode", "ncell", "nedge", "nbedge"],
};
const NODE: Section = Section {
    kind: "node",
    columns: &["x", "y"],
};
const CELL: Section = Section {
    kind: "cell",
    columns: &["n1", "n2", "n3", "n4"],
};
const EDGE: Section = Section {
    kind: "edge",
    columns: &["n1", "n2", "c1", "c2"],
};
const BEDGE: Section = Section {
    kind: "boundary edge",
    columns: &["n1", "n2", "cell", "bound"],
};

/// The record a line should hold, for messages: ``node 3 of 10 (`x y`)``;
/// the header is the one record with `count` 0.
#[derive(Clone, Copy)]
struct Record {
    section: &'static Section,
    index: usize,
    count: usize,
}

impl Record {
    fn header() -> Record {
        Record {
            section: &HEADER,
            index: 0,
            count: 0,
        }
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.section.kind)?;
        if self.count > 0 {
            write!(f, " {} of {}", self.index + 1, self.count)?;
        }
        f.write_str(" (`")?;
        for (k, column) in self.section.columns.iter().enumerate() {
            if k > 0 {
                f.write_str(" ")?;
            }
            f.write_str(column)?;
        }
        f.write_str("`)")
    }
}

/// At most the first 40 characters of `text`, trimmed, for messages.
fn preview(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

/// How many of `count` records of `tokens` numbers the unread input
/// (`remaining` bytes, where known) can hold: each takes at least
/// `2 * tokens - 1` bytes (one-digit numbers, one space between) and all but
/// the last a newline. Nothing is promised by an input of unknown length.
fn fit(count: usize, tokens: usize, remaining: Option<u64>) -> usize {
    let Some(remaining) = remaining else { return 0 };
    let per_record = 2 * tokens as u64;
    let fits = remaining.saturating_add(1) / per_record;
    count.min(usize::try_from(fits).unwrap_or(usize::MAX))
}

/// Parses a node coordinate: a finite number.
fn coordinate(word: &str) -> Option<f64> {
    word.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parses a header count (checked against [`MAX_COUNT`] afterwards).
fn count(word: &str) -> Option<u64> {
    word.parse().ok()
}

/// Parses an id (checked against its set's size afterwards).
fn id(word: &str) -> Option<i64> {
    word.parse().ok()
}

/// The reader: one reused line buffer, the current line number and the bytes
/// left in the input where known.
struct Parser<'p, R> {
    input: R,
    buf: String,
    line: usize,
    path: &'p Path,
    remaining: Option<u64>,
}

impl<R: BufRead> Parser<'_, R> {
    /// A parse error at the current line.
    fn err(&self, message: impl Into<String>) -> AirfoilError {
        AirfoilError::Parse {
            path: self.path.to_path_buf(),
            line: self.line,
            message: message.into(),
        }
    }

    /// Reads the next non-blank line into `buf`; false at the end of the input.
    fn next_line(&mut self) -> Result<bool, AirfoilError> {
        loop {
            self.line += 1;
            self.buf.clear();
            let read = (&mut self.input).take(MAX_LINE as u64 + 1).read_line(&mut self.buf);
            let n = match read {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::InvalidData => {
                    return Err(self.err("the line is not UTF-8 text"));
                }
                Err(source) => {
                    return Err(AirfoilError::Io {
                        path: self.path.to_path_buf(),
                        source,
                    })
                }
            };
            if n == 0 {
                return Ok(false);
            }
            if let Some(remaining) = &mut self.remaining {
                *remaining = remaining.saturating_sub(n as u64);
            }
            if n > MAX_LINE && !self.buf.ends_with('\n') {
                return Err(self.err(format!("the line is longer than {MAX_LINE} bytes")));
            }
            if !self.buf.trim_ascii().is_empty() {
                return Ok(true);
            }
        }
    }

    /// The next record's `N` numbers, each read by `parse`; `expected` says
    /// what a number should be, for the error when one is not.
    fn record<T: Copy + Default, const N: usize>(
        &mut self,
        rec: &Record,
        parse: fn(&str) -> Option<T>,
        expected: &str,
    ) -> Result<[T; N], AirfoilError> {
        if !self.next_line()? {
            return Err(if self.line == 1 {
                self.err(format!("the file is empty; expected {rec}"))
            } else {
                self.err(format!("unexpected end of file; expected {rec}"))
            });
        }
        let mut words = [""; N];
        let mut found = 0;
        for word in self.buf.split_ascii_whitespace() {
            if let Some(slot) = words.get_mut(found) {
                *slot = word;
            }
            found += 1;
        }
        if found != N {
            return Err(self.err(format!(
                "{rec}: expected {N} values, found {found}: `{}`",
                preview(&self.buf)
            )));
        }
        let mut values = [T::default(); N];
        for (value, word) in values.iter_mut().zip(words) {
            *value = parse(word).ok_or_else(|| self.err(format!("{rec}: `{}` is not {expected}", preview(word))))?;
        }
        Ok(values)
    }

    /// Column `column` of `rec`, `value`, as an id into a set of `limit`
    /// elements called `of`.
    fn index(&self, rec: &Record, column: usize, value: i64, limit: usize, of: &str) -> Result<i32, AirfoilError> {
        match usize::try_from(value) {
            Ok(v) if v < limit => i32::try_from(v).map_err(|_| self.err(format!("{rec}: {value} exceeds i32"))),
            _ => Err(self.err(format!(
                "{rec}: {} = {value} is out of range 0..{limit} ({of} ids)",
                rec.section.columns[column]
            ))),
        }
    }

    /// An empty vector with room for as many of `count` records of `section`,
    /// `per_record` values each, as the rest of the input can hold.
    fn reserve<T>(&self, count: usize, section: &Section, per_record: usize) -> Result<Vec<T>, AirfoilError> {
        let records = fit(count, section.columns.len(), self.remaining);
        let mut v = Vec::new();
        v.try_reserve_exact(records.saturating_mul(per_record))
            .map_err(|e| self.err(format!("cannot reserve memory for {records} {}s: {e}", section.kind)))?;
        Ok(v)
    }

    /// Reads the whole grid: the header, the four sections, then nothing but
    /// blank lines.
    fn mesh(&mut self) -> Result<Mesh, AirfoilError> {
        let header = Record::header();
        let counts: [u64; 4] = self.record(&header, count, "a count (a non-negative integer)")?;
        let mut sizes = [0usize; 4];
        for ((size, &c), name) in sizes.iter_mut().zip(&counts).zip(HEADER.columns) {
            *size = usize::try_from(c).ok().filter(|_| c <= MAX_COUNT).ok_or_else(|| {
                self.err(format!(
                    "{header}: {name} = {c} is too large; an op2 set holds at most {MAX_COUNT} elements"
                ))
            })?;
        }
        let [nnode, ncell, nedge, nbedge] = sizes;
        // Which zero counts leave nothing for Airfoil to compute: with no
        // cells there is no state (`q` lives on cells) and the rms, averaged
        // over the cells, is 0/0; cells need nodes (each names 4); and cells
        // exchange flux only through edges, interior or boundary, so with
        // neither nothing ever changes. No interior edges (a single cell) or
        // no boundary edges (a closed domain) still make a mesh that runs.
        if counts == [0; 4] {
            return Err(self.err(format!("{header}: the mesh is empty (all four counts are 0)")));
        }
        if ncell == 0 {
            return Err(self.err(format!(
                "{header}: the mesh has no cells; Airfoil's state and its rms live on cells"
            )));
        }
        if nnode == 0 {
            return Err(self.err(format!("{header}: the mesh has no nodes; each cell needs 4")));
        }
        if nedge == 0 && nbedge == 0 {
            return Err(self.err(format!(
                "{header}: the mesh has no edges, interior or boundary; no flux would ever move"
            )));
        }
        // The mesh's array lengths (at most 4 * i32::MAX; checked for 32-bit targets).
        for (c, per) in [(nnode, 2), (ncell, 4), (nedge, 2), (nbedge, 2)] {
            if c.checked_mul(per).is_none() {
                return Err(self.err(format!("{header}: {c} records are too many for this platform")));
            }
        }

        let mut x = self.reserve(nnode, &NODE, 2)?;
        for index in 0..nnode {
            let rec = Record {
                section: &NODE,
                index,
                count: nnode,
            };
            let [a, b] = self.record(&rec, coordinate, "a finite number")?;
            x.extend([a, b]);
        }
        let mut cell = self.reserve(ncell, &CELL, 4)?;
        for index in 0..ncell {
            let rec = Record {
                section: &CELL,
                index,
                count: ncell,
            };
            let ids: [i64; 4] = self.record(&rec, id, "an integer")?;
            for (column, &n) in ids.iter().enumerate() {
                cell.push(self.index(&rec, column, n, nnode, "node")?);
            }
        }
        let mut edge = self.reserve(nedge, &EDGE, 2)?;
        let mut ecell = self.reserve(nedge, &EDGE, 2)?;
        for index in 0..nedge {
            let rec = Record {
                section: &EDGE,
                index,
                count: nedge,
            };
            let [n1, n2, c1, c2] = self.record(&rec, id, "an integer")?;
            edge.extend([
                self.index(&rec, 0, n1, nnode, "node")?,
                self.index(&rec, 1, n2, nnode, "node")?,
            ]);
            ecell.extend([
                self.index(&rec, 2, c1, ncell, "cell")?,
                self.index(&rec, 3, c2, ncell, "cell")?,
            ]);
        }
        let mut bedge = self.reserve(nbedge, &BEDGE, 2)?;
        let mut becell = self.reserve(nbedge, &BEDGE, 1)?;
        let mut bound = self.reserve(nbedge, &BEDGE, 1)?;
        for index in 0..nbedge {
            let rec = Record {
                section: &BEDGE,
                index,
                count: nbedge,
            };
            let [n1, n2, c, b] = self.record(&rec, id, "an integer")?;
            bedge.extend([
                self.index(&rec, 0, n1, nnode, "node")?,
                self.index(&rec, 1, n2, nnode, "node")?,
            ]);
            becell.push(self.index(&rec, 2, c, ncell, "cell")?);
            // The kernels treat 1 as a wall and anything else as far field;
            // the format has only 1 and 2, so another value is corruption.
            bound.push(match b {
                1 => 1,
                2 => 2,
                _ => return Err(self.err(format!("{rec}: bound = {b} is neither 1 (wall) nor 2 (far field)"))),
            });
        }
        if self.next_line()? {
            return Err(self.err(format!(
                "expected the end of the file after the last record, found `{}` (the header gives nnode {nnode}, \
                 ncell {ncell}, nedge {nedge}, nbedge {nbedge})",
                preview(&self.buf)
            )));
        }
        Ok(Mesh {
            x,
            cell,
            edge,
            ecell,
            bedge,
            becell,
            bound,
        })
    }
}

/// Parses a grid from `input`, naming `path` in errors; `len` is the input's
/// length in bytes where known, to bound what is reserved.
fn parse(input: impl BufRead, path: &Path, len: Option<u64>) -> Result<Mesh, AirfoilError> {
    Parser {
        input,
        buf: String::with_capacity(128),
        line: 0,
        path,
        remaining: len,
    }
    .mesh()
}

/// Reads a grid file.
///
/// # Errors
/// [`AirfoilError::Io`] if the file cannot be opened or read, and
/// [`AirfoilError::Parse`], with the line number, what was expected and what
/// was found, if it is malformed (see the [module documentation](self)).
/// Neither a malformed file nor a lying header makes it panic or allocate
/// beyond what the file holds.
pub fn read(path: &Path) -> Result<Mesh, AirfoilError> {
    let io = |source| AirfoilError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let len = meta.is_file().then_some(meta.len());
    parse(BufReader::with_capacity(1 << 16, file), path, len)
}

/// Writes a grid file (coordinates as C's `%f`).
///
/// # Errors
/// [`AirfoilError::Io`] if the file cannot be created or written.
pub fn write(path: &Path, m: &Mesh) -> Result<(), AirfoilError> {
    let io = |source| AirfoilError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    let mut s = String::new();
    let _ = writeln!(s, "{} {} {} {}", m.nnode(), m.ncell(), m.nedge(), m.nbedge());
    for p in m.x.chunks(2) {
        let _ = writeln!(s, "{:.6} {:.6}", p[0], p[1]);
    }
    for c in m.cell.chunks(4) {
        let _ = writeln!(s, "{} {} {} {}", c[0], c[1], c[2], c[3]);
    }
    for (e, c) in m.edge.chunks(2).zip(m.ecell.chunks(2)) {
        let _ = writeln!(s, "{} {} {} {}", e[0], e[1], c[0], c[1]);
    }
    for ((e, c), b) in m.bedge.chunks(2).zip(&m.becell).zip(&m.bound) {
        let _ = writeln!(s, "{} {} {} {}", e[0], e[1], c, b);
    }
    out.write_all(s.as_bytes()).map_err(io)?;
    out.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("op2-airfoil-{}-{name}", std::process::id()))
    }

    /// One square cell, its 4 sides boundary edges (the wall at the bottom).
    const SQUARE: &str = "4 1 0 4\n0 0\n1 0\n1 1\n0 1\n0 1 2 3\n0 1 0 1\n1 2 0 2\n2 3 0 2\n3 0 0 2\n";

    /// Parses `text` from memory, with and without its length known.
    fn parse_text(text: &[u8]) -> Result<Mesh, AirfoilError> {
        let path = Path::new("grid.dat");
        let sized = parse(text, path, Some(text.len() as u64));
        let unsized_ = parse(text, path, None);
        assert_eq!(format!("{sized:?}"), format!("{unsized_:?}"));
        sized
    }

    /// The line and message of the parse error `text` gives.
    fn parse_error(text: impl AsRef<[u8]>) -> (usize, String) {
        let e = parse_text(text.as_ref()).unwrap_err();
        eprintln!("{e}");
        match e {
            AirfoilError::Parse { line, message, .. } => (line, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[track_caller]
    fn assert_error(text: impl AsRef<[u8]>, line: usize, needles: &[&str]) {
        let (l, msg) = parse_error(text);
        assert_eq!(l, line, "{msg}");
        for needle in needles {
            assert!(msg.contains(needle), "`{needle}` not in: {msg}");
        }
    }

    #[test]
    fn round_trip() {
        let m = generate(6, 5);
        let p = temp("rt.dat");
        write(&p, &m).unwrap();
        let back = read(&p).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        std::fs::remove_file(&p).ok();
        assert_eq!(back, m);
        assert_eq!(parse_text(&bytes).unwrap(), m);
    }

    #[test]
    fn a_small_mesh_reads_exactly() {
        let m = parse_text(SQUARE.as_bytes()).unwrap();
        assert_eq!((m.nnode(), m.ncell(), m.nedge(), m.nbedge()), (4, 1, 0, 4));
        assert_eq!(m.x, [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
        assert_eq!(m.cell, [0, 1, 2, 3]);
        assert_eq!(m.becell, [0; 4]);
        assert_eq!(m.bound, [1, 2, 2, 2]);
        // Blank lines, CRLF, extra spaces, a missing final newline and
        // trailing blank lines are all fine.
        let loose = format!("\n{}\r\n\n  \n", SQUARE.replace('\n', "\r\n  \t").trim_end());
        assert_eq!(parse_text(loose.as_bytes()).unwrap(), m);
        assert_eq!(parse_text(SQUARE.trim_end().as_bytes()).unwrap(), m);
    }

    #[test]
    fn reservations_never_exceed_the_input() {
        assert_eq!(fit(2_000_000_000, 2, Some(0)), 0);
        assert_eq!(fit(2_000_000_000, 2, None), 0);
        // "0 0" needs 3 bytes (the last line) or 4 ("0 0\n").
        assert_eq!(fit(10, 2, Some(3)), 1);
        assert_eq!(fit(10, 2, Some(8)), 2);
        assert_eq!(fit(10, 4, Some(u64::MAX)), 10);
        assert_eq!(fit(3, 4, Some(1 << 20)), 3);
    }

    #[test]
    fn a_header_of_two_billion_nodes_in_a_one_line_file_is_truncated_not_allocated() {
        // Within op2's limits, so only the reservation bound keeps this from
        // asking for 32 GB; the file ends at line 2.
        assert_error(
            "2000000000 2000000000 2000000000 2000000000\n",
            2,
            &["unexpected end of file", "node 1 of 2000000000 (`x y`)"],
        );
    }

    #[test]
    fn a_header_of_ten_to_the_twelve_nodes_is_too_large() {
        assert_error(
            "1000000000000 1 1 1\n",
            1,
            &["nnode = 1000000000000 is too large", "2147483647"],
        );
        // Through the file reader too.
        let p = temp("huge.dat");
        std::fs::write(&p, "1000000000000 1 1 1\n").unwrap();
        let e = read(&p).unwrap_err();
        std::fs::remove_file(&p).ok();
        assert!(matches!(e, AirfoilError::Parse { line: 1, .. }), "{e}");
    }

    #[test]
    fn a_header_of_u64_max_is_too_large() {
        assert_error(
            "4 18446744073709551615 0 4\n",
            1,
            &["ncell = 18446744073709551615 is too large"],
        );
        let p = temp("u64max.dat");
        std::fs::write(&p, "18446744073709551615 18446744073709551615 1 1\n").unwrap();
        let e = read(&p).unwrap_err();
        std::fs::remove_file(&p).ok();
        assert!(e.to_string().contains("too large"), "{e}");
        // One more does not even parse.
        assert_error(
            "18446744073709551616 1 1 1\n",
            1,
            &["`18446744073709551616` is not a count"],
        );
        // The largest op2 set passes the header (and the file ends).
        assert_error("2147483647 1 1 1\n", 2, &["end of file"]);
        assert_error("2147483648 1 1 1\n", 1, &["too large"]);
    }

    #[test]
    fn a_negative_header_count_is_an_error() {
        assert_error("4 1 -1 4\n", 1, &["`-1` is not a count (a non-negative integer)"]);
        assert_error("4 1 1.5 4\n", 1, &["`1.5` is not a count"]);
    }

    #[test]
    fn an_empty_file_is_an_error() {
        assert_error("", 1, &["the file is empty", "the header (`nnode ncell nedge nbedge`)"]);
        assert_error("\n  \n\n", 4, &["unexpected end of file", "the header"]);
    }

    #[test]
    fn an_empty_mesh_is_an_error() {
        assert_error("0 0 0 0\n", 1, &["the mesh is empty"]);
        assert_error("4 0 0 4\n", 1, &["no cells"]);
        assert_error("0 1 0 4\n", 1, &["no nodes"]);
        assert_error("4 1 0 0\n0 0\n1 0\n1 1\n0 1\n0 1 2 3\n", 1, &["no edges"]);
    }

    #[test]
    fn a_truncated_node_section_is_an_error() {
        assert_error(
            "4 1 0 4\n0 0\n1 0\n",
            4,
            &["unexpected end of file", "node 3 of 4 (`x y`)"],
        );
        // Truncated later sections name theirs.
        let cut = SQUARE.lines().take(8).collect::<Vec<_>>().join("\n");
        assert_error(cut, 9, &["boundary edge 3 of 4"]);
    }

    #[test]
    fn a_bad_token_is_an_error() {
        assert_error(
            SQUARE.replacen("1 1\n", "1 x\n", 1),
            4,
            &["node 3 of 4", "`x` is not a finite number"],
        );
        assert_error(
            SQUARE.replacen("1 1\n", "1 NaN\n", 1),
            4,
            &["`NaN` is not a finite number"],
        );
        assert_error(
            SQUARE.replacen("1 1\n", "1 inf\n", 1),
            4,
            &["`inf` is not a finite number"],
        );
        assert_error(
            SQUARE.replace("0 1 2 3", "0 1 2.0 3"),
            6,
            &["cell 1 of 1", "`2.0` is not an integer"],
        );
        assert_error(
            SQUARE.replace("0 1 2 3", "0 1 99999999999999999999 3"),
            6,
            &["`99999999999999999999` is not an integer"],
        );
        assert_error(SQUARE.replace("3 0 0 2", "3 0 0 two"), 10, &["`two` is not an integer"]);
    }

    #[test]
    fn a_wrong_number_of_values_is_an_error() {
        assert_error("2 1 0\n", 1, &["expected 4 values, found 3: `2 1 0`"]);
        assert_error("4 1 0 4 5\n", 1, &["expected 4 values, found 5"]);
        assert_error(
            SQUARE.replacen("1 0\n", "1\n", 1),
            3,
            &["node 2 of 4", "expected 2 values, found 1"],
        );
        assert_error(SQUARE.replace("0 1 2 3", "0 1 2 3 0"), 6, &["cell 1 of 1", "found 5"]);
    }

    #[test]
    fn an_index_out_of_range_is_an_error() {
        assert_error(
            SQUARE.replace("0 1 2 3", "0 1 4 3"),
            6,
            &["cell 1 of 1", "n3 = 4 is out of range 0..4 (node ids)"],
        );
        assert_error(
            SQUARE.replace("0 1 2 3", "0 -1 2 3"),
            6,
            &["n2 = -1 is out of range 0..4"],
        );
        assert_error(
            SQUARE.replace("2 3 0 2", "2 3 1 2"),
            9,
            &["boundary edge 3 of 4", "cell = 1 is out of range 0..1"],
        );
        let edges = "6 2 1 6\n0 0\n1 0\n2 0\n0 1\n1 1\n2 1\n0 1 4 3\n1 2 5 4\n1 4 0 2\n";
        assert_error(
            edges,
            10,
            &["edge 1 of 1 (`n1 n2 c1 c2`)", "c2 = 2 is out of range 0..2 (cell ids)"],
        );
        // i32 ids: a value past i32 is out of range, not wrapped.
        assert_error(SQUARE.replace("0 1 2 3", "0 1 4294967298 3"), 6, &["out of range"]);
    }

    #[test]
    fn a_bound_other_than_1_or_2_is_an_error() {
        assert_error(
            SQUARE.replace("1 2 0 2", "1 2 0 0"),
            8,
            &["bound = 0 is neither 1 (wall) nor 2 (far field)"],
        );
        assert_error(
            SQUARE.replace("3 0 0 2", "3 0 0 3"),
            10,
            &["boundary edge 4 of 4", "bound = 3"],
        );
    }

    #[test]
    fn trailing_garbage_is_an_error() {
        assert_error(
            format!("{SQUARE}garbage\n"),
            11,
            &["end of the file after the last record", "`garbage`"],
        );
        assert_error(format!("{SQUARE}\n\n4 5 6 7\n"), 13, &["found `4 5 6 7`", "nbedge 4"]);
        // A header that undercounts shows up the same way.
        assert_error(SQUARE.replacen("4 1 0 4", "4 1 0 3", 1), 10, &["found `3 0 0 2`"]);
    }

    #[test]
    fn long_lines_and_binary_data_are_errors() {
        let long = format!("4 1 0 4\n0 {}\n", "0".repeat(10_000));
        assert_error(long, 2, &["longer than 4096 bytes"]);
        assert_error(b"4 1 0 4\n0 \xff\n".as_slice(), 2, &["not UTF-8"]);
        // The longest line allowed is fine.
        let widest = SQUARE.replacen("\n0 0\n", &format!("\n0 {}\n", "0".repeat(MAX_LINE - 2)), 1);
        assert!(parse_text(widest.as_bytes()).is_ok());
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let e = read(Path::new("/nonexistent/new_grid.dat")).unwrap_err();
        assert!(matches!(e, AirfoilError::Io { .. }));
        assert!(e.to_string().contains("/nonexistent/new_grid.dat"));
    }

    #[test]
    #[ignore = "slow in debug builds: reads the 720 000-cell benchmark mesh"]
    fn time_the_benchmark_mesh() {
        let m = generate(400, 600);
        let p = temp("big.dat");
        write(&p, &m).unwrap();
        let t = std::time::Instant::now();
        let back = read(&p).unwrap();
        eprintln!("read {} cells in {:.3} s", back.ncell(), t.elapsed().as_secs_f64());
        std::fs::remove_file(&p).ok();
        assert_eq!(back, m);
    }
}
