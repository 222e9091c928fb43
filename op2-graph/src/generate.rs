//! Graphs made rather than read: deterministic generators for the graphs an
//! agent model runs on (the contact network of an epidemic, say).
//!
//! Every generator returns an [`EdgeList`] with these conventions:
//!
//! - **Nodes** are `0..n`, every one of them, in increasing order, including
//!   any without edges; node `i` becomes element `i` of
//!   [`EdgeList::node_set`]. [`grid`] numbers the node at column `x` and row
//!   `y` as `y * w + x`.
//! - **Edges are undirected**, each listed once, so the list is flagged
//!   [`EdgeList::is_symmetric`] and [`EdgeList::to_ragged_map`] gives every
//!   edge in both directions. Which end comes first, and the order of the
//!   edges, is stated per generator; it fixes the order of each node's
//!   neighbours in the map.
//! - **Simple graphs**: no self loops, no edge twice.
//! - **Deterministic**: the random generators draw from
//!   [`op2_core::Philox`] streams keyed by the seed, with integer arithmetic
//!   and exact scalings only, so a graph is a pure function of its
//!   parameters and seed: the same on every machine, thread count and run.
//!
//! Parameters are checked before anything is built: a value outside the
//! accepted range is an [`Error::InvalidOption`] naming the generator's
//! parameter (as `barabasi_albert(m)`) and the range, never a panic. So is a
//! graph too large for op2: more than [`MAX_NODES`] nodes or [`MAX_EDGES`]
//! edges.
//!
//! ```
//! use op2_core::EdgeRules;
//! use op2_graph::generate;
//!
//! let contacts = generate::watts_strogatz(1000, 6, 0.1, 42)?;
//! assert_eq!(contacts.edges().len(), 1000 * 6 / 2);
//! assert_eq!(contacts, generate::watts_strogatz(1000, 6, 0.1, 42)?, "same seed, same graph");
//!
//! let people = contacts.node_set("people")?;
//! let neighbours = contacts.to_ragged_map("neighbours", &people, EdgeRules::undirected())?;
//! assert_eq!((0..1000).map(|p| neighbours.degree(p)).sum::<usize>(), 6000);
//!
//! let e = generate::barabasi_albert(10, 10, 1).unwrap_err();
//! assert_eq!(
//!     e.to_string(),
//!     "invalid runtime option `barabasi_albert(m)`: m is 10; expected 1 <= m < n = 10"
//! );
//! # Ok::<(), op2_core::Error>(())
//! ```

use std::collections::HashSet;

use op2_core::{Error, Philox, RaggedMap, Result};

use crate::EdgeList;

/// The most nodes a generated graph may have: the largest op2 Set (element
/// indices are 32-bit), so that [`EdgeList::node_set`] can hold them.
pub const MAX_NODES: usize = i32::MAX as usize;

/// The most edges a generated graph may have: half of
/// [`RaggedMap::MAX_TARGETS`], so that the neighbour map listing every
/// undirected edge in both directions fits.
pub const MAX_EDGES: usize = RaggedMap::MAX_TARGETS / 2;

/// The `w` by `h` grid, each node joined to its 4 neighbours (left, right,
/// up, down); not periodic, so border nodes have fewer.
///
/// The node at column `x` (`0..w`) and row `y` (`0..h`) is `y * w + x`.
/// Edges go row by row, node by node, each node listing its edge to the
/// right `(i, i + 1)` and then its edge down `(i, i + w)` where they exist:
/// `(w - 1) * h + w * (h - 1)` edges.
///
/// # Errors
/// [`Error::InvalidOption`] for `w` or `h` outside `1..`, or a grid of more
/// than [`MAX_NODES`] nodes or [`MAX_EDGES`] edges.
pub fn grid(w: usize, h: usize) -> Result<EdgeList> {
    check_grid(w, h)?;
    let mut edges = Vec::with_capacity(grid_edges(w, h) as usize);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as u64;
            if x + 1 < w {
                edges.push((i, i + 1));
            }
            if y + 1 < h {
                edges.push((i, i + w as u64));
            }
        }
    }
    Ok(undirected(edges, w * h))
}

/// The complete graph on `n` nodes: every pair joined once, listed as
/// `(i, j)` with `i < j` in lexicographic order, `n * (n - 1) / 2` edges.
///
/// # Errors
/// [`Error::InvalidOption`] for `n` outside `1..`, or more than
/// [`MAX_EDGES`] edges (`n` above 46 341).
pub fn complete(n: usize) -> Result<EdgeList> {
    check_complete(n)?;
    let mut edges = Vec::with_capacity(pairs(n as u128) as usize);
    for i in 0..n as u64 {
        for j in i + 1..n as u64 {
            edges.push((i, j));
        }
    }
    Ok(undirected(edges, n))
}

