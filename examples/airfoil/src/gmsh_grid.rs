//! Airfoil's mesh as a Gmsh `.msh` file: quadrilateral cells, and boundary
//! lines in the physical groups named `wall` (bound 1) and `farfield`
//! (bound 2). Reading derives the edges from the cells (`op2::gmsh::Edges`),
//! oriented as Airfoil's kernels expect, so they may come in another order
//! than a `new_grid.dat` of the same mesh lists them.

use std::path::Path;

use op2::gmsh::{read_msh, write_msh, Edges, GmshMesh};

use crate::{AirfoilError, Mesh};

/// The physical groups and the `bound` each gives.
const GROUPS: [(&str, i32); 2] = [("wall", 1), ("farfield", 2)];

fn bad(path: &Path, object: &str, reason: String) -> AirfoilError {
    op2::Error::mesh_file(path, object, reason).into()
}

/// Reads an Airfoil mesh from a Gmsh file: every cell a quadrilateral,
/// every boundary edge on a line of group `wall` or `farfield`.
pub fn read(path: impl AsRef<Path>) -> Result<Mesh, AirfoilError> {
    let path = path.as_ref();
    let m = read_msh(path)?;
    if let Some(c) = (0..m.ncell()).find(|&c| m.cell(c).len() != 4) {
        return Err(bad(
            path,
            "$Elements",
            format!("Airfoil needs quadrilaterals; cell {c} is a triangle"),
        ));
    }
    let edges = Edges::of(&m).map_err(|e| bad(path, "$Elements", e.to_string()))?;
    let mut bound = Vec::with_capacity(edges.boundary_group.len());
    for (k, &g) in edges.boundary_group.iter().enumerate() {
        let named = GROUPS.iter().find(|(name, _)| m.group(1, name) == Some(g));
        match named {
            Some(&(_, b)) if g != 0 => bound.push(b),
            _ => {
                let [a, b] = edges.boundary_nodes[k];
                return Err(bad(
                    path,
                    "$PhysicalNames",
                    format!(
                        "boundary edge {k} (nodes {}, {}) lies on no line of a physical group named wall or farfield{}",
                        m.node_tags[a as usize],
                        m.node_tags[b as usize],
                        if g == 0 {
                            String::new()
                        } else {
                            format!(" (its group: {g})")
                        }
                    ),
                ));
            }
        }
    }
    let flat = |v: &[[u32; 2]]| v.iter().flat_map(|p| [p[0] as i32, p[1] as i32]).collect::<Vec<i32>>();
    Ok(Mesh {
        x: m.coords.iter().flat_map(|p| [p[0], p[1]]).collect(),
        cell: m.cell_nodes.iter().map(|&n| n as i32).collect(),
        edge: flat(&edges.nodes),
        ecell: flat(&edges.cells),
        bedge: flat(&edges.boundary_nodes),
        becell: edges.boundary_cell.iter().map(|&c| c as i32).collect(),
        bound,
    })
}

/// Writes `mesh` as a Gmsh file: its nodes, its quadrilaterals, and its
/// boundary edges as lines in the groups `wall` and `farfield` by `bound`.
///
/// Nodes at the same position become one. `new_grid.dat` keeps the C-grid's
/// wake cut as two rows of nodes, at the same places, joined by edges.
/// Those edges can only be derived again from cells that share nodes, as
/// Gmsh's own meshes (and its Coherence) make them. Every kernel sees the
/// same positions, so Airfoil computes the same flow.
pub fn write(path: impl AsRef<Path>, mesh: &Mesh) -> Result<(), AirfoilError> {
    // -0.0 and 0.0 are one position.
    let key = |n: usize| ((mesh.x[2 * n] + 0.0).to_bits(), (mesh.x[2 * n + 1] + 0.0).to_bits());
    let mut first = std::collections::HashMap::with_capacity(mesh.nnode());
    let mut coords = Vec::with_capacity(mesh.nnode());
    let merged: Vec<u32> = (0..mesh.nnode())
        .map(|n| {
            *first.entry(key(n)).or_insert_with(|| {
                coords.push([mesh.x[2 * n], mesh.x[2 * n + 1], 0.0]);
                coords.len() as u32 - 1
            })
        })
        .collect();
    let node = |n: i32| merged[n as usize];
    let m = GmshMesh {
        node_tags: (1..=coords.len() as u64).collect(),
        coords,
        cell_start: (0..=mesh.ncell()).map(|c| 4 * c).collect(),
        cell_nodes: mesh.cell.iter().map(|&n| node(n)).collect(),
        lines: mesh.bedge.chunks_exact(2).map(|e| [node(e[0]), node(e[1])]).collect(),
        line_groups: mesh.bound.clone(),
        physical_names: vec![(1, 1, "wall".into()), (1, 2, "farfield".into()), (2, 3, "fluid".into())],
    };
    Ok(write_msh(path, &m)?)
}
