//! A halo exchange on the device without MPI: a distribution of one process
//! that is its own neighbour (its halo cells are copies of some of its own
//! cells, as across a periodic boundary). The device path packs, hands the
//! records to the distribution and unpacks them as a two-rank run does, so
//! the CUDA pack and unpack (in columns, a GPU's default) run wherever a GPU
//! does, MPI or not.

use std::sync::Arc;

use op2::prelude::*;
use op2::{DeviceLayout, TransferStats};
use op2_core::{DatHandle, Distribution, HaloLists, PendingExchange, PendingRecords, RecordBuffer, SetRegions};

#[op2::kernel]
fn bump(v: &mut [f64; 3], k: &f64) {
    v[0] += *k;
    v[1] *= 2.0;
    v[2] = v[0] - v[1];
}

#[op2::kernel]
fn edge_sum(out: &mut [f64; 3], v: &[[f64; 3]; 2]) {
    for c in 0..3 {
        out[c] = v[0][c] + 10.0 * v[1][c];
    }
}

/// Owned cells and halo cells: halo cell `OWNED + k` copies cell `EXPORTS[k]`.
const OWNED: usize = 8;
const EXPORTS: [u32; 4] = [5, 0, 7, 2];

/// One process, its own neighbour.
struct Loopback {
    lists: Option<Arc<HaloLists>>,
}

impl Loopback {
    fn new(exports: &[u32], halo: std::ops::Range<usize>) -> Loopback {
        Loopback {
            lists: HaloLists::new(exports.to_vec(), &[halo]).map(Arc::new),
        }
    }
}

/// Nothing in flight: the copies were made at the start.
struct Done;

impl PendingExchange for Done {
    fn wait(self: Box<Self>) -> op2::Result<()> {
        Ok(())
    }
}

struct Returned(RecordBuffer, RecordBuffer);

impl PendingRecords for Returned {
    fn wait(self: Box<Self>) -> op2::Result<(RecordBuffer, RecordBuffer)> {
        Ok((self.0, self.1))
    }
}

impl Distribution for Loopback {
    fn start_exchange(&self, dat: &dyn DatHandle) -> op2::Result<Box<dyn PendingExchange>> {
        // The host's way: owned values copied into the halo in place.
        let record = dat.dim() * dat.scalar().size();
        if let Some(lists) = &self.lists {
            // SAFETY: the loop holds the Dat's borrow; exports and halo
            // elements lie within it.
            let bytes = unsafe { std::slice::from_raw_parts_mut(dat.host_bytes(), dat.byte_len()) };
            for (k, &e) in lists.exports.iter().enumerate() {
                let (from, to) = (e as usize * record, (lists.first + k) * record);
                bytes.copy_within(from..from + record, to);
            }
        }
        Ok(Box::new(Done))
    }

    fn all_reduce(&self, _: &mut [u8], _: op2::ScalarType, _: op2::Access) -> op2::Result<()> {
        Ok(())
    }

    fn rank_and_size(&self) -> (usize, usize) {
        (0, 1)
    }

    fn halo_lists(&self) -> Option<Arc<HaloLists>> {
        self.lists.clone()
    }

    fn start_record_exchange(
        &self,
        send: RecordBuffer,
        mut receive: RecordBuffer,
        _record: usize,
    ) -> op2::Result<Box<dyn PendingRecords>> {
        // What was sent comes back, in the same order.
        receive.as_mut_slice().copy_from_slice(send.as_slice());
        Ok(Box::new(Returned(send, receive)))
    }
}

/// Cells with a halo of copies, edges from each owned cell to another
/// (some in the halo); `v` bumped on the owned cells, then read through
/// the map: `out` after, and the transfers of `v` after its first upload.
fn run(rt: &Runtime, layout: DeviceLayout) -> (Vec<f64>, Vec<f64>, TransferStats, TransferStats) {
    let regions = |owned, halo| SetRegions {
        core: 0,
        owned,
        exec_halo: 0,
        nonexec_halo: halo,
    };
    let cells = Set::distributed(
        "cells",
        regions(OWNED, EXPORTS.len()),
        Arc::new(Loopback::new(&EXPORTS, OWNED..OWNED + EXPORTS.len())),
    )
    .unwrap();
    let edges = Set::distributed("edges", regions(OWNED, 0), Arc::new(Loopback::new(&[], 0..0))).unwrap();
    let ends: Vec<i32> = (0..OWNED as i32).flat_map(|e| [e, (e + 5) % 12]).collect();
    let e2c = Map::new("e2c", &edges, &cells, 2, ends).unwrap();
    let start: Vec<f64> = (0..3 * (OWNED + EXPORTS.len())).map(|i| i as f64 * 0.5).collect();
    let v = Dat::from_vec("v", &cells, 3, start).unwrap();
    v.set_device_layout(layout);
    let out = Dat::<f64>::zeros("out", &edges, 3).unwrap();
    let k = Global::scalar("k", 1.5);
    par_loop!(rt, bump, cells, v(RW), k(READ)).unwrap();
    par_loop!(rt, edge_sum, edges, out(WRITE), v(READ, e2c)).unwrap();
    let first = v.transfer_stats();
    par_loop!(rt, bump, cells, v(RW), k(READ)).unwrap();
    par_loop!(rt, edge_sum, edges, out(WRITE), v(READ, e2c)).unwrap();
    let last = v.transfer_stats();
    (out.to_vec(), v.to_vec(), first, last)
}

pub fn halos_are_packed_and_unpacked_on_the_device_without_mpi(rt: Runtime) {
    let seq = Runtime::new(Backend::Seq).unwrap();
    // seq exchanges on the host: the halo copies through `start_exchange`.
    let (want, v, _, _) = run(&seq, DeviceLayout::Auto);
    // Edge 4 reads cell 4 and cell 9, the halo copy of cell 0.
    assert_eq!(v[27..30], v[0..3], "the halo copy");
    let edge4: Vec<f64> = (0..3).map(|c| v[12 + c] + 10.0 * v[c]).collect();
    assert_eq!(want[12..15], edge4[..]);
    for layout in [DeviceLayout::ArrayOfStructs, DeviceLayout::StructOfArrays] {
        let (got, _, first, last) = run(&rt, layout);
        assert_eq!(got, want, "{layout:?}");
        // Two exchanges of four 24-byte records, on the device; after the
        // first upload, nothing whole.
        assert_eq!((first.uploads, first.downloads), (1, 0), "{layout:?}: {first:?}");
        assert_eq!((last.uploads, last.downloads), (1, 0), "{layout:?}: {last:?}");
        assert_eq!(last.halo_exchanges, 2, "{layout:?}");
        let bytes = 2 * EXPORTS.len() as u64 * 24;
        assert_eq!((last.halo_bytes_down, last.halo_bytes_up), (bytes, bytes), "{layout:?}");
    }
}