/// A scale-free graph by preferential attachment (Barabási and Albert): `n`
/// nodes, each new one joined to `m` existing ones.
///
/// The seed graph is the complete graph on nodes `0..=m`, its edges listed as
/// by [`complete`]. Then each node `v` from `m + 1` to `n - 1` in turn draws
/// `m` distinct targets from the nodes before it, each with probability
/// proportional to its degree at that moment (the repeated-nodes list: every
/// node appears once per edge end, and a uniform entry of the list is drawn;
/// a draw that gives a node `v` already has is repeated). The edges `(v, t)`
/// follow the seed graph's, in the order `v` drew its targets `t`.
///
/// The graph has exactly `m * (m + 1) / 2 + (n - m - 1) * m` edges, every
/// node has degree at least `m`, and there are no self loops or multi-edges.
/// Node `v` draws from `Philox::new(seed, v, 0)`.
///
/// # Errors
/// [`Error::InvalidOption`] for `n` below 2, `m` outside `1 <= m < n`, or more than
/// [`MAX_NODES`] nodes or [`MAX_EDGES`] edges.
pub fn barabasi_albert(n: usize, m: usize, seed: u64) -> Result<EdgeList> {
    check_barabasi_albert(n, m)?;
    let total = barabasi_albert_edges(n, m) as usize;
    let mut edges = Vec::with_capacity(total);
    // Every edge end: node ids repeated by degree. At most 2 * MAX_EDGES
    // entries, so a `u32` count of them and `u32` node ids suffice.
    let mut ends: Vec<u32> = Vec::with_capacity(2 * total);
    for a in 0..=m as u32 {
        for b in a + 1..=m as u32 {
            edges.push((u64::from(a), u64::from(b)));
            ends.extend([a, b]);
        }
    }
    // `drawn_by[t] == v` when `v` has already drawn `t`.
    let mut drawn_by = vec![u32::MAX; n];
    let mut targets = Vec::with_capacity(m);
    for v in m as u32 + 1..n as u32 {
        let mut rng = Philox::new(seed, u64::from(v), 0);
        let listed = ends.len() as u32;
        targets.clear();
        while targets.len() < m {
            let t = ends[rng.below(listed) as usize];
            if drawn_by[t as usize] != v {
                drawn_by[t as usize] = v;
                targets.push(t);
            }
        }
        for &t in &targets {
            edges.push((u64::from(v), u64::from(t)));
            ends.extend([t, v]);
        }
    }
    Ok(undirected(edges, n))
}

/// A small-world graph (Watts and Strogatz): a ring lattice of `n` nodes,
/// each joined to the `k / 2` nearest on either side, whose edges are then
/// rewired with probability `beta`.
///
/// The lattice edges are `(u, (u + j) % n)` for `j` in `1..=k/2` and, for
/// each `j`, `u` in `0..n`, listed in that order (all the distance-1 edges,
/// then the distance-2 ones, ...). Rewiring visits them in the same order:
/// edge `(u, v)` is rewired with probability `beta`, and then its far end
/// `v` is replaced by a node `w` drawn uniformly from `0..n`, drawn again
/// while `w` is `u` or already joined to `u` (so `v` itself is never kept).
/// When `u` is already joined to every other node there is no such `w`: the
/// edge is then kept as it is. A rewired edge stays at its place in the list,
/// as `(u, w)`.
///
/// The graph always has `n * k / 2` edges, no self loops and no
/// multi-edges; `beta = 0` gives the ring lattice, and `beta = 1` rewires
/// every edge that can be. Edge `(u, j)` draws from
/// `Philox::new(seed, u, j)`.
///
/// # Errors
/// [`Error::InvalidOption`] for `n` below 1, `k` odd or outside `0 <= k < n`, `beta`
/// outside `[0, 1]` (NaN included), or more than [`MAX_NODES`] nodes or
/// [`MAX_EDGES`] edges.
pub fn watts_strogatz(n: usize, k: usize, beta: f64, seed: u64) -> Result<EdgeList> {
    check_watts_strogatz(n, k, beta)?;
    let half = k / 2;
    let mut edges = Vec::with_capacity(n * half);
    for j in 1..=half {
        for u in 0..n {
            edges.push((u as u64, ((u + j) % n) as u64));
        }
    }
    if beta == 0.0 {
        return Ok(undirected(edges, n));
    }
    let key = |a: u64, b: u64| if a < b { (a << 32) | b } else { (b << 32) | a };
    let mut present: HashSet<u64> = edges.iter().map(|&(a, b)| key(a, b)).collect();
    // Every lattice node has degree k; a rewiring moves one edge end from v to w.
    let mut degree = vec![k as u32; n];
    let nodes = n as u32;
    for j in 1..=half {
        for u in 0..n {
            let mut rng = Philox::new(seed, u as u64, j as u32);
            if !rng.bernoulli(beta) || degree[u] as usize == n - 1 {
                continue;
            }
            let place = (j - 1) * n + u;
            let (_, v) = edges[place];
            let w = loop {
                let w = u64::from(rng.below(nodes));
                if w != u as u64 && !present.contains(&key(u as u64, w)) {
                    break w;
                }
            };
            present.remove(&key(u as u64, v));
            present.insert(key(u as u64, w));
            degree[v as usize] -= 1;
            degree[w as usize] += 1;
            edges[place] = (u as u64, w);
        }
    }
    Ok(undirected(edges, n))
}

