//! A Gmsh mesh as op2 carriers for an edge-based finite-volume solver.

use op2_core::{Dat, Map, Result, Set};

use crate::{Edges, GmshMesh};

/// The Sets, Maps and Dats of a mesh and its derived [`Edges`], named as
/// OP2's Airfoil names them.
pub struct Op2Mesh {
    /// Mesh nodes.
    pub nodes: Set,
    /// Cells (triangles and quadrilaterals).
    pub cells: Set,
    /// Interior edges.
    pub edges: Set,
    /// Boundary edges.
    pub bedges: Set,
    /// edges -> nodes (2).
    pub pedge: Map,
    /// edges -> cells (2).
    pub pecell: Map,
    /// bedges -> nodes (2).
    pub pbedge: Map,
    /// bedges -> cells (1).
    pub pbecell: Map,
    /// Node coordinates (x, y).
    pub x: Dat<f64>,
    /// Each boundary edge's physical group tag (0: in none).
    pub bound: Dat<i32>,
}

impl Op2Mesh {
    /// The carriers of `mesh` and its `edges` (from [`Edges::of`]).
    pub fn new(mesh: &GmshMesh, edges: &Edges) -> Result<Op2Mesh> {
        let nodes = Set::new("nodes", mesh.coords.len())?;
        let cells = Set::new("cells", mesh.ncell())?;
        let edge_set = Set::new("edges", edges.nodes.len())?;
        let bedges = Set::new("bedges", edges.boundary_nodes.len())?;
        let flat = |v: &[[u32; 2]]| v.iter().flat_map(|p| [p[0] as i32, p[1] as i32]).collect::<Vec<i32>>();
        Ok(Op2Mesh {
            pedge: Map::new("pedge", &edge_set, &nodes, 2, flat(&edges.nodes))?,
            pecell: Map::new("pecell", &edge_set, &cells, 2, flat(&edges.cells))?,
            pbedge: Map::new("pbedge", &bedges, &nodes, 2, flat(&edges.boundary_nodes))?,
            pbecell: Map::new(
                "pbecell",
                &bedges,
                &cells,
                1,
                edges.boundary_cell.iter().map(|&c| c as i32).collect(),
            )?,
            x: Dat::from_vec("x", &nodes, 2, mesh.coords.iter().flat_map(|p| [p[0], p[1]]).collect())?,
            bound: Dat::from_vec("bound", &bedges, 1, edges.boundary_group.clone())?,
            nodes,
            cells,
            edges: edge_set,
            bedges,
        })
    }

    /// cells -> nodes, `None` unless all cells of `mesh` have `arity` nodes
    /// (3: triangles, 4: quadrilaterals).
    pub fn cell_nodes(&self, mesh: &GmshMesh, arity: usize) -> Result<Option<Map>> {
        if (0..mesh.ncell()).any(|c| mesh.cell(c).len() != arity) {
            return Ok(None);
        }
        let values = mesh.cell_nodes.iter().map(|&n| n as i32).collect();
        Map::new("pcell", &self.cells, &self.nodes, arity, values).map(Some)
    }
}
