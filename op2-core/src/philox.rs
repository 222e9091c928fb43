//! Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
//! 3", SC 2011): a counter-based generator. The output is a pure function of
//! a 128-bit counter and a 64-bit key, so every element of a loop can draw
//! from its own stream (keyed by the seed, numbered by the element's global
//! id, the loop's call counter and the draw) and get the same bits on every
//! backend, thread count and rank count. The arithmetic is 32-bit integer
//! only, so a C, OpenCL or CUDA version computes the same words.
//!
//! The normal draws (Box–Muller) need a logarithm and a cosine. Math
//! libraries (glibc, OpenCL's, CUDA's) round those differently, so this
//! module has its own, [`portable_ln`] and [`portable_cos_2pi`], written with
//! `+`, `-`, `*`, `/` (correctly rounded in IEEE arithmetic) and exact bit
//! operations only, in an order the C versions (`op2_pm_ln_normal`,
//! `op2_philox_cos_2pi` in the backends' generated code) repeat operation
//! for operation; those are compiled without contraction into FMAs.

/// Multipliers and key increments of Philox4x32 (the published constants).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// `1/(2k+1)` for k = 1..=10: the series of `atanh(s)/s - 1` in `s^2`.
const LN_SERIES: [f64; 10] = [
    0.3333333333333333,
    0.2,
    0.14285714285714285,
    0.1111111111111111,
    0.09090909090909091,
    0.07692307692307693,
    0.06666666666666667,
    0.058823529411764705,
    0.05263157894736842,
    0.047619047619047616,
];
/// `ln 2` in two parts: the high part has 32 significant bits, so `e * LN2_HI`
/// is exact for every exponent `e` of an `f64`.
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;
/// `(-1)^k/(2k+1)!` for k = 1..=8: Taylor's series of `sin(y)/y - 1` in `y^2`.
const SIN_SERIES: [f64; 8] = [
    -0.16666666666666666,
    0.008333333333333333,
    -0.0001984126984126984,
    2.7557319223985893e-6,
    -2.505210838544172e-8,
    1.6059043836821613e-10,
    -7.647163731819816e-13,
    2.8114572543455206e-15,
];
/// `(-1)^k/(2k)!` for k = 2..=9: Taylor's series of `cos(y) - 1 + y^2/2`
/// over `y^4`, in `y^2`.
const COS_SERIES: [f64; 8] = [
    0.041666666666666664,
    -0.001388888888888889,
    2.48015873015873e-5,
    -2.755731922398589e-7,
    2.08767569878681e-9,
    -1.1470745597729725e-11,
    4.779477332387385e-14,
    -1.5619206968586225e-16,
];

/// The natural logarithm of a positive normal `x` (the normal draws take it
/// of `(0, 1]`), within about 2 ulp, with the same bits as the generated C's
/// `op2_pm_ln_normal` on every backend: `+ - * /` and exact bit operations only,
/// no math library. Zero, subnormals, infinities and NaN are not handled.
///
/// `x = m 2^e` with `m` in `[sqrt(1/2), sqrt(2)]` (exponent and mantissa split
/// through the bits); `ln m = 2 atanh(s)` with `s = (m-1)/(m+1)`, `|s| <=
/// 0.172`, summed by Horner in `s^2` to the `s^21` term (the next one is below
/// `1e-18` relatively); `e ln 2` is added in two parts.
pub fn portable_ln(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let f = s + s;
    let z = s * s;
    let l = &LN_SERIES;
    let q = l[0]
        + z * (l[1]
            + z * (l[2] + z * (l[3] + z * (l[4] + z * (l[5] + z * (l[6] + z * (l[7] + z * (l[8] + z * l[9]))))))));
    let e = e as f64;
    e * LN2_HI + (f + (f * (z * q) + e * LN2_LO))
}

