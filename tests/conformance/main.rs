//! Cross-backend conformance: the suite in `suite.rs`, written once and
//! instantiated for every backend compiled in. `seq` is the reference.

mod agent_holes;
mod kernels;
mod lifecycle;
mod long_maps;
mod messages;
mod suite;

/// A device backend whose hardware may be missing (CUDA without a GPU): its
/// tests print why they skip, unless `OP2_REQUIRE_GPU=1` makes that a failure.
#[allow(dead_code)]
fn device_missing(made: op2::Result<op2::Runtime>) -> bool {
    match made {
        Ok(_) => false,
        Err(e) => {
            assert!(
                std::env::var_os("OP2_REQUIRE_GPU").is_none(),
                "OP2_REQUIRE_GPU is set: {e}"
            );
            eprintln!("skipped: {e}");
            true
        }
    }
}

macro_rules! backend_suite {
    ($module:ident, $backend:expr, $options:expr) => {
        backend_suite!($module, $backend, $options, |_| false);
    };
    ($module:ident, $backend:expr, $options:expr, $skip:expr) => {
        mod $module {
            #[allow(unused_imports)]
            use op2::{Backend, DeviceLayout, HostSchedule, Increments, Runtime, RuntimeOptions};

            fn rt() -> Runtime {
                Runtime::with_options($backend, $options).expect("backend is available in this build")
            }

            /// Decided once per backend instance (a device context is not free).
            #[allow(clippy::redundant_closure_call)]
            fn skip() -> bool {
                static SKIP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
                *SKIP.get_or_init(|| ($skip)(Runtime::with_options($backend, $options)))
            }

            backend_suite!(@tests suite:
                direct_write, direct_rw, direct_inc, direct_min_max,
                indirect_read_entries, indirect_inc_entries, repeated_entry_increments_both_land,
                whole_map_read, whole_map_inc, indirect_write_rw, indirect_min_max, whole_map_min,
                global_reductions, global_read, integer_types, f32_type, empty_set,
                loops_in_sequence_share_dats, timings_are_recorded,
                many_blocks_inc_and_reductions, set_smaller_than_a_block, repeated_runs_are_bitwise_identical,
                identical_loops_reuse_their_plan, airfoil_matches_seq, direct_and_indirect_writes_of_one_dat,
                repeated_writes_of_the_same_values, integer_overflow_wraps_as_in_release_builds, constants_in_kernels,
                inclusive_ranges_to_the_top, locals_take_their_inferred_types, integer_increments_wrap,
                float_to_int_casts_saturate, multiply_adds_are_not_fused, double_buffered_steps, random_streams_match_rust,
                portable_math_matches_rust_bit_for_bit,
                life_blinker_and_glider, sir_matches_the_hand_written_model,
                ragged_read_matches_rust, ragged_inc_matches_rust,
                subset_direct_write_and_rw, subset_inc_through_maps, subset_global_reductions,
                subset_ragged_matches_rust, subset_mixed_step_matches_rust, subset_empty, subset_where_dat,
                stencil_read_matches_rust, stencil_inc_matches_rust,
                stream_parameter_matches_rust, two_stream_parameters,
                spatial_messages_match_brute_force, brute_force_messages_match_rust,
                sorting_senders_changes_no_result, discrete_messages_match_brute_force,
                births_and_deaths_match_the_model
            );
            backend_suite!(@tests agent_holes:
                carried_after_build_is_refused_until_built, two_fates_of_one_lifecycle_are_refused,
                one_streams_given_twice_is_refused, stream_counters_do_not_wrap, streams_forget_dropped_sets,
                child_ids_stop_at_i64_max, stencil_offsets_near_isize_limits, plans_of_rebuilt_maps_are_dropped
            );
            backend_suite!(@tests long_maps: long_maps_match_narrow_maps);
        }
    };
    (@tests $file:ident: $($test:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                if skip() {
                    return;
                }
                super::$file::$test(&rt);
            }
        )*
    };
}

backend_suite!(seq, Backend::Seq, RuntimeOptions::default());

