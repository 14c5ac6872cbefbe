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
#[derive(Clone)]
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
            *k = mix(key.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
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
    pub fn next_block(&mut self) -> Option<u64> {
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

/// Zipf ranks with exponent theta by Gray et al.'s approximation ("Quickly generating
/// billion-record synthetic databases", SIGMOD 1994), the generator fio uses, so the
/// proportions are fio's: zeta(n) summed over at most 10 M ranks (as fio caps it), once.
#[derive(Clone)]
pub struct Zipf {
    n: f64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    half_pow: f64,
}

const ZIPF_MAX_GEN: u64 = 10_000_000;

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Zipf {
        let zetan: f64 = (1..=n.min(ZIPF_MAX_GEN))
            .map(|i| (i as f64).powf(-theta))
            .sum();
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        let nf = n as f64;
        Zipf {
            n: nf,
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
            half_pow: 0.5f64.powf(theta),
        }
    }

    /// A rank in 0..n (0 the most frequent).
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        let u = unit(rng);
        let z = u * self.zetan;
        let v = if z < 1.0 {
            1
        } else if z < 1.0 + self.half_pow {
            2
        } else {
            1 + (self.n * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
        };
        let _ = self.theta;
        (v - 1).min(self.n as u64 - 1)
    }
}

/// A skewed rank in 0..n for fio's distributions, scattered over the blocks as fio's
/// hash does (the hot blocks are spread, not the first ones). Normal: `dev` in blocks.
#[derive(Clone)]
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
            Skew::Normal(dev) => {
                // fio's: the mean of 12 uniform draws over 0..=n, moved by a uniform draw
                // of `dev` blocks' width (halved until it stays below n)
                let mut sum: u64 = (0..12).map(|_| below(rng, n + 1)).sum();
                sum = sum.div_ceil(12);
                let sd = *dev as i64;
                if sd > 0 {
                    let mut d = (unit(rng) * sd as f64) as i64 - sd / 2;
                    while d + sum as i64 >= n as i64 {
                        d /= 2;
                    }
                    sum = (sum as i64 + d).max(0) as u64;
                }
                sum
            }
        };
        // Fibonacci hashing (the golden ratio's 64-bit fraction), as fio scatters ranks:
        // consecutive ranks land far apart and rarely on the same block
        rank.wrapping_mul(0x61C8_8646_80B5_83EB).wrapping_add(salt) % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn permutation_visits_every_block_once_per_pass() {
        for n in [1u64, 2, 3, 1000, 4097] {
            let mut p = Permutation::new(n, 7);
            let mut seen = vec![false; n as usize];
            while let Some(b) = p.next_block() {
                assert!(!seen[b as usize], "block {b} twice");
                seen[b as usize] = true;
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn zipf_ranks_are_skewed_and_in_range() {
        let n = 100_000;
        let z = Zipf::new(n, 1.2);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let draws: Vec<u64> = (0..100_000).map(|_| z.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&r| r < n));
        let top = draws.iter().filter(|&&r| r < n / 100).count();
        assert!(
            top > 50_000,
            "the top 1 % of ranks took {top} of 100 000 draws"
        );
    }
}
