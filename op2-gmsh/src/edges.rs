//! The edges of a 2-D mesh, derived from its cells: interior edges with
//! their two nodes and two cells, boundary edges with their two nodes, their
//! cell and their physical group, oriented as OP2's Airfoil orients them
//! (see [`Edges`]).

use std::collections::HashMap;

use crate::GmshMesh;

/// The edges of a mesh. An edge `(n1, n2)` of cells `(c1, c2)` is oriented
/// as OP2's Airfoil orients them: `c1` runs through it from `n2` to `n1`
/// (counter-clockwise), `c2` from `n1` to `n2`, so that the normal
/// `(y1 - y2, x2 - x1)` points out of `c1` into `c2`. A boundary edge is
/// oriented the same way for its one cell, its normal pointing out of the
/// mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Edges {
    /// Interior edges: their two nodes.
    pub nodes: Vec<[u32; 2]>,
    /// Interior edges: their two cells.
    pub cells: Vec<[u32; 2]>,
    /// Boundary edges: their two nodes.
    pub boundary_nodes: Vec<[u32; 2]>,
    /// Boundary edges: their cell.
    pub boundary_cell: Vec<u32>,
    /// Boundary edges: the physical group of the line on them (0 where no
    /// line of the file lies on the edge).
    pub boundary_group: Vec<i32>,
}

/// Why a mesh has no edges in this sense.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdgeError {
    /// A side shared by more than two cells (not a 2-D manifold).
    SharedByMore {
        /// The side's nodes.
        nodes: [u32; 2],
        /// The third cell found on it.
        cell: usize,
    },
    /// Two cells run through a side in the same direction (one of them is
    /// folded over the other).
    Folded {
        /// The side's nodes.
        nodes: [u32; 2],
        /// The second cell.
        cell: usize,
    },
    /// The mesh does not hold together ([`GmshMesh::problem`]).
    NotAMesh {
        /// What is wrong.
        reason: String,
    },
}

impl std::fmt::Display for EdgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EdgeError::SharedByMore { nodes, cell } => {
                write!(f, "the side of nodes {} and {} has a third cell, {cell}", nodes[0], nodes[1])
            }
            EdgeError::Folded { nodes, cell } => write!(
                f,
                "cell {cell} runs through the side of nodes {} and {} in the same direction as another cell (folded or inverted cells)",
                nodes[0], nodes[1]
            ),
            EdgeError::NotAMesh { reason } => write!(f, "not a mesh: {reason}"),
        }
    }
}

impl Edges {
    /// Derives the edges of `mesh`, in the order cells and their sides
    /// first meet them; each boundary edge takes the group of the file's
    /// line on it.
    pub fn of(mesh: &GmshMesh) -> Result<Edges, EdgeError> {
        if let Some(reason) = mesh.problem() {
            return Err(EdgeError::NotAMesh { reason });
        }
        // Side (low, high) -> index into `sides`.
        let mut found: HashMap<(u32, u32), usize> = HashMap::new();
        // Per side: (n1, n2) as Airfoil orients it for its first cell, that
        // cell, and the second cell once seen.
        let mut sides: Vec<([u32; 2], u32, Option<u32>)> = Vec::new();
        for c in 0..mesh.ncell() {
            let cell = mesh.cell(c);
            for k in 0..cell.len() {
                let (a, b) = (cell[k], cell[(k + 1) % cell.len()]);
                let key = (a.min(b), a.max(b));
                match found.get(&key) {
                    None => {
                        found.insert(key, sides.len());
                        sides.push(([b, a], c as u32, None));
                    }
                    Some(&s) => {
                        let side = &mut sides[s];
                        if side.2.is_some() {
                            return Err(EdgeError::SharedByMore { nodes: [a, b], cell: c });
                        }
                        // The first cell ran b -> a... as (n1, n2) = (b, a) it
                        // ran n2 -> n1; this one must run n1 -> n2.
                        if [a, b] != side.0 {
                            return Err(EdgeError::Folded { nodes: [a, b], cell: c });
                        }
                        side.2 = Some(c as u32);
                    }
                }
            }
        }
        let groups: HashMap<(u32, u32), i32> = (mesh.lines.iter().zip(&mesh.line_groups))
            .map(|(l, &g)| ((l[0].min(l[1]), l[0].max(l[1])), g))
            .collect();
        let mut e = Edges::default();
        for (nodes, c1, c2) in sides {
            match c2 {
                Some(c2) => {
                    e.nodes.push(nodes);
                    e.cells.push([c1, c2]);
                }
                None => {
                    let key = (nodes[0].min(nodes[1]), nodes[0].max(nodes[1]));
                    e.boundary_nodes.push(nodes);
                    e.boundary_cell.push(c1);
                    e.boundary_group.push(groups.get(&key).copied().unwrap_or(0));
                }
            }
        }
        Ok(e)
    }
}
