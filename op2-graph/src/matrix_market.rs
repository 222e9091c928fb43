//! Matrix Market coordinate files as graphs: the banner
//! `%%MatrixMarket matrix coordinate <field> <symmetry>`, `%` comment lines,
//! the size line `rows columns entries`, then one entry `row column [value]`
//! per line, indices from 1. Entry `(i, j)` is the edge from node `i` to node
//! `j`; values are checked and dropped.
//!
//! Accepted: fields `pattern` (no value), `real` and `integer`; symmetries
//! `general` (each entry a directed edge), `symmetric` and `skew-symmetric`
//! (only the lower triangle is listed, each entry one undirected edge, see
//! [`EdgeList::is_symmetric`]). Refused with an error saying why: the dense
//! `array` format, `complex` values and `hermitian` symmetry, and matrices that
//! are not square (rows and columns both number the graph's nodes). The words
//! of the banner are matched without regard to case; blank lines are skipped.

use std::io::BufRead;
use std::path::Path;

use op2_core::Result;

use crate::lines::{input_error, is_skipped, open, quoted, Lines};
use crate::EdgeList;

/// The banner as it should be, for messages.
const BANNER: &str = "`%%MatrixMarket matrix coordinate <field> <symmetry>`";

/// Reads the Matrix Market coordinate file at `path` as a graph (see
/// [`EdgeList::parse_matrix_market`]).
///
/// # Errors
///
/// [`op2_core::Error::InputFile`]: at line 0 when the file cannot be opened;
/// otherwise at the offending line, as for [`EdgeList::parse_matrix_market`].
pub fn read_matrix_market(path: impl AsRef<Path>) -> Result<EdgeList> {
    let path = path.as_ref();
    parse(Lines::new(open(path)?, path))
}

impl EdgeList {
    /// Parses a Matrix Market coordinate file held in `text` as a graph;
    /// errors name it `origin`.
    ///
    /// The edges are the entries `(row, column)` in file order, with the
    /// file's 1-based ids; the nodes are every id from 1 to the matrix's size,
    /// those without entries included. A `symmetric` or `skew-symmetric` file
    /// lists only entries with `row >= column` (`row > column` when skew): each
    /// is one undirected edge, returned once as `(row, column)`, and the list
    /// [`is_symmetric`](EdgeList::is_symmetric), so that the caller adds the
    /// reverse edges it needs.
    ///
    /// # Errors
    ///
    /// [`op2_core::Error::InputFile`] at the first line that is wrong: a
    /// missing or malformed banner; an object other than `matrix`; the `array`
    /// format; `complex` values or `hermitian` symmetry; a size line that is
    /// not three non-negative integers, or of a matrix that is not square; an
    /// entry with the wrong number of fields, an index outside `1..=size`, a
    /// value that is not of the banner's field, or (symmetric files) above the
    /// diagonal; more or fewer entries than the size line says.
    pub fn parse_matrix_market(text: &str, origin: impl AsRef<Path>) -> Result<EdgeList> {
        parse(Lines::new(text.as_bytes(), origin.as_ref()))
    }
}

/// What an entry's value is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Pattern,
    Real,
    Integer,
}

/// Which entries the file lists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
}

