//! A spatial message build's device steps (`op2_backends::device`'s
//! counting sort, per-bin order and gather; `codegen::binning_source`) on
//! OpenCL (PoCL in CI): on random positions, some outside the grid and some
//! on bin edges, with and without sent flags and with ids in any order, the
//! device gives the bins, the order and the gathered values of the host's
//! build, bit for bit; lists built in device memory equal lists built on
//! the host; and the device work's calls refuse buffers that do not fit.
//! (CUDA runs the same sources; `cuda_ptx.rs` compiles them.)
#![cfg(feature = "opencl")]

use op2::prelude::*;
use op2::{Coordinate, RuntimeOptions, ScopedThreads, Workers};
use op2_backends::OpenClExecutor;
use op2_core::{DeviceBuffer, GatherJob, GatherTail, LookupJob, ScalarType, SelectJob};

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
            .bin_positions(&p, (grid.dims(), grid.bin_count(), &grid.params()), flags, ids)
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
    let (_, order, gathered) = exec
        .bin_positions(&p, (grid.dims(), grid.bin_count(), &grid.params()), None, None)
        .unwrap();
    assert_eq!(order.len(), count);
    assert!(
        gathered[..] == m_pos.to_vec()[..3 * count],
        "the device's messages are not the host build's"
    );
    // What the kernels would read past the end of: refused first.
    let params = grid.params();
    let bins = grid.bin_count();
    for (dims, p, params, flags, want) in [
        (0, &p[..], &params[..], None, "positions are 2-D or 3-D"),
        (1, &p[..], &params[..], None, "positions are 2-D or 3-D"),
        (3, &p[..4], &params[..], None, "whole senders"),
        (3, &p[..], &params[..7], None, "a grid has 8"),
        (
            3,
            &p[..],
            &params[..],
            Some(&[1i32; 3][..]),
            "3 flags or ids for 500 senders",
        ),
    ] {
        let e = exec.bin_positions(p, (dims, bins, params), flags, None).unwrap_err();
        assert!(e.to_string().contains(want), "{e}");
    }
}

/// Senders permuted (their ids no longer ascend), some not sending: a
/// spatial and a brute-force list built in device memory (an OpenCL
/// runtime) hold the messages of the same lists built on the host.
#[test]
fn lists_built_in_device_memory_equal_lists_built_on_the_host() {
    let rt = Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)");
    let n = 700;
    let grid = SpatialGrid::new_2d("g", [0.0; 2], [5.0; 2], 1.0, Boundary::Wrap).unwrap();
    let messages = |workers: &dyn Workers| {
        let agents = Set::dynamic("agents", n, n).unwrap();
        let p: Vec<f64> = (0..2 * n as u64).map(|i| coordinate(i, 5.0, 1.0)).collect();
        let pos = Dat::from_vec("pos", &agents, 2, p).unwrap();
        let tag = Dat::from_vec("tag", &agents, 1, (0..n as i64).map(|i| i * 10).collect()).unwrap();
        let sent = Dat::from_vec(
            "sent",
            &agents,
            1,
            (0..n as u64).map(|e| i32::from(mix(e) % 4 != 0)).collect(),
        )
        .unwrap();
        let scrambled: Vec<u32> = (0..n as u32).map(|e| (e * 263) % n as u32).collect();
        agents.permute(&scrambled).unwrap();
        let spatial = MessageList::spatial("near", grid, &pos).unwrap();
        let all = MessageList::brute_force("all", &agents).unwrap();
        let (s_tag, a_tag) = (spatial.carry(&tag).unwrap(), all.carry(&tag).unwrap());
        let counts = (
            spatial.build_sent_on(&sent, workers).unwrap(),
            all.build_sent_on(&sent, workers).unwrap(),
        );
        (
            counts,
            s_tag.to_vec()[..counts.0].to_vec(),
            a_tag.to_vec()[..counts.1].to_vec(),
        )
    };
    let on_device = messages(&rt);
    let on_host = messages(&ScopedThreads::one());
    assert!(on_device.0 .0 > n / 2 && on_device.0 .0 < n, "{:?}", on_device.0);
    assert_eq!(on_device, on_host);
}

