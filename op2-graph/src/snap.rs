//! SNAP-style edge lists: one edge `source target` per line, node ids as
//! non-negative integers separated by spaces or tabs. Lines starting with `#`
//! or `%` are comments and blank lines are skipped; columns after the two ids
//! (weights, timestamps) are allowed and ignored.

use std::io::BufRead;
use std::num::IntErrorKind;
use std::path::Path;

use op2_core::Result;

use crate::lines::{input_error, is_skipped, open, quoted, Lines};
use crate::EdgeList;

/// Reads the SNAP-style edge list at `path` (see [`EdgeList::parse_snap`]).
///
/// # Errors
///
/// [`op2_core::Error::InputFile`]: at line 0 when the file cannot be opened;
/// at the offending line when it cannot be read, is not UTF-8 text, has fewer
/// than two fields, or has a field in the first two that is not a node id.
pub fn read_edge_list(path: impl AsRef<Path>) -> Result<EdgeList> {
    let path = path.as_ref();
    parse(Lines::new(open(path)?, path))
}

impl EdgeList {
    /// Parses a SNAP-style edge list held in `text`; errors name it `origin`.
    ///
    /// Each line that is not blank or a comment (`#` or `%` first) holds an
    /// edge: a source and a target node id (`u64`), then anything. The edges
    /// are directed and kept in file order, duplicates and self-loops
    /// included; the nodes are the ids in first-seen order ([`EdgeList::new`]).
    ///
    /// # Errors
    ///
    /// [`op2_core::Error::InputFile`] at the first malformed line, as for
    /// [`read_edge_list`].
    pub fn parse_snap(text: &str, origin: impl AsRef<Path>) -> Result<EdgeList> {
        parse(Lines::new(text.as_bytes(), origin.as_ref()))
    }
}

fn parse<R: BufRead>(mut lines: Lines<'_, R>) -> Result<EdgeList> {
    let path = lines.path();
    let mut edges = Vec::new();
    while let Some((n, line)) = lines.next_line()? {
        if is_skipped(line, &['#', '%']) {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(source), Some(target)) = (fields.next(), fields.next()) else {
            let reason = format!("expected two node ids `source target`, found {}", quoted(line));
            return Err(input_error(path, n, reason));
        };
        let edge = (node_id(source), node_id(target));
        match edge {
            (Ok(source), Ok(target)) => edges.push((source, target)),
            (Err(reason), _) | (_, Err(reason)) => return Err(input_error(path, n, reason)),
        }
    }
    Ok(EdgeList::new(edges))
}

/// A node id, or what is wrong with `field`.
fn node_id(field: &str) -> Result<u64, String> {
    field.parse().map_err(|e: std::num::ParseIntError| match e.kind() {
        IntErrorKind::PosOverflow => {
            format!("node id {} is larger than the largest id, {}", quoted(field), u64::MAX)
        }
        _ => format!("node id {} is not a non-negative integer", quoted(field)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<EdgeList> {
        EdgeList::parse_snap(text, "g.txt")
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn comments_blank_lines_and_extra_columns_are_skipped() {
        let text =
            "# Directed graph: example\n% another comment\n\n  \n0\t1\n1 2 0.5 1234\n  # indented comment\n2   0\n";
        let list = parse(text).unwrap();
        assert_eq!(list.edges(), [(0, 1), (1, 2), (2, 0)]);
        assert_eq!(list.nodes().collect::<Vec<_>>(), [0, 1, 2]);
        assert!(!list.is_symmetric());
    }

    #[test]
    fn ids_span_u64_and_windows_line_endings_are_accepted() {
        let list = parse("18446744073709551615 7\r\n7 7\r\n").unwrap();
        assert_eq!(list.edges(), [(u64::MAX, 7), (7, 7)]);
        assert_eq!(list.nodes().collect::<Vec<_>>(), [u64::MAX, 7]);
    }

    #[test]
    fn an_input_without_edges_is_an_empty_graph() {
        let list = parse("# nothing here\n\n").unwrap();
        assert!(list.edges().is_empty());
        assert_eq!(list.node_count(), 0);
    }

    #[test]
    fn a_line_with_one_field_names_the_line_and_what_was_found() {
        assert_eq!(
            error("1 2\n# c\n12\n"),
            "g.txt:3: expected two node ids `source target`, found `12`"
        );
    }

    #[test]
    fn a_negative_id_is_refused() {
        assert_eq!(error("1 -3\n"), "g.txt:1: node id `-3` is not a non-negative integer");
    }

    #[test]
    fn a_non_integer_id_is_refused() {
        assert_eq!(
            error("\n1.5 2\n"),
            "g.txt:2: node id `1.5` is not a non-negative integer"
        );
        assert_eq!(error("a,b c\n"), "g.txt:1: node id `a,b` is not a non-negative integer");
    }

    #[test]
    fn an_id_past_u64_is_refused() {
        assert_eq!(
            error("18446744073709551616 1\n"),
            "g.txt:1: node id `18446744073709551616` is larger than the largest id, 18446744073709551615"
        );
    }

    #[test]
    fn the_first_bad_line_is_reported() {
        assert_eq!(
            error("1 2\nx 3\ny 4\n"),
            "g.txt:2: node id `x` is not a non-negative integer"
        );
    }
}
