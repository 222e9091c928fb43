//! Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
//! 3", SC 2011): a counter-based generator. The output is a pure function of
//! a 128-bit counter and a 64-bit key, so every element of a loop can draw
//! from its own stream (keyed by the seed, numbered by the element's global
//! id, the loop's call counter and the draw) and get the same bits on every
//! backend, thread count and rank count. The arithmetic is 32-bit integer
//! only, so a C, OpenCL or CUDA version computes the same words.

/// Multipliers and key increments of Philox4x32 (the published constants).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

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
/// distributions use integer arithmetic and exact scalings only (no
/// transcendental functions), so they too give the same bits everywhere.
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
}
