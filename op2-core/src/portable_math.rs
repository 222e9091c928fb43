//! op2's own elementary functions, for kernels marked
//! `#[op2::kernel(portable_math)]`: the same bits on every backend.
//!
//! Math libraries (Rust's, which calls the platform's libm, glibc's, OpenCL's,
//! CUDA's) round `sin`, `exp`, `ln` and `pow` each their own way, so a kernel
//! calling them drifts apart between backends in the last bits, and an agent
//! model's trajectories then part. These functions use `+ - * /` (correctly
//! rounded in IEEE arithmetic), `floor` and exact bit operations only, in an
//! order their C twin (`op2_kernel_abi::PORTABLE_MATH_C`, the `op2_pm_*`
//! functions of the generated code) repeats operation for operation; the
//! generated code is compiled without contraction into fused multiply-adds.
//! The `f32` versions compute in `f64` and round once at the end.
//!
//! Accuracy (checked against the platform's functions in the tests): `sin`,
//! `cos`, `tan` within a few ulp for `|x| < 2^20 pi/2` (beyond, the argument
//! reduction loses accuracy, the same way everywhere, and from `2^52` on,
//! where doubles lie 1 apart, they give NaN); `exp`, `ln`, `log10`
//! within a few ulp; `powf(x, y)` as `exp(y ln x)`, whose relative error grows
//! with `|y ln x|` (up to about `|y ln x| 2^-52` for `f64`; the `f32` versions
//! are within an ulp), by repeated squaring for integer `|y| <= 64`; `powi`
//! by repeated squaring. Functions that are exact
//! in IEEE arithmetic (`sqrt`, `abs`, `floor`, `ceil`, `min`, `max`,
//! `mul_add`) need no twin.

use crate::philox::portable_ln;

/// The functions [`PortableMath`] covers, by the Rust method name: what a
/// `portable_math` kernel's calls become.
pub const PORTABLE_FUNCTIONS: [&str; 8] = ["sin", "cos", "tan", "exp", "ln", "log10", "powf", "powi"];

/// `pi/2` in three parts of 33, 33 and 53 bits: `k * PIO2_1` and
/// `k * PIO2_2` are exact for `|k| < 2^20` (fdlibm's Cody–Waite constants).
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_5e-21;
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;

/// Minimax coefficients of `sin` and `cos` on `[-pi/4, pi/4]` (fdlibm's
/// `__kernel_sin` and `__kernel_cos`).
const S: [f64; 6] = [
    -1.666_666_666_666_663_2e-1,
    8.333_333_333_322_49e-3,
    -1.984_126_982_985_795e-4,
    2.755_731_370_707_006_8e-6,
    -2.505_076_025_340_686_3e-8,
    1.589_690_995_211_55e-10,
];
const C: [f64; 6] = [
    4.166_666_666_666_66e-2,
    -1.388_888_888_887_411e-3,
    2.480_158_728_947_673e-5,
    -2.755_731_435_139_066_3e-7,
    2.087_572_321_298_175e-9,
    -1.135_964_755_778_819_5e-11,
];

/// `ln 2` in two parts (the high one of 32 bits) and `1/ln 2`.
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// The Remez coefficients of `exp` on `[-ln2/2, ln2/2]` (fdlibm's `P1..P5`).
const P: [f64; 5] = [
    1.666_666_666_666_660_2e-1,
    -2.777_777_777_701_559_3e-3,
    6.613_756_321_437_934e-5,
    -1.653_390_220_546_525_2e-6,
    4.138_136_797_057_238_5e-8,
];
/// Beyond these, `exp` overflows to infinity or underflows to zero.
const EXP_OVERFLOW: f64 = 709.782_712_893_384;
const EXP_UNDERFLOW: f64 = -745.133_219_101_941_2;

/// `2^k` for `k` in `[-1022, 1023]`, exactly.
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Beyond this, the trigonometric functions give NaN: doubles there lie
/// at least 1 apart, and the reduction below would overflow.
const TRIG_LIMIT: f64 = 4_503_599_627_370_496.0; // 2^52

