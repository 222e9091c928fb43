//! Loop bodies' AVX2 copies (run on x86-64 CPUs with AVX2 and FMA) give the
//! baseline copies' results bit for bit: Airfoil's rms, iteration by
//! iteration, and its flow state on `seq` and `rayon` are the same in this
//! process and in a child process run with `OP2_HOST_VECTORS=baseline`
//! (which the copies' choice reads once per process). Airfoil has loops of
//! both kinds: groups of elements gathered through maps (`adt_calc`) and
//! one element at a time (`res_calc`'s increments, `update`'s reduction).

use std::process::Command;

use op2::{Backend, Runtime, RuntimeOptions};
use op2_airfoil::{generate, AirfoilDsl, Constants};

/// Set in the child process: it prints its results instead of comparing.
const CHILD: &str = "OP2_HOST_VECTORS_CHILD";

/// The rms bits of 20 iterations, then the flow state's, on seq and on
/// rayon with 2 threads, one line each.
fn results() -> String {
    let mut out = String::new();
    for backend in [Backend::Seq, Backend::Rayon] {
        let rt = Runtime::with_options(backend, RuntimeOptions::default().threads(2)).unwrap();
        let airfoil = AirfoilDsl::new(&generate(40, 24), &Constants::default()).unwrap();
        let rms: Vec<String> = (0..20)
            .map(|_| format!("{:x}", airfoil.iteration(&rt).unwrap().to_bits()))
            .collect();
        let q: Vec<String> = airfoil
            .q
            .to_vec()
            .iter()
            .map(|v| format!("{:x}", v.to_bits()))
            .collect();
        out += &format!("{backend} rms {}\n{backend} q {}\n", rms.join(" "), q.join(" "));
    }
    out
}

#[test]
fn wide_copies_give_the_baseline_bits() {
    let mine = results();
    if std::env::var_os(CHILD).is_some() {
        println!("BEGIN\n{mine}END");
        return;
    }
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "wide_copies_give_the_baseline_bits",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("OP2_HOST_VECTORS", "baseline")
        .output()
        .unwrap();
    assert!(child.status.success(), "{}", String::from_utf8_lossy(&child.stderr));
    let text = String::from_utf8_lossy(&child.stdout);
    let baseline = text
        .split("BEGIN\n")
        .nth(1)
        .and_then(|t| t.split("END").next())
        .expect("the child's results");
    for (a, b) in mine.lines().zip(baseline.lines()) {
        assert!(
            a == b,
            "{}: the AVX2 copies differ from the baseline",
            a.split(' ').take(2).collect::<Vec<_>>().join(" ")
        );
    }
    assert_eq!(mine.lines().count(), 4);
    assert_eq!(baseline.lines().count(), 4);
    if op2::__private::wide_vectors() {
        eprintln!("compared the AVX2 copies with the baseline ones");
    } else {
        eprintln!("this CPU runs the baseline copies only: both processes ran them");
    }
}
