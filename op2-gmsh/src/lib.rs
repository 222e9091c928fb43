//! Gmsh meshes in and out: `.msh` format 4.1, ASCII and binary.
//!
//! - [`read_msh`] reads a 2-D mesh ([`GmshMesh`]). It takes the nodes, the
//!   triangles and quadrilaterals (made counter-clockwise), the lines with
//!   the physical group of their curve, and the groups' names.
//! - [`Edges::of`] derives what an edge-based finite-volume solver loops
//!   over. Interior edges come with their two nodes and two cells, boundary
//!   edges with their two nodes, their cell and the physical group of the
//!   line on them. Both are oriented as OP2's Airfoil orients its edges.
//! - [`Op2Mesh`] turns them into op2 Sets, Maps and Dats.
//! - [`write_msh`] writes a mesh back (ASCII 4.1).
//!
//! Malformed files are [`op2_core::Error::MeshFile`] errors naming the file,
//! the section and what was wrong. So is a version other than 4.1, an
//! element type other than points, lines, triangles and quadrangles, a node
//! tag that `$Nodes` lacks, or a cell with no area in the x-y plane. A count
//! larger than the rest of the file can hold is an error, not an
//! allocation.
#![deny(missing_docs)]

mod edges;
mod mesh;
mod op2_mesh;
mod reader;
mod writer;

pub use edges::{EdgeError, Edges};
pub use mesh::GmshMesh;
pub use op2_mesh::Op2Mesh;
pub use reader::read_msh;
pub use writer::write_msh;