/// The remainder `x - k pi/2` for the nearest quadrant `k`, each step
/// rounding on its own (the C twin's order), and `k mod 4`, taken in
/// floating point (exact for every `k` here).
fn reduce(x: f64) -> (f64, i64) {
    let k = (x * TWO_OVER_PI + 0.5).floor();
    let t1 = k * PIO2_1;
    let r1 = x - t1;
    let t2 = k * PIO2_2;
    let r2 = r1 - t2;
    let t3 = k * PIO2_3;
    let quadrant = k - 4.0 * (k * 0.25).floor();
    (r2 - t3, quadrant as i64)
}

/// Whether the trigonometric functions give NaN for `x`: an infinity, a
/// NaN, or beyond [`TRIG_LIMIT`].
fn outside_trig_domain(x: f64) -> bool {
    x.is_nan() || x.abs() >= TRIG_LIMIT
}

/// `sin r` for `|r| <= pi/4`.
fn kernel_sin(r: f64) -> f64 {
    let z = r * r;
    let v = z * r;
    let p = S[1] + z * (S[2] + z * (S[3] + z * (S[4] + z * S[5])));
    r + v * (S[0] + z * p)
}

/// `cos r` for `|r| <= pi/4`.
fn kernel_cos(r: f64) -> f64 {
    let z = r * r;
    let p = z * (C[0] + z * (C[1] + z * (C[2] + z * (C[3] + z * (C[4] + z * C[5])))));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + z * p)
}

/// Below this, `sin x` and `tan x` round to `x` (and keep its sign).
const TINY: f64 = 1.490_116_119_384_765_6e-8; // 2^-26

/// The sine of `x` (radians).
pub fn sin(x: f64) -> f64 {
    if outside_trig_domain(x) {
        return f64::NAN;
    }
    if x.abs() < TINY {
        return x;
    }
    let (r, k) = reduce(x);
    match k {
        0 => kernel_sin(r),
        1 => kernel_cos(r),
        2 => -kernel_sin(r),
        _ => -kernel_cos(r),
    }
}

/// The cosine of `x` (radians).
pub fn cos(x: f64) -> f64 {
    if outside_trig_domain(x) {
        return f64::NAN;
    }
    let (r, k) = reduce(x);
    match k {
        0 => kernel_cos(r),
        1 => -kernel_sin(r),
        2 => -kernel_cos(r),
        _ => kernel_sin(r),
    }
}

/// The tangent of `x` (radians): sine over cosine of one reduction.
pub fn tan(x: f64) -> f64 {
    if outside_trig_domain(x) {
        return f64::NAN;
    }
    if x.abs() < TINY {
        return x;
    }
    let (r, k) = reduce(x);
    let (s, c) = (kernel_sin(r), kernel_cos(r));
    if k % 2 == 0 {
        s / c
    } else {
        -c / s
    }
}

/// `e^x`.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > EXP_OVERFLOW {
        return f64::INFINITY;
    }
    if x < EXP_UNDERFLOW {
        return 0.0;
    }
    let kf = (x * LOG2_E + 0.5).floor();
    let hi = x - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let z = r * r;
    let c = r - z * (P[0] + z * (P[1] + z * (P[2] + z * (P[3] + z * P[4]))));
    let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    // 2^k in at most two exact steps, the last one rounding (subnormals).
    let mut k = kf as i64;
    let mut y = y;
    if k > 1000 {
        y *= pow2(1000);
        k -= 1000;
    }
    if k < -1000 {
        y *= pow2(-1000);
        k += 1000;
    }
    y * pow2(k)
}

/// The natural logarithm of `x`.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x < f64::MIN_POSITIVE {
        // A subnormal: scaled into the normals exactly first.
        return portable_ln(x * pow2(54)) - 54.0 * std::f64::consts::LN_2;
    }
    portable_ln(x)
}

/// The base-10 logarithm of `x`.
pub fn log10(x: f64) -> f64 {
    ln(x) / std::f64::consts::LN_10
}

/// Whether `y` is an odd integer.
fn is_odd_integer(y: f64) -> bool {
    let half = 0.5 * y;
    y.floor() == y && half.floor() != half
}

/// Integer exponents up to this size go by [`powi`]: exact where the
/// result is representable (`2^10`, `(-2)^3`), and within a dozen roundings.
const SMALL_EXPONENT: f64 = 64.0;

