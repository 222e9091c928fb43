//! Airfoil and Gmsh files: the generator's mesh written as `.msh` and read
//! back derives the generator's edges (same nodes, cells and orientation,
//! in another order) and gives the same rms to rounding; a quadrilateral
//! mesh the real Gmsh wrote runs; what Airfoil cannot use is named.

use std::collections::{BTreeSet, HashMap};

use op2::{Backend, Runtime};
use op2_airfoil::{generate, gmsh_grid, AirfoilDsl, Constants, Mesh};

fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("op2-airfoil-gmsh-{}-{name}", std::process::id()))
}

/// A node's position as bits (-0.0 as 0.0).
type Position = (u64, u64);

/// Each edge as (n1's position, n2's position, c1, c2), comparable across
/// meshes whose nodes are numbered (or merged) differently. An edge with
/// both its nodes and its cells swapped is the same face (its flux changes
/// sign twice), so each is taken with c1 < c2.
fn edges_by_position(m: &Mesh) -> BTreeSet<(Position, Position, i32, i32)> {
    let at = |n: i32| {
        (
            (m.x[2 * n as usize] + 0.0).to_bits(),
            (m.x[2 * n as usize + 1] + 0.0).to_bits(),
        )
    };
    (m.edge.chunks(2).zip(m.ecell.chunks(2)))
        .map(|(e, c)| match c[0] < c[1] {
            true => (at(e[0]), at(e[1]), c[0], c[1]),
            false => (at(e[1]), at(e[0]), c[1], c[0]),
        })
        .collect()
}

#[test]
fn the_generators_mesh_through_gmsh_runs_as_the_generators() {
    let mesh = generate(30, 20);
    let path = scratch("c-grid.msh");
    gmsh_grid::write(&path, &mesh).unwrap();
    let back = gmsh_grid::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    // The wake's two rows of nodes became one; cells and edges are the same.
    assert!(back.nnode() < mesh.nnode(), "the wake cut's nodes merged");
    assert_eq!(
        (back.ncell(), back.nedge(), back.nbedge()),
        (mesh.ncell(), mesh.nedge(), mesh.nbedge())
    );
    assert_eq!(
        edges_by_position(&back),
        edges_by_position(&mesh),
        "every edge, with Airfoil's orientation"
    );
    let bounds = |m: &Mesh| {
        let mut b: HashMap<(i32, i32), usize> = HashMap::new();
        for (&c, &k) in m.becell.iter().zip(&m.bound) {
            *b.entry((c, k)).or_default() += 1;
        }
        b
    };
    assert_eq!(bounds(&back), bounds(&mesh), "each cell's boundary edges and kinds");
    // Another summation order: the same rms to rounding.
    let c = Constants::default();
    let rt = Runtime::new(Backend::Seq).unwrap();
    let (a, b) = (AirfoilDsl::new(&mesh, &c).unwrap(), AirfoilDsl::new(&back, &c).unwrap());
    for iter in 1..=50 {
        let (x, y) = (a.iteration(&rt).unwrap(), b.iteration(&rt).unwrap());
        assert!(
            ((x - y) / x).abs() < 1e-11,
            "iteration {iter}: rms {x:e} from the generator, {y:e} through Gmsh"
        );
    }
}

#[test]
fn a_quadrilateral_mesh_from_gmsh_runs() {
    let dir = std::env::var_os("OP2_GMSH_MESHES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/op2-gmsh/tests/data").into());
    let mesh = gmsh_grid::read(dir.join("cylinder.msh")).unwrap();
    // An O-grid: V - E + F = 0 (a ring), wall and far field both present.
    let (v, e, f) = (
        mesh.nnode() as i64,
        (mesh.nedge() + mesh.nbedge()) as i64,
        mesh.ncell() as i64,
    );
    assert_eq!(v - e + f, 0);
    assert!(mesh.bound.contains(&1) && mesh.bound.contains(&2));
    let dsl = AirfoilDsl::new(&mesh, &Constants::default()).unwrap();
    let rt = Runtime::new(Backend::Seq).unwrap();
    let rms: Vec<f64> = (0..100).map(|_| dsl.iteration(&rt).unwrap()).collect();
    assert!(rms.iter().all(|r| r.is_finite() && *r > 0.0));
    assert!(rms[99] < rms[9], "the flow settles: rms {} then {}", rms[9], rms[99]);
}

#[test]
fn what_airfoil_cannot_use_is_named() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/op2-gmsh/tests/data");
    let e = gmsh_grid::read(format!("{data}/mixed.msh")).unwrap_err().to_string();
    assert!(
        e.contains("mixed.msh") && e.contains("Airfoil needs quadrilaterals"),
        "{e}"
    );
    // The cylinder with its far field renamed: those edges have no kind.
    let text = std::fs::read_to_string(format!("{data}/cylinder.msh"))
        .unwrap()
        .replace("\"farfield\"", "\"outlet\"");
    let path = scratch("outlet.msh");
    std::fs::write(&path, text).unwrap();
    let e = gmsh_grid::read(&path).unwrap_err().to_string();
    std::fs::remove_file(&path).unwrap();
    assert!(e.contains("named wall or farfield (its group: 2)"), "{e}");
}
