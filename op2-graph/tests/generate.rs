//! The generators: exact small graphs, invariants of the random ones,
//! determinism, and every parameter's error.

use std::collections::HashSet;

use op2_core::Error;
use op2_graph::generate::{barabasi_albert, complete, grid, watts_strogatz, MAX_EDGES, MAX_NODES};
use op2_graph::EdgeList;
use proptest::prelude::*;

/// Checks that `list` is a simple undirected graph on the nodes `0..n` and
/// returns its degrees.
fn degrees(list: &EdgeList, n: usize) -> Vec<usize> {
    assert!(list.is_symmetric(), "generated edges are undirected");
    assert_eq!(list.nodes().collect::<Vec<_>>(), (0..n as u64).collect::<Vec<_>>());
    let mut seen = HashSet::new();
    let mut degree = vec![0; n];
    for &(a, b) in list.edges() {
        assert_ne!(a, b, "self loop at {a}");
        assert!(a < n as u64 && b < n as u64, "edge ({a}, {b}) outside 0..{n}");
        assert!(seen.insert((a.min(b), a.max(b))), "edge ({a}, {b}) twice");
        degree[a as usize] += 1;
        degree[b as usize] += 1;
    }
    degree
}

/// The option and reason of an [`Error::InvalidOption`].
fn invalid(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidOption { option, reason } => (option, reason),
        other => panic!("expected InvalidOption, got {other:?}"),
    }
}

/// The ring lattice of `n` nodes and `k` neighbours, in the documented order.
fn ring_lattice(n: u64, k: u64) -> Vec<(u64, u64)> {
    (1..=k / 2)
        .flat_map(|j| (0..n).map(move |u| (u, (u + j) % n)))
        .collect()
}

#[test]
fn grid_3x2_is_exact() {
    // 0 1 2
    // 3 4 5
    let g = grid(3, 2).unwrap();
    assert_eq!(g.edges(), [(0, 1), (0, 3), (1, 2), (1, 4), (2, 5), (3, 4), (4, 5)]);
    assert_eq!(degrees(&g, 6), [2, 3, 2, 2, 3, 2]);
}

#[test]
fn grids_have_the_edges_their_shape_says() {
    assert_eq!(grid(1, 1).unwrap().edges(), []);
    assert_eq!(grid(1, 1).unwrap().node_count(), 1);
    assert_eq!(grid(4, 1).unwrap().edges(), [(0, 1), (1, 2), (2, 3)]);
    assert_eq!(grid(1, 3).unwrap().edges(), [(0, 1), (1, 2)]);
    let g = grid(17, 9).unwrap();
    assert_eq!(g.edges().len(), 16 * 9 + 17 * 8);
    let degree = degrees(&g, 17 * 9);
    assert_eq!(degree[0], 2, "a corner");
    assert_eq!(degree[5], 3, "the top border");
    assert_eq!(degree[17 + 5], 4, "inside");
    // Node y * w + x is joined to exactly its 4-neighbours.
    for &(a, b) in g.edges() {
        let (ax, ay, bx, by) = (a % 17, a / 17, b % 17, b / 17);
        assert_eq!(ax.abs_diff(bx) + ay.abs_diff(by), 1, "({a}, {b})");
    }
}

