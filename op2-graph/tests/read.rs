//! The file readers: errors name the file, and a file reads as its text parses.

use std::path::{Path, PathBuf};

use op2_core::Error;
use op2_graph::{read_edge_list, read_matrix_market, EdgeList};
use proptest::prelude::*;

/// `contents` written to a file of its own under the test's scratch directory.
fn file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("op2-graph-read");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn an_edge_list_file_reads_as_its_text_parses() {
    let text = "# FromNodeId\tToNodeId\n0\t4\n4\t2\n";
    let path = file("edges.txt", text.as_bytes());
    let list = read_edge_list(&path).unwrap();
    assert_eq!(list, EdgeList::parse_snap(text, "anything").unwrap());
    assert_eq!(list.edges(), [(0, 4), (4, 2)]);
}

#[test]
fn a_matrix_market_file_reads_as_its_text_parses() {
    let text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 1\n";
    let path = file("graph.mtx", text.as_bytes());
    let list = read_matrix_market(&path).unwrap();
    assert_eq!(list, EdgeList::parse_matrix_market(text, "anything").unwrap());
    assert!(list.is_symmetric());
}

#[test]
fn errors_in_a_file_name_the_file_and_the_line() {
    let path = file("bad.txt", b"1 2\n3\n");
    let e = read_edge_list(&path).unwrap_err();
    let Error::InputFile { path: at, line, reason } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((at, *line), (&path, 2));
    assert_eq!(reason, "expected two node ids `source target`, found `3`");
    assert_eq!(e.to_string(), format!("{}:2: {reason}", path.display()));

    let path = file(
        "bad.mtx",
        b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n",
    );
    let e = read_matrix_market(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: entry 1 of 1: the row index 3 is outside 1..=2, the size line's range",
            path.display()
        )
    );
}

#[test]
fn a_missing_file_is_an_error_at_line_0() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("op2-graph-read/does-not-exist.txt");
    for e in [
        read_edge_list(&path).unwrap_err(),
        read_matrix_market(&path).unwrap_err(),
    ] {
        let Error::InputFile { path: at, line, reason } = &e else {
            panic!("{e:?}")
        };
        assert_eq!((at, *line), (&path, 0));
        assert!(reason.starts_with("cannot open the file: "), "{reason}");
    }
}

#[test]
fn a_file_that_is_not_text_is_an_error_at_the_line() {
    let path = file("binary.txt", b"1 2\n# ok\n\x00\x9f\x92 1\n");
    let e = read_edge_list(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}:3: the line is not UTF-8 text", path.display())
    );
}

proptest! {
    // Failures are reported, not saved into the source tree.
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// Any list of edges, written one per line with varied spacing, comments
    /// and extra columns, reads back as the same edges and first-seen nodes.
    #[test]
    fn written_edges_read_back(
        edges in proptest::collection::vec((0u64..20, prop_oneof![0u64..20, Just(u64::MAX)]), 0..40),
        decorate in proptest::collection::vec(0u8..4, 40),
    ) {
        let mut text = String::new();
        for (k, (s, t)) in edges.iter().enumerate() {
            match decorate[k] {
                0 => text.push_str(&format!("{s} {t}\n")),
                1 => text.push_str(&format!("{s}\t{t}\t1.25\n")),
                2 => text.push_str(&format!("# edge {k}\n  {s}   {t}  \r\n")),
                _ => text.push_str(&format!("\n% c\n{s} {t} 7 8\n")),
            }
        }
        let list = EdgeList::parse_snap(&text, "p.txt").unwrap();
        prop_assert_eq!(list.edges(), &edges[..]);
        let mut expected_nodes = Vec::new();
        for &(s, t) in &edges {
            for id in [s, t] {
                if !expected_nodes.contains(&id) {
                    expected_nodes.push(id);
                }
            }
        }
        prop_assert_eq!(list.nodes().collect::<Vec<_>>(), expected_nodes);
    }
}
