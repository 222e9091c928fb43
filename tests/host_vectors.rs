//! Loop bodies' AVX2 copies (run on x86-64 CPUs with AVX2 and FMA) give the
//! baseline copies' results bit for bit: Airfoil's rms, iteration by
//! iteration, and its flow state on `seq` and `rayon` are the same with the
//! copies allowed and with `RuntimeOptions::wide_vectors(false)`. Airfoil
//! has loops of both kinds: groups of elements gathered through maps
//! (`adt_calc`) and one element at a time (`res_calc`'s increments,
//! `update`'s reduction). `.ci/run` compares release builds the same way,
//! through `OP2_HOST_VECTORS=baseline`.

use op2::{Backend, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants};

/// The rms bits of 20 iterations and the flow state's bits after.
fn run(backend: Backend, wide: bool) -> (Vec<u64>, Vec<u64>) {
    let options = RuntimeOptions::default().threads(2).wide_vectors(wide);
    let rt = Runtime::with_options(backend, options).unwrap();
    let airfoil = AirfoilDsl::new(&generate(40, 24), &Constants::default()).unwrap();
    let rms = (0..20).map(|_| airfoil.iteration(&rt).unwrap().to_bits()).collect();
    (rms, airfoil.q.to_vec().iter().map(|v| v.to_bits()).collect())
}

#[test]
fn wide_copies_give_the_baseline_bits() {
    for backend in [Backend::Seq, Backend::Rayon] {
        let (wide, baseline) = (run(backend, true), run(backend, false));
        assert!(
            wide.0 == baseline.0,
            "{backend}: the rms differs from the baseline copies'"
        );
        assert!(
            wide.1 == baseline.1,
            "{backend}: the flow state differs from the baseline copies'"
        );
    }
    if !op2::__private::cpu_has_wide_vectors() {
        eprintln!("this CPU has no AVX2 and FMA: both runs took the baseline copies");
    }
}

#[test]
fn op2_host_vectors_takes_auto_or_baseline() {
    let parse = |value: &'static str| {
        let lookup = move |name: &str| (name == "OP2_HOST_VECTORS").then(|| value.into());
        op2::config::Env::new(&lookup).host_vectors()
    };
    assert_eq!(parse(" Baseline ").unwrap(), Some(false));
    assert_eq!(parse("auto").unwrap(), Some(true));
    assert_eq!(parse("").unwrap(), None);
    let e = parse("avx2").unwrap_err();
    assert!(e.to_string().contains("OP2_HOST_VECTORS"), "{e}");
}
