//! Checked mode: where a native kernel would panic (an index out of bounds,
//! an integer division by zero or overflow), a translated kernel run checked
//! makes its loop return `Error::KernelCheck` naming the kernel, the lowest
//! failing element and the check; the process lives on and the next loop is
//! right. Run on every translating backend compiled in (CUDA where a GPU is).

use op2::prelude::*;
use op2::{Error, RuntimeOptions};

#[op2::kernel]
fn pick(i: &i32, v: &[f64; 3], out: &mut f64) {
    *out = v[*i as usize];
}

#[op2::kernel]
fn divide(a: &i32, b: &i32, q: &mut i32, r: &mut i32) {
    *q = *a / *b;
    *r = *a % *b;
}

#[op2::kernel]
fn nested(i: &i32, out: &mut f64) {
    let mut m = [[0.0; 2]; 3];
    m[2][1] = 7.0;
    *out = m[2][*i as usize];
}

/// Checked runtimes of every translating backend compiled in.
fn checked_runtimes() -> Vec<Runtime> {
    #[allow(unused_mut)]
    let mut out: Vec<(Backend, RuntimeOptions)> = Vec::new();
    #[allow(unused_variables)] // in builds without a translating backend
    let checked = || RuntimeOptions::default().checked(true).block_size(4);
    #[cfg(feature = "jit")]
    out.push((
        Backend::Jit,
        checked()
            .threads(2)
            .cache_dir(concat!(env!("CARGO_TARGET_TMPDIR"), "/op2-jit-cache")),
    ));
    #[cfg(feature = "opencl")]
    {
        out.push((Backend::OpenCl, checked()));
        out.push((Backend::OpenCl, checked().increments(op2::Increments::Atomics)));
    }
    #[cfg(feature = "cuda")]
    out.push((Backend::Cuda, checked()));
    out.into_iter()
        .filter_map(|(b, o)| match Runtime::with_options(b, o) {
            Ok(rt) => Some(rt),
            Err(e) if b == Backend::Cuda && std::env::var_os("OP2_REQUIRE_GPU").is_none() => {
                eprintln!("skipped: {e}");
                None
            }
            Err(e) => panic!("{b}: {e}"),
        })
        .collect()
}

fn expect_check(e: Error, kernel: &str, element: usize, words: &str) {
    match &e {
        Error::KernelCheck {
            loop_name, element: at, ..
        } => {
            assert_eq!(loop_name, kernel, "{e}");
            assert_eq!(*at, element, "{e}");
            assert!(e.to_string().contains(words), "{e}");
        }
        other => panic!("expected a failed check, got {other:?}"),
    }
}

#[test]
fn an_index_out_of_bounds_is_an_error_and_the_next_loop_is_right() {
    for rt in checked_runtimes() {
        let cells = Set::new("cells", 20).unwrap();
        let v = Dat::from_vec("v", &cells, 3, (0..60).map(f64::from).collect()).unwrap();
        let mut index: Vec<i32> = (0..20).map(|e| e % 3).collect();
        index[13] = 3; // one past the end
        index[17] = -1; // a huge usize
        let i = Dat::from_vec("i", &cells, 1, index).unwrap();
        let out = Dat::<f64>::zeros("out", &cells, 1).unwrap();
        let e = par_loop!(rt, pick, cells, i(READ), v(READ), out(WRITE)).unwrap_err();
        expect_check(e, "pick", 13, "index out of bounds");

        i.data_mut()[13] = 2;
        let e = par_loop!(rt, pick, cells, i(READ), v(READ), out(WRITE)).unwrap_err();
        expect_check(e, "pick", 17, "index out of bounds");

        i.data_mut()[17] = 1;
        par_loop!(rt, pick, cells, i(READ), v(READ), out(WRITE)).unwrap();
        let want: Vec<f64> = i
            .to_vec()
            .iter()
            .enumerate()
            .map(|(e, &k)| (3 * e) as f64 + k as f64)
            .collect();
        assert_eq!(out.to_vec(), want, "{}", rt.backend());
    }
}

