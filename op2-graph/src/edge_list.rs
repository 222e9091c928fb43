//! The edges of a graph as a reader found them, and its nodes.

use std::collections::{HashMap, HashSet};
use std::iter::FusedIterator;
use std::ops::Range;
use std::slice;

use op2_core::{Duplicates, EdgeRules, Error, RaggedMap, Result, SelfLoops, Set};

use crate::generate::MAX_NODES as MAX_SET_SIZE;

/// Directed edges `(source, target)` between node ids, in the order read, and
/// the graph's nodes in the order they are to be numbered.
///
/// Edges are kept as given: duplicates and self-loops stay, and nothing is
/// renumbered. Which ids are nodes depends on where the list came from:
///
/// - [`EdgeList::new`] and SNAP-style files ([`crate::read_edge_list`]): the
///   distinct ids that occur in the edges, in first-seen order (each edge's
///   source before its target). A node without edges cannot be written in
///   such a file, so there is none.
/// - Matrix Market files ([`crate::read_matrix_market`]): every id from 1 to
///   the matrix's size, in increasing order, because the size line declares
///   them; nodes without entries are part of the graph.
///
/// A symmetric Matrix Market file lists each undirected edge once, as its
/// entry in the lower triangle, and the generators of [`crate::generate`]
/// list each of their undirected edges once; such a list says so through
/// [`EdgeList::is_symmetric`], and stands for `(target, source)` as well as
/// `(source, target)` for every listed edge that is not a self-loop
/// ([`EdgeList::to_ragged_map`] adds them).
///
/// [`EdgeList::node_set`] and [`EdgeList::to_ragged_map`] turn a list into
/// op2 carriers: the nodes as a Set (node ids as its global ids) and the
/// edges as a [`RaggedMap`] on it.
#[derive(Clone, Debug)]
pub struct EdgeList {
    edges: Vec<(u64, u64)>,
    nodes: NodeIds,
    symmetric: bool,
}

/// The nodes, listed or (for a declared size) a range that is never
/// materialised: a size line may declare far more nodes than it has entries.
#[derive(Clone, Debug)]
enum NodeIds {
    Listed(Vec<u64>),
    Range(Range<u64>),
}

impl EdgeList {
    /// The directed `edges` as given; the nodes are the distinct ids in them
    /// in first-seen order, and the list is not symmetric.
    pub fn new(edges: Vec<(u64, u64)>) -> EdgeList {
        let mut seen = HashSet::new();
        let mut nodes = Vec::new();
        for &(source, target) in &edges {
            for id in [source, target] {
                if seen.insert(id) {
                    nodes.push(id);
                }
            }
        }
        EdgeList {
            edges,
            nodes: NodeIds::Listed(nodes),
            symmetric: false,
        }
    }

    /// `edges` over the nodes `nodes` (whose length the caller has checked
    /// fits `usize`), each edge undirected when `symmetric`.
    pub(crate) fn over_range(edges: Vec<(u64, u64)>, nodes: Range<u64>, symmetric: bool) -> EdgeList {
        EdgeList {
            edges,
            nodes: NodeIds::Range(nodes),
            symmetric,
        }
    }

    /// The edges `(source, target)`, in the order read.
    pub fn edges(&self) -> &[(u64, u64)] {
        &self.edges
    }

