//! Broken `.msh` files: each an error naming the file, the section and
//! what was wrong; none panics, none allocates what a lying count claims.

use op2_core::Error;
use op2_gmsh::{read_msh, EdgeError, Edges, GmshMesh};

/// A unit square of two triangles, with its boundary in group "farfield".
const SQUARE: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n1 7 \"farfield\"\n$EndPhysicalNames\n\
$Entities\n0 1 1 0\n1 0 0 0 1 1 0 1 7 0\n1 0 0 0 1 1 0 0 0\n$EndEntities\n\
$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n\
$Elements\n2 6 1 6\n1 1 1 4\n1 1 2\n2 2 3\n3 3 4\n4 4 1\n2 1 2 2\n5 1 2 3\n6 1 3 4\n$EndElements\n";

fn read_text(name: &str, text: &str) -> op2_core::Result<GmshMesh> {
    let path = std::env::temp_dir().join(format!("op2-gmsh-bad-{}-{name}.msh", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let r = read_msh(&path);
    std::fs::remove_file(&path).unwrap();
    r
}

/// `SQUARE` with `from` replaced by `to` must fail in `section` with `why`.
fn refused(from: &str, to: &str, section: &str, why: &str) {
    assert!(SQUARE.contains(from), "{from:?} is in the square");
    let text = SQUARE.replacen(from, to, 1);
    match read_text("case", &text) {
        Err(e @ Error::MeshFile { .. }) => {
            let Error::MeshFile { object, reason, .. } = &e else {
                unreachable!()
            };
            assert_eq!(object, section, "{from:?} -> {to:?}: {e}");
            assert!(reason.contains(why), "{from:?} -> {to:?}: {e}");
            assert!(e.to_string().contains("op2-gmsh-bad-"), "names the file: {e}");
        }
        other => panic!(
            "{from:?} -> {to:?}: expected an error in {section}, got {:?}",
            other.map(|m| m.ncell())
        ),
    }
}

#[test]
fn the_square_itself_reads() {
    let m = read_text("good", SQUARE).unwrap();
    assert_eq!((m.coords.len(), m.ncell(), m.lines.len()), (4, 2, 4));
    assert_eq!(m.line_groups, [7; 4]);
    let e = Edges::of(&m).unwrap();
    assert_eq!((e.nodes.len(), e.boundary_nodes.len()), (1, 4));
    assert_eq!(e.boundary_group, [7; 4]);
}

#[test]
fn each_break_is_named() {
    refused("4.1 0 8", "2.2 0 8", "$MeshFormat", "version 2.2: only 4.1 is read");
    refused("4.1 0 8", "4.1 0 4", "$MeshFormat", "only 8-byte sizes");
    refused("4.1 0 8", "4.1 5 8", "$MeshFormat", "file type \"5\"");
    refused(
        "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n",
        "",
        "$PhysicalNames",
        "must begin with $MeshFormat",
    );
    refused(
        "1 7 \"farfield\"",
        "1 7 farfield",
        "$PhysicalNames",
        "`dim tag \"name\"` expected",
    );
    refused("$EndNodes", "$EndNode", "$Nodes", "$EndNodes expected");
    refused(
        "1\n1 7 \"farfield\"",
        "2\n1 7 \"farfield\"\n1 7 \"wall\"",
        "$PhysicalNames",
        "physical group 7 of dimension 1 is named twice",
    );
    refused(
        "1\n1 7 \"farfield\"",
        "2\n1 7 \"farfield\"\n1 8 \"farfield\"",
        "$PhysicalNames",
        "two physical groups of dimension 1 are named \"farfield\"",
    );
    refused(
        "1 4 1 4\n",
        "1 5 1 4\n",
        "$Nodes",
        "the header says 5 nodes, the blocks hold 4",
    );
    refused(
        "1 4 1 4\n",
        "1 99999999999 1 4\n",
        "$Nodes",
        "is more than the file can hold",
    );
    refused(
        "0 1 0\n$EndNodes",
        "0 x 0\n$EndNodes",
        "$Nodes",
        "y expected, found \"x\"",
    );
    refused(
        "0 1 0\n$EndNodes",
        "0 nan 0\n$EndNodes",
        "$Nodes",
        "not a finite number",
    );
    refused("6 1 3 4\n", "6 1 3 9\n", "$Elements", "element 6 names node 9");
    refused("2 1 2 2\n", "2 1 4 2\n", "$Elements", "element type 4 (tetrahedron)");
    refused(
        "2 6 1 6\n",
        "2 7 1 6\n",
        "$Elements",
        "the header says 7 elements, the blocks hold 6",
    );
    refused(
        "0 1 0\n$EndNodes",
        "1 1 0\n$EndNodes",
        "$Elements",
        "element 6 has no finite, non-zero area",
    );
    refused(
        "0 0 0\n1 0 0\n1 1 0\n0 1 0\n",
        "0 0 0\n1e300 0 0\n1e300 1e300 0\n0 1e300 0\n",
        "$Elements",
        "element 5 has no finite, non-zero area",
    );
    refused("6 1 3 4\n", "6 1 3 3\n", "$Elements", "element 6 names node 3 twice");
    // A second $Nodes section is counted by its own header.
    refused(
        "$EndNodes\n",
        "$EndNodes\n$Nodes\n0 3 5 7\n$EndNodes\n",
        "$Nodes",
        "the header says 3 nodes, the blocks hold 0",
    );
    refused(
        "$EndElements\n",
        "",
        "$Elements",
        "the file ends where $EndElements was expected",
    );
    refused(
        "$Entities\n0 1 1 0\n",
        "$Entities\n0 1 1 0 junk\n",
        "$Entities",
        "an entity tag expected, found \"junk\"",
    );
    refused("$EndEntities\n", "$EndEntities\n$Junk\n", "$Junk", "no $EndJunk");
    refused(
        "$EndEntities\n",
        "$EndEntities\nloose words\n",
        "/",
        "a section ($Name) expected",
    );
}

#[test]
fn a_file_that_is_not_msh_or_not_there_is_named() {
    let e = read_text("text", "hello\n").unwrap_err();
    assert!(e.to_string().contains("must begin with $MeshFormat"), "{e}");
    let e = read_text("empty", "").unwrap_err();
    assert!(e.to_string().contains("$MeshFormat"), "{e}");
    let e = read_msh("/nonexistent-op2/mesh.msh").unwrap_err();
    assert!(
        e.to_string().contains("mesh.msh") && e.to_string().contains("cannot read"),
        "{e}"
    );
    // Binary, cut short in $Nodes.
    let mut bin = b"$MeshFormat\n4.1 1 8\n".to_vec();
    bin.extend(1i32.to_le_bytes());
    bin.extend(b"\n$EndMeshFormat\n$Nodes\n");
    bin.extend(1u64.to_le_bytes());
    bin.extend(1000u64.to_le_bytes());
    let path = std::env::temp_dir().join(format!("op2-gmsh-short-{}.msh", std::process::id()));
    std::fs::write(&path, &bin).unwrap();
    let e = read_msh(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(
        e.to_string().contains("$Nodes") && e.to_string().contains("more than the file can hold"),
        "{e}"
    );
}

#[test]
fn cells_that_are_no_surface_are_refused() {
    // A third triangle on the diagonal's side: three cells on one side.
    // (Node 5 below the square; the triangle 1-5-3 shares the diagonal.)
    let three = SQUARE
        .replacen("1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n", "1 5 1 5\n2 1 0 5\n1\n2\n3\n4\n5\n", 1)
        .replacen("0 1 0\n$EndNodes", "0 1 0\n0.5 -1 0\n$EndNodes", 1)
        .replacen("2 6 1 6\n", "2 7 1 7\n", 1)
        .replacen("2 1 2 2\n", "2 1 2 3\n", 1)
        .replacen("6 1 3 4\n", "6 1 3 4\n7 1 5 3\n", 1);
    let m = read_text("three", &three).unwrap();
    assert!(matches!(Edges::of(&m), Err(EdgeError::SharedByMore { cell: 2, .. })));
    // Two triangles folded over each other (the second the first's mirror).
    let mut m = read_text("fold", SQUARE).unwrap();
    m.cell_nodes = vec![0, 1, 2, 0, 1, 2];
    let e = Edges::of(&m).unwrap_err();
    assert!(matches!(e, EdgeError::Folded { cell: 1, .. }), "{e}");
    assert!(e.to_string().contains("same direction"), "{e}");
}

/// A mesh built or changed by hand (its fields are public) that does not
/// hold together: writing it or deriving its edges is an error saying why,
/// never a panic, a line or cell dropped, or a file its reader refuses.
#[test]
fn meshes_that_do_not_hold_together_are_refused() {
    let good = read_text("whole", SQUARE).unwrap();
    let path = std::env::temp_dir().join(format!("op2-gmsh-hand-{}.msh", std::process::id()));
    type Break = fn(&mut GmshMesh);
    let breaks: [(&str, Break); 8] = [
        ("names node [5, 6]", |m| {
            m.lines.push([5, 6]);
            m.line_groups.push(7);
        }),
        ("line groups for", |m| m.line_groups.pop().map(drop).unwrap_or(())),
        ("cell_start does not run", |m| m.cell_start = vec![0, 3]),
        ("cell 0 has 2 nodes", |m| {
            m.cell_nodes = vec![0, 1, 0, 1, 2];
            m.cell_start = vec![0, 2, 5];
        }),
        ("cell 1 names node 9", |m| m.cell_nodes[4] = 9),
        ("names a node twice", |m| m.cell_nodes[1] = m.cell_nodes[0]),
        ("holds a quote", |m| m.physical_names[0].2 = "far\"field".into()),
        ("node tag 1 is given twice", |m| m.node_tags[1] = 1),
    ];
    for (why, edit) in breaks {
        let mut m = good.clone();
        edit(&mut m);
        let e = op2_gmsh::write_msh(&path, &m).unwrap_err();
        assert!(e.to_string().contains(why), "{why}: {e}");
        let e = Edges::of(&m).unwrap_err();
        assert!(
            matches!(&e, EdgeError::NotAMesh { reason } if reason.contains(why)),
            "{why}: {e}"
        );
    }
    assert!(!path.exists(), "nothing written");
    let mut far = good.clone();
    far.coords[2][0] = f64::NAN;
    assert!(op2_gmsh::write_msh(&path, &far)
        .unwrap_err()
        .to_string()
        .contains("not a finite point"));
}