fn parse<R: BufRead>(mut lines: Lines<'_, R>) -> Result<EdgeList> {
    let path = lines.path();
    let (field, symmetry) = match lines.next_line()? {
        Some((n, line)) => banner(line).map_err(|reason| input_error(path, n, reason))?,
        None => {
            return Err(input_error(
                path,
                1,
                format!("expected the banner {BANNER}, found an empty file"),
            ))
        }
    };

    let size = loop {
        match lines.next_line()? {
            Some((_, line)) if is_skipped(line, &['%']) => continue,
            Some((n, line)) => break size_line(line).map_err(|reason| input_error(path, n, reason))?,
            None => {
                let reason = "expected the size line `rows columns entries`, found the end of the file";
                return Err(input_error(path, lines.number(), reason));
            }
        }
    };
    let Size { nodes, entries } = size;

    let mut edges = Vec::new();
    let mut listed: u64 = 0;
    while let Some((n, line)) = lines.next_line()? {
        if is_skipped(line, &['%']) {
            continue;
        }
        listed += 1;
        if listed > entries {
            let reason = format!("entry {listed} of {entries}: more entries than the size line's {entries}");
            return Err(input_error(path, n, reason));
        }
        let edge = entry(line, field, symmetry, nodes)
            .map_err(|reason| input_error(path, n, format!("entry {listed} of {entries}: {reason}")))?;
        edges.push(edge);
    }
    if listed < entries {
        let reason = format!(
            "expected {} as the size line says, found {}",
            count_of_entries(entries),
            count_of_entries(listed)
        );
        return Err(input_error(path, lines.number(), reason));
    }
    let symmetric = symmetry != Symmetry::General;
    Ok(EdgeList::over_range(edges, 1..nodes + 1, symmetric))
}

/// `n` entries, with the noun in the right number (`n` may not fit `usize`).
fn count_of_entries(n: u64) -> String {
    format!("{n} {}", if n == 1 { "entry" } else { "entries" })
}

/// The field and symmetry the banner declares, or what is wrong with it.
fn banner(line: &str) -> Result<(Field, Symmetry), String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if !words.first().is_some_and(|w| w.eq_ignore_ascii_case("%%MatrixMarket")) {
        return Err(format!("expected the banner {BANNER}, found {}", quoted(line)));
    }
    let [_, object, format, field, symmetry] = words[..] else {
        let reason = format!(
            "the banner {} has {} words; expected 5: {BANNER}",
            quoted(line),
            words.len()
        );
        return Err(reason);
    };
    if !object.eq_ignore_ascii_case("matrix") {
        return Err(format!("the banner's object is {}; expected `matrix`", quoted(object)));
    }
    if format.eq_ignore_ascii_case("array") {
        return Err("the dense `array` format is not a graph; expected the sparse `coordinate` format".to_string());
    }
    if !format.eq_ignore_ascii_case("coordinate") {
        return Err(format!(
            "the banner's format is {}; expected `coordinate`",
            quoted(format)
        ));
    }
    let field = match field.to_ascii_lowercase().as_str() {
        "pattern" => Field::Pattern,
        "real" => Field::Real,
        "integer" => Field::Integer,
        "complex" => {
            return Err("`complex` values are not supported; expected `pattern`, `real` or `integer`".to_string())
        }
        _ => {
            let reason = format!(
                "the banner's field is {}; expected `pattern`, `real` or `integer`",
                quoted(field)
            );
            return Err(reason);
        }
    };
    let symmetry = match symmetry.to_ascii_lowercase().as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => {
            let reason = "`hermitian` symmetry (of complex matrices) is not supported; expected `general`, `symmetric` or `skew-symmetric`";
            return Err(reason.to_string());
        }
        _ => {
            let reason = format!(
                "the banner's symmetry is {}; expected `general`, `symmetric` or `skew-symmetric`",
                quoted(symmetry)
            );
            return Err(reason);
        }
    };
    Ok((field, symmetry))
}

/// The size line of a square matrix.
struct Size {
    /// Rows, which are also the columns and the nodes.
    nodes: u64,
    /// Entries that follow.
    entries: u64,
}

