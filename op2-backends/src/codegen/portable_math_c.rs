//! The checks of the C twin of op2's own math functions,
//! `op2_kernel_abi::PORTABLE_MATH_C`, against its Rust original
//! `op2_core::portable_math`: bit for bit on the host C compiler and OpenCL
//! (PoCL), and compiled to PTX without contraction for CUDA.

use op2_core::portable_math::{self as pm, PortableMath};
use op2_kernel_abi::PORTABLE_MATH_C;

use super::twin_check;

/// How many inputs each range gives.
const N: i32 = 400;

/// Input `i` of `[lo, hi)`: a fixed irrational stride, computed alike in C.
fn sample(lo: f64, hi: f64, i: i32) -> f64 {
    let y = f64::from(i) * 0.618_033_988_749_894_8;
    lo + (hi - lo) * (y - y.floor())
}

/// The twin and the input generator, as the C side has them.
fn source() -> String {
    format!(
        "{PORTABLE_MATH_C}\nOP2_FN double op2_pm_sample(double lo, double hi, int i) {{\n\
         double y = (double)i * 0.6180339887498948;\nreturn lo + (hi - lo) * (y - floor(y));\n}}\n"
    )
}

/// Inputs every function also gets: signed zeros, the smallest and largest
/// numbers, infinities, a NaN and values where reductions change.
const SPECIAL: [f64; 16] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e-310,
    2.2250738585072014e-308,
    1e-9,
    std::f64::consts::FRAC_PI_2,
    std::f64::consts::PI,
    1e6,
    1e300,
    709.0,
    -744.0,
    f64::INFINITY,
    f64::NAN,
];

/// Ranges of the one-argument functions: (lo, hi).
const RANGES: [(f64, f64); 4] = [(-4.0, 4.0), (-1e5, 1e5), (-750.0, 750.0), (1e-300, 1e300)];

const UNARY: [&str; 6] = ["sin", "cos", "tan", "exp", "ln", "log10"];

fn unary(name: &str, x: f64) -> f64 {
    match name {
        "sin" => pm::sin(x),
        "cos" => pm::cos(x),
        "tan" => pm::tan(x),
        "exp" => pm::exp(x),
        "ln" => pm::ln(x),
        _ => pm::log10(x),
    }
}

fn unary_f32(name: &str, x: f32) -> f32 {
    match name {
        "sin" => x.portable_sin(),
        "cos" => x.portable_cos(),
        "tan" => x.portable_tan(),
        "exp" => x.portable_exp(),
        "ln" => x.portable_ln(),
        _ => x.portable_log10(),
    }
}

/// Every input of the one-argument functions, in the order both sides use.
fn inputs() -> Vec<f64> {
    let mut xs = SPECIAL.to_vec();
    for (lo, hi) in RANGES {
        xs.extend((0..N).map(|i| sample(lo, hi, i)));
    }
    xs
}

/// Pairs for `powf` and `powi`: bases of `[-3, 10)` (negative ones meet
/// integer exponents), exponents of `[-40, 40)` and their integer parts.
fn pairs() -> Vec<(f64, f64)> {
    (0..N)
        .map(|i| (sample(-3.0, 10.0, i), sample(-40.0, 40.0, i + N)))
        .collect()
}

/// Words Rust computes, in the order the C body prints them.
fn expected() -> Vec<u64> {
    let mut out = Vec::new();
    for x in inputs() {
        for f in UNARY {
            out.push(unary(f, x).to_bits());
            out.push(u64::from(unary_f32(f, x as f32).to_bits()));
        }
    }
    for (x, y) in pairs() {
        let n = y.floor() as i32;
        out.push(pm::powf(x, y).to_bits());
        out.push(pm::powf(x, y.floor()).to_bits());
        out.push(pm::powi(x, n).to_bits());
        out.push(u64::from((x as f32).portable_powf(y as f32).to_bits()));
        out.push(u64::from((x as f32).portable_powi(n).to_bits()));
    }
    out.push(pm::powi(2.0, i32::MIN).to_bits());
    out
}

/// C statements printing the same words.
fn body() -> String {
    let emit = |x: &str| {
        UNARY
            .iter()
            .map(|f| {
                format!(
                    "EMIT(OP2_F64_BITS(op2_pm_{f}({x}))); EMIT((unsigned long)OP2_F32_BITS(op2_pm_{f}_f32((float){x})));\n"
                )
            })
            .collect::<String>()
    };
    // One loop over the special inputs' bits: code inlined once, not per input.
    let bits: Vec<String> = SPECIAL.iter().map(|x| format!("{}ul", x.to_bits())).collect();
    let mut s = format!(
        "unsigned long special[{}] = {{{}}};\nfor (int i = 0; i < {}; i++) {{ double x = OP2_PM_DOUBLE(special[i]);\n{}}}\n",
        SPECIAL.len(),
        bits.join(", "),
        SPECIAL.len(),
        emit("x")
    );
    for (lo, hi) in RANGES {
        s.push_str(&format!(
            "for (int i = 0; i < {N}; i++) {{ double x = op2_pm_sample(OP2_PM_DOUBLE({}ul), OP2_PM_DOUBLE({}ul), i);\n{}}}\n",
            lo.to_bits(),
            hi.to_bits(),
            emit("x")
        ));
    }
    s.push_str(&format!(
        "for (int i = 0; i < {N}; i++) {{\n\
         double x = op2_pm_sample(-3.0, 10.0, i);\ndouble y = op2_pm_sample(-40.0, 40.0, i + {N});\n\
         int ex = (int)floor(y);\n\
         EMIT(OP2_F64_BITS(op2_pm_powf(x, y))); EMIT(OP2_F64_BITS(op2_pm_powf(x, floor(y))));\n\
         EMIT(OP2_F64_BITS(op2_pm_powi(x, ex)));\n\
         EMIT((unsigned long)OP2_F32_BITS(op2_pm_powf_f32((float)x, (float)y)));\n\
         EMIT((unsigned long)OP2_F32_BITS(op2_pm_powi_f32((float)x, ex)));\n}}\n\
         EMIT(OP2_F64_BITS(op2_pm_powi(2.0, -2147483647 - 1)));\n"
    ));
    s
}

#[test]
fn host_c_computes_the_same_bits_as_rust() {
    let got = twin_check::host_c_words("portable_math", &source(), &body());
    assert_first_difference(&got, &expected());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_computes_the_same_bits_as_rust() {
    let want = expected();
    if let Some(got) = twin_check::opencl_words(&source(), &body(), want.len()) {
        assert_first_difference(&got, &want);
    }
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_source_compiles_without_contraction() {
    twin_check::cuda_ptx("portable_math_check", &source(), &body());
}

/// Equal words, or a failure naming the first word that differs.
fn assert_first_difference(got: &[u64], want: &[u64]) {
    assert_eq!(got.len(), want.len(), "word counts differ");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!("word {i} of {}: C {:#x}, Rust {:#x}", got.len(), got[i], want[i]);
    }
}