/// Undirected `edges` over the nodes `0..n`.
fn undirected(edges: Vec<(u64, u64)>, n: usize) -> EdgeList {
    EdgeList::over_range(edges, 0..n as u64, true)
}

/// An [`Error::InvalidOption`] for `option`.
fn invalid(option: &'static str, reason: String) -> Error {
    Error::InvalidOption { option, reason }
}

/// `n * (n - 1) / 2`.
fn pairs(n: u128) -> u128 {
    n * n.saturating_sub(1) / 2
}

fn grid_edges(w: usize, h: usize) -> u128 {
    let (w, h) = (w as u128, h as u128);
    (w - 1) * h + w * (h - 1)
}

fn barabasi_albert_edges(n: usize, m: usize) -> u128 {
    let (n, m) = (n as u128, m as u128);
    pairs(m + 1) + (n - m - 1) * m
}

/// At most [`MAX_NODES`] nodes and [`MAX_EDGES`] edges, for `option`.
/// (`edges` is only computed once `nodes` is known to be small enough for it
/// not to overflow).
fn check_size(option: &'static str, what: String, nodes: u128, edges: impl FnOnce() -> u128) -> Result<()> {
    if nodes > MAX_NODES as u128 {
        return Err(invalid(
            option,
            format!("{what} has {nodes} nodes; expected at most {MAX_NODES}"),
        ));
    }
    let edges = edges();
    if edges > MAX_EDGES as u128 {
        return Err(invalid(
            option,
            format!("{what} has {edges} edges; expected at most {MAX_EDGES}"),
        ));
    }
    Ok(())
}

/// The checks of [`grid`].
pub(crate) fn check_grid(w: usize, h: usize) -> Result<()> {
    if w == 0 {
        return Err(invalid("grid(w)", "w is 0; expected at least 1".to_string()));
    }
    if h == 0 {
        return Err(invalid("grid(h)", "h is 0; expected at least 1".to_string()));
    }
    let nodes = w as u128 * h as u128;
    check_size("grid(w, h)", format!("the {w}x{h} grid"), nodes, || grid_edges(w, h))
}

/// The checks of [`complete`].
pub(crate) fn check_complete(n: usize) -> Result<()> {
    if n == 0 {
        return Err(invalid("complete(n)", "n is 0; expected at least 1".to_string()));
    }
    let what = format!("the complete graph on {n} nodes");
    check_size("complete(n)", what, n as u128, || pairs(n as u128))
}

/// The checks of [`barabasi_albert`].
pub(crate) fn check_barabasi_albert(n: usize, m: usize) -> Result<()> {
    if n < 2 {
        return Err(invalid("barabasi_albert(n)", format!("n is {n}; expected at least 2")));
    }
    if m == 0 || m >= n {
        return Err(invalid(
            "barabasi_albert(m)",
            format!("m is {m}; expected 1 <= m < n = {n}"),
        ));
    }
    let what = format!("a Barabási-Albert graph with n = {n}, m = {m}");
    check_size("barabasi_albert(n, m)", what, n as u128, || barabasi_albert_edges(n, m))
}

/// The checks of [`watts_strogatz`].
pub(crate) fn check_watts_strogatz(n: usize, k: usize, beta: f64) -> Result<()> {
    if n == 0 {
        return Err(invalid("watts_strogatz(n)", "n is 0; expected at least 1".to_string()));
    }
    if k % 2 != 0 || k >= n {
        return Err(invalid(
            "watts_strogatz(k)",
            format!("k is {k}; expected an even k with 0 <= k < n = {n}"),
        ));
    }
    if !(0.0..=1.0).contains(&beta) {
        return Err(invalid(
            "watts_strogatz(beta)",
            format!("beta is {beta}; expected 0 <= beta <= 1"),
        ));
    }
    let what = format!("a Watts-Strogatz graph with n = {n}, k = {k}");
    check_size("watts_strogatz(n, k)", what, n as u128, || n as u128 * (k / 2) as u128)
}
