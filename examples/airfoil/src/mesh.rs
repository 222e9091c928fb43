//! The Airfoil mesh as plain arrays (0-based, element-major).

/// An Airfoil mesh: nodes, quadrilateral cells, interior edges and boundary edges.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// Node coordinates, 2 per node.
    pub x: Vec<f64>,
    /// Cell -> its 4 nodes, counter-clockwise.
    pub cell: Vec<i32>,
    /// Edge -> its 2 nodes.
    pub edge: Vec<i32>,
    /// Edge -> its 2 cells.
    pub ecell: Vec<i32>,
    /// Boundary edge -> its 2 nodes.
    pub bedge: Vec<i32>,
    /// Boundary edge -> its cell.
    pub becell: Vec<i32>,
    /// Boundary kind: 1 wall, 2 far field.
    pub bound: Vec<i32>,
}

impl Mesh {
    /// Number of nodes.
    pub fn nnode(&self) -> usize {
        self.x.len() / 2
    }
    /// Number of cells.
    pub fn ncell(&self) -> usize {
        self.cell.len() / 4
    }
    /// Number of interior edges.
    pub fn nedge(&self) -> usize {
        self.edge.len() / 2
    }
    /// Number of boundary edges.
    pub fn nbedge(&self) -> usize {
        self.bedge.len() / 2
    }
}
