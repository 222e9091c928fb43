//! A spatial message build's device steps (`op2_backends::device`'s
//! counting sort, per-bin order and gather; `codegen::binning_source`) on
//! OpenCL (PoCL in CI): on random positions, some outside the grid and some
//! on bin edges, with and without sent flags and with ids in any order, the
//! device gives the bins, the order and the gathered values of the host's
//! build, bit for bit. (CUDA runs the same source; `cuda_ptx.rs` compiles it.)
#![cfg(feature = "opencl")]

use op2::prelude::*;
use op2::{Coordinate, RuntimeOptions};
use op2_backends::OpenClExecutor;

/// A small counter-based generator (splitmix64).
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A coordinate in `[-1, side + 1)`, on a bin edge one time in eight.
fn coordinate(i: u64, side: f64, width: f64) -> f64 {
    let r = mix(i);
    if r % 8 == 0 {
        ((r >> 8) % (side / width) as u64) as f64 * width
    } else {
        (r >> 11) as f64 / (1u64 << 53) as f64 * (side + 2.0) - 1.0
    }
}

/// What a build must give: per bin, the senders that send, by key.
fn reference(grid: &SpatialGrid, p: &[f64], flags: Option<&[i32]>, ids: Option<&[i64]>) -> (Vec<i32>, Vec<u32>) {
    let dims = grid.dims();
    let n = p.len() / dims;
    let mut by_bin: Vec<Vec<u32>> = vec![Vec::new(); grid.bin_count()];
    for e in 0..n {
        if flags.is_some_and(|f| f[e] == 0) {
            continue;
        }
        let z = if dims == 3 { p[3 * e + 2] } else { 0.0 };
        by_bin[grid.bin_of([p[dims * e], p[dims * e + 1], z])].push(e as u32);
    }
    let mut starts = vec![0];
    let mut order = Vec::new();
    for mut bin in by_bin {
        bin.sort_by_key(|&e| ids.map_or(e as i64, |ids| ids[e as usize]));
        order.extend(bin);
        starts.push(order.len() as i32);
    }
    (starts, order)
}

fn check<T: Coordinate>(exec: &OpenClExecutor, grid: &SpatialGrid, n: usize, to_t: impl Fn(f64) -> T, label: &str) {
    let dims = grid.dims();
    let (lo, hi) = grid.bounds();
    let side = hi[0] - lo[0];
    let width = 1.0 / grid.params()[3];
    let p: Vec<T> = (0..(dims * n) as u64)
        .map(|i| to_t(coordinate(i, side, width)))
        .collect();
    let p64: Vec<f64> = p.iter().map(|&x| x.into()).collect();
    let flags: Vec<i32> = (0..n as u64).map(|e| i32::from(mix(e + 99) % 3 != 0)).collect();
    // Ids in no particular order (a permuted population).
    let ids: Vec<i64> = (0..n as i64).map(|e| (e * 7919) % n as i64).collect();
    for (flags, ids) in [
        (None, None),
        (Some(&flags[..]), None),
        (Some(&flags[..]), Some(&ids[..])),
    ] {
        let case = format!("{label}, flags {}, ids {}", flags.is_some(), ids.is_some());
        let (starts, order, gathered) = exec
            .bin_positions(&p, grid, flags, ids)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let want = reference(grid, &p64, flags, ids);
        assert!(starts == want.0, "{case}: bins differ");
        assert!(order == want.1, "{case}: order differs");
        let want_gathered: Vec<T> = order
            .iter()
            .flat_map(|&e| p[dims * e as usize..dims * (e as usize + 1)].to_vec())
            .collect();
        assert!(gathered == want_gathered, "{case}: gathered values differ");
    }
}

#[test]
fn the_device_bins_as_the_host_does() {
    let exec = OpenClExecutor::new(&RuntimeOptions::default()).expect("an OpenCL device (PoCL in CI)");
    let clamp3 = SpatialGrid::new_3d("c3", [0.0; 3], [6.0; 3], 1.0, Boundary::Clamp).unwrap();
    check(&exec, &clamp3, 3000, |x| x as f32, "3-D clamped f32");
    let wrap3 = SpatialGrid::new_3d("w3", [0.0; 3], [5.0; 3], 1.25, Boundary::Wrap).unwrap();
    check(&exec, &wrap3, 2000, |x| x, "3-D wrapped f64");
    let clamp2 = SpatialGrid::new_2d("c2", [0.0; 2], [8.0; 2], 2.0, Boundary::Clamp).unwrap();
    check(&exec, &clamp2, 1500, |x| x, "2-D clamped f64");
    let cells = SpatialGrid::discrete_2d("d", [9, 7], Boundary::Wrap).unwrap();
    check(&exec, &cells, 1000, |x| x.floor() as i32, "discrete wrapped i32");
    // Nothing to bin: every bin empty.
    check(&exec, &clamp2, 0, |x| x, "no senders");
}

#[test]
fn the_device_build_matches_a_host_build_of_a_message_list() {
    let exec = OpenClExecutor::new(&RuntimeOptions::default()).expect("an OpenCL device (PoCL in CI)");
    let grid = SpatialGrid::new_3d("g", [0.0; 3], [4.0; 3], 1.0, Boundary::Clamp).unwrap();
    let n = 500;
    let p: Vec<f32> = (0..3 * n as u64).map(|i| coordinate(i, 4.0, 1.0) as f32).collect();
    let agents = Set::new("agents", n).unwrap();
    let pos = Dat::from_vec("pos", &agents, 3, p.clone()).unwrap();
    let list = MessageList::spatial("near", grid, &pos).unwrap();
    let m_pos = list.carry(&pos).unwrap();
    let count = list.build().unwrap();
    let (_, order, gathered) = exec.bin_positions(&p, &grid, None, None).unwrap();
    assert_eq!(order.len(), count);
    assert!(
        gathered[..] == m_pos.to_vec()[..3 * count],
        "the device's messages are not the host build's"
    );
}
