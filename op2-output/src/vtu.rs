//! VTK XML UnstructuredGrid (`.vtu`): a mesh's cells, triangles or
//! quadrilaterals given by a Map to their nodes, at the nodes' coordinates,
//! with Dats of the cells as cell data and Dats of the nodes as point data.
//! Arrays in VTK's inline binary format, as in the `.vtp` files.

use std::path::Path;

use op2_core::{Error, Map, Result};

use crate::field::{by_id, check_fields, Field};
use crate::file::write_file;
use crate::xml::{
    binary_array, check_names, check_positions, field_array, file_open, int_array, p_data_arrays, p_points_and_pieces,
    points, GLOBAL_ID,
};

/// VTK's cell types by nodes per cell.
const TRIANGLE: u8 = 5;
const QUAD: u8 = 9;

/// Writes a mesh as a VTK XML UnstructuredGrid file (`.vtu`) for ParaView:
/// the cells of `cells`' source set that this process owns, in global-id
/// order, each a triangle (a map of arity 3) or a quadrilateral (arity 4)
/// through its nodes in the map's order; every node of the target set this
/// process holds (halo copies too: a cell's nodes may be there), in index
/// order, at `coordinates` (2 or 3 components; z = 0 in 2-D). Cell data:
/// `global_id` (the cells' global ids) and each Dat of `cell_fields`;
/// point data: `global_id` and each Dat of `point_fields`.
///
/// # Errors
/// [`Error::InvalidOption`] if the map has another arity, `coordinates`
/// are not on its target set or have neither 2 nor 3 components, or a
/// field lives on another set than its kind's, or two fields of a kind
/// (or one and `global_id`) share a name; [`Error::HostBorrow`] if a
/// Dat is mutably borrowed; [`Error::Io`] if the file cannot be written.
pub fn write_vtu(
    path: impl AsRef<Path>,
    cells: &Map,
    coordinates: &dyn Field,
    cell_fields: &[&dyn Field],
    point_fields: &[&dyn Field],
) -> Result<()> {
    let text = vtu_text(cells, coordinates, cell_fields, point_fields)?;
    write_file(path.as_ref(), text.as_bytes())
}

/// Writes the index of a mesh written in pieces, one `.vtu` per process
/// ([`write_vtu`] with the same Dats on each): a VTK XML
/// PUnstructuredGrid (`.pvtu`) that ParaView opens as one mesh. `pieces`
/// are the pieces' paths relative to the index's directory, in rank order.
///
/// # Errors
/// [`Error::InvalidOption`] if there is no piece or `coordinates` have
/// neither 2 nor 3 components (no value is read); [`Error::Io`] if the
/// file cannot be written.
pub fn write_pvtu(
    path: impl AsRef<Path>,
    pieces: &[String],
    coordinates: &dyn Field,
    cell_fields: &[&dyn Field],
    point_fields: &[&dyn Field],
) -> Result<()> {
    if pieces.is_empty() {
        return Err(Error::InvalidOption {
            option: "VTK pieces",
            reason: "a parallel VTK file lists at least one piece".into(),
        });
    }
    check_positions(coordinates)?;
    check_names(point_fields, "a VTK mesh's point data")?;
    check_names(cell_fields, "a VTK mesh's cell data")?;
    let mut out = String::new();
    file_open(&mut out, "PUnstructuredGrid");
    out.push_str("<PUnstructuredGrid GhostLevel=\"0\">\n<PPointData>\n");
    p_data_arrays(&mut out, point_fields);
    out.push_str("</PPointData>\n<PCellData>\n");
    p_data_arrays(&mut out, cell_fields);
    out.push_str("</PCellData>\n");
    p_points_and_pieces(&mut out, coordinates, pieces);
    out.push_str("</PUnstructuredGrid>\n</VTKFile>\n");
    write_file(path.as_ref(), out.as_bytes())
}

