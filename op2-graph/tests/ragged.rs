//! Edge lists as op2 carriers: the nodes as a Set keyed by node id, the
//! edges as a RaggedMap on it.

use op2_core::{Duplicates, EdgeRules, Error, SelfLoops, Set};
use op2_graph::{generate, EdgeList};
use proptest::prelude::*;

/// The message of an [`Error::InvalidRaggedMap`] for map `g`.
fn reason(e: Error) -> String {
    match e {
        Error::InvalidRaggedMap { map, reason } => {
            assert_eq!(map, "g");
            reason
        }
        other => panic!("expected InvalidRaggedMap, got {other:?}"),
    }
}

#[test]
fn a_generated_grid_becomes_its_neighbour_map() {
    let g = generate::grid(3, 2).unwrap();
    let cells = g.node_set("cells").unwrap();
    assert_eq!(cells.size(), 6);
    assert_eq!(cells.index_of(4), Some(4));
    let map = g.to_ragged_map("g", &cells, EdgeRules::undirected()).unwrap();
    let lists: Vec<&[i32]> = (0..6).map(|e| map.targets_of(e)).collect();
    assert_eq!(lists, [&[1, 3][..], &[0, 2, 4], &[1, 5], &[0, 4], &[1, 3, 5], &[2, 4]]);
    // A generated list is undirected: directed rules give both directions too.
    let directed = g.to_ragged_map("g", &cells, EdgeRules::directed()).unwrap();
    assert_eq!(directed.targets(), map.targets());
}

#[test]
fn sparse_node_ids_are_mapped_through_the_set() {
    let list = EdgeList::parse_snap("100 7\n7 42\n42 100\n100 5\n", "s.txt").unwrap();
    let nodes = list.node_set("people").unwrap();
    assert_eq!(nodes.global_ids().as_ref(), [100, 7, 42, 5]);
    assert_eq!(nodes.index_of(42), Some(2));
    let directed = list.to_ragged_map("g", &nodes, EdgeRules::directed()).unwrap();
    let lists: Vec<&[i32]> = (0..4).map(|e| directed.targets_of(e)).collect();
    assert_eq!(lists, [&[1, 3][..], &[2], &[0], &[]]);
    let undirected = list.to_ragged_map("g", &nodes, EdgeRules::undirected()).unwrap();
    let lists: Vec<&[i32]> = (0..4).map(|e| undirected.targets_of(e)).collect();
    assert_eq!(lists, [&[1, 2, 3][..], &[0, 2], &[1, 0], &[0]]);
}

#[test]
fn a_symmetric_matrix_market_list_gives_both_directions() {
    let text = "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n2 1\n3 1\n3 3\n";
    let list = EdgeList::parse_matrix_market(text, "m.mtx").unwrap();
    let nodes = list.node_set("n").unwrap();
    assert_eq!(
        nodes.global_ids().as_ref(),
        [1, 2, 3, 4],
        "ids 1..=4, node 4 without entries"
    );
    for rules in [EdgeRules::directed(), EdgeRules::undirected()] {
        let map = list.to_ragged_map("g", &nodes, rules).unwrap();
        let lists: Vec<&[i32]> = (0..4).map(|e| map.targets_of(e)).collect();
        assert_eq!(lists, [&[1, 2][..], &[0], &[0], &[]], "{rules:?}");
    }
    let keep = EdgeRules {
        self_loops: SelfLoops::Keep,
        ..EdgeRules::directed()
    };
    let map = list.to_ragged_map("g", &nodes, keep).unwrap();
    assert_eq!(map.targets_of(2), &[0, 2], "the self loop once");

    let general = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n2 1\n3 1\n";
    let list = EdgeList::parse_matrix_market(general, "m.mtx").unwrap();
    let nodes = list.node_set("n").unwrap();
    let map = list.to_ragged_map("g", &nodes, EdgeRules::directed()).unwrap();
    let lists: Vec<&[i32]> = (0..3).map(|e| map.targets_of(e)).collect();
    assert_eq!(lists, [&[][..], &[0], &[0]], "a general file is directed");
}

#[test]
fn a_node_missing_from_the_set_is_named() {
    let list = EdgeList::parse_snap("1 2\n2 9\n", "s.txt").unwrap();
    let nodes = Set::with_global_ids("people", vec![1, 2, 3]).unwrap();
    let e = list.to_ragged_map("g", &nodes, EdgeRules::undirected()).unwrap_err();
    assert_eq!(reason(e), "edge 1 (2, 9): node 9 is not an element of set `people`");
    let plain = Set::new("plain", 2).unwrap();
    let e = list.to_ragged_map("g", &plain, EdgeRules::undirected()).unwrap_err();
    assert_eq!(reason(e), "edge 0 (1, 2): node 2 is not an element of set `plain`");
}