/// `DeviceWork`'s calls are safe: a buffer too small for the job, or made
/// by another device context, is an error naming it, never a launch past
/// its end.
#[test]
fn device_work_refuses_buffers_too_small_or_from_another_context() {
    let rt = Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)");
    let other = Runtime::new(Backend::OpenCl).unwrap();
    let work = rt.device_work().expect("a device runtime lends its device");
    let (big, small) = (
        work.new_buffer("big", 4096).unwrap(),
        work.new_buffer("small", 16).unwrap(),
    );
    let foreign = other.device_work().unwrap().new_buffer("foreign", 4096).unwrap();
    let gather = |dst: &dyn DeviceBuffer, n: usize| {
        work.gather(&GatherJob {
            n,
            words: 2,
            order: &*big,
            src: &*big,
            dst,
            dst_first: 0,
            tail: None,
        })
    };
    let e = gather(&*small, 100).unwrap_err();
    assert!(e.to_string().contains("destination holds 16 bytes where 800"), "{e}");
    let e = gather(&*foreign, 100).unwrap_err();
    assert!(e.to_string().contains("another device context"), "{e}");
    gather(&*big, 100).unwrap();
    let select = |flags: Option<&dyn DeviceBuffer>, out: &dyn DeviceBuffer| {
        work.select(&SelectJob {
            n: 200,
            flags,
            mask: 1,
            when_set: true,
            out,
        })
    };
    let e = select(None, &*small).unwrap_err();
    assert!(e.to_string().contains("selected indices holds 16 bytes"), "{e}");
    let e = select(Some(&*small), &*big).unwrap_err();
    assert!(e.to_string().contains("flags holds 16 bytes"), "{e}");
    assert_eq!(select(None, &*big).unwrap(), 200, "no flags: every element");
    let e = work.fill_ids(&*small, 1, 2, 7).unwrap_err();
    assert!(e.to_string().contains("ids holds 16 bytes where 24"), "{e}");
    let e = work.fill_zero(&*foreign, 4).unwrap_err();
    assert!(e.to_string().contains("another device context"), "{e}");
}

