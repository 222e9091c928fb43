//! The DSL Airfoil against the hand-written one: bit for bit on `seq`.

use op2::{Backend, Runtime};
use op2_airfoil::{generate, AirfoilDsl, Constants, Handwritten};

#[test]
fn dsl_seq_equals_handwritten_bit_for_bit() {
    let mesh = generate(60, 90);
    let c = Constants::default();
    let rt = Runtime::new(Backend::Seq).unwrap();
    let dsl = AirfoilDsl::new(&mesh, &c).unwrap();
    let mut hand = Handwritten::new(&mesh, &c);
    for iter in 1..=200 {
        let a = dsl.iteration(&rt).unwrap();
        let b = hand.iteration();
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "rms differs at iteration {iter}: {a:e} vs {b:e}"
        );
    }
    let q = dsl.q.to_vec();
    assert!(
        q.iter().zip(&hand.q).all(|(a, b)| a.to_bits() == b.to_bits()),
        "q differs"
    );
    assert!(
        dsl.adt
            .to_vec()
            .iter()
            .zip(&hand.adt)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "adt differs"
    );
    // The flow has moved away from the free stream: the comparison is not vacuous.
    assert!(q.chunks(4).any(|s| (s[1] - c.qinf[1]).abs() > 1e-3));
}

#[test]
fn timing_table_covers_every_loop() {
    let mesh = generate(8, 6);
    let rt = Runtime::new(Backend::Seq).unwrap();
    let dsl = AirfoilDsl::new(&mesh, &Constants::default()).unwrap();
    for _ in 0..3 {
        dsl.iteration(&rt).unwrap();
    }
    let rows = rt.timings();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["save_soln", "adt_calc", "res_calc", "bres_calc", "update"]);
    let calls: Vec<u64> = rows.iter().map(|r| r.calls).collect();
    assert_eq!(calls, [3, 6, 6, 6, 6]);
    // res_calc reads x (all nodes), q and adt (all cells), increments res, and
    // reads both maps of edges (2 x 2 + 2 x 2 entries of 4 bytes per edge) and
    // two f64 Globals.
    let res = &rows[2];
    let (nn, nc, ne) = (mesh.nnode() as u64, mesh.ncell() as u64, mesh.nedge() as u64);
    assert_eq!(
        res.bytes_per_call,
        nn * 16 + nc * 32 + nc * 8 + 2 * nc * 32 + 2 * ne * 8 + 16
    );
}

/// `--vtk`: the mesh and its flow after a few iterations, read back with
/// vtkio (an independent reader): every cell a quadrilateral through the
/// mesh's nodes, density, velocity and pressure computed from `q` exactly.
#[test]
fn the_flow_written_for_paraview_reads_back_with_vtkio() {
    use vtkio::model::{Attribute, CellType, DataSet, VertexNumbers};
    let mesh = generate(12, 8);
    let c = Constants::default();
    let rt = Runtime::new(Backend::Seq).unwrap();
    let dsl = AirfoilDsl::new(&mesh, &c).unwrap();
    for _ in 0..20 {
        dsl.iteration(&rt).unwrap();
    }
    let path = std::env::temp_dir().join(format!("op2-airfoil-{}.vtu", std::process::id()));
    dsl.write_vtk(&path).unwrap();
    let e = dsl.write_vtk("/nonexistent-op2-dir/flow.vtu").unwrap_err();
    assert!(matches!(e, op2::Error::Io { .. }), "{e}");
    let vtk = vtkio::Vtk::import(&path).expect("vtkio reads the file");
    std::fs::remove_file(&path).unwrap();
    let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
        panic!("not an UnstructuredGrid")
    };
    let piece = pieces[0].load_piece_data(None).unwrap();
    let points: Vec<f64> = piece.points.cast_into().unwrap();
    let want: Vec<f64> = mesh.x.chunks(2).flat_map(|p| [p[0], p[1], 0.0]).collect();
    assert_eq!(points, want, "the nodes, in order");
    let VertexNumbers::XML { connectivity, .. } = piece.cells.cell_verts else {
        panic!("not XML cells")
    };
    assert_eq!(connectivity, mesh.cell.iter().map(|&n| n as u64).collect::<Vec<_>>());
    assert_eq!(piece.cells.types, vec![CellType::Quad; mesh.ncell()]);
    let cell: Vec<(String, Vec<f64>)> = piece
        .data
        .cell
        .into_iter()
        .map(|a| match a {
            Attribute::DataArray(d) => (d.name, d.data.cast_into().unwrap()),
            other => panic!("unexpected attribute {other:?}"),
        })
        .collect();
    let names: Vec<&str> = cell.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["global_id", "density", "velocity", "pressure"]);
    let q = dsl.q.to_vec();
    assert!(q.chunks(4).any(|q| q != c.qinf), "the flow moved off the free stream");
    for (k, q) in q.chunks(4).enumerate() {
        let u = [q[1] / q[0], q[2] / q[0]];
        let p = c.gm1 * (q[3] - 0.5 * q[0] * (u[0] * u[0] + u[1] * u[1]));
        assert_eq!(cell[1].1[k], q[0], "density of cell {k}");
        assert_eq!([cell[2].1[2 * k], cell[2].1[2 * k + 1]], u, "velocity of cell {k}");
        let rel = (cell[3].1[k] - p).abs() / p.abs();
        assert!(rel < 1e-14, "pressure of cell {k}: {} against {p}", cell[3].1[k]);
    }
}
