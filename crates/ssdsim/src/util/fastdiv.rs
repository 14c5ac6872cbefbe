//! Division of u32 values by a divisor fixed at run time (a geometry figure such as slots
//! per block) as one multiplication: a hardware division costs 20-40 cycles, and the host
//! write path needs two. Exact for every u32 dividend and divisor.

#[derive(Debug, Clone, Copy)]
pub struct Divisor {
    /// ceil(2^64 / d) for d >= 2; 0 for d = 1 (2^64 does not fit).
    m: u64,
    /// All ones for d = 1, else 0: x / 1 is x.
    one: u32,
}

impl Divisor {
    pub fn new(d: u32) -> Divisor {
        assert!(d > 0, "division by zero");
        if d == 1 {
            return Divisor {
                m: 0,
                one: u32::MAX,
            };
        }
        Divisor {
            m: (1u128 << 64).div_ceil(d as u128) as u64,
            one: 0,
        }
    }

    /// x / d: the high word of x * m. With e = m * d - 2^64 < d, x * m / 2^64 =
    /// x / d + x * e / (d * 2^64), whose second term is below 2^32 / 2^64 < 1 / d: never
    /// enough to reach the next integer.
    #[inline(always)]
    pub fn quotient(self, x: u32) -> u32 {
        ((x as u128 * self.m as u128) >> 64) as u32 + (x & self.one)
    }
}

#[cfg(test)]
mod tests {
    use super::Divisor;
    use proptest::prelude::*;

    #[test]
    fn edges() {
        for d in [1, 2, 3, 7, 84, 1365, 2048, 6144, u32::MAX - 1, u32::MAX] {
            let v = Divisor::new(d);
            for x in [0, 1, d - 1, d, d.saturating_add(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(v.quotient(x), x / d, "{x} / {d}");
            }
        }
    }

    proptest! {
        #[test]
        fn matches_hardware_division(d in 1u32.., x in any::<u32>()) {
            prop_assert_eq!(Divisor::new(d).quotient(x), x / d);
        }

        #[test]
        fn matches_at_multiples(d in 1u32..100_000, q in 0u64..40_000, r in -1i64..=1) {
            let x = (q as i64 * d as i64 + r).clamp(0, u32::MAX as i64) as u32;
            prop_assert_eq!(Divisor::new(d).quotient(x), x / d);
        }
    }
}