fn vtu_text(
    cells: &Map,
    coordinates: &dyn Field,
    cell_fields: &[&dyn Field],
    point_fields: &[&dyn Field],
) -> Result<String> {
    // A table made before its sets were permuted or grew no longer says
    // which nodes a cell has.
    cells.check_current()?;
    let (cell_set, node_set) = (cells.from_set(), cells.to_set());
    let arity = cells.arity();
    let kind = match arity {
        3 => TRIANGLE,
        4 => QUAD,
        a => {
            return Err(Error::InvalidOption {
                option: "VTK cells",
                reason: format!(
                    "map `{}` gives {a} nodes per cell; a VTK mesh takes triangles (3) or quadrilaterals (4)",
                    cells.name()
                ),
            })
        }
    };
    check_fields(node_set, &[coordinates], "a VTK mesh's coordinates")?;
    check_positions(coordinates)?;
    check_fields(cell_set, cell_fields, "a VTK mesh's cell data")?;
    check_fields(node_set, point_fields, "a VTK mesh's point data")?;
    check_names(point_fields, "a VTK mesh's point data")?;
    check_names(cell_fields, "a VTK mesh's cell data")?;
    let order = by_id(cell_set);
    let (ncells, npoints) = (order.len(), node_set.total_size());
    let nodes = cells.narrow_values("VTK output")?;
    let mut out = String::with_capacity(64 * (ncells + npoints) + 1024);
    file_open(&mut out, "UnstructuredGrid");
    out.push_str("<UnstructuredGrid>\n");
    out.push_str(&format!(
        "<Piece NumberOfPoints=\"{npoints}\" NumberOfCells=\"{ncells}\">\n"
    ));
    out.push_str("<PointData>\n");
    int_array(
        &mut out,
        GLOBAL_ID,
        (0..npoints).map(|e| node_set.global_id(e).unwrap_or(e as u64)),
    );
    for f in point_fields {
        field_array(&mut out, *f, 0..npoints)?;
    }
    out.push_str("</PointData>\n<CellData>\n");
    int_array(&mut out, GLOBAL_ID, order.iter().map(|&(id, _)| id));
    for f in cell_fields {
        field_array(&mut out, *f, order.iter().map(|&(_, e)| e))?;
    }
    out.push_str("</CellData>\n");
    points(&mut out, coordinates, 0..npoints)?;
    out.push_str("<Cells>\n");
    let corners = order
        .iter()
        .flat_map(|&(_, e)| nodes[e * arity..(e + 1) * arity].iter().map(|&n| n as u64));
    int_array(&mut out, "connectivity", corners);
    int_array(&mut out, "offsets", (1..=ncells).map(|k| (k * arity) as u64));
    binary_array(&mut out, "UInt8", "types", 1, &vec![kind; ncells]);
    out.push_str("</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use op2_core::{Dat, Set};
    use vtkio::model::{Attribute, CellType, DataSet, IOBuffer, VertexNumbers};

    /// A file read back with vtkio (an independent reader).
    struct ReadBack {
        points: Vec<f64>,
        connectivity: Vec<u64>,
        offsets: Vec<u64>,
        types: Vec<CellType>,
        point: Vec<(String, IOBuffer)>,
        cell: Vec<(String, IOBuffer)>,
    }

    fn read_back(path: &Path) -> ReadBack {
        let vtk = vtkio::Vtk::import(path).expect("vtkio reads the file");
        let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
            panic!("not an UnstructuredGrid")
        };
        let piece = pieces[0].load_piece_data(None).expect("an inline piece");
        let VertexNumbers::XML { connectivity, offsets } = piece.cells.cell_verts else {
            panic!("not XML cells")
        };
        let arrays = |attributes: Vec<Attribute>| -> Vec<(String, IOBuffer)> {
            attributes
                .into_iter()
                .map(|a| match a {
                    Attribute::DataArray(d) => (d.name, d.data),
                    other => panic!("unexpected attribute {other:?}"),
                })
                .collect()
        };
        ReadBack {
            points: piece.points.cast_into().expect("numeric points"),
            connectivity,
            offsets,
            types: piece.cells.types,
            point: arrays(piece.data.point),
            cell: arrays(piece.data.cell),
        }
    }

    fn temp_file(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("op2-output-{name}-{}.vtu", std::process::id()))
    }

    /// Two quadrilaterals side by side (cells stored with ids 7 and 3, so
    /// the file lists the second first), a node and a cell field.
    #[test]
    fn a_mesh_with_cell_and_point_data_reads_back_with_vtkio() {
        let nodes = Set::new("nodes", 6).unwrap();
        let cells = Set::with_global_ids("cells", vec![7, 3]).unwrap();
        let corners = Map::new("pcell", &cells, &nodes, 4, vec![0, 1, 4, 3, 1, 2, 5, 4]).unwrap();
        let xy = [0.0f64, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.5];
        let x = Dat::from_vec("x", &nodes, 2, xy.to_vec()).unwrap();
        let velocity = Dat::from_vec("velocity", &cells, 2, vec![0.1f64, 0.2, -3.5, 1e-300]).unwrap();
        let tag = Dat::from_vec("tag", &nodes, 1, vec![1i32, 2, 3, 4, 5, 6]).unwrap();
        let path = temp_file("quads");
        write_vtu(&path, &corners, &x, &[&velocity], &[&tag]).unwrap();
        let r = read_back(&path);
        let want: Vec<f64> = xy.chunks(2).flat_map(|p| [p[0], p[1], 0.0]).collect();
        assert_eq!(r.points, want);
        assert_eq!(r.connectivity, [1, 2, 5, 4, 0, 1, 4, 3]);
        assert_eq!(r.offsets, [4, 8]);
        assert_eq!(r.types, [CellType::Quad, CellType::Quad]);
        let names = |a: &[(String, IOBuffer)]| a.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&r.point), ["global_id", "tag"]);
        assert_eq!(names(&r.cell), ["global_id", "velocity"]);
        assert_eq!(r.point[1].1.clone().cast_into::<i32>().unwrap(), [1, 2, 3, 4, 5, 6]);
        assert_eq!(r.cell[0].1.clone().cast_into::<i64>().unwrap(), [3, 7]);
        assert_eq!(
            r.cell[1].1.clone().cast_into::<f64>().unwrap(),
            [-3.5, 1e-300, 0.1, 0.2],
            "exact values, in id order"
        );
        std::fs::remove_file(&path).unwrap();
    }

    /// A mesh in two pieces (as two processes write it) and their index:
    /// vtkio opens the index and loads each piece from it.
    #[test]
    fn pieces_and_their_index_read_back_with_vtkio() {
        let dir = std::env::temp_dir().join(format!("op2-output-pvtu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut names = Vec::new();
        for rank in 0..2u64 {
            let nodes = Set::new("nodes", 3).unwrap();
            let tris = Set::with_global_ids("tris", vec![rank]).unwrap();
            let corners = Map::new("ptri", &tris, &nodes, 3, vec![0, 1, 2]).unwrap();
            let x = Dat::from_vec("x", &nodes, 2, vec![0.0f64, 0.0, 1.0, 0.0, rank as f64, 1.0]).unwrap();
            let p = Dat::from_vec("p", &tris, 1, vec![10.0 + rank as f64]).unwrap();
            let name = format!("mesh_{rank}.vtu");
            write_vtu(dir.join(&name), &corners, &x, &[&p], &[]).unwrap();
            names.push(name);
            if rank == 1 {
                write_pvtu(dir.join("mesh.pvtu"), &names, &x, &[&p], &[]).unwrap();
            }
        }
        let vtk = vtkio::Vtk::import(dir.join("mesh.pvtu")).expect("vtkio reads the index");
        let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
            panic!("not an UnstructuredGrid")
        };
        assert_eq!(pieces.len(), 2);
        for (rank, piece) in pieces.iter().enumerate() {
            let piece = piece
                .load_piece_data(Some(&dir.join("mesh.pvtu")))
                .expect("the piece loads");
            let Attribute::DataArray(p) = &piece.data.cell[1] else {
                panic!("cell data")
            };
            assert_eq!(p.data.clone().cast_into::<f64>().unwrap(), [10.0 + rank as f64]);
            let points: Vec<f64> = piece.points.cast_into().unwrap();
            assert_eq!(points[6], rank as f64, "piece {rank}'s own nodes");
        }
        let x = Dat::from_vec("line", &Set::new("n", 1).unwrap(), 1, vec![0.0f64]).unwrap();
        assert!(write_pvtu(dir.join("bad.pvtu"), &names, &x, &[], &[]).is_err());
        assert!(write_pvtu(dir.join("bad.pvtu"), &[], &x, &[], &[]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn triangles_in_3d() {
        let nodes = Set::new("nodes", 4).unwrap();
        let tris = Set::new("tris", 2).unwrap();
        let corners = Map::new("ptri", &tris, &nodes, 3, vec![0, 1, 2, 0, 2, 3]).unwrap();
        let xyz: Vec<f32> = (0..12).map(|v| v as f32 * 0.5).collect();
        let x = Dat::from_vec("x", &nodes, 3, xyz.clone()).unwrap();
        let path = temp_file("tris");
        write_vtu(&path, &corners, &x, &[], &[]).unwrap();
        let r = read_back(&path);
        assert_eq!(r.points, xyz.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
        assert_eq!((r.offsets, r.types), (vec![3, 6], vec![CellType::Triangle; 2]));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_mesh_that_is_not_one_is_an_error() {
        let nodes = Set::new("nodes", 3).unwrap();
        let edges = Set::new("edges", 2).unwrap();
        let x = Dat::from_vec("x", &nodes, 2, vec![0.0f64; 6]).unwrap();
        let pedge = Map::new("pedge", &edges, &nodes, 2, vec![0, 1, 1, 2]).unwrap();
        let path = temp_file("bad");
        let e = write_vtu(&path, &pedge, &x, &[], &[]).unwrap_err();
        assert!(e.to_string().contains("map `pedge` gives 2 nodes per cell"), "{e}");
        let tris = Set::new("tris", 1).unwrap();
        let ptri = Map::new("ptri", &tris, &nodes, 3, vec![0, 1, 2]).unwrap();
        let on_tris = Dat::from_vec("on_tris", &tris, 2, vec![0.0f64; 2]).unwrap();
        let e = write_vtu(&path, &ptri, &on_tris, &[], &[]).unwrap_err();
        assert!(
            e.to_string().contains("`on_tris` lives on set `tris`, not on `nodes`"),
            "{e}"
        );
        let e = write_vtu(&path, &ptri, &x, &[&x], &[]).unwrap_err();
        assert!(e.to_string().contains("cell data: Dat `x` lives on set `nodes`"), "{e}");
        let e = write_vtu(&path, &ptri, &x, &[], &[&on_tris]).unwrap_err();
        assert!(e.to_string().contains("point data: Dat `on_tris`"), "{e}");
        let line = Dat::from_vec("line", &nodes, 1, vec![0.0f64; 3]).unwrap();
        let e = write_vtu(&path, &ptri, &line, &[], &[]).unwrap_err();
        assert!(e.to_string().contains("positions have 2 or 3"), "{e}");
        // Cells permuted after their map was made: its table is stale.
        let moving = Set::dynamic("moving", 2, 4).unwrap();
        let pmoving = Map::new("pmoving", &moving, &nodes, 3, vec![0, 1, 2, 2, 1, 0]).unwrap();
        moving.permute(&[1, 0]).unwrap();
        let e = write_vtu(&path, &pmoving, &x, &[], &[]).unwrap_err();
        assert!(e.to_string().contains("pmoving"), "{e}");
        assert!(!path.exists(), "nothing written");
    }
}
