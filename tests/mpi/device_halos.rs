//! Halo exchanges on a device (`opencl`, PoCL in CI) under mpirun: Airfoil's
//! distributed rms matches one process's, and after the first iteration no
//! mesh Dat moves whole between host and device: each exchange moves
//! exactly its halo's records, counted here from the distribution's lists.
//! Colouring and atomics, with Dats in rows (PoCL's default) and in columns
//! (a GPU's), which the pack and unpack read and write in place; and with
//! `device_halos(false)`, whole Dats through the host, as before.

use op2::mpi::Mpi;
use op2::prelude::*;
use op2::{DeviceLayout, Increments, MpiDeviceBuffers, RuntimeOptions, TransferStats};
use op2_airfoil::{generate, AirfoilDsl, Constants};

/// Records a set's exchange sends and receives on this rank.
fn halo_records(set: &Set) -> (u64, u64) {
    let lists = set
        .distribution()
        .and_then(|d| d.halo_lists())
        .expect("a distributed set gives its lists");
    (lists.exports.len() as u64, lists.imports.len() as u64)
}

pub fn airfoil_on_a_device_moves_only_halos(mpi: &Mpi) {
    let Ok(probe) = Runtime::new(Backend::OpenCl) else {
        eprintln!("skipped: no OpenCL device");
        return;
    };
    drop(probe);
    let seq = Runtime::new(Backend::Seq).unwrap();
    for (i, j) in [(12, 8), (50, 75)] {
        for (increments, layout, on_device) in [
            (Increments::Colouring, DeviceLayout::Auto, true),
            (Increments::Atomics, DeviceLayout::Auto, true),
            (Increments::Colouring, DeviceLayout::StructOfArrays, true),
            (Increments::Atomics, DeviceLayout::Auto, false),
        ] {
            let mesh = generate(i, j);
            let c = Constants::default();
            let one = AirfoilDsl::new(&mesh, &c).unwrap();
            let (local, _) = AirfoilDsl::new(&mesh, &c).unwrap().distribute(mpi).unwrap();
            let options = RuntimeOptions::default()
                .increments(increments)
                .device_layout(layout)
                .device_halos(on_device);
            let rt = Runtime::with_options(Backend::OpenCl, options).unwrap();
            let what = format!(
                "{i}x{j}, {increments:?}, {layout:?}, device halos {on_device}, rank {} of {}",
                mpi.rank(),
                mpi.size()
            );
            let check = |iteration: usize| {
                let (want, got) = (one.iteration(&seq).unwrap(), local.iteration(&rt).unwrap());
                assert!(
                    ((got - want) / want).abs() <= 1e-12,
                    "{what}, iteration {iteration}: rms {got:e} vs one process {want:e}"
                );
            };
            // The first iteration takes every Dat up.
            check(0);
            let dats = [&local.q, &local.qold, &local.x, &local.adt, &local.res];
            let before: Vec<TransferStats> = dats.iter().map(|d| d.transfer_stats()).collect();
            let exchanged: Vec<u64> = dats.iter().map(|d| d.halo_exchanges()).collect();
            for iteration in 1..4 {
                check(iteration);
            }
            if !on_device {
                // Through the host: q goes down and up whole per exchange.
                let (a, b) = (local.q.transfer_stats(), before[0]);
                let n = local.q.halo_exchanges() - exchanged[0];
                assert_eq!(a.halo_exchanges, b.halo_exchanges, "{what}");
                assert!(a.uploads - b.uploads >= n, "{what}: {a:?} after {b:?}");
                continue;
            }
            let (cells_out, cells_in) = halo_records(&local.cells);
            for ((d, b), e) in dats.iter().zip(&before).zip(&exchanged) {
                let a = d.transfer_stats();
                assert_eq!(
                    (a.uploads, a.downloads),
                    (b.uploads, b.downloads),
                    "{what}: `{}` moved whole after the first iteration",
                    d.name()
                );
                // Every exchange of a cell Dat went through the device,
                // moving its halo's records and nothing else.
                let n = d.halo_exchanges() - e;
                let record = (d.dim() * 8) as u64;
                assert_eq!(a.halo_exchanges - b.halo_exchanges, n, "{what}: `{}`", d.name());
                if d.set().same(&local.cells) {
                    assert_eq!(
                        (a.halo_bytes_down - b.halo_bytes_down, a.halo_bytes_up - b.halo_bytes_up),
                        (n * cells_out * record, n * cells_in * record),
                        "{what}: `{}`'s halo bytes",
                        d.name()
                    );
                }
            }
            // q and adt are read through maps after being written: their
            // halos were exchanged (on any rank that has neighbours).
            if mpi.size() > 1 {
                let q_exchanges = local.q.halo_exchanges() - exchanged[0];
                assert!(q_exchanges >= 3, "{what}: q exchanged {q_exchanges} times");
            }
        }
    }
}