/// `x^y`, as `exp(y ln x)` (by [`powi`] for small integer `y`), with C's
/// special cases (`pow(x, 0) = 1`, `pow(1, y) = 1`, a negative base only
/// with an integer exponent).
pub fn powf(x: f64, y: f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if y.floor() == y && y.abs() <= SMALL_EXPONENT {
        return powi(x, y as i32);
    }
    if x < 0.0 {
        if y.floor() != y {
            return f64::NAN;
        }
        let m = pow_of_positive(-x, y);
        return if is_odd_integer(y) { -m } else { m };
    }
    pow_of_positive(x, y)
}

/// `x^y` for `x >= 0` and `y != 0`. (Not a recursion of [`powf`]: OpenCL
/// C has none, so neither has the twin.)
fn pow_of_positive(x: f64, y: f64) -> f64 {
    if x == 0.0 {
        return if y > 0.0 { 0.0 } else { f64::INFINITY };
    }
    if x == f64::INFINITY {
        return if y > 0.0 { x } else { 0.0 };
    }
    exp(y * ln(x))
}

/// `x^n` by repeated squaring.
pub fn powi(x: f64, n: i32) -> f64 {
    let mut m = i64::from(n).unsigned_abs();
    let (mut r, mut b) = (1.0, x);
    while m > 0 {
        if m & 1 == 1 {
            r *= b;
        }
        b *= b;
        m >>= 1;
    }
    if n < 0 {
        1.0 / r
    } else {
        r
    }
}

/// The functions above as methods of `f64` and `f32` (the `f32` ones through
/// `f64`): what `#[op2::kernel(portable_math)]` makes a kernel's native body
/// call in place of `x.sin()`, `f32::exp(x)`, ...
pub trait PortableMath: Copy {
    /// [`sin`].
    fn portable_sin(self) -> Self;
    /// [`cos`].
    fn portable_cos(self) -> Self;
    /// [`tan`].
    fn portable_tan(self) -> Self;
    /// [`exp`].
    fn portable_exp(self) -> Self;
    /// [`ln`].
    fn portable_ln(self) -> Self;
    /// [`log10`].
    fn portable_log10(self) -> Self;
    /// [`powf`].
    fn portable_powf(self, y: Self) -> Self;
    /// [`powi`].
    fn portable_powi(self, n: i32) -> Self;
}

impl PortableMath for f64 {
    fn portable_sin(self) -> f64 {
        sin(self)
    }
    fn portable_cos(self) -> f64 {
        cos(self)
    }
    fn portable_tan(self) -> f64 {
        tan(self)
    }
    fn portable_exp(self) -> f64 {
        exp(self)
    }
    fn portable_ln(self) -> f64 {
        ln(self)
    }
    fn portable_log10(self) -> f64 {
        log10(self)
    }
    fn portable_powf(self, y: f64) -> f64 {
        powf(self, y)
    }
    fn portable_powi(self, n: i32) -> f64 {
        powi(self, n)
    }
}

impl PortableMath for f32 {
    fn portable_sin(self) -> f32 {
        sin(f64::from(self)) as f32
    }
    fn portable_cos(self) -> f32 {
        cos(f64::from(self)) as f32
    }
    fn portable_tan(self) -> f32 {
        tan(f64::from(self)) as f32
    }
    fn portable_exp(self) -> f32 {
        exp(f64::from(self)) as f32
    }
    fn portable_ln(self) -> f32 {
        ln(f64::from(self)) as f32
    }
    fn portable_log10(self) -> f32 {
        log10(f64::from(self)) as f32
    }
    fn portable_powf(self, y: f32) -> f32 {
        powf(f64::from(self), f64::from(y)) as f32
    }
    fn portable_powi(self, n: i32) -> f32 {
        powi(f64::from(self), n) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in ulp between two finite `f64`s of one sign.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        assert_eq!(a.is_sign_negative(), b.is_sign_negative(), "{a} vs {b}");
        a.to_bits().abs_diff(b.to_bits())
    }

    fn ulps32(a: f32, b: f32) -> u32 {
        if a == b {
            return 0;
        }
        assert_eq!(a.is_sign_negative(), b.is_sign_negative(), "{a} vs {b}");
        a.to_bits().abs_diff(b.to_bits())
    }

    fn samples(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
        // A fixed irrational stride: no two runs differ, inputs are not round.
        (0..n).map(move |i| lo + (hi - lo) * ((i as f64 * 0.618_033_988_749_894_8).fract()))
    }