/// `cos(2 pi v)` for `v` in `[0, 1)` (the normal draws' angle in turns),
/// within about 2 ulp, with the same bits as the generated C's
/// `op2_philox_cos_2pi` on every backend: `+ - * /` and exact operations only.
///
/// The octant `floor(8v)` picks the nearest quarter turn `q`; `d = 4v - q` in
/// `[-1/2, 1/2)` is exact, so `y = d pi/2` in `[-pi/4, pi/4]` carries one
/// rounding only (no cancellation near the zeros of the cosine). Then
/// `cos(2 pi v)` is `cos y`, `-sin y`, `-cos y` or `sin y` for `q mod 4`, each
/// a Taylor polynomial by Horner in `y^2` (to `y^17` and `y^18`; the next terms
/// are below `1e-18` relatively).
pub fn portable_cos_2pi(v: f64) -> f64 {
    let octant = (v * 8.0) as u32;
    let q = (octant + 1) >> 1;
    let y = (v * 4.0 - f64::from(q)) * std::f64::consts::FRAC_PI_2;
    let z = y * y;
    let (s, c) = (&SIN_SERIES, &COS_SERIES);
    let sin = || {
        y + y * (z * (s[0] + z * (s[1] + z * (s[2] + z * (s[3] + z * (s[4] + z * (s[5] + z * (s[6] + z * s[7]))))))))
    };
    let cos = || {
        (1.0 - 0.5 * z)
            + (z * z) * (c[0] + z * (c[1] + z * (c[2] + z * (c[3] + z * (c[4] + z * (c[5] + z * (c[6] + z * c[7])))))))
    };
    match q & 3 {
        0 => cos(),
        1 => -sin(),
        2 => -cos(),
        _ => sin(),
    }
}

/// The high and low 32 bits of `a * b`.
fn mul_hi_lo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

