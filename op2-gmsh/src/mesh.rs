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

    /// Why the mesh does not hold together, or `None` if it does: what
    /// [`crate::read_msh`] makes always does; a mesh built or changed by
    /// hand (the fields are public) may not. Every cell 3 or 4 distinct
    /// nodes in range, `cell_start` from 0 up to `cell_nodes`' end, a tag
    /// per node (or none), finite coordinates, a group per line, lines
    /// between nodes in range, and group names a file can quote.
    pub fn problem(&self) -> Option<String> {
        let n = self.coords.len();
        if !self.node_tags.is_empty() && self.node_tags.len() != n {
            return Some(format!("{} node tags for {n} nodes", self.node_tags.len()));
        }
        let mut tags = self.node_tags.clone();
        tags.sort_unstable();
        if let Some(w) = tags.windows(2).find(|w| w[0] == w[1]) {
            return Some(format!("node tag {} is given twice", w[0]));
        }
        if let Some(k) = self.coords.iter().position(|p| !p.iter().all(|v| v.is_finite())) {
            return Some(format!("node {k} is at {:?}, not a finite point", self.coords[k]));
        }
        let starts_ok = self.cell_start.first().is_none_or(|&s| s == 0)
            && self.cell_start.windows(2).all(|w| w[0] <= w[1])
            && self.cell_start.last().is_none_or(|&e| e == self.cell_nodes.len())
            && (!self.cell_start.is_empty() || self.cell_nodes.is_empty());
        if !starts_ok {
            return Some("cell_start does not run from 0 to the end of cell_nodes, ascending".to_string());
        }
        for c in 0..self.ncell() {
            let cell = self.cell(c);
            if !(3..=4).contains(&cell.len()) {
                return Some(format!("cell {c} has {} nodes; a cell has 3 or 4", cell.len()));
            }
            if let Some(&v) = cell.iter().find(|&&v| v as usize >= n) {
                return Some(format!("cell {c} names node {v}, and there are {n}"));
            }
            if (1..cell.len()).any(|k| cell[..k].contains(&cell[k])) {
                return Some(format!("cell {c} names a node twice"));
            }
        }
        if self.line_groups.len() != self.lines.len() {
            return Some(format!(
                "{} line groups for {} lines",
                self.line_groups.len(),
                self.lines.len()
            ));
        }
        if let Some(k) = self.lines.iter().position(|l| l.iter().any(|&v| v as usize >= n)) {
            return Some(format!("line {k} names node {:?}, and there are {n}", self.lines[k]));
        }
        if let Some((_, _, name)) = (self.physical_names.iter()).find(|(_, _, m)| m.contains(['"', '\n', '\r'])) {
            return Some(format!("group name {name:?} holds a quote or a line break"));
        }
        None
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