    /// The node ids, in the order they are to be numbered (see [`EdgeList`]).
    pub fn nodes(&self) -> Nodes<'_> {
        Nodes(match &self.nodes {
            NodeIds::Listed(ids) => NodesInner::Listed(ids.iter()),
            NodeIds::Range(range) => NodesInner::Range(range.clone()),
        })
    }

    /// How many nodes [`EdgeList::nodes`] yields.
    pub fn node_count(&self) -> usize {
        self.nodes().len()
    }

    /// Whether each edge stands for an undirected edge, listed once (a
    /// symmetric Matrix Market file, a generated graph).
    pub fn is_symmetric(&self) -> bool {
        self.symmetric
    }

    /// The nodes as a Set named `name`: element `i` is the `i`-th node of
    /// [`EdgeList::nodes`], and its global id is the node's id, so that
    /// [`Set::index_of`] finds a node's element. When the ids are `0..n` in
    /// order (as generated graphs have them) the Set is a plain one of `n`
    /// elements, whose global ids are its indices, without a table of ids.
    ///
    /// # Errors
    /// [`Error::SetTooLarge`] for more nodes than a Set holds (`i32::MAX`).
    pub fn node_set(&self, name: impl Into<String>) -> Result<Set> {
        let name = name.into();
        let count = self.node_count();
        if count > MAX_SET_SIZE {
            return Err(Error::SetTooLarge {
                set: name,
                size: count,
                max: MAX_SET_SIZE,
                hint: " (graph nodes are indexed with 32-bit integers)",
            });
        }
        let in_order = match &self.nodes {
            NodeIds::Range(range) => range.start == 0,
            NodeIds::Listed(ids) => ids.iter().zip(0..).all(|(&id, i)| id == i),
        };
        if in_order {
            Set::new(name, count)
        } else {
            Set::with_global_ids(name, self.nodes().collect())
        }
    }

    /// The edges as a neighbour relation on `nodes` (usually
    /// [`EdgeList::node_set`]): each node id is mapped to its element through
    /// the set's global ids ([`Set::index_of`]), then the edges are read under
    /// `rules` as by [`RaggedMap::from_edges`] (each node's neighbours in the
    /// order of the edges that give them).
    ///
    /// A symmetric list ([`EdgeList::is_symmetric`]) stands for both
    /// directions of every edge, so its edges are always read as undirected,
    /// whatever `rules.undirected` says; other lists are read as `rules` says
    /// (undirected: `(a, b)` also gives `(b, a)`).
    ///
    /// # Errors
    /// [`Error::InvalidRaggedMap`] naming the map and
    /// - the first edge with a node id that is not in `nodes`, naming the id;
    /// - under [`SelfLoops::Reject`], the first self loop, by node id;
    /// - under [`Duplicates::Reject`], the first edge that repeats an earlier
    ///   one (in either direction when read as undirected), by node ids.
    pub fn to_ragged_map(&self, name: impl Into<String>, nodes: &Set, rules: EdgeRules) -> Result<RaggedMap> {
        let name = name.into();
        let invalid = |reason: String| Error::InvalidRaggedMap {
            map: name.clone(),
            reason,
        };
        let rules = EdgeRules {
            undirected: rules.undirected || self.symmetric,
            ..rules
        };
        let mut edges = Vec::with_capacity(self.edges.len());
        for (k, &(a, b)) in self.edges.iter().enumerate() {
            let index = |id: u64| {
                nodes.index_of(id).ok_or_else(|| {
                    invalid(format!(
                        "edge {k} ({a}, {b}): node {id} is not an element of set `{}`",
                        nodes.name()
                    ))
                })
            };
            edges.push((index(a)?, index(b)?));
        }
        // The rules' rejections, named by node id rather than element index
        // (`from_edges` would name the elements).
        if rules.self_loops == SelfLoops::Reject {
            if let Some(k) = self.edges.iter().position(|&(a, b)| a == b) {
                return Err(invalid(format!("edge {k} is a self loop at node {}", self.edges[k].0)));
            }
        }
        if rules.duplicates == Duplicates::Reject {
            let mut first = HashMap::with_capacity(self.edges.len());
            for (k, &(a, b)) in self.edges.iter().enumerate() {
                if a == b && rules.self_loops == SelfLoops::Drop {
                    continue;
                }
                let key = if rules.undirected { (a.min(b), a.max(b)) } else { (a, b) };
                if let Some(j) = first.insert(key, k) {
                    let (c, d) = self.edges[j];
                    return Err(invalid(format!(
                        "edges {j} ({c}, {d}) and {k} ({a}, {b}) both join node {a} to node {b}"
                    )));
                }
            }
        }
        RaggedMap::from_edges(name, nodes, nodes, &edges, rules)
    }
}

/// Equal when the edges, the nodes in order and the symmetry agree, however
/// the nodes are stored.
impl PartialEq for EdgeList {
    fn eq(&self, other: &EdgeList) -> bool {
        self.edges == other.edges && self.symmetric == other.symmetric && self.nodes().eq(other.nodes())
    }
}

impl Eq for EdgeList {}

/// The node ids of an [`EdgeList`], from [`EdgeList::nodes`].
#[derive(Clone, Debug)]
pub struct Nodes<'a>(NodesInner<'a>);

#[derive(Clone, Debug)]
enum NodesInner<'a> {
    Listed(slice::Iter<'a, u64>),
    Range(Range<u64>),
}

impl Iterator for Nodes<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        match &mut self.0 {
            NodesInner::Listed(ids) => ids.next().copied(),
            NodesInner::Range(range) => range.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            NodesInner::Listed(ids) => ids.size_hint(),
            NodesInner::Range(range) => range.size_hint(),
        }
    }
}

// Exact: a range's length was checked to fit `usize` when it was read.
impl ExactSizeIterator for Nodes<'_> {}

impl FusedIterator for Nodes<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_distinct_and_in_first_seen_order() {
        let list = EdgeList::new(vec![(30, 10), (10, 20), (20, 30), (40, 40), (10, 20)]);
        assert_eq!(list.nodes().collect::<Vec<_>>(), [30, 10, 20, 40]);
        assert_eq!(list.node_count(), 4);
        assert_eq!(list.edges().len(), 5, "duplicates and self-loops stay");
        assert!(!list.is_symmetric());
    }

    #[test]
    fn an_empty_list_has_no_nodes() {
        let list = EdgeList::new(Vec::new());
        assert_eq!(list.node_count(), 0);
        assert!(list.edges().is_empty());
    }

    #[test]
    fn declared_nodes_include_those_without_edges() {
        let list = EdgeList::over_range(vec![(3, 1)], 1..5, false);
        assert_eq!(list.nodes().collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(list.nodes().len(), 4);
        assert_ne!(list, EdgeList::new(vec![(3, 1)]));
    }

    #[test]
    fn equality_ignores_how_nodes_are_stored() {
        let listed = EdgeList::new(vec![(1, 2), (2, 3)]);
        let ranged = EdgeList::over_range(vec![(1, 2), (2, 3)], 1..4, false);
        assert_eq!(listed, ranged);
        let symmetric = EdgeList::over_range(vec![(1, 2), (2, 3)], 1..4, true);
        assert_ne!(listed, symmetric);
    }
}
