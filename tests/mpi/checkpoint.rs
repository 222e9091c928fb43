//! Checkpoints under mpirun (`Checkpoints::checkpoint_across`, feature
//! `hdf5`): a run spread over the ranks, checkpointed by all of them,
//! resumes on one process and on every rank, and either way ends bit for
//! bit where one process's uninterrupted run ends; for Circles (agents
//! that move between ranks), predator-prey (births, deaths, random
//! streams) and the network SIR (a network cut by METIS, a macro property
//! shared by the ranks). Beside them, the output of such a run: a VTK
//! series written in pieces holds one process's agents.

use std::path::{Path, PathBuf};

use op2::model::{Checkpoints, Simulation, Snapshot};
use op2::mpi::{DomainOptions, Mpi};
use op2::prelude::*;

use super::run_tag;

/// A folder every rank sees, made by rank 0.
fn shared_dir(mpi: &Mpi, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("op2-mpi-checkpoint-{name}-{}", run_tag(mpi)));
    if mpi.rank() == 0 {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    }
    mpi.sum_u64(&mut [0]);
    dir
}

/// The state of the run the checkpoint at `path` holds, as one process
/// reads it into `alone` (a fresh simulation of the model).
fn state_in(mut alone: Simulation<'_>, path: &Path) -> Snapshot {
    alone.resume(path).unwrap();
    alone.start().unwrap();
    alone.snapshot().unwrap().in_id_order()
}

/// `steps` steps of `one()` (one process) against the same run spread over
/// the ranks (`shared()`, then distributed), checkpointed by every rank
/// after `at`: resumed by one process and resumed over the ranks, both end
/// where one process ends.
fn resumes_on_any_rank_count<'rt>(
    mpi: &Mpi,
    dir: &Path,
    what: &str,
    one: impl Fn() -> Simulation<'rt>,
    shared: impl Fn() -> Simulation<'rt>,
    (at, steps): (u64, u64),
) {
    let mut whole = one();
    whole.run(steps).unwrap();
    let want = whole.snapshot().unwrap().in_id_order();

    let mid = dir.join(format!("{what}-mid.h5"));
    if mpi.size() > 1 {
        // Not distributed, each rank holds a run of its own: refused on all.
        let e = shared().checkpoint_across(&mid, mpi).unwrap_err();
        assert!(e.to_string().contains("not distributed"), "{what}: {e}");
    }
    let mut first = shared();
    first.distribute(mpi, DomainOptions::default()).unwrap();
    first.run(at).unwrap();
    first.checkpoint_across(&mid, mpi).unwrap();
    let alone = first.checkpoint(dir.join("alone.h5"));
    assert!(alone.is_err(), "{what}: a distributed run checkpoints with every rank");
    drop(first);

    // On one process.
    let mut alone = one();
    alone.resume(&mid).unwrap();
    alone.run(steps - at).unwrap();
    assert!(
        alone.snapshot().unwrap().in_id_order() == want,
        "{what}: resumed on one process"
    );

    // On every rank, checkpointed again at the end to be compared.
    let mut again = shared();
    again.resume_across(&mid, mpi).unwrap();
    again.distribute(mpi, DomainOptions::default()).unwrap();
    again.run(steps - at).unwrap();
    assert_eq!(again.steps(), steps);
    let end = dir.join(format!("{what}-end.h5"));
    again.checkpoint_across(&end, mpi).unwrap();
    assert!(state_in(one(), &end) == want, "{what}: resumed on {} ranks", mpi.size());
}

