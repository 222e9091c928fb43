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

    /// The mesh renumbered for locality ([`op2::Renumbering`] from the
    /// cells: reverse Cuthill–McKee on cells joined by the edges between
    /// them, as `res_calc` reads them, then nodes, edges and boundary edges
    /// after them), and the cells' new order
    /// (`order[new] = old`) to compare its flow state with the original's.
    /// Errors where the tables do not fit the counts (a grid file that
    /// does not hold together).
    pub fn renumbered(&self) -> op2::Result<(Mesh, Vec<u32>)> {
        fn map(from: usize, to: usize, arity: usize, values: &[i32]) -> op2::MapDesc<'_> {
            op2::MapDesc {
                from,
                to,
                arity,
                values,
                offsets: None,
            }
        }
        // Sets: nodes, edges, boundary edges, cells.
        let mesh = op2::MeshDesc {
            set_sizes: vec![self.nnode(), self.nedge(), self.nbedge(), self.ncell()],
            maps: vec![
                map(3, 0, 4, &self.cell),
                map(1, 0, 2, &self.edge),
                map(1, 3, 2, &self.ecell),
                map(2, 0, 2, &self.bedge),
                map(2, 3, 1, &self.becell),
            ],
        };
        let r = op2::Renumbering::through(&mesh, 3, 2)?;
        let renumbered = Mesh {
            x: r.rows(0, &self.x, 2)?,
            cell: r.map_values(&mesh.maps[0])?,
            edge: r.map_values(&mesh.maps[1])?,
            ecell: r.map_values(&mesh.maps[2])?,
            bedge: r.map_values(&mesh.maps[3])?,
            becell: r.map_values(&mesh.maps[4])?,
            bound: r.rows(2, &self.bound, 1)?,
        };
        Ok((renumbered, r.order(3)?.to_vec()))
    }
}