#[test]
fn a_failure_over_a_subset_names_the_element_not_the_position() {
    for rt in checked_runtimes() {
        let cells = Set::new("cells", 20).unwrap();
        let v = Dat::from_vec("v", &cells, 3, (0..60).map(f64::from).collect()).unwrap();
        let mut index: Vec<i32> = (0..20).map(|e| e % 3).collect();
        index[3] = 7; // outside the subset: never checked
        index[13] = 3; // position 2
        index[17] = -1; // position 3
        let i = Dat::from_vec("i", &cells, 1, index).unwrap();
        let out = Dat::<f64>::filled("out", &cells, 1, -1.0).unwrap();
        let some = Subset::new("some", &cells, vec![19, 2, 13, 17, 5]).unwrap();
        let e = par_loop!(rt, pick, some, i(READ), v(READ), out(WRITE)).unwrap_err();
        expect_check(e, "pick", 13, "index out of bounds");

        i.data_mut()[13] = 2;
        let e = par_loop!(rt, pick, some, i(READ), v(READ), out(WRITE)).unwrap_err();
        expect_check(e, "pick", 17, "index out of bounds");

        i.data_mut()[17] = 1;
        par_loop!(rt, pick, some, i(READ), v(READ), out(WRITE)).unwrap();
        let iv = i.to_vec();
        let want: Vec<f64> = (0..20)
            .map(|e| match e {
                2 | 5 | 13 | 17 | 19 => (3 * e) as f64 + iv[e] as f64,
                _ => -1.0,
            })
            .collect();
        assert_eq!(out.to_vec(), want, "{}", rt.backend());
    }
}

#[test]
fn an_index_into_a_local_array_is_checked_at_its_own_depth() {
    for rt in checked_runtimes() {
        let cells = Set::new("cells", 9).unwrap();
        let i = Dat::from_vec("i", &cells, 1, vec![1, 1, 1, 1, 1, 1, 2, 1, 1]).unwrap();
        let out = Dat::<f64>::zeros("out", &cells, 1).unwrap();
        let e = par_loop!(rt, nested, cells, i(READ), out(WRITE)).unwrap_err();
        expect_check(e, "nested", 6, "index out of bounds");
        i.data_mut()[6] = 1;
        par_loop!(rt, nested, cells, i(READ), out(WRITE)).unwrap();
        assert_eq!(out.to_vec(), vec![7.0; 9]);
    }
}

#[test]
fn integer_division_by_zero_is_an_error_and_the_next_loop_is_right() {
    for rt in checked_runtimes() {
        let cells = Set::new("cells", 12).unwrap();
        let a = Dat::from_vec("a", &cells, 1, (0..12).map(|x| 100 - 7 * x).collect()).unwrap();
        let mut divisors: Vec<i32> = (0..12).map(|x| x % 5 + 1).collect();
        divisors[9] = 0;
        let b = Dat::from_vec("b", &cells, 1, divisors).unwrap();
        let (q, r) = (
            Dat::<i32>::zeros("q", &cells, 1).unwrap(),
            Dat::<i32>::zeros("r", &cells, 1).unwrap(),
        );
        let e = par_loop!(rt, divide, cells, a(READ), b(READ), q(WRITE), r(WRITE)).unwrap_err();
        expect_check(e, "divide", 9, "by zero");

        b.data_mut()[9] = -1;
        par_loop!(rt, divide, cells, a(READ), b(READ), q(WRITE), r(WRITE)).unwrap();
        let (av, bv) = (a.to_vec(), b.to_vec());
        assert_eq!(q.to_vec(), av.iter().zip(&bv).map(|(x, y)| x / y).collect::<Vec<_>>());
        assert_eq!(r.to_vec(), av.iter().zip(&bv).map(|(x, y)| x % y).collect::<Vec<_>>());
    }
}

#[test]
fn division_overflow_is_an_error() {
    for rt in checked_runtimes() {
        let cells = Set::new("cells", 6).unwrap();
        let a = Dat::from_vec("a", &cells, 1, vec![1, 2, 3, i32::MIN, 5, 6]).unwrap();
        let b = Dat::from_vec("b", &cells, 1, vec![1, 1, 1, -1, 1, 1]).unwrap();
        let (q, r) = (
            Dat::<i32>::zeros("q", &cells, 1).unwrap(),
            Dat::<i32>::zeros("r", &cells, 1).unwrap(),
        );
        let e = par_loop!(rt, divide, cells, a(READ), b(READ), q(WRITE), r(WRITE)).unwrap_err();
        expect_check(e, "divide", 3, "overflow");
    }
}

#[test]
fn an_invalid_op2_checked_is_an_error_naming_it() {
    // SAFETY (set_var): the other tests here pass `checked` explicitly and
    // never read OP2_CHECKED.
    std::env::set_var("OP2_CHECKED", "maybe");
    let e = Runtime::new(Backend::Seq).unwrap_err();
    std::env::remove_var("OP2_CHECKED");
    assert!(
        e.to_string().contains("OP2_CHECKED") && e.to_string().contains("maybe"),
        "{e}"
    );
}
