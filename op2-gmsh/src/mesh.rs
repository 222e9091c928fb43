//! A 2-D Gmsh mesh as read: nodes, cells (triangles and quadrilaterals),
//! boundary lines and the names of the physical groups.

/// A 2-D mesh of triangles and quadrilaterals with its boundary lines, in
/// the file's order, nodes numbered from 0 in the order of `$Nodes`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GmshMesh {
    /// Node coordinates `x, y, z` (a 2-D mesh has z = 0).
    pub coords: Vec<[f64; 3]>,
    /// Each node's tag in the file.
    pub node_tags: Vec<u64>,
    /// Where each cell's nodes start in `cell_nodes`, with one more entry at
    /// the end: cell `c` is `cell_nodes[cell_start[c]..cell_start[c + 1]]`.
    pub cell_start: Vec<usize>,
    /// The cells' nodes, 3 for a triangle and 4 for a quadrilateral,
    /// counter-clockwise (a clockwise cell in the file is reversed).
    pub cell_nodes: Vec<u32>,
    /// Boundary lines: their two nodes.
    pub lines: Vec<[u32; 2]>,
    /// Each line's physical group tag (0 for a line in no group).
    pub line_groups: Vec<i32>,
    /// Physical groups: dimension, tag, name.
    pub physical_names: Vec<(i32, i32, String)>,
}

impl GmshMesh {
    /// Number of cells.
    pub fn ncell(&self) -> usize {
        self.cell_start.len().saturating_sub(1)
    }

    /// Nodes of cell `c`.
    pub fn cell(&self, c: usize) -> &[u32] {
        &self.cell_nodes[self.cell_start[c]..self.cell_start[c + 1]]
    }

    /// The tag of the physical group of dimension `dim` named `name`.
    pub fn group(&self, dim: i32, name: &str) -> Option<i32> {
        self.physical_names
            .iter()
            .find(|(d, _, n)| *d == dim && n == name)
            .map(|g| g.1)
    }

    /// Twice the signed area of cell `c` in the x-y plane (positive:
    /// counter-clockwise).
    pub fn twice_area(&self, c: usize) -> f64 {
        twice_area(&self.coords, self.cell(c))
    }
}

/// Twice the signed area of the polygon `nodes` (shoelace formula).
pub(crate) fn twice_area(coords: &[[f64; 3]], nodes: &[u32]) -> f64 {
    (0..nodes.len())
        .map(|k| {
            let a = coords[nodes[k] as usize];
            let b = coords[nodes[(k + 1) % nodes.len()] as usize];
            a[0] * b[1] - b[0] * a[1]
        })
        .sum()
}
