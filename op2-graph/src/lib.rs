//! Graphs for op2: the edges of a graph read from a file or generated, as an
//! [`EdgeList`], the input from which neighbour maps are built
//! ([`EdgeList::node_set`], [`EdgeList::to_ragged_map`]).
//!
//! Generated graphs ([`generate`]): grids, complete graphs, Barabási-Albert
//! and Watts-Strogatz graphs, deterministic for a seed; [`GraphSpec`] names
//! any graph, generated or read, in a short text for command lines
//! (`grid:64x64`, `ba:10000,3`, `mtx:graph.mtx`).
//!
//! Two file formats:
//!
//! - SNAP-style edge lists ([`read_edge_list`], [`EdgeList::parse_snap`]): one
//!   `source target` pair of node ids per line, `#` and `%` comment lines.
//! - Matrix Market coordinate files ([`read_matrix_market`],
//!   [`EdgeList::parse_matrix_market`]): each entry `(row, column)` of a square
//!   sparse matrix is an edge from node `row` to node `column`.
//!
//! Every reader trusts nothing in its input: a malformed file is an
//! [`op2_core::Error::InputFile`] naming the file, the line (from 1; 0 when
//! the file cannot be opened) and what was expected there, never a panic. The
//! `parse_*` functions read text already in memory and name it by an origin
//! given by the caller, so that their messages look like the readers'.
//!
//! ```
//! use op2_graph::EdgeList;
//!
//! let text = "# a triangle and a self-loop\n1 2\n2 3\n3 1 0.5\n7 7\n";
//! let graph = EdgeList::parse_snap(text, "triangle.txt")?;
//! assert_eq!(graph.edges(), [(1, 2), (2, 3), (3, 1), (7, 7)]);
//! assert_eq!(graph.nodes().collect::<Vec<_>>(), [1, 2, 3, 7]);
//!
//! let e = EdgeList::parse_snap("1 2\n3\n", "bad.txt").unwrap_err();
//! assert_eq!(e.to_string(), "bad.txt:2: expected two node ids `source target`, found `3`");
//! # Ok::<(), op2_core::Error>(())
//! ```
#![deny(missing_docs)]

mod edge_list;
pub mod generate;
mod lines;
mod matrix_market;
mod snap;
mod spec;

pub use edge_list::{EdgeList, Nodes};
pub use matrix_market::read_matrix_market;
pub use snap::read_edge_list;
pub use spec::GraphSpec;