/// Philox4x32 with 10 rounds: four random words for `counter` under `key`.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let (hi0, lo0) = mul_hi_lo(M0, c[0]);
        let (hi1, lo1) = mul_hi_lo(M1, c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// One element's random stream in one loop call: the draws of
/// `(seed, id, call)`, four words per Philox block, in order.
///
/// The counter is `[block, call, id low, id high]` and the key the seed, so
/// streams of different elements, calls or seeds never share a block. The
/// distributions use integer arithmetic and exact scalings only, and the
/// normals [`portable_ln`] and [`portable_cos_2pi`] (no math library), so
/// they too give the same bits everywhere.
#[derive(Clone, Debug)]
pub struct Philox {
    key: [u32; 2],
    counter: [u32; 4],
    words: [u32; 4],
    used: usize,
}

impl Philox {
    /// The stream of element `id` (its global id) in call `call` of a loop,
    /// under `seed`.
    pub fn new(seed: u64, id: u64, call: u32) -> Philox {
        Philox {
            key: [seed as u32, (seed >> 32) as u32],
            counter: [0, call, id as u32, (id >> 32) as u32],
            words: [0; 4],
            used: 4,
        }
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.words = philox4x32_10(self.counter, self.key);
            self.counter[0] = self.counter[0].wrapping_add(1);
            self.used = 0;
        }
        self.used += 1;
        self.words[self.used - 1]
    }

    /// The next 64 random bits (two words, the first one high).
    pub fn next_u64(&mut self) -> u64 {
        let hi = u64::from(self.next_u32());
        (hi << 32) | u64::from(self.next_u32())
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn uniform_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[0, 1)` with 24 random bits.
    pub fn uniform_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Uniform in `0..n` without bias (Lemire's multiply-and-reject; `n > 0`),
    /// else 0 for `n == 0`.
    pub fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            return 0;
        }
        // Products whose low word falls under 2^32 mod n would over-represent
        // some results: draw again.
        let threshold = n.wrapping_neg() % n;
        loop {
            let (hi, lo) = mul_hi_lo(self.next_u32(), n);
            if lo >= threshold {
                return hi;
            }
        }
    }

    /// True with probability `p` (false for `p <= 0` or NaN, true for `p >= 1`).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform_f64() < p
    }

    /// Standard normal (mean 0, standard deviation 1) by Box–Muller:
    /// `sqrt(-2 ln u) cos(2 pi v)` with `u = 1 - uniform_f64()` in `(0, 1]`
    /// and then `v = uniform_f64()`, so it consumes exactly two `uniform_f64`
    /// draws (four words); the second normal of the pair is not kept, so the
    /// stream's position depends only on the number of draws. The logarithm
    /// and cosine are [`portable_ln`] and [`portable_cos_2pi`], not the math
    /// library's, so the result has the same bits on every backend (host C,
    /// OpenCL, CUDA). Its magnitude is at most `sqrt(-2 ln 2^-53)`, about 8.57.
    pub fn normal_f64(&mut self) -> f64 {
        let u = 1.0 - self.uniform_f64();
        let v = self.uniform_f64();
        (-2.0 * portable_ln(u)).sqrt() * portable_cos_2pi(v)
    }

    /// Standard normal in `f32`: [`normal_f64`](Self::normal_f64) rounded to
    /// `f32` once (so it consumes the same two `uniform_f64` draws and has
    /// the same bits on every backend).
    pub fn normal_f32(&mut self) -> f32 {
        self.normal_f64() as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for Philox4x32-10 (counter, key, result).
    const KNOWN_ANSWERS: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        ([0; 4], [0; 2], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
        (
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    #[test]
    fn known_answer_vectors() {
        for (counter, key, want) in KNOWN_ANSWERS {
            assert_eq!(
                philox4x32_10(counter, key),
                want,
                "counter {counter:08x?} key {key:08x?}"
            );
        }
    }

    #[test]
    fn a_stream_is_its_blocks_in_order_and_streams_differ() {
        let mut s = Philox::new(0x0123_4567_89ab_cdef, 7 | (1 << 40), 3);
        let key = [0x89ab_cdef, 0x0123_4567];
        let block0 = philox4x32_10([0, 3, 7, 1 << 8], key);
        let block1 = philox4x32_10([1, 3, 7, 1 << 8], key);
        let drawn: Vec<u32> = (0..8).map(|_| s.next_u32()).collect();
        assert_eq!(drawn, [block0, block1].concat());
        let first = |seed, id, call| Philox::new(seed, id, call).next_u64();
        let base = first(1, 2, 3);
        assert_ne!(base, first(2, 2, 3));
        assert_ne!(base, first(1, 3, 3));
        assert_ne!(base, first(1, 2, 4));
        assert_eq!(base, first(1, 2, 3));
    }

    #[test]
    fn distributions_stay_in_range_and_are_fair() {
        let mut s = Philox::new(42, 0, 0);
        let n = 100_000;
        let (mut sum, mut heads) = (0.0, 0);
        let mut counts = [0u32; 6];
        for _ in 0..n {
            let u = s.uniform_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
            let f = s.uniform_f32();
            assert!((0.0..1.0).contains(&f));
            counts[s.below(6) as usize] += 1;
            heads += u32::from(s.bernoulli(0.25));
        }
        assert!((sum / n as f64 - 0.5).abs() < 0.01, "mean {}", sum / n as f64);
        assert!((f64::from(heads) / n as f64 - 0.25).abs() < 0.01, "{heads}");
        for c in counts {
            assert!((f64::from(c) / n as f64 - 1.0 / 6.0).abs() < 0.01, "{counts:?}");
        }
        assert_eq!(s.below(0), 0);
        assert!(!s.bernoulli(0.0) && s.bernoulli(1.0) && !s.bernoulli(f64::NAN));
    }

    /// The largest relative error of `f` against `reference` over `xs`.
    fn worst(xs: impl Iterator<Item = f64>, f: fn(f64) -> f64, reference: fn(f64) -> f64) -> (f64, f64) {
        xs.map(|x| {
            let (got, want) = (f(x), reference(x));
            let err = if want == 0.0 {
                got.abs()
            } else {
                ((got - want) / want).abs()
            };
            (err, x)
        })
        .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
    }

    #[test]
    fn series_coefficients_are_the_rounded_fractions() {
        for (k, &c) in LN_SERIES.iter().enumerate() {
            assert_eq!(c, 1.0 / (2 * k + 3) as f64, "1/{}", 2 * k + 3);
        }
        // n! is exact in f64 up to 22!, so 1/n! is rounded once.
        let inverse_factorial = |n: u32| 1.0 / (1..=n).map(f64::from).product::<f64>();
        for (k, (&s, &c)) in SIN_SERIES.iter().zip(&COS_SERIES).enumerate() {
            let sign = if k % 2 == 0 { -1.0 } else { 1.0 };
            assert_eq!(s, sign * inverse_factorial(2 * k as u32 + 3), "sin, k = {}", k + 1);
            assert_eq!(c, -sign * inverse_factorial(2 * k as u32 + 4), "cos, k = {}", k + 2);
        }
        assert_eq!(LN2_HI.to_bits() & 0x1f_ffff, 0, "e * LN2_HI must be exact");
        assert_eq!(LN2_HI + LN2_LO, std::f64::consts::LN_2);
    }

    #[test]
    fn portable_ln_is_within_a_few_ulp_of_std() {
        let mut s = Philox::new(5, 0, 0);
        // The draws' inputs (multiples of 2^-53 in (0, 1]), around 1 and
        // around the mantissa's split at sqrt(2), and any exponent.
        let draws = (0..1_000_000).map(|_| 1.0 - s.uniform_f64());
        let near_one =
            (1..100_000).flat_map(|k| [1.0 - k as f64 * 1e-12, 1.0 + k as f64 * 1e-12, 1.0 - k as f64 * 1e-6]);
        let near_split = (0..100_000).map(|k| (std::f64::consts::SQRT_2 - 5e-6 + k as f64 * 1e-10) * 0.25);
        let mut t = Philox::new(6, 0, 0);
        let wide = (0..1_000_000).map(|_| f64::from_bits((t.next_u64() % (0x7fe0 << 48)) + (1 << 52)));
        let mut all = 0.0f64;
        for (name, (err, at)) in [
            ("draws", worst(draws, portable_ln, f64::ln)),
            ("near 1", worst(near_one, portable_ln, f64::ln)),
            ("near sqrt 2", worst(near_split, portable_ln, f64::ln)),
            ("any exponent", worst(wide, portable_ln, f64::ln)),
        ] {
            eprintln!("ln {name}: worst relative error {err:.3e} at {at:e}");
            all = all.max(err);
        }
        assert!(all < 1e-15, "{all:e}");
        assert_eq!(portable_ln(1.0), 0.0);
        assert_eq!(portable_ln(0.5), -std::f64::consts::LN_2);
        assert_eq!(portable_ln(2.0f64.powi(-53)), -53.0 * std::f64::consts::LN_2);
    }

    #[test]
    fn portable_cos_2pi_is_within_a_few_ulp_of_std() {
        let tau = std::f64::consts::TAU;
        // std's cos of the rounded 2 pi v is off by up to one rounding of the
        // angle, which near the zeros of the cosine is many ulp of the result.
        // The reference reduces exactly instead: the nearest quarter turn is
        // subtracted from 4v exactly, the remainder times pi/2 is carried in
        // two parts (y + r, with pi/2's own rounding error in r), and std's
        // sin and cos of y are corrected to first order in r.
        let reference = |v: f64| {
            let q = ((v * 8.0) as u32 + 1) >> 1;
            let d = v * 4.0 - f64::from(q);
            let y = d * std::f64::consts::FRAC_PI_2;
            let r = d.mul_add(std::f64::consts::FRAC_PI_2, -y) + d * 6.123_233_995_736_766e-17;
            let (sin, cos) = (y.sin() + y.cos() * r, y.cos() - y.sin() * r);
            match q & 3 {
                0 => cos,
                1 => -sin,
                2 => -cos,
                _ => sin,
            }
        };
        let mut s = Philox::new(7, 0, 0);
        let draws: Vec<f64> = (0..1_000_000).map(|_| s.uniform_f64()).collect();
        let grid = (0..1_000_000).map(|k| k as f64 / 1e6);
        let near_zeros = (1..20_000).flat_map(|k| {
            let d = k as f64 * 2f64.powi(-40);
            [0.25 - d, 0.25 + d, 0.75 - d, 0.75 + d]
        });
        let mut all = 0.0f64;
        for (name, (err, at)) in [
            ("draws", worst(draws.iter().copied(), portable_cos_2pi, reference)),
            ("grid", worst(grid, portable_cos_2pi, reference)),
            ("near the zeros", worst(near_zeros, portable_cos_2pi, reference)),
        ] {
            eprintln!("cos 2 pi v {name}: worst relative error {err:.3e} at {at:e}");
            all = all.max(err);
        }
        assert!(all < 1e-15, "{all:e}");
        // Against std's cos(2 pi v) directly, absolutely (the rounding of
        // 2 pi v alone costs up to ~4e-16 absolute).
        let (abs, _) = draws
            .iter()
            .map(|&v| ((portable_cos_2pi(v) - (tau * v).cos()).abs(), v))
            .fold((0.0, 0.0), |a: (f64, f64), b| if b.0 > a.0 { b } else { a });
        eprintln!("cos 2 pi v draws: worst absolute error against std's cos(2 pi v) {abs:.3e}");
        assert!(abs < 2e-15, "{abs:e}");
        for (v, want) in [(0.0, 1.0), (0.25, 0.0), (0.5, -1.0), (0.75, 0.0)] {
            assert_eq!(portable_cos_2pi(v), want, "v = {v}");
        }
    }

    #[test]
    fn normals_have_mean_0_and_variance_1_and_take_two_uniforms() {
        let mut s = Philox::new(2024, 3, 1);
        let n = 1_000_000;
        let (mut sum, mut squares, mut fourth, mut within_one) = (0.0, 0.0, 0.0, 0);
        for _ in 0..n {
            let z = s.normal_f64();
            assert!(z.is_finite() && z.abs() < 8.6, "{z}");
            sum += z;
            squares += z * z;
            fourth += z * z * z * z;
            within_one += u32::from(z.abs() < 1.0);
        }
        let n = n as f64;
        let (mean, variance) = (sum / n, squares / n - (sum / n).powi(2));
        eprintln!(
            "normal_f64: mean {mean:.5}, variance {variance:.5}, fourth moment {:.4}, P(|z| < 1) {:.5}",
            fourth / n,
            f64::from(within_one) / n
        );
        // Standard errors: 1e-3 for the mean, 1.4e-3 for the variance,
        // 9.8e-3 for the fourth moment (3), 4.7e-4 for P(|z| < 1) (0.6827).
        assert!(mean.abs() < 5e-3, "mean {mean}");
        assert!((variance - 1.0).abs() < 7e-3, "variance {variance}");
        assert!((fourth / n - 3.0).abs() < 0.05, "fourth moment {}", fourth / n);
        assert!((f64::from(within_one) / n - 0.682_689_5).abs() < 2.5e-3);

        // Two uniforms each, nothing cached; f32 is the f64 rounded once.
        let (mut a, mut b) = (Philox::new(9, 9, 9), Philox::new(9, 9, 9));
        for _ in 0..100 {
            let (u, v) = (1.0 - b.uniform_f64(), b.uniform_f64());
            let want = (-2.0 * portable_ln(u)).sqrt() * portable_cos_2pi(v);
            assert_eq!(a.normal_f64().to_bits(), want.to_bits());
            let z = a.clone().normal_f64() as f32;
            assert_eq!(a.normal_f32().to_bits(), z.to_bits());
            b.uniform_f64();
            b.uniform_f64();
        }
        assert_eq!(a.next_u32(), b.next_u32());
    }
}
