//! Meshes the real Gmsh wrote (`tests/data/mixed.geo`: a channel with a
//! cylinder, triangles around it and quadrangles downstream), ASCII and
//! binary; CI writes them afresh with Debian's gmsh and points
//! `OP2_GMSH_MESHES` at them. The derived edges obey Euler's formula, carry
//! the physical groups given, and are oriented as Airfoil orients edges.

use std::path::PathBuf;

use op2_gmsh::{read_msh, write_msh, Edges, GmshMesh, Op2Mesh};

fn mesh_file(name: &str) -> PathBuf {
    let dir = std::env::var_os("OP2_GMSH_MESHES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")));
    dir.join(name)
}

fn centroid(m: &GmshMesh, c: u32) -> [f64; 2] {
    let cell = m.cell(c as usize);
    let n = cell.len() as f64;
    let s = cell.iter().fold([0.0, 0.0], |s, &v| {
        [s[0] + m.coords[v as usize][0], s[1] + m.coords[v as usize][1]]
    });
    [s[0] / n, s[1] / n]
}

/// The normal Airfoil's kernels take for edge (n1, n2): (y1 - y2, x2 - x1).
fn normal(m: &GmshMesh, e: [u32; 2]) -> [f64; 2] {
    let (a, b) = (m.coords[e[0] as usize], m.coords[e[1] as usize]);
    [a[1] - b[1], b[0] - a[0]]
}

#[test]
fn ascii_and_binary_hold_the_same_mixed_mesh() {
    let ascii = read_msh(mesh_file("mixed.msh")).unwrap();
    let binary = read_msh(mesh_file("mixed_bin.msh")).unwrap();
    // Gmsh's text keeps 16 digits: coordinates agree to the last bit or so.
    assert_eq!(ascii.coords.len(), binary.coords.len());
    let worst = (ascii.coords.iter().flatten().zip(binary.coords.iter().flatten()))
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst < 1e-15 * 4.0, "coordinates differ by {worst}");
    assert!(
        ascii.node_tags == binary.node_tags && ascii.cell_start == binary.cell_start,
        "the same nodes and cells"
    );
    assert!(ascii.cell_nodes == binary.cell_nodes, "the same cells' nodes");
    assert!(
        ascii.lines == binary.lines && ascii.line_groups == binary.line_groups,
        "the same lines"
    );
    assert_eq!(ascii.physical_names, binary.physical_names);
    let tris = (0..ascii.ncell()).filter(|&c| ascii.cell(c).len() == 3).count();
    let quads = (0..ascii.ncell()).filter(|&c| ascii.cell(c).len() == 4).count();
    assert!(tris > 20 && quads == 64, "{tris} triangles and {quads} quadrangles");
    assert!(
        (0..ascii.ncell()).all(|c| ascii.twice_area(c) > 0.0),
        "every cell counter-clockwise"
    );
    assert_eq!(ascii.group(1, "wall"), Some(1));
    assert_eq!(ascii.group(1, "farfield"), Some(2));
    assert_eq!(ascii.group(2, "fluid"), Some(3));
}

#[test]
fn the_derived_edges_obey_euler_and_carry_their_groups() {
    let m = read_msh(mesh_file("mixed.msh")).unwrap();
    let e = Edges::of(&m).unwrap();
    // Euler for a plane domain with one hole: V - E + F = 1 - holes = 0.
    let (v, f) = (m.coords.len() as i64, m.ncell() as i64);
    let edges = (e.nodes.len() + e.boundary_nodes.len()) as i64;
    assert_eq!(v - edges + f, 0, "V {v}, E {edges}, F {f}");
    // Each cell side is one edge: interior ones counted twice.
    let sides: usize = (0..m.ncell()).map(|c| m.cell(c).len()).sum();
    assert_eq!(sides, 2 * e.nodes.len() + e.boundary_nodes.len());
    // Boundary edges: on the cylinder the wall, on the rectangle the far field.
    assert_eq!(e.boundary_nodes.len(), m.lines.len(), "a line on every boundary edge");
    for (k, (&[a, b], &g)) in e.boundary_nodes.iter().zip(&e.boundary_group).enumerate() {
        let (p, q) = (m.coords[a as usize], m.coords[b as usize]);
        let mid = [(p[0] + q[0]) / 2.0, (p[1] + q[1]) / 2.0];
        let r = ((mid[0] - 1.0).powi(2) + (mid[1] - 1.0).powi(2)).sqrt();
        let on_rectangle = [mid[0], 4.0 - mid[0], mid[1], 2.0 - mid[1]]
            .iter()
            .any(|d| d.abs() < 1e-12);
        match g {
            1 => assert!(r < 0.5 && r > 0.45, "wall edge {k} at radius {r}"),
            2 => assert!(on_rectangle, "far-field edge {k} at {mid:?}"),
            g => panic!("boundary edge {k} in group {g}"),
        }
    }
    assert!(e.boundary_group.contains(&1) && e.boundary_group.contains(&2));
    // Airfoil's orientation: the normal points from c1 into c2, and out of
    // the mesh at the boundary.
    for (k, (&n, &[c1, c2])) in e.nodes.iter().zip(&e.cells).enumerate() {
        let (a, b) = (centroid(&m, c1), centroid(&m, c2));
        let nv = normal(&m, n);
        assert!(
            nv[0] * (b[0] - a[0]) + nv[1] * (b[1] - a[1]) > 0.0,
            "edge {k}: normal into c2"
        );
    }
    for (k, (&n, &c)) in e.boundary_nodes.iter().zip(&e.boundary_cell).enumerate() {
        let (p, q) = (m.coords[n[0] as usize], m.coords[n[1] as usize]);
        let (a, nv) = (centroid(&m, c), normal(&m, n));
        let mid = [(p[0] + q[0]) / 2.0, (p[1] + q[1]) / 2.0];
        assert!(
            nv[0] * (mid[0] - a[0]) + nv[1] * (mid[1] - a[1]) > 0.0,
            "boundary edge {k}: normal outwards"
        );
    }
    // As op2 carriers.
    let o = Op2Mesh::new(&m, &e).unwrap();
    assert_eq!(
        (o.edges.size(), o.bedges.size(), o.cells.size()),
        (e.nodes.len(), e.boundary_nodes.len(), m.ncell())
    );
    assert_eq!(o.bound.to_vec(), e.boundary_group);
    assert!(o.cell_nodes(&m, 4).unwrap().is_none(), "mixed cells have no one arity");
}

#[test]
fn written_and_read_back_the_mesh_is_the_same() {
    let m = read_msh(mesh_file("mixed.msh")).unwrap();
    let path = std::env::temp_dir().join(format!("op2-gmsh-{}.msh", std::process::id()));
    write_msh(&path, &m).unwrap();
    let back = read_msh(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(back == m, "nodes bit for bit, cells, lines, groups, names");
}