/// The device work a distributed run's exchanges use: each sender's bin
/// looked up in a table (the rank that owns it), flags marked at given
/// elements, and a gather that reads past a source's elements from a
/// second buffer (ghost records after the senders): each as the host
/// computes it.
#[test]
fn device_work_looks_up_bins_marks_flags_and_gathers_from_a_tail() {
    let rt = Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)");
    let work = rt.device_work().expect("a device runtime lends its device");
    let upload = |name: &str, bytes: &[u8]| {
        let b = work.new_buffer(name, bytes.len().max(8)).unwrap();
        b.upload(bytes).unwrap();
        b
    };
    let download_i32 = |b: &dyn DeviceBuffer, n: usize| {
        let mut v = vec![0u8; 4 * n];
        b.download(&mut v).unwrap();
        v.chunks_exact(4)
            .map(|w| i32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect::<Vec<_>>()
    };
    // Lookup: positions in and around a clamped and a wrapped grid.
    for boundary in [Boundary::Clamp, Boundary::Wrap] {
        let grid = SpatialGrid::new_2d("g", [0.0; 2], [8.0; 2], 1.0, boundary).unwrap();
        let n = 1000;
        let p: Vec<f64> = (0..2 * n as u64).map(|i| coordinate(i, 8.0, 1.0)).collect();
        let table: Vec<i32> = (0..grid.bin_count() as u64).map(|b| (mix(b) % 5) as i32).collect();
        let (pos, params, tab) = (
            upload("pos", &le_bytes(&p, f64::to_le_bytes)),
            upload("grid", &le_bytes(&grid.params(), f64::to_le_bytes)),
            upload("table", &le_bytes(&table, i32::to_le_bytes)),
        );
        let out = work.new_buffer("out", 4 * n).unwrap();
        work.lookup(&LookupJob {
            position: ScalarType::F64,
            dims: 2,
            senders: n,
            bins: grid.bin_count(),
            positions: &*pos,
            grid: &*params,
            table: &*tab,
            out: &*out,
        })
        .unwrap();
        let want: Vec<i32> = (0..n)
            .map(|e| table[grid.bin_of([p[2 * e], p[2 * e + 1], 0.0])])
            .collect();
        assert_eq!(download_i32(&*out, n), want, "{boundary:?}");
        // A table shorter than the bins is refused.
        let e = work
            .lookup(&LookupJob {
                position: ScalarType::F64,
                dims: 2,
                senders: n,
                bins: grid.bin_count() + 100,
                positions: &*pos,
                grid: &*params,
                table: &*tab,
                out: &*out,
            })
            .unwrap_err();
        assert!(e.to_string().contains("table holds"), "{e}");
    }
    // Mark: an index past the flags is skipped.
    let flags = upload("flags", &le_bytes(&[1i32; 10], i32::to_le_bytes));
    let at = upload("at", &le_bytes(&[3u32, 7, 9, 5000], u32::to_le_bytes));
    work.mark(&*flags, 10, &*at, 4, -2).unwrap();
    assert_eq!(download_i32(&*flags, 10), vec![1, 1, 1, -2, 1, 1, 1, -2, 1, -2]);
    let e = work.mark(&*flags, 10, &*at, 5, 0).unwrap_err();
    assert!(e.to_string().contains("indices holds 16 bytes where 20"), "{e}");
    // A gather from a source of 4 elements and a tail of 3 (2 words each).
    let src = upload("src", &le_bytes(&[10i32, 11, 20, 21, 30, 31, 40, 41], i32::to_le_bytes));
    let tail = upload("tail", &le_bytes(&[50i32, 51, 60, 61, 70, 71], i32::to_le_bytes));
    let order = upload("order", &le_bytes(&[2u32, 4, 0, 6, 5, 7, 3], u32::to_le_bytes));
    let dst = upload("dst", &le_bytes(&[-1i32; 16], i32::to_le_bytes));
    work.gather(&GatherJob {
        n: 7,
        words: 2,
        order: &*order,
        src: &*src,
        dst: &*dst,
        dst_first: 1,
        tail: Some(GatherTail { first: 4, src: &*tail }),
    })
    .unwrap();
    assert_eq!(
        download_i32(&*dst, 16),
        vec![-1, -1, 30, 31, 50, 51, 10, 11, 70, 71, 60, 61, -1, -1, 40, 41],
        "index 7 is past the tail's 3 elements: skipped"
    );
}

/// The bytes of `v`, little-endian (the device's order on PoCL and GPUs).
fn le_bytes<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

#[op2::kernel]
fn add_ten(x: &mut i32) {
    *x += 10;
}

