//! Cross-backend conformance: the suite in `suite.rs`, written once and
//! instantiated for every backend compiled in. `seq` is the reference.

mod kernels;
mod suite;

macro_rules! backend_suite {
    ($module:ident, $backend:expr) => {
        mod $module {
            use op2::{Backend, Runtime};

            fn rt() -> Runtime {
                Runtime::new($backend).expect("backend is available in this build")
            }

            backend_suite!(@tests
                direct_write, direct_rw, direct_inc, direct_min_max,
                indirect_read_entries, indirect_inc_entries, repeated_entry_increments_both_land,
                whole_map_read, whole_map_inc, indirect_write_rw, indirect_min_max, whole_map_min,
                global_reductions, global_read, integer_types, f32_type, empty_set,
                loops_in_sequence_share_dats, timings_are_recorded
            );
        }
    };
    (@tests $($test:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                super::suite::$test(&rt());
            }
        )*
    };
}

backend_suite!(seq, Backend::Seq);