    #[test]
    fn trigonometry_is_within_a_few_ulp_of_the_platform() {
        let mut worst = (0, 0.0);
        for x in samples(-1e5, 1e5, 20_000).chain(samples(-4.0, 4.0, 20_000)) {
            for (mine, theirs) in [(sin(x), x.sin()), (cos(x), x.cos())] {
                // Near a zero an ulp of the result is tiny: compare absolutely there.
                let d = if theirs.abs() < 1e-3 {
                    u64::from((mine - theirs).abs() > 4e-16)
                } else {
                    ulps(mine, theirs)
                };
                if d > worst.0 {
                    worst = (d, x);
                }
            }
        }
        assert!(worst.0 <= 2, "{} ulp at {}", worst.0, worst.1);
        assert_eq!(sin(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(cos(0.0), 1.0);
        assert!(sin(f64::INFINITY).is_nan() && cos(f64::NAN).is_nan() && tan(1e300).is_nan());
        assert!(sin(1e15).abs() <= 1.0 && sin(-1e15).abs() <= 1.0);
        let t = tan(0.5);
        assert!(ulps(t, 0.5f64.tan()) <= 3, "{t}");
    }

    #[test]
    fn exp_and_logarithms_are_within_a_few_ulp_of_the_platform() {
        for x in samples(-700.0, 700.0, 20_000).chain(samples(-1.0, 1.0, 5_000)) {
            assert!(ulps(exp(x), x.exp()) <= 1, "exp({x}): {} vs {}", exp(x), x.exp());
        }
        for x in samples(1e-300, 1e300, 5_000).chain(samples(0.5, 2.0, 5_000)) {
            assert!(ulps(ln(x), x.ln()) <= 2 || (ln(x) - x.ln()).abs() < 1e-16, "ln({x})");
            assert!(
                ulps(log10(x), x.log10()) <= 3 || (log10(x) - x.log10()).abs() < 1e-16,
                "log10({x})"
            );
        }
        // Subnormal results and arguments, and the edges.
        assert!(ulps(exp(-740.0), (-740.0f64).exp()) <= 1);
        assert!(ulps(ln(5e-320), 5e-320f64.ln()) <= 2);
        assert_eq!((exp(710.0), exp(-746.0), exp(0.0)), (f64::INFINITY, 0.0, 1.0));
        assert_eq!(
            (ln(0.0), ln(1.0), ln(f64::INFINITY)),
            (f64::NEG_INFINITY, 0.0, f64::INFINITY)
        );
        assert!(ln(-1.0).is_nan() && exp(f64::NAN).is_nan());
    }

    #[test]
    fn powers_follow_c_and_stay_close_to_the_platform() {
        assert_eq!((powf(2.0, 10.0), powf(-2.0, 3.0), powf(-2.0, 2.0)), (1024.0, -8.0, 4.0));
        assert_eq!(
            (powf(0.0, 2.0), powf(0.0, -1.0), powf(7.0, 0.0)),
            (0.0, f64::INFINITY, 1.0)
        );
        assert!(powf(-2.0, 0.5).is_nan());
        for (x, y) in samples(0.1, 10.0, 2_000).zip(samples(-20.0, 20.0, 2_000)) {
            let (mine, theirs) = (powf(x, y), x.powf(y));
            assert!(
                ((mine - theirs) / theirs).abs() < 2e-14,
                "pow({x}, {y}): {mine} vs {theirs}"
            );
            let (m32, t32) = ((x as f32).portable_powf(y as f32), (x as f32).powf(y as f32));
            assert!(ulps32(m32, t32) <= 1, "powf32({x}, {y})");
        }
        assert_eq!((powi(3.0, 4), powi(2.0, -2), powi(5.0, 0)), (81.0, 0.25, 1.0));
        assert_eq!(powi(2.0, i32::MIN), 0.0);
    }

    #[test]
    fn single_precision_rounds_the_double_result_once() {
        for x in samples(-10.0, 10.0, 1_000) {
            let f = x as f32;
            assert_eq!(f.portable_sin(), sin(f64::from(f)) as f32);
            assert!(ulps32(f.portable_sin(), f.sin()) <= 1, "sin({f})");
            assert!(ulps32(f.portable_exp(), f.exp()) <= 1, "exp({f})");
        }
    }
}
