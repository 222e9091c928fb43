//! Sets of more than `i32::MAX` elements (`Set::new_long`) and maps with
//! 64-bit entries into them (`LongMap`): loops over a small set
//! increment and read elements past 2^31 of a huge set through an arity-1
//! long map, on the host backends, without the huge Dat taking memory (its
//! zeros come lazily from the system; a device would copy all of it, so
//! devices run long maps on small sets in the conformance suite). Features
//! that index elements with 32-bit integers refuse such sets and maps,
//! naming them.

use op2::prelude::*;
use op2::{Error, RaggedMap, Stencil, Subset};

#[path = "support/runtimes.rs"]
mod runtimes;

/// Just past what 32-bit indices reach.
const HUGE: usize = i32::MAX as usize + 64;

#[op2::kernel]
fn deposit(w: &f32, t: &mut f32) {
    *t += *w;
}

#[op2::kernel]
fn fetch(t: &f32, out: &mut f32) {
    *out = *t * 2.0;
}

/// This process's resident memory in bytes.
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn loops_reach_past_i32_max_through_a_long_map() {
    let host = runtimes::backends()
        .into_iter()
        .filter(|rt| matches!(rt.backend(), Backend::Seq | Backend::Rayon | Backend::Jit));
    for rt in host {
        let before = resident();
        let huge = Set::new_long("huge", HUGE).unwrap();
        assert_eq!(huge.size(), HUGE);
        let last = HUGE as i64 - 1;
        let max = i64::from(i32::MAX);
        // Probes 3 and 5 reach one element: their increments both land.
        let at = vec![0, max - 1, max, max + 40, last, max + 40];
        let probes = Set::new("probes", at.len()).unwrap();
        let m = LongMap::new("probe_to_huge", &probes, &huge, 1, at.clone()).unwrap();
        let field = Dat::<f32>::zeros("field", &huge, 1).unwrap();
        let w = Dat::from_vec("w", &probes, 1, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        par_loop!(&rt, deposit, probes, w(READ), field(INC, m[0])).unwrap();
        let out = Dat::<f32>::zeros("out", &probes, 1).unwrap();
        par_loop!(&rt, fetch, probes, field(READ, m[0]), out(WRITE)).unwrap();
        let name = format!("{:?}", rt.backend());
        eprintln!("{name}: reached past i32::MAX");
        assert_eq!(out.to_vec(), vec![2.0, 4.0, 6.0, 20.0, 10.0, 20.0], "{name}");
        {
            let values = field.data_ro();
            assert_eq!(values.len(), HUGE);
            let want = [1.0, 2.0, 3.0, 10.0, 5.0, 10.0];
            for (&a, &v) in at.iter().zip(&want) {
                assert_eq!(values[a as usize], v, "{name}: element {a}");
            }
            for a in [1, max as usize - 2, max as usize + 1, max as usize + 39, HUGE - 2] {
                assert_eq!(values[a], 0.0, "{name}: element {a} was not reached");
            }
        }
        // The huge Dat took only the pages the loops touched.
        let grown = resident().saturating_sub(before);
        assert!(grown < 256 << 20, "{name}: resident memory grew by {grown} bytes");
    }
}

#[test]
fn long_maps_refuse_entries_outside_their_target() {
    let huge = Set::new_long("huge", HUGE).unwrap();
    let small = Set::new("small", 2).unwrap();
    let e = LongMap::new("m", &small, &huge, 1, vec![0, HUGE as i64]).unwrap_err();
    assert!(
        matches!(e, Error::MapEntryOutOfRange { position: 1, value, .. } if value == HUGE as i64),
        "{e:?}"
    );
    let e = LongMap::new("m", &small, &huge, 1, vec![-1, 0]).unwrap_err();
    assert!(matches!(e, Error::MapEntryOutOfRange { position: 0, .. }), "{e:?}");
    let e = LongMap::new("m", &small, &huge, 2, vec![0, 1]).unwrap_err();
    assert!(matches!(e, Error::MapLength { expected: 4, .. }), "{e:?}");
    // 32-bit maps reach the first i32::MAX elements of a long set.
    let m = Map::new("m", &small, &huge, 1, vec![0, i32::MAX]).unwrap();
    assert!(!m.is_long());
}

#[test]
fn set_new_points_to_new_long() {
    let e = Set::new("huge", HUGE).unwrap_err();
    assert!(matches!(e, Error::SetTooLarge { .. }), "{e:?}");
    assert!(e.to_string().contains("Set::new_long"), "{e}");
    let e = Set::new_long("bigger", i64::MAX as usize + 1).unwrap_err();
    assert!(matches!(e, Error::SetTooLarge { .. }), "{e:?}");
}

#[test]
fn thirty_two_bit_features_refuse_long_sets() {
    let huge = Set::new_long("huge", HUGE).unwrap();
    let small = Set::new("small", 2).unwrap();
    let refused = |e: Error, what: &str| {
        assert!(
            matches!(&e, Error::LongSetUnsupported { set, .. } if set == "huge"),
            "{what}: {e:?}"
        );
        assert!(e.to_string().contains(what), "{e}");
    };
    refused(Subset::new("s", &huge, vec![0, 1]).unwrap_err(), "a subset");
    refused(Subset::filter("s", &huge, |e| e < 2).unwrap_err(), "a subset");
    refused(
        RaggedMap::new("r", &small, &huge, vec![0, 1, 1], vec![0]).unwrap_err(),
        "a ragged map",
    );
    refused(
        Stencil::torus("t", &huge, (HUGE, 1), &[(1, 0)]).unwrap_err(),
        "a stencil",
    );
}

#[test]
fn a_long_table_read_as_a_map_is_refused() {
    // The one way to a `Map` with 64-bit entries short of a set of billions
    // (`Map::identity` of a long set): the macro's private trait.
    let nodes = Set::new("nodes", 3).unwrap();
    let cells = Set::new("cells", 1).unwrap();
    let c2n = LongMap::new("c2n", &cells, &nodes, 1, vec![2]).unwrap();
    let as_map: &Map = op2::__private::IndirectArg::map(&c2n);
    assert!(as_map.is_long() && as_map.values().is_empty());
    let e = as_map.narrow_values("VTK output").unwrap_err();
    assert!(
        matches!(&e, Error::LongMapUnsupported { map, what } if map == "c2n" && what == "VTK output"),
        "{e:?}"
    );
    let t = Dat::from_vec("t", &nodes, 1, vec![1.0f32, 2.0, 3.0]).unwrap();
    let out = Dat::<f32>::zeros("out", &cells, 1).unwrap();
    for rt in runtimes::backends() {
        let e = par_loop!(&rt, fetch, cells, t(READ, as_map[0]), out(WRITE)).unwrap_err();
        assert!(
            matches!(&e, Error::LongMapUnsupported { map, .. } if map == "c2n"),
            "{e:?}"
        );
        assert!(e.to_string().contains("LongMap::identity"), "{e}");
        par_loop!(&rt, fetch, cells, t(READ, c2n[0]), out(WRITE)).unwrap();
        assert_eq!(out.to_vec(), vec![6.0]);
    }
    // OP2's HDF5 files hold 32-bit maps: the writer refuses before writing.
    #[cfg(feature = "hdf5")]
    {
        let dir = std::env::temp_dir().join(format!("op2-long-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let w = op2::hdf5::MeshWriter::create(dir.join("mesh.h5")).unwrap();
        let e = w.map(as_map).unwrap_err();
        assert!(
            matches!(&e, Error::LongMapUnsupported { map, what } if map == "c2n" && what.contains("HDF5")),
            "{e:?}"
        );
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