/// `OP2_MPI_DEVICE_BUFFERS=on` where MPI cannot take the device's memory
/// (OpenCL's buffers have no address) is an error naming the variable and
/// why, on every rank alike, before any message is sent.
pub fn device_buffers_that_cannot_be_had_are_refused(mpi: &Mpi) {
    let options = RuntimeOptions::default().mpi_device_buffers(MpiDeviceBuffers::On);
    let Ok(rt) = Runtime::with_options(Backend::OpenCl, options) else {
        return;
    };
    let mesh = generate(12, 8);
    let (local, _) = AirfoilDsl::new(&mesh, &Constants::default())
        .unwrap()
        .distribute(mpi)
        .unwrap();
    let e = local.iteration(&rt).unwrap_err();
    assert!(
        matches!(&e, op2::Error::InvalidOption { option: "OP2_MPI_DEVICE_BUFFERS", reason } if reason.contains("no address")),
        "{e}"
    );
}

#[op2::kernel]
fn carry(w: &mut f64, a: &mut f64, b: &mut f64) {
    *a += *w;
    *b += 2.0 * *w;
    *w += 1.0;
}

/// Sets `w`'s owned values from their global ids (a host write: the halo
/// is stale and the host holds the newer copy).
fn write_on_host(w: &Dat<f64>) {
    let set = w.set();
    let ids = set.try_global_ids().unwrap().into_owned();
    let owned = set.regions().owned_size();
    let mut v = w.data_mut();
    for (value, id) in v.iter_mut().zip(&ids[..owned]) {
        *value = 10.0 + (id % 29) as f64;
    }
}

/// A Dat exchanged through the host (here: the host wrote it last) by an
/// overlapped loop that also writes it: the halo that arrived while the
/// core elements ran is the one the exec halo computes with, not the device
/// copy's older one. `w` is read and written directly on edges, and the
/// loop increments through both ends of an edge, so the exec-halo edges run
/// here with the values their owners sent, and their increments reach
/// owned nodes.
pub fn a_halo_through_the_host_survives_an_overlapped_write(mpi: &Mpi) {
    let Ok(probe) = Runtime::new(Backend::OpenCl) else {
        return;
    };
    drop(probe);
    let n = 400;
    let nodes = Set::new("nodes", n).unwrap();
    let table: Vec<i32> = (0..n as i32)
        .flat_map(|i| [i, (i + 1) % n as i32, i, (i * 37 + 5) % n as i32])
        .collect();
    let edges = Set::new("edges", table.len() / 2).unwrap();
    let e2n = Map::new("e2n", &edges, &nodes, 2, table).unwrap();
    let w = Dat::<f64>::zeros("w", &edges, 1).unwrap();
    let acc = Dat::<f64>::zeros("acc", &nodes, 1).unwrap();
    let d = mpi.distribute(&[&nodes, &edges], &[&e2n], &nodes).unwrap();
    let (l_edges, l_e2n, l_w, l_acc) = (
        d.set(&edges).unwrap(),
        d.map(&e2n).unwrap(),
        d.dat(&w).unwrap(),
        d.dat(&acc).unwrap(),
    );
    let seq = Runtime::new(Backend::Seq).unwrap();
    for halos_on_device in [false, true] {
        let rt =
            Runtime::with_options(Backend::OpenCl, RuntimeOptions::default().device_halos(halos_on_device)).unwrap();
        for round in 0..2 {
            write_on_host(&w);
            write_on_host(&l_w);
            par_loop!(seq, carry, edges, w(RW), acc(INC, e2n[0]), acc(INC, e2n[1])).unwrap();
            par_loop!(rt, carry, l_edges, l_w(RW), l_acc(INC, l_e2n[0]), l_acc(INC, l_e2n[1])).unwrap();
            // The device's copy is current: a loop that reads w's halo
            // exchanges it again, on the device where it may.
            par_loop!(seq, carry, edges, w(RW), acc(INC, e2n[0]), acc(INC, e2n[1])).unwrap();
            par_loop!(rt, carry, l_edges, l_w(RW), l_acc(INC, l_e2n[0]), l_acc(INC, l_e2n[1])).unwrap();
            if let Some(all) = d.gather(&l_acc).unwrap() {
                assert_eq!(
                    all,
                    acc.to_vec(),
                    "device halos {halos_on_device}, round {round}, {} ranks",
                    mpi.size()
                );
            }
        }
    }
}
