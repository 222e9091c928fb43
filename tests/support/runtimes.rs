//! The runtimes of every backend built in, for tests that compare them
//! with `seq` (the first): rayon and jit on 2 threads, opencl, and cuda
//! where a GPU is (with `OP2_REQUIRE_GPU` set, a missing GPU fails).

#[allow(unused_imports)] // RuntimeOptions: only with the rayon or jit feature
use op2::{Backend, Runtime, RuntimeOptions};

/// One runtime per backend built in, `seq` first.
pub fn backends() -> Vec<Runtime> {
    let mut v = vec![Runtime::new(Backend::Seq).unwrap()];
    #[cfg(feature = "rayon")]
    v.push(Runtime::with_options(Backend::Rayon, RuntimeOptions::default().threads(2)).unwrap());
    #[cfg(feature = "jit")]
    v.push(
        Runtime::with_options(
            Backend::Jit,
            RuntimeOptions::default()
                .threads(2)
                .cache_dir(concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache")),
        )
        .unwrap(),
    );
    #[cfg(feature = "opencl")]
    v.push(Runtime::new(Backend::OpenCl).unwrap());
    #[cfg(feature = "cuda")]
    match Runtime::new(Backend::Cuda) {
        Ok(rt) => v.push(rt),
        Err(e) => assert!(
            std::env::var_os("OP2_REQUIRE_GPU").is_none(),
            "OP2_REQUIRE_GPU is set: {e}"
        ),
    }
    v
}