#[test]
fn complete_4_is_exact() {
    let g = complete(4).unwrap();
    assert_eq!(g.edges(), [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
    assert_eq!(degrees(&g, 4), [3; 4]);
    assert_eq!(complete(1).unwrap().edges(), []);
    assert_eq!(complete(1).unwrap().node_count(), 1);
    assert_eq!(complete(100).unwrap().edges().len(), 4950);
}

#[test]
fn barabasi_albert_has_its_edge_count_and_minimum_degree() {
    for (n, m) in [(2, 1), (10, 1), (500, 3), (300, 7), (40, 39), (1000, 20)] {
        let g = barabasi_albert(n, m, 11).unwrap();
        // The seed graph (complete on m + 1 nodes), then m edges per new node.
        assert_eq!(g.edges().len(), m * (m + 1) / 2 + (n - m - 1) * m, "n = {n}, m = {m}");
        let degree = degrees(&g, n);
        assert!(degree.iter().all(|&d| d >= m), "n = {n}, m = {m}: {degree:?}");
        assert_eq!(&g.edges()[..m * (m + 1) / 2], complete(m + 1).unwrap().edges());
        // Each new node v lists its m edges (v, t), to earlier nodes.
        for (i, &(v, t)) in g.edges()[m * (m + 1) / 2..].iter().enumerate() {
            assert_eq!(v, (m + 1 + i / m) as u64);
            assert!(t < v);
        }
    }
    assert_eq!(barabasi_albert(6, 5, 3).unwrap(), complete(6).unwrap());
}

#[test]
fn barabasi_albert_prefers_high_degrees() {
    // The oldest nodes collect far more than m edges; a uniform choice of
    // targets would give node 0 about m * ln(n / m) ≈ 10.
    let g = barabasi_albert(20_000, 2, 5).unwrap();
    let degree = degrees(&g, 20_000);
    assert!(degree[0] > 60, "degree of node 0: {}", degree[0]);
    assert!(*degree.iter().max().unwrap() > 100);
}

#[test]
fn barabasi_albert_depends_on_the_seed_only() {
    let a = barabasi_albert(2000, 4, 1).unwrap();
    assert_eq!(a, barabasi_albert(2000, 4, 1).unwrap());
    assert_ne!(a, barabasi_albert(2000, 4, 2).unwrap());
    // Node v's draws depend on the seed and the graph before it only: a larger
    // graph from the same seed begins with this one.
    let b = barabasi_albert(2500, 4, 1).unwrap();
    assert_eq!(a.edges(), &b.edges()[..a.edges().len()]);
}

#[test]
fn watts_strogatz_without_rewiring_is_the_ring_lattice() {
    let g = watts_strogatz(6, 4, 0.0, 9).unwrap();
    #[rustfmt::skip]
    let lattice = [
        (0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0),
        (0, 2), (1, 3), (2, 4), (3, 5), (4, 0), (5, 1),
    ];
    assert_eq!(g.edges(), lattice);
    assert_eq!(degrees(&g, 6), [4; 6]);
    for (n, k) in [(1, 0), (5, 0), (3, 2), (100, 10), (7, 6)] {
        assert_eq!(
            watts_strogatz(n, k, 0.0, 1).unwrap().edges(),
            ring_lattice(n as u64, k as u64)
        );
    }
}

#[test]
fn watts_strogatz_keeps_its_edge_count_and_stays_simple() {
    for (n, k) in [(3, 2), (20, 4), (500, 10), (51, 40), (1000, 2)] {
        for beta in [0.0, 0.05, 0.5, 1.0] {
            let g = watts_strogatz(n, k, beta, 3).unwrap();
            assert_eq!(g.edges().len(), n * k / 2, "n = {n}, k = {k}, beta = {beta}");
            let degree = degrees(&g, n);
            assert_eq!(degree.iter().sum::<usize>(), n * k);
            // The near end of every edge stays: node u still lists k/2 edges (u, _).
            let lattice = ring_lattice(n as u64, k as u64);
            for (edge, lattice_edge) in g.edges().iter().zip(&lattice) {
                assert_eq!(edge.0, lattice_edge.0);
            }
            let rewired = g.edges().iter().zip(&lattice).filter(|(a, b)| a != b).count();
            if beta == 0.0 {
                assert_eq!(rewired, 0);
            } else if n * k >= 1000 {
                let expected = beta * (n * k / 2) as f64;
                assert!(
                    (rewired as f64) > 0.7 * expected && (rewired as f64) < 1.3 * expected + 5.0,
                    "n = {n}, k = {k}, beta = {beta}: {rewired} rewired"
                );
            }
        }
    }
}

#[test]
fn watts_strogatz_keeps_an_edge_with_no_valid_target() {
    // k = n - 1: the lattice is complete, every node is joined to all others,
    // so no edge can be rewired, even with beta = 1.
    let g = watts_strogatz(7, 6, 1.0, 4).unwrap();
    assert_eq!(g.edges(), ring_lattice(7, 6));
    degrees(&g, 7);
}

#[test]
fn watts_strogatz_depends_on_the_seed_only() {
    let a = watts_strogatz(1000, 6, 0.2, 1).unwrap();
    assert_eq!(a, watts_strogatz(1000, 6, 0.2, 1).unwrap());
    assert_ne!(a, watts_strogatz(1000, 6, 0.2, 2).unwrap());
}

#[test]
fn generated_graphs_are_pinned() {
    // The exact graphs for a seed: these must not change between versions or
    // machines (a changed generator is a changed experiment). Checked against
    // an independent implementation of the documented algorithms.
    #[rustfmt::skip]
    let attached = [
        (0, 1), (0, 2), (1, 2),
        (3, 0), (3, 1), (4, 1), (4, 3), (5, 0), (5, 2), (6, 4), (6, 5), (7, 1), (7, 6),
    ];
    assert_eq!(barabasi_albert(8, 2, 42).unwrap().edges(), attached);
    #[rustfmt::skip]
    let rewired = [
        (0, 3), (1, 5), (2, 1), (3, 4), (4, 5), (5, 6), (6, 7), (7, 0),
        (0, 2), (1, 3), (2, 6), (3, 5), (4, 6), (5, 7), (6, 0), (7, 1),
    ];
    assert_eq!(watts_strogatz(8, 4, 0.3, 42).unwrap().edges(), rewired);
}

#[test]
fn bad_parameters_name_the_parameter_and_the_range() {
    let cases: [(Error, &str, &str); 15] = [
        (grid(0, 3).unwrap_err(), "grid(w)", "w is 0; expected at least 1"),
        (grid(3, 0).unwrap_err(), "grid(h)", "h is 0; expected at least 1"),
        (complete(0).unwrap_err(), "complete(n)", "n is 0; expected at least 1"),
        (
            barabasi_albert(1, 1, 0).unwrap_err(),
            "barabasi_albert(n)",
            "n is 1; expected at least 2",
        ),
        (
            barabasi_albert(10, 0, 0).unwrap_err(),
            "barabasi_albert(m)",
            "m is 0; expected 1 <= m < n = 10",
        ),
        (
            barabasi_albert(10, 10, 0).unwrap_err(),
            "barabasi_albert(m)",
            "m is 10; expected 1 <= m < n = 10",
        ),
        (
            watts_strogatz(0, 0, 0.5, 0).unwrap_err(),
            "watts_strogatz(n)",
            "n is 0; expected at least 1",
        ),
        (
            watts_strogatz(10, 3, 0.5, 0).unwrap_err(),
            "watts_strogatz(k)",
            "k is 3; expected an even k with 0 <= k < n = 10",
        ),
        (
            watts_strogatz(10, 10, 0.5, 0).unwrap_err(),
            "watts_strogatz(k)",
            "k is 10; expected an even k with 0 <= k < n = 10",
        ),
        (
            watts_strogatz(10, 4, 1.5, 0).unwrap_err(),
            "watts_strogatz(beta)",
            "beta is 1.5; expected 0 <= beta <= 1",
        ),
        (
            watts_strogatz(10, 4, -0.1, 0).unwrap_err(),
            "watts_strogatz(beta)",
            "beta is -0.1; expected 0 <= beta <= 1",
        ),
        (
            watts_strogatz(10, 4, f64::NAN, 0).unwrap_err(),
            "watts_strogatz(beta)",
            "beta is NaN; expected 0 <= beta <= 1",
        ),
        (
            complete(46_342).unwrap_err(),
            "complete(n)",
            "the complete graph on 46342 nodes has 1073767311 edges; expected at most 1073741823",
        ),
        (
            grid(usize::MAX, usize::MAX).unwrap_err(),
            "grid(w, h)",
            "nodes; expected at most 2147483647",
        ),
        (
            watts_strogatz(1 << 30, 4, 0.1, 0).unwrap_err(),
            "watts_strogatz(n, k)",
            "has 2147483648 edges; expected at most 1073741823",
        ),
    ];
    for (e, option, reason) in cases {
        let message = e.to_string();
        let (o, r) = invalid(e);
        assert_eq!(o, option, "{message}");
        assert!(r.ends_with(reason), "{message}");
        assert_eq!(message, format!("invalid runtime option `{option}`: {r}"));
    }
    // The largest complete graph passes the checks (parsing checks without building).
    assert!(op2_graph::GraphSpec::parse("complete:46341").is_ok());
    let e = barabasi_albert(MAX_NODES + 1, 1, 0).unwrap_err();
    assert_eq!(invalid(e).0, "barabasi_albert(n, m)");
    assert_eq!(MAX_EDGES * 2, op2_core::RaggedMap::MAX_TARGETS - 1);
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, cases: 64, ..ProptestConfig::default() })]

    /// Any Barabási-Albert graph is simple, has its exact edge count and
    /// minimum degree m, and is a function of its seed.
    #[test]
    fn any_barabasi_albert_graph_holds_its_invariants(n in 2usize..120, m_frac in 0.0f64..1.0, seed: u64) {
        let m = 1 + ((n - 1) as f64 * m_frac) as usize % (n - 1);
        let g = barabasi_albert(n, m, seed).unwrap();
        prop_assert_eq!(g.edges().len(), m * (m + 1) / 2 + (n - m - 1) * m);
        prop_assert!(degrees(&g, n).iter().all(|&d| d >= m));
        prop_assert_eq!(g, barabasi_albert(n, m, seed).unwrap());
    }

    /// Any Watts-Strogatz graph is simple, has n * k / 2 edges, and is a
    /// function of its seed.
    #[test]
    fn any_watts_strogatz_graph_holds_its_invariants(n in 1usize..120, k_frac in 0.0f64..1.0, beta in 0.0f64..=1.0, seed: u64) {
        let k = 2 * (((n - 1) / 2) as f64 * k_frac) as usize;
        let g = watts_strogatz(n, k, beta, seed).unwrap();
        prop_assert_eq!(g.edges().len(), n * k / 2);
        prop_assert_eq!(degrees(&g, n).iter().sum::<usize>(), n * k);
        prop_assert_eq!(g, watts_strogatz(n, k, beta, seed).unwrap());
    }
}