/// The size line's numbers, or what is wrong with it.
fn size_line(line: &str) -> Result<Size, String> {
    let expected = || {
        format!(
            "expected the size line `rows columns entries` (three non-negative integers), found {}",
            quoted(line)
        )
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    let [rows, columns, entries] = words[..] else {
        return Err(expected());
    };
    let (Ok(rows), Ok(columns), Ok(entries)) = (rows.parse::<u64>(), columns.parse::<u64>(), entries.parse::<u64>())
    else {
        return Err(expected());
    };
    if rows != columns {
        return Err(format!(
            "the matrix is {rows} x {columns}; a graph needs a square matrix, whose rows and columns both number its nodes"
        ));
    }
    // The nodes are counted in `usize` and listed as ids up to `rows + 1`.
    if usize::try_from(rows).is_err() || rows == u64::MAX {
        return Err(format!("{rows} nodes are more than this machine can count"));
    }
    Ok(Size { nodes: rows, entries })
}

/// The edge an entry line holds, or what is wrong with it.
fn entry(line: &str, field: Field, symmetry: Symmetry, nodes: u64) -> Result<(u64, u64), String> {
    // One more word than any entry has, to tell when there are too many.
    let mut words = line.split_whitespace();
    let words = [words.next(), words.next(), words.next(), words.next()];
    let (row, column, value) = match (field, words) {
        (Field::Pattern, [Some(row), Some(column), None, _]) => (row, column, None),
        (Field::Real | Field::Integer, [Some(row), Some(column), Some(value), None]) => (row, column, Some(value)),
        _ => {
            let expected = match field {
                Field::Pattern => "`row column` (a pattern matrix)",
                Field::Real => "`row column value` (a real matrix)",
                Field::Integer => "`row column value` (an integer matrix)",
            };
            return Err(format!("expected {expected}, found {}", quoted(line)));
        }
    };
    let row = index(row, "row", nodes)?;
    let column = index(column, "column", nodes)?;
    match (value, field) {
        (Some(v), Field::Real) if v.parse::<f64>().is_err() => {
            return Err(format!("the value {} is not a real number", quoted(v)));
        }
        (Some(v), Field::Integer) if !is_integer(v) => {
            return Err(format!("the value {} is not an integer", quoted(v)));
        }
        _ => {}
    }
    match symmetry {
        Symmetry::Symmetric if row < column => Err(format!(
            "({row}, {column}) is above the diagonal; a symmetric file lists only the lower triangle (row >= column)"
        )),
        Symmetry::SkewSymmetric if row <= column => Err(format!(
            "({row}, {column}) is not below the diagonal; a skew-symmetric file lists only the strictly lower triangle (row > column)"
        )),
        _ => Ok((row, column)),
    }
}

/// A 1-based index no larger than `nodes`, or what is wrong with `word`.
fn index(word: &str, which: &str, nodes: u64) -> Result<u64, String> {
    match word.parse::<u64>() {
        Ok(i) if (1..=nodes).contains(&i) => Ok(i),
        Ok(i) => Err(format!(
            "the {which} index {i} is outside 1..={nodes}, the size line's range"
        )),
        Err(_) => Err(format!("the {which} index {} is not a positive integer", quoted(word))),
    }
}

/// Whether `word` is an integer of any size: an optional sign, then digits.
fn is_integer(word: &str) -> bool {
    let digits = word.strip_prefix(['+', '-']).unwrap_or(word);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<EdgeList> {
        EdgeList::parse_matrix_market(text, "m.mtx")
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    const GENERAL: &str = "%%MatrixMarket matrix coordinate pattern general\n% a comment\n%\n4 4 3\n1 2\n3 1\n2 2\n";

    #[test]
    fn a_general_pattern_file_gives_directed_edges_over_every_node() {
        let list = parse(GENERAL).unwrap();
        assert_eq!(list.edges(), [(1, 2), (3, 1), (2, 2)]);
        assert_eq!(
            list.nodes().collect::<Vec<_>>(),
            [1, 2, 3, 4],
            "node 4 has no entries and is still a node"
        );
        assert!(!list.is_symmetric());
    }

    #[test]
    fn values_are_checked_and_dropped() {
        let real = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 -1.5e3\n2 1 7\n";
        assert_eq!(parse(real).unwrap().edges(), [(1, 2), (2, 1)]);
        let integer = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 -123456789012345678901234567890\n";
        assert_eq!(parse(integer).unwrap().edges(), [(1, 2)]);
    }

    #[test]
    fn a_symmetric_file_lists_each_undirected_edge_once() {
        let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1.0\n3 3 2.0\n3 2 0.5\n";
        let list = parse(text).unwrap();
        assert_eq!(list.edges(), [(2, 1), (3, 3), (3, 2)]);
        assert!(list.is_symmetric());
        let skew = "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 4\n";
        assert!(parse(skew).unwrap().is_symmetric());
    }

    #[test]
    fn banner_words_ignore_case_and_blank_lines_are_skipped() {
        let text = "%%matrixmarket MATRIX Coordinate Pattern GENERAL\n\n2 2 1\n\n2 1\n\n";
        assert_eq!(parse(text).unwrap().edges(), [(2, 1)]);
    }

    #[test]
    fn an_empty_matrix_is_a_graph_without_nodes() {
        let list = parse("%%MatrixMarket matrix coordinate pattern general\n0 0 0\n").unwrap();
        assert_eq!(list.node_count(), 0);
    }

    #[test]
    fn a_declared_size_is_not_materialised() {
        let list = parse("%%MatrixMarket matrix coordinate pattern general\n4000000000000 4000000000000 0\n").unwrap();
        assert_eq!(list.node_count(), 4_000_000_000_000);
    }

    #[test]
    fn a_missing_or_wrong_banner_is_refused() {
        assert_eq!(
            error(""),
            "m.mtx:1: expected the banner `%%MatrixMarket matrix coordinate <field> <symmetry>`, found an empty file"
        );
        assert_eq!(
            error("3 3 1\n1 1\n"),
            "m.mtx:1: expected the banner `%%MatrixMarket matrix coordinate <field> <symmetry>`, found `3 3 1`"
        );
        assert_eq!(
            error("%%MatrixMarket matrix coordinate pattern\n"),
            "m.mtx:1: the banner `%%MatrixMarket matrix coordinate pattern` has 4 words; expected 5: `%%MatrixMarket matrix coordinate <field> <symmetry>`"
        );
        assert_eq!(
            error("%%MatrixMarket vector coordinate real general\n"),
            "m.mtx:1: the banner's object is `vector`; expected `matrix`"
        );
        assert_eq!(
            error("%%MatrixMarket matrix sparse real general\n"),
            "m.mtx:1: the banner's format is `sparse`; expected `coordinate`"
        );
        assert_eq!(
            error("%%MatrixMarket matrix coordinate double general\n"),
            "m.mtx:1: the banner's field is `double`; expected `pattern`, `real` or `integer`"
        );
        assert_eq!(
            error("%%MatrixMarket matrix coordinate real upper\n"),
            "m.mtx:1: the banner's symmetry is `upper`; expected `general`, `symmetric` or `skew-symmetric`"
        );
    }

    #[test]
    fn array_complex_and_hermitian_files_are_refused_saying_why() {
        assert_eq!(
            error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"),
            "m.mtx:1: the dense `array` format is not a graph; expected the sparse `coordinate` format"
        );
        assert_eq!(
            error("%%MatrixMarket matrix coordinate complex general\n"),
            "m.mtx:1: `complex` values are not supported; expected `pattern`, `real` or `integer`"
        );
        assert_eq!(
            error("%%MatrixMarket matrix coordinate real hermitian\n"),
            "m.mtx:1: `hermitian` symmetry (of complex matrices) is not supported; expected `general`, `symmetric` or `skew-symmetric`"
        );
    }

    #[test]
    fn a_bad_size_line_is_refused() {
        let banner = "%%MatrixMarket matrix coordinate pattern general\n% c\n";
        assert_eq!(
            error(banner),
            "m.mtx:3: expected the size line `rows columns entries`, found the end of the file"
        );
        assert_eq!(
            error(&format!("{banner}4 4\n")),
            "m.mtx:3: expected the size line `rows columns entries` (three non-negative integers), found `4 4`"
        );
        assert_eq!(
            error(&format!("{banner}4 -4 1\n")),
            "m.mtx:3: expected the size line `rows columns entries` (three non-negative integers), found `4 -4 1`"
        );
        assert_eq!(
            error(&format!("{banner}3 4 1\n1 1\n")),
            "m.mtx:3: the matrix is 3 x 4; a graph needs a square matrix, whose rows and columns both number its nodes"
        );
        assert_eq!(
            error(&format!("{banner}18446744073709551615 18446744073709551615 0\n")),
            "m.mtx:3: 18446744073709551615 nodes are more than this machine can count"
        );
    }

    #[test]
    fn more_entries_than_declared_are_refused() {
        let text = "%%MatrixMarket matrix coordinate pattern general\n4 4 4\n1 1\n1 2\n1 3\n1 4\n2 1\n";
        assert_eq!(
            error(text),
            "m.mtx:7: entry 5 of 4: more entries than the size line's 4"
        );
    }

    #[test]
    fn fewer_entries_than_declared_are_refused_at_the_end() {
        let text = "%%MatrixMarket matrix coordinate pattern general\n4 4 3\n1 1\n% c\n1 2\n";
        assert_eq!(
            error(text),
            "m.mtx:6: expected 3 entries as the size line says, found 2 entries"
        );
        let one = "%%MatrixMarket matrix coordinate pattern general\n4 4 3\n1 1";
        assert_eq!(
            error(one),
            "m.mtx:4: expected 3 entries as the size line says, found 1 entry"
        );
        let none = "%%MatrixMarket matrix coordinate pattern general\n4 4 1\n";
        assert_eq!(
            error(none),
            "m.mtx:3: expected 1 entry as the size line says, found 0 entries"
        );
    }

    #[test]
    fn indices_outside_the_matrix_are_refused() {
        let head = "%%MatrixMarket matrix coordinate pattern general\n4 4 1\n";
        assert_eq!(
            error(&format!("{head}0 1\n")),
            "m.mtx:3: entry 1 of 1: the row index 0 is outside 1..=4, the size line's range"
        );
        assert_eq!(
            error(&format!("{head}1 5\n")),
            "m.mtx:3: entry 1 of 1: the column index 5 is outside 1..=4, the size line's range"
        );
        assert_eq!(
            error(&format!("{head}1 -2\n")),
            "m.mtx:3: entry 1 of 1: the column index `-2` is not a positive integer"
        );
        assert_eq!(
            error(&format!("{head}one 2\n")),
            "m.mtx:3: entry 1 of 1: the row index `one` is not a positive integer"
        );
    }

    #[test]
    fn entries_must_have_the_fields_of_the_banner() {
        let pattern = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 3.0\n";
        assert_eq!(
            error(pattern),
            "m.mtx:3: entry 1 of 1: expected `row column` (a pattern matrix), found `1 2 3.0`"
        );
        let real = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n";
        assert_eq!(
            error(real),
            "m.mtx:3: entry 1 of 1: expected `row column value` (a real matrix), found `1 2`"
        );
        let integer = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1\n";
        assert_eq!(
            error(integer),
            "m.mtx:3: entry 1 of 1: expected `row column value` (an integer matrix), found `1`"
        );
    }

    #[test]
    fn values_not_of_the_banners_field_are_refused() {
        let real = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 x\n";
        assert_eq!(error(real), "m.mtx:3: entry 1 of 1: the value `x` is not a real number");
        let integer = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1.5\n";
        assert_eq!(
            error(integer),
            "m.mtx:3: entry 1 of 1: the value `1.5` is not an integer"
        );
        let sign_only = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 -\n";
        assert_eq!(
            error(sign_only),
            "m.mtx:3: entry 1 of 1: the value `-` is not an integer"
        );
    }

    #[test]
    fn symmetric_files_list_only_the_lower_triangle() {
        let upper = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n1 3\n";
        assert_eq!(
            error(upper),
            "m.mtx:4: entry 2 of 2: (1, 3) is above the diagonal; a symmetric file lists only the lower triangle (row >= column)"
        );
        let diagonal = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1.0\n";
        assert_eq!(
            error(diagonal),
            "m.mtx:3: entry 1 of 1: (2, 2) is not below the diagonal; a skew-symmetric file lists only the strictly lower triangle (row > column)"
        );
    }
}
