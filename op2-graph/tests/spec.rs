//! Graph specs: every form parses, builds what it names and writes back;
//! every malformed spec is an error quoting it and the expected form.

use std::path::{Path, PathBuf};

use op2_core::Error;
use op2_graph::{generate, read_matrix_market, GraphSpec};
use proptest::prelude::*;

/// The reason of the [`Error::InvalidOption`] for option `graph` that
/// parsing `spec` gives.
fn rejected(spec: &str) -> String {
    match GraphSpec::parse(spec).unwrap_err() {
        Error::InvalidOption {
            option: "graph",
            reason,
        } => reason,
        other => panic!("{spec}: expected InvalidOption for `graph`, got {other:?}"),
    }
}

/// `contents` in a file of its own under the test's scratch directory.
fn file(name: &str, contents: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("op2-graph-spec");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn every_form_parses_and_builds_its_graph() {
    let grid = GraphSpec::parse("grid:64x32").unwrap();
    assert_eq!(grid, GraphSpec::Grid { width: 64, height: 32 });
    assert_eq!(grid.build(1).unwrap(), generate::grid(64, 32).unwrap());
    let complete: GraphSpec = " complete:5 ".parse().unwrap();
    assert_eq!(complete, GraphSpec::Complete { n: 5 });
    assert_eq!(complete.build(1).unwrap(), generate::complete(5).unwrap());
    let ba = GraphSpec::parse("ba:1000,3").unwrap();
    assert_eq!(ba, GraphSpec::BarabasiAlbert { n: 1000, m: 3 });
    assert_eq!(ba.build(8).unwrap(), generate::barabasi_albert(1000, 3, 8).unwrap());
    assert_ne!(ba.build(8).unwrap(), ba.build(9).unwrap());
    let ws = GraphSpec::parse("ws:1000, 6, 0.1").unwrap();
    assert_eq!(
        ws,
        GraphSpec::WattsStrogatz {
            n: 1000,
            k: 6,
            beta: 0.1
        }
    );
    assert_eq!(ws.build(8).unwrap(), generate::watts_strogatz(1000, 6, 0.1, 8).unwrap());

    let edges = file("g.txt", "# a path\n5 6\n6 7\n");
    let spec = GraphSpec::parse(&format!("edges:{}", edges.display())).unwrap();
    assert_eq!(spec, GraphSpec::EdgeFile(edges.clone()));
    assert_eq!(spec.build(0).unwrap().edges(), [(5, 6), (6, 7)]);
    let mtx = file(
        "g.mtx",
        "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n",
    );
    let spec = GraphSpec::parse(&format!("mtx:{}", mtx.display())).unwrap();
    assert_eq!(spec, GraphSpec::MatrixMarket(mtx.clone()));
    assert_eq!(spec.build(0).unwrap(), read_matrix_market(&mtx).unwrap());
    // A file name is everything after the first colon.
    assert_eq!(
        GraphSpec::parse("edges:C:/data/g.txt").unwrap(),
        GraphSpec::EdgeFile("C:/data/g.txt".into())
    );
}

#[test]
fn a_missing_file_fails_at_build_time() {
    let spec = GraphSpec::parse("mtx:/nonexistent/graph.mtx").unwrap();
    let e = spec.build(0).unwrap_err();
    assert!(matches!(e, Error::InputFile { line: 0, .. }), "{e:?}");
}

#[test]
fn malformed_specs_quote_the_spec_and_the_expected_form() {
    let forms = "expected `grid:WxH`, `complete:N`, `edges:FILE`, `mtx:FILE`, `ba:N,M` or `ws:N,K,BETA`";
    assert_eq!(
        rejected("grid"),
        format!("`grid`: expected a graph spec: {}", &forms[9..])
    );
    assert_eq!(
        rejected("tree:5"),
        format!("`tree:5`: unknown graph family `tree`; {forms}")
    );
    assert_eq!(rejected(""), format!("``: expected a graph spec: {}", &forms[9..]));
    let grid = "expected `grid:WxH` (W nodes per row, H rows)";
    for spec in ["grid:64", "grid:64x", "grid:ax4", "grid:-1x4", "grid:4x4x4"] {
        assert_eq!(rejected(spec), format!("`{spec}`: {grid}"));
    }
    assert_eq!(rejected("complete:"), "`complete:`: expected `complete:N` (N nodes)");
    assert_eq!(
        rejected("edges:"),
        "`edges:`: expected `edges:FILE` (a SNAP-style edge list)"
    );
    assert_eq!(rejected("mtx:"), "`mtx:`: expected `mtx:FILE` (a Matrix Market file)");
    let ba = "expected `ba:N,M` (N nodes, each new one joined to M earlier ones)";
    for spec in ["ba:10", "ba:10,2,3", "ba:10,x", "ba:10;2"] {
        assert_eq!(rejected(spec), format!("`{spec}`: {ba}"));
    }
    let ws = "expected `ws:N,K,BETA` (N nodes, K lattice neighbours, rewired with probability BETA)";
    for spec in ["ws:10,4", "ws:10,4,x", "ws:10,4,0.1,2", "ws:10.5,4,0.1"] {
        assert_eq!(rejected(spec), format!("`{spec}`: {ws}"));
    }
    assert_eq!(
        GraphSpec::parse("ws:1,2").unwrap_err().to_string(),
        format!("invalid runtime option `graph`: `ws:1,2`: {ws}")
    );
}

#[test]
fn parameters_out_of_range_are_caught_when_parsing() {
    assert_eq!(
        rejected("grid:0x4"),
        "`grid:0x4`: w is 0; expected at least 1 (the form is `grid:WxH`: W nodes per row, H rows)"
    );
    assert_eq!(
        rejected("complete:0"),
        "`complete:0`: n is 0; expected at least 1 (the form is `complete:N`: N nodes)"
    );
    assert!(rejected("complete:100000").contains("edges; expected at most 1073741823"));
    assert_eq!(
        rejected("ba:10,10"),
        "`ba:10,10`: m is 10; expected 1 <= m < n = 10 \
         (the form is `ba:N,M`: N nodes, each new one joined to M earlier ones)"
    );
    assert!(rejected("ws:10,3,0.5").starts_with("`ws:10,3,0.5`: k is 3; expected an even k with 0 <= k < n = 10"));
    assert!(rejected("ws:10,4,2").starts_with("`ws:10,4,2`: beta is 2; expected 0 <= beta <= 1"));
    assert!(rejected("ws:10,4,NaN").starts_with("`ws:10,4,NaN`: beta is NaN"));
    // A spec built by hand is checked by the generator.
    let e = GraphSpec::BarabasiAlbert { n: 3, m: 0 }.build(0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidOption {
                option: "barabasi_albert(m)",
                ..
            }
        ),
        "{e:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// A spec written by Display parses back to itself.
    #[test]
    fn specs_write_back_as_they_parse(
        which in 0u8..6,
        a in 1usize..10_000,
        b in 1usize..100,
        beta in 0.0f64..=1.0,
        name in "[a-zA-Z0-9_./:-]{1,20}",
    ) {
        let n = a + b + 1;
        let spec = match which {
            0 => GraphSpec::Grid { width: a, height: b },
            1 => GraphSpec::Complete { n: b },
            2 => GraphSpec::EdgeFile(name.into()),
            3 => GraphSpec::MatrixMarket(name.into()),
            4 => GraphSpec::BarabasiAlbert { n, m: b },
            _ => GraphSpec::WattsStrogatz { n, k: 2 * (b / 2), beta },
        };
        prop_assert_eq!(GraphSpec::parse(&spec.to_string()).unwrap(), spec);
    }
}