#[test]
fn rejections_name_node_ids() {
    let list = EdgeList::parse_snap("10 20\n20 30\n30 30\n20 10\n", "s.txt").unwrap();
    let nodes = list.node_set("n").unwrap();
    let reject_loops = EdgeRules {
        self_loops: SelfLoops::Reject,
        ..EdgeRules::directed()
    };
    let e = list.to_ragged_map("g", &nodes, reject_loops).unwrap_err();
    assert_eq!(reason(e), "edge 2 is a self loop at node 30");
    let reject_duplicates = EdgeRules {
        duplicates: Duplicates::Reject,
        ..EdgeRules::undirected()
    };
    let e = list.to_ragged_map("g", &nodes, reject_duplicates).unwrap_err();
    assert_eq!(
        reason(e),
        "edges 0 (10, 20) and 3 (20, 10) both join node 20 to node 10"
    );
    // Directed, (20, 10) is another edge; a dropped self loop is no duplicate.
    let directed = EdgeRules {
        duplicates: Duplicates::Reject,
        ..EdgeRules::directed()
    };
    let map = list.to_ragged_map("g", &nodes, directed).unwrap();
    assert_eq!(map.targets_of(1), &[2, 0]);
    let twice = EdgeList::parse_snap("1 1\n1 1\n1 2\n", "s.txt").unwrap();
    let nodes = twice.node_set("n").unwrap();
    let map = twice.to_ragged_map("g", &nodes, directed).unwrap();
    assert_eq!(map.targets_of(0), &[1]);
    let keep_loops = EdgeRules {
        self_loops: SelfLoops::Keep,
        ..directed
    };
    let e = twice.to_ragged_map("g", &nodes, keep_loops).unwrap_err();
    assert_eq!(reason(e), "edges 0 (1, 1) and 1 (1, 1) both join node 1 to node 1");
}

#[test]
fn node_sets_are_plain_when_ids_are_indices() {
    let list = EdgeList::new(vec![(0, 1), (1, 2)]);
    let plain = list.node_set("n").unwrap();
    assert_eq!(plain.global_ids().as_ref(), [0, 1, 2]);
    assert_eq!(plain.index_of(3), None);
    let empty = EdgeList::new(Vec::new()).node_set("n").unwrap();
    assert_eq!(empty.size(), 0);
    let huge = "%%MatrixMarket matrix coordinate pattern general\n3000000000 3000000000 0\n";
    let huge = EdgeList::parse_matrix_market(huge, "h.mtx").unwrap();
    let e = huge.node_set("huge").unwrap_err();
    assert!(
        matches!(
            e,
            Error::SetTooLarge {
                size: 3_000_000_000,
                ..
            }
        ),
        "{e:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// Any edge list over sparse ids, read directed or undirected with every
    /// copy and self loop kept, gives back its edges: element e's targets,
    /// as node ids, are the edges leaving node e (both ends of each edge when
    /// undirected, a self loop once) in input order.
    #[test]
    fn edge_lists_round_trip_through_ragged_maps(
        edges in proptest::collection::vec((0u64..12, 0u64..12), 0..60),
        scale in prop_oneof![Just(1u64), Just(1000), Just(u64::MAX / 16)],
        undirected: bool,
        symmetric: bool,
    ) {
        let edges: Vec<(u64, u64)> = edges.iter().map(|&(a, b)| (a * scale, b * scale)).collect();
        // A symmetric list (a Matrix Market file) over the ids 1..=12.
        let list = if symmetric {
            let mut text = format!("%%MatrixMarket matrix coordinate pattern symmetric\n12 12 {}\n", edges.len());
            for &(a, b) in &edges {
                let (a, b) = (a / scale + 1, b / scale + 1);
                text.push_str(&format!("{} {}\n", a.max(b), a.min(b)));
            }
            EdgeList::parse_matrix_market(&text, "p.mtx").unwrap()
        } else {
            EdgeList::new(edges)
        };
        let nodes = list.node_set("nodes").unwrap();
        prop_assert_eq!(nodes.size(), list.node_count());
        let rules = EdgeRules { undirected, duplicates: Duplicates::Keep, self_loops: SelfLoops::Keep };
        let map = list.to_ragged_map("g", &nodes, rules).unwrap();
        let both = undirected || list.is_symmetric();
        let ids: Vec<u64> = list.nodes().collect();
        for (e, &id) in ids.iter().enumerate() {
            prop_assert_eq!(nodes.index_of(id), Some(e));
            let expected: Vec<u64> = list
                .edges()
                .iter()
                .filter_map(|&(a, b)| {
                    if a == id {
                        Some(b)
                    } else if both && b == id {
                        Some(a)
                    } else {
                        None
                    }
                })
                .collect();
            let got: Vec<u64> = map.targets_of(e).iter().map(|&t| nodes.global_id(t as usize).unwrap()).collect();
            prop_assert_eq!(got, expected, "node {}", id);
        }
    }
}