/// A selection by equal flags on the device, as a subset whose indices
/// stay there: a loop over it touches exactly the agents in that state
/// (as on the host), and its indices come back only when the host asks.
#[test]
fn a_subset_selected_on_the_device_loops_there_and_reads_back_on_demand() {
    let rt = Runtime::new(Backend::OpenCl).expect("an OpenCL device (PoCL in CI)");
    let work = rt.device_work().expect("a device runtime lends its device");
    let n = 3000;
    let set = Set::new("agents", n).unwrap();
    let states: Vec<i32> = (0..n as u64).map(|i| (mix(i) % 3) as i32).collect();
    let flags = work.new_buffer("states", 4 * n).unwrap();
    let bytes: Vec<u8> = states.iter().flat_map(|s| s.to_le_bytes()).collect();
    flags.upload(&bytes).unwrap();
    let out = work.new_buffer("in state 2", 4 * n).unwrap();
    let count = work.select_equal(n, &*flags, 2, &*out).unwrap();
    let want: Vec<i32> = (0..n as i32).filter(|&i| states[i as usize] == 2).collect();
    assert_eq!(count, want.len());
    let subset = Subset::selected_on_device("in state 2", &set, out, count).unwrap();
    assert!(!subset.on_host(), "the indices stay on the device");
    let x = Dat::<i32>::from_vec("x", &set, 1, states.clone()).unwrap();
    par_loop!(rt, add_ten, subset, x(RW)).unwrap();
    assert!(!subset.on_host(), "a device loop reads them there");
    let plus: Vec<i32> = states.iter().map(|&s| if s == 2 { s + 10 } else { s }).collect();
    assert_eq!(x.to_vec(), plus);
    assert_eq!(subset.indices(), &want[..], "read back on demand");
    // The same subset on a host backend loops over the read-back indices.
    let seq = Runtime::new(Backend::Seq).unwrap();
    par_loop!(seq, add_ten, subset, x(RW)).unwrap();
    let twice: Vec<i32> = plus.iter().map(|&s| if s == 12 { s + 10 } else { s }).collect();
    assert_eq!(x.to_vec(), twice);
    // A count past the set or the buffer is refused.
    let small = work.new_buffer("small", 16).unwrap();
    let e = Subset::selected_on_device("bad", &set, small, 5).unwrap_err();
    assert!(
        e.to_string()
            .contains("5 elements selected on a device, in a buffer of 16 bytes"),
        "{e}"
    );
}

/// Children of another set appended in device memory refuse a parents'
/// list too short for them, a column for a Dat the set does not have,
/// and a column too short for the parents' set, leaving the set as it was.
#[test]
fn an_adoption_on_the_device_refuses_buffers_that_do_not_fit() {
    use op2_core::agent_support::{DeviceAdoption, NewIds};
    let rt = Runtime::new(Backend::OpenCl).unwrap();
    let work = rt.device_work().expect("a device runtime lends its device");
    let young = Set::dynamic("young", 2, 8).unwrap();
    let age = Dat::from_vec("young.age", &young, 1, vec![5.0f64, 6.0]).unwrap();
    let population = young.population().expect("dynamic");
    let parents = work.new_buffer("parents", 8).unwrap();
    parents.upload(&le_bytes(&[0u32, 2], u32::to_le_bytes)).unwrap();
    let column = work.new_buffer("ages", 3 * 8).unwrap();
    let short = work.new_buffer("short", 8).unwrap();
    let refused = |births: usize, columns: &[(&str, &dyn DeviceBuffer)], says: &str| {
        let adoption = DeviceAdoption {
            parents: &*parents,
            births,
            source_len: 3,
            columns,
            ids: NewIds::Next(births),
            generation: population.generation(),
        };
        let e = population
            .adopt_on_device("young", &adoption, work)
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{e}\nshould say: {says}");
        assert_eq!((young.size(), age.to_vec()), (2, vec![5.0, 6.0]), "unchanged");
    };
    refused(
        3,
        &[("young.age", &*column)],
        "3 children need as many parents' indices",
    );
    refused(
        2,
        &[("young.size", &*column)],
        "`young.size`, which is no Dat of the set",
    );
    refused(2, &[("young.age", &*short)], "a column of 8 bytes, and 24 are needed");
    // What fits appends the parents' values.
    column.upload(&le_bytes(&[1.0f64, 2.0, 3.0], f64::to_le_bytes)).unwrap();
    let adoption = DeviceAdoption {
        parents: &*parents,
        births: 2,
        source_len: 3,
        columns: &[("young.age", &*column)],
        ids: NewIds::Next(2),
        generation: population.generation(),
    };
    population.adopt_on_device("young", &adoption, work).unwrap();
    assert_eq!(age.to_vec(), vec![5.0, 6.0, 1.0, 3.0]);
    assert_eq!(young.global_ids(), vec![0, 1, 2, 3]);
}
