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