#[cfg(feature = "rayon")]
backend_suite!(rayon_1_thread, Backend::Rayon, RuntimeOptions::default().threads(1));
#[cfg(feature = "rayon")]
backend_suite!(rayon_2_threads, Backend::Rayon, RuntimeOptions::default().threads(2));
#[cfg(feature = "rayon")]
backend_suite!(rayon_4_threads, Backend::Rayon, RuntimeOptions::default().threads(4));
// Small blocks: the suite's small meshes get many blocks and colours.
#[cfg(feature = "rayon")]
backend_suite!(
    rayon_2_threads_block_7,
    Backend::Rayon,
    RuntimeOptions::default().threads(2).block_size(7)
);
// The plan's block colours in turn instead of partitions (the default).
#[cfg(feature = "rayon")]
backend_suite!(
    rayon_2_threads_block_7_colours,
    Backend::Rayon,
    RuntimeOptions::default()
        .threads(2)
        .block_size(7)
        .host_schedule(HostSchedule::Colours)
);

/// The JIT's code cache for tests: inside the target directory.
#[cfg(feature = "jit")]
const JIT_CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache");

#[cfg(feature = "jit")]
backend_suite!(
    jit_1_thread,
    Backend::Jit,
    RuntimeOptions::default().threads(1).cache_dir(super::JIT_CACHE)
);
#[cfg(feature = "jit")]
backend_suite!(
    jit_2_threads,
    Backend::Jit,
    RuntimeOptions::default().threads(2).cache_dir(super::JIT_CACHE)
);
#[cfg(feature = "jit")]
backend_suite!(
    jit_2_threads_block_7,
    Backend::Jit,
    RuntimeOptions::default()
        .threads(2)
        .block_size(7)
        .cache_dir(super::JIT_CACHE)
);
#[cfg(feature = "jit")]
backend_suite!(
    jit_2_threads_block_7_colours,
    Backend::Jit,
    RuntimeOptions::default()
        .threads(2)
        .block_size(7)
        .host_schedule(HostSchedule::Colours)
        .cache_dir(super::JIT_CACHE)
);

#[cfg(feature = "opencl")]
backend_suite!(opencl, Backend::OpenCl, RuntimeOptions::default());
// Small blocks: many work-items and colours on the suite's small meshes;
// unchecked, so loops return once launched (as in release builds).
#[cfg(feature = "opencl")]
backend_suite!(
    opencl_block_7,
    Backend::OpenCl,
    RuntimeOptions::default().block_size(7).checked(false)
);
// Every Dat that can in columns (agents' too, until their device work needs
// rows), as GPUs lay out mesh Dats by default (on CPUs, as PoCL, the default
// is rows).
#[cfg(feature = "opencl")]
backend_suite!(
    opencl_soa,
    Backend::OpenCl,
    RuntimeOptions::default().device_layout(DeviceLayout::StructOfArrays)
);
#[cfg(feature = "opencl")]
backend_suite!(
    opencl_soa_block_7,
    Backend::OpenCl,
    RuntimeOptions::default()
        .device_layout(DeviceLayout::StructOfArrays)
        .block_size(7)
        .checked(false)
);
#[cfg(feature = "opencl")]
backend_suite!(
    opencl_atomics,
    Backend::OpenCl,
    RuntimeOptions::default().increments(Increments::Atomics)
);
// Each loop with increments through maps measured both ways, then one (at
// a given block size: trials of sizes would build a plan for each, which
// one test counts; tests/device_transfers.rs tries sizes).
#[cfg(feature = "opencl")]
backend_suite!(
    opencl_auto,
    Backend::OpenCl,
    RuntimeOptions::default().increments(Increments::Auto).block_size(64)
);
#[cfg(feature = "opencl")]
backend_suite!(
    opencl_atomics_block_7,
    Backend::OpenCl,
    RuntimeOptions::default().block_size(7).increments(Increments::Atomics)
);

// On a GPU only: without one (or without the driver) every test prints why it skips.
#[cfg(feature = "cuda")]
backend_suite!(cuda, Backend::Cuda, RuntimeOptions::default(), super::device_missing);
#[cfg(feature = "cuda")]
backend_suite!(
    cuda_block_7,
    Backend::Cuda,
    RuntimeOptions::default().block_size(7).checked(false),
    super::device_missing
);
#[cfg(feature = "cuda")]
backend_suite!(
    cuda_aos,
    Backend::Cuda,
    RuntimeOptions::default().device_layout(DeviceLayout::ArrayOfStructs),
    super::device_missing
);
#[cfg(feature = "cuda")]
backend_suite!(
    cuda_atomics,
    Backend::Cuda,
    RuntimeOptions::default().increments(Increments::Atomics),
    super::device_missing
);
