//! Airfoil on a renumbered mesh (`Mesh::renumbered`, op2's `Renumbering`:
//! reverse Cuthill–McKee on the cells) on every backend: the rms of every
//! iteration equals the unrenumbered run's to rounding, and so does each
//! cell's flow state, found through the cells' new order. Renumbering a
//! scrambled mesh narrows its cells' band back to about the mesh's width.

use op2_airfoil::{generate, AirfoilDsl, Constants, Mesh};

#[path = "support/runtimes.rs"]
mod runtimes;
use runtimes::backends;

/// The mesh with its cells in a scrambled order (every table kept whole).
fn scrambled(mesh: &Mesh) -> Mesh {
    let n = mesh.ncell();
    let order: Vec<usize> = (0..n).map(|k| (k * 7919) % n).collect();
    let mut place = vec![0i32; n];
    for (new, &old) in order.iter().enumerate() {
        place[old] = new as i32;
    }
    Mesh {
        cell: order
            .iter()
            .flat_map(|&c| mesh.cell[4 * c..4 * c + 4].to_vec())
            .collect(),
        ecell: mesh.ecell.iter().map(|&c| place[c as usize]).collect(),
        becell: mesh.becell.iter().map(|&c| place[c as usize]).collect(),
        ..mesh.clone()
    }
}

/// The widest gap between the numbers of two cells that share an edge.
fn band(mesh: &Mesh) -> i32 {
    mesh.ecell.chunks(2).map(|e| (e[0] - e[1]).abs()).max().unwrap_or(0)
}

#[test]
fn a_renumbered_airfoil_matches_the_original_on_every_backend() {
    let (width, height) = (36, 24);
    let generated = generate(width, height);
    let mesh = scrambled(&generated);
    let (renumbered, cells) = mesh.renumbered().unwrap();
    // Scrambled, the band spans the mesh; renumbered, it is about the
    // generator's (which numbers the cells ring by ring).
    let (before, after, ordered) = (band(&mesh), band(&renumbered), band(&generated));
    assert!(before > 10 * after, "band {before} before, {after} after");
    assert!(
        after <= 2 * ordered,
        "band {after} after, {ordered} in the generator's order"
    );
    let c = Constants::default();
    for rt in backends() {
        let what = rt.backend();
        let (a, b) = (
            AirfoilDsl::new(&mesh, &c).unwrap(),
            AirfoilDsl::new(&renumbered, &c).unwrap(),
        );
        for iter in 1..=40 {
            let (want, got) = (a.iteration(&rt).unwrap(), b.iteration(&rt).unwrap());
            assert!(
                (got - want).abs() <= 1e-12 * want.abs(),
                "{what}, iteration {iter}: rms {got:e} vs {want:e}"
            );
        }
        let (q, q_new) = (a.q.to_vec(), b.q.to_vec());
        for (new, &old) in cells.iter().enumerate() {
            let (want, got) = (&q[4 * old as usize..][..4], &q_new[4 * new..][..4]);
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let worst = want.iter().zip(got).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(
                worst <= 1e-12 * scale,
                "{what}: cell {old} (now {new}): {got:?} vs {want:?}"
            );
        }
        assert!(q.chunks(4).any(|s| (s[1] - c.qinf[1]).abs() > 1e-3), "the flow moved");
    }
}