pub fn checkpoints_resume_on_any_rank_count(mpi: &Mpi) {
    let (rank, size) = (mpi.rank(), mpi.size());
    let dir = shared_dir(mpi, "models");
    for rt in [Backend::Seq, Backend::Rayon].map(|b| Runtime::new(b).unwrap()) {
        let b = rt.backend();
        let n = 600;
        let side = op2_circles::box_side(n, 1.0);
        let start = op2_circles::initial_positions(n, side, 3);
        let ids: Vec<u64> = (0..n as u64).collect();
        let mine: Vec<usize> = (rank..n).step_by(size).collect();
        let (my_ids, my_start): (Vec<u64>, Vec<[f32; 3]>) = mine.iter().map(|&i| (ids[i], start[i])).unzip();
        let p = op2_circles::Params::default();
        resumes_on_any_rank_count(
            mpi,
            &dir,
            &format!("circles-{b}"),
            || op2_circles::circles(&rt, &ids, &start, side, p).unwrap(),
            || op2_circles::circles(&rt, &my_ids, &my_start, side, p).unwrap(),
            (3, 8),
        );

        let params = op2_predator_prey::Params::default();
        let pp = |ranks| op2_predator_prey::predator_prey(&rt, params, (600, 60), 4, ranks).unwrap();
        resumes_on_any_rank_count(
            mpi,
            &dir,
            &format!("predator-prey-{b}"),
            || pp((0, 1)),
            || pp((rank, size)),
            (5, 12),
        );

        let mut rng = op2::Philox::new(17, 0, 0);
        let nodes: Vec<u64> = (0..120u64).map(|i| 3 * i + 1).collect();
        let mut edges = Vec::new();
        while edges.len() < 300 {
            let (a, b) = (rng.below(120) as usize, rng.below(120) as usize);
            if a != b {
                edges.push((nodes[a], nodes[b]));
            }
        }
        let sir = || op2_sir::network_sir(&rt, &nodes, &edges, nodes[7], (0.4, 0.2), 5).unwrap();
        resumes_on_any_rank_count(mpi, &dir, &format!("sir-{b}"), sir, sir, (4, 10));
    }
    // Every rank has read its last file.
    mpi.sum_u64(&mut [0]);
    if rank == 0 {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Circles spread over the ranks writes a VTK series in pieces (a `.vtp`
/// per rank, a `.pvtp` index per step): read back with vtkio, every agent
/// is in one piece, with one process's position and its own global id.
pub fn vtk_pieces_hold_one_ranks_agents(mpi: &Mpi) {
    use op2::output::VtkSeries;
    use vtkio::model::{Attribute, DataSet};
    let (rank, size) = (mpi.rank(), mpi.size());
    let dir = shared_dir(mpi, "vtk");
    let rt = Runtime::new(Backend::Seq).unwrap();
    let n = 500;
    let (one, shared) = circles_alone_and_shared(mpi, &rt, n, 8, 5);
    let mut series = VtkSeries::in_pieces(&dir, "circles", rank, size).unwrap();
    let pos = shared.variable::<f32>("circle", "pos").unwrap();
    let id = shared.variable::<u32>("circle", "id").unwrap();
    series.write(5, 5.0, pos, &[id]).unwrap();
    // Every piece is written (a collective as a barrier).
    mpi.sum_u64(&mut [0]);
    if rank == 0 {
        let index = match size {
            1 => dir.join("circles_000005.vtp"),
            _ => dir.join("circles_000005.pvtp"),
        };
        let vtk = vtkio::Vtk::import(&index).expect("vtkio reads the index");
        let DataSet::PolyData { pieces, .. } = vtk.data else {
            panic!("not PolyData")
        };
        assert_eq!(pieces.len(), size);
        let (set, want) = (
            one.population("circle").unwrap(),
            one.variable::<f32>("circle", "pos").unwrap().to_vec(),
        );
        let mut seen = vec![false; n];
        for piece in &pieces {
            let piece = piece.load_piece_data(Some(&index)).expect("a piece");
            let points: Vec<f32> = piece.points.cast_into().unwrap();
            let arrays: Vec<(String, Vec<i64>)> = (piece.data.point.iter())
                .map(|a| match a {
                    Attribute::DataArray(d) => (d.name.clone(), d.data.clone().cast_into().unwrap()),
                    other => panic!("unexpected attribute {other:?}"),
                })
                .collect();
            assert_eq!(arrays[0].0, "global_id");
            assert_ne!(arrays[0].0, arrays[1].0, "distinct names");
            for (k, (&gid, &own)) in arrays[0].1.iter().zip(&arrays[1].1).enumerate() {
                assert_eq!(gid, own, "the model's id is the global id");
                assert!(
                    !std::mem::replace(&mut seen[gid as usize], true),
                    "agent {gid} in two pieces"
                );
                let at = set.index_of(gid as u64).unwrap();
                assert_eq!(points[3 * k..3 * k + 3], want[3 * at..3 * at + 3], "agent {gid}");
            }
        }
        assert!(seen.iter().all(|&s| s), "every agent in some piece");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Circles spread over the ranks writes its agents as one population file
/// (CSV and JSON lines), gathered in id order: byte for byte the file one
/// process writes in id order.
pub fn populations_gathered_equal_one_process(mpi: &Mpi) {
    let (rank, size) = (mpi.rank(), mpi.size());
    let dir = shared_dir(mpi, "population");
    let rt = Runtime::new(Backend::Seq).unwrap();
    let n = 400;
    let (one, shared) = circles_alone_and_shared(mpi, &rt, n, 4, 4);
    for file in ["circles.csv", "circles.jsonl"] {
        let path = dir.join(file);
        shared.write_population_across("circle", &path, mpi).unwrap();
        if rank == 0 {
            let alone = dir.join(format!("alone-{file}"));
            one.write_population_by_id("circle", &alone).unwrap();
            let (got, want) = (std::fs::read(&path).unwrap(), std::fs::read(&alone).unwrap());
            assert!(got == want, "{file}: gathered from {size} ranks, not one process's");
            assert_eq!(
                want.iter().filter(|&&b| b == b'\n').count(),
                n + usize::from(file.ends_with("csv"))
            );
        }
    }
    // A folder that is not there: an error on every rank, naming the file.
    let e = shared
        .write_population_across("circle", "/nonexistent-op2/circles.csv", mpi)
        .unwrap_err();
    assert!(
        e.to_string().contains("circles.csv") || e.to_string().contains("rank 0"),
        "{e}"
    );
    // Every rank is done with the folder; rank 0 made it and removes it.
    mpi.sum_u64(&mut [0]);
    if rank == 0 {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Circles of `n` agents (positions from `seed`) run `steps` steps by one
/// process alone and, every rank starting with every `P`-th agent, spread
/// over the ranks.
fn circles_alone_and_shared<'rt>(
    mpi: &Mpi,
    rt: &'rt Runtime,
    n: usize,
    seed: u64,
    steps: u64,
) -> (Simulation<'rt>, Simulation<'rt>) {
    let side = op2_circles::box_side(n, 1.0);
    let start = op2_circles::initial_positions(n, side, seed);
    let ids: Vec<u64> = (0..n as u64).collect();
    let mine: Vec<usize> = (mpi.rank()..n).step_by(mpi.size()).collect();
    let (my_ids, my_start): (Vec<u64>, Vec<[f32; 3]>) = mine.iter().map(|&i| (ids[i], start[i])).unzip();
    let p = op2_circles::Params::default();
    let mut one = op2_circles::circles(rt, &ids, &start, side, p).unwrap();
    let mut shared = op2_circles::circles(rt, &my_ids, &my_start, side, p).unwrap();
    shared.distribute(mpi, DomainOptions::default()).unwrap();
    one.run(steps).unwrap();
    shared.run(steps).unwrap();
    (one, shared)
}
