//! Results that do not depend on the thread count: Airfoil on the threaded
//! host backends with 1, 2, 4 and 16 threads gives, iteration by iteration,
//! the same rms bits and leaves the same flow state, so that a run is
//! reproducible on any machine whatever its cores. This holds for both host
//! schedules: partitions (their interiors, then their boundaries' colours)
//! and the plan's block colours. (A schedule fixes the order of the
//! increments, and reductions add per-unit partials in unit order, whatever
//! thread ran a unit. `seq` adds increments in element order instead, so a
//! few values differ from it in the last bits.)
use op2::{Backend, HostSchedule, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants};

/// The rms of each of `iterations` iterations and the flow state after.
fn run(rt: &Runtime, iterations: usize) -> (Vec<u64>, Vec<u64>) {
    let airfoil = AirfoilDsl::new(&generate(48, 32), &Constants::default()).unwrap();
    let rms = (0..iterations)
        .map(|_| airfoil.iteration(rt).unwrap().to_bits())
        .collect();
    (rms, airfoil.q.to_vec().iter().map(|v| v.to_bits()).collect())
}

#[test]
fn airfoil_gives_the_same_bits_on_any_thread_count() {
    let mut backends = vec![Backend::Rayon];
    if cfg!(feature = "jit") {
        backends.push(Backend::Jit);
    }
    for backend in backends {
        // The default blocks make one partition of this small mesh (3000
        // edges); blocks of 64 make a few dozen, with a boundary in colours.
        for (schedule, block_size) in [
            (HostSchedule::Partitions, None),
            (HostSchedule::Partitions, Some(64)),
            (HostSchedule::Colours, Some(64)),
        ] {
            let mut first = None;
            for threads in [1, 2, 4, 16] {
                let mut options = RuntimeOptions::default().threads(threads).host_schedule(schedule);
                options.block_size = block_size;
                let rt = Runtime::with_options(backend, options).unwrap();
                let got = run(&rt, 30);
                let first = first.get_or_insert(got.clone());
                assert!(
                    got.0 == first.0,
                    "{backend} ({schedule}, blocks {block_size:?}) on {threads} threads: the rms differs from 1 thread's"
                );
                assert!(
                    got.1 == first.1,
                    "{backend} ({schedule}, blocks {block_size:?}) on {threads} threads: the flow state differs from 1 thread's"
                );
            }
        }
    }
}

/// Runtimes without a thread count share the process's team: loops started
/// from several threads at once, each finding the team free or busy (then
/// running on its own thread), give the bits of a runtime with a team of
/// its own. (Blocks of 64 make several units a phase, which a team shares
/// out; with the default blocks this mesh's phases are one unit each, run
/// on the calling thread.)
#[test]
fn runtimes_sharing_the_default_team_give_the_same_bits() {
    let options = |threads: Option<usize>| {
        let mut options = RuntimeOptions::default();
        options.threads = threads;
        options.block_size = Some(64);
        options
    };
    let own = run(&Runtime::with_options(Backend::Rayon, options(Some(2))).unwrap(), 20);
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| run(&Runtime::with_options(Backend::Rayon, options(None)).unwrap(), 20)))
            .collect();
        for (k, r) in runs.into_iter().enumerate() {
            assert!(r.join().unwrap() == own, "runtime {k} on the shared team differs");
        }
    });
}
