//! Random block choice, O(1) memory: fio's random map (every block once per pass) as a
//! keyed permutation, and fio's skewed distributions (zipf, pareto, normal) over ranks,
//! scattered over the blocks by a hash as fio scatters them.

use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

#[inline]
pub fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[inline]
pub fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A permutation of 0..n (a 4-round Feistel network over the smallest even power of two
/// >= n, cycle-walking back into range): the random map's order, one pass at a time.
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
    next: u64,
}

impl Permutation {
    pub fn new(n: u64, key: u64) -> Permutation {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut p = Permutation {
            n,
            half_bits,
            keys: [0; 4],
            next: 0,
        };
        p.rekey(key);
        p
    }

    pub fn rekey(&mut self, key: u64) {
        for (i, k) in self.keys.iter_mut().enumerate() {
            *k = mix(key.wrapping_add(i as u64 * 0x9E37_79B9_7F4A_7C15));
        }
        self.next = 0;
    }

    #[inline]
    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = mix(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The next block of this pass, or None when the pass is over.
    #[inline]
    pub fn next(&mut self) -> Option<u64> {
        let dom = 1u64 << (2 * self.half_bits);
        while self.next < dom {
            let x = self.encrypt(self.next);
            self.next += 1;
            if x < self.n {
                return Some(x);
            }
        }
        None
    }
}

/// Zipf ranks 1..=n with exponent theta (rejection-inversion, Hörmann and Derflinger 1996):
/// O(1) time and memory whatever n.
pub struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    c: f64,
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Zipf {
        let s = theta;
        let n = n as f64;
        let mut z = Zipf {
            n,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            c: 0.0,
        };
        z.h_x1 = z.h(1.5) - 1.0;
        z.h_n = z.h(n + 0.5);
        z.c = 2.0 - z.h_inv(z.h(2.5) - 2f64.powf(-s));
        z
    }

    fn h(&self, x: f64) -> f64 {
        let e = 1.0 - self.s;
        if e.abs() < 1e-9 {
            x.ln()
        } else {
            (x.powf(e) - 1.0) / e
        }
    }

    fn h_inv(&self, x: f64) -> f64 {
        let e = 1.0 - self.s;
        if e.abs() < 1e-9 {
            x.exp()
        } else {
            (1.0 + e * x).max(0.0).powf(1.0 / e)
        }
    }

    /// A rank in 0..n (0 the most frequent).
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        loop {
            let u = self.h_n + unit(rng) * (self.h_x1 - self.h_n);
            let x = self.h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.c || u >= self.h(k + 0.5) - k.powf(-self.s) {
                return k as u64 - 1;
            }
        }
    }
}

/// A skewed rank in 0..n for fio's distributions, scattered over the blocks as fio's
/// hash does (the hot blocks are spread, not the first ones).
pub enum Skew {
    Zipf(Zipf),
    Pareto(f64),
    Normal(f64),
}

impl Skew {
    pub fn block(&self, rng: &mut Xoshiro256PlusPlus, n: u64, salt: u64) -> u64 {
        let rank = match self {
            Skew::Zipf(z) => z.sample(rng),
            Skew::Pareto(pow) => (((n - 1) as f64) * unit(rng).powf(*pow)) as u64,
            Skew::Normal(sd) => {
                // Box-Muller around the middle, `sd` blocks wide; outside draws are redrawn
                loop {
                    let (u1, u2) = (unit(rng).max(1e-300), unit(rng));
                    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                    let r = (n as f64 / 2.0 + z * sd).floor();
                    if r >= 0.0 && r < n as f64 {
                        break r as u64;
                    }
                }
            }
        };
        if matches!(self, Skew::Normal(_)) {
            return rank;
        }
        mix(rank ^ salt) % n
    }
}
