//! The figures fio reports per job, kept as fio keeps them so its JSON comes out the same:
//! streaming statistics of per-interval samples (bandwidth, IOPS), the completion-latency
//! histogram in fio's log-linear bins (the `json+` bins and the percentiles), the latency
//! buckets of `latency_ns/us/ms`, and the queue depth at submission and per reap.

/// fio's running statistics of a series of samples: least, greatest, count, and Welford's
/// running mean and sum of squared deviations (fio's `io_stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IoStat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    pub mean: f64,
    pub s: f64,
}

impl IoStat {
    pub fn add(&mut self, v: u64) {
        if self.samples == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.samples += 1;
        let x = v as f64;
        let delta = x - self.mean;
        self.mean += delta / self.samples as f64;
        self.s += delta * (x - self.mean);
    }
}

/// Bits of each bin group: 64 bins per power of two (fio's FIO_IO_U_PLAT_BITS).
pub const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Bins in all: 29 groups of 64 (fio's FIO_IO_U_PLAT_NR), up to ~17 s in ns.
pub const PLAT_NR: usize = 29 * PLAT_VAL as usize;

/// The bin of a latency in ns: below 128 ns one bin per ns; above, each power of two split
/// into 64 bins of equal width (the bits under the top 7 dropped); the last bin holds
/// everything beyond.
#[inline]
pub fn plat_index(ns: u64) -> usize {
    let msb = 63 - (ns | 1).leading_zeros();
    if msb <= PLAT_BITS {
        return ns as usize;
    }
    let drop = msb - PLAT_BITS;
    let idx = (((drop + 1) as u64) << PLAT_BITS) + ((ns >> drop) & (PLAT_VAL - 1));
    (idx as usize).min(PLAT_NR - 1)
}

/// The value fio prints for a bin: the bin itself below 128, else the middle of its range.
pub fn plat_value(idx: usize) -> u64 {
    let i = idx as u64;
    if i < PLAT_VAL << 1 {
        return i;
    }
    let width_bits = (i >> PLAT_BITS) - 1;
    let base = 1u64 << (width_bits + PLAT_BITS as u64);
    let k = i % PLAT_VAL;
    base + (((2 * k + 1) << width_bits) >> 1)
}

/// A latency series in fio's bins, with its exact least, greatest, sum and sum of squares.
#[derive(Clone)]
pub struct Plat {
    pub bins: Box<[u64]>,
    pub n: u64,
    pub sum: u128,
    pub sumsq: f64,
    pub min: u64,
    pub max: u64,
}

impl Default for Plat {
    fn default() -> Self {
        Plat {
            bins: vec![0; PLAT_NR].into_boxed_slice(),
            n: 0,
            sum: 0,
            sumsq: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Plat {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.bins[plat_index(ns)] += 1;
        self.n += 1;
        self.sum += ns as u128;
        self.sumsq += (ns as f64) * (ns as f64);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// fio's percentile `q` (0..1): the value of the first bin at which the running count
    /// reaches q of the samples.
    pub fn quantile(&self, q: f64) -> u64 {
        let want = q * self.n as f64;
        let mut sum = 0u64;
        for (i, &c) in self.bins.iter().enumerate() {
            sum += c;
            if c > 0 && sum as f64 >= want {
                return plat_value(i);
            }
        }
        0
    }

    /// The bins that hold samples: (bin index, count).
    pub fn nonzero(&self) -> Vec<(u32, u64)> {
        self.bins
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i as u32, c))
            .collect()
    }
}

/// fio's latency buckets (`latency_ns`, `latency_us`, `latency_ms`): 10 under 1 us by their
/// ns bound, 10 under 1 ms by their us bound, 12 from 1 ms (the last: 2 s and more).
pub const LAT_BUCKETS: usize = 32;
/// The buckets' upper bounds in ns (us and ms bounds as whole ns: fio divides down, so a
/// latency is under `b` us exactly when it is under `b` x 1000 ns).
const LAT_BOUNDS: [u64; 31] = [
    2,
    4,
    10,
    20,
    50,
    100,
    250,
    500,
    750,
    1000,
    2_000,
    4_000,
    10_000,
    20_000,
    50_000,
    100_000,
    250_000,
    500_000,
    750_000,
    1_000_000,
    2_000_000,
    4_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    750_000_000,
    1_000_000_000,
    2_000_000_000,
];

/// Per highest set bit of a latency, the bucket of the octave's least value: from there at
/// most two bounds fall inside the octave.
const LAT_FROM_MSB: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut m = 0;
    while m < 64 {
        let lo = 1u64 << m;
        let mut i = 0;
        while i < 31 && LAT_BOUNDS[i] <= lo {
            i += 1;
        }
        t[m] = i as u8;
        m += 1;
    }
    t
};

#[inline]
pub fn lat_bucket(ns: u64) -> usize {
    let mut i = LAT_FROM_MSB[(63 - (ns | 1).leading_zeros()) as usize] as usize;
    while i < 31 && LAT_BOUNDS[i] <= ns {
        i += 1;
    }
    i
}

/// fio's depth buckets (`iodepth_level`: 1, 2, 4, 8, 16, 32, >=64; `iodepth_submit` and
/// `iodepth_complete`: 0, 4, 8, 16, 32, 64, >=64) of a count.
#[inline]
pub fn depth_bucket(n: u32) -> usize {
    // 1, 2-3, 4-7, ... 32-63, 64 and more: the highest set bit, at most 6
    (31 - (n | 1).leading_zeros()).min(6) as usize
}

#[inline]
pub fn batch_bucket(n: u32) -> usize {
    // 0; 1-4, 5-8, 9-16, 17-32, 33-64, more: the bits of n - 1, from 2 up, at most 6
    if n == 0 {
        return 0;
    }
    ((32 - (n - 1).leading_zeros()).max(2) - 1).min(6) as usize
}

/// A job's depth figures: the queue depth when each I/O is submitted, the I/Os per
/// submission and per reap (fio's io_u_map, io_u_submit, io_u_complete).
#[derive(Debug, Clone, Copy, Default)]
pub struct Depths {
    pub level: [u64; 7],
    pub submit: [u64; 7],
    pub complete: [u64; 7],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_exact_below_128_then_64_per_power_of_two() {
        for v in 0..128 {
            assert_eq!(plat_index(v), v as usize);
            assert_eq!(plat_value(v as usize), v);
        }
        // 128..256: width 2; 256..512: width 4
        assert_eq!(plat_index(128), 128);
        assert_eq!(plat_index(129), 128);
        assert_eq!(plat_index(130), 129);
        assert_eq!(plat_value(128), 129);
        assert_eq!(plat_index(256), 192);
        assert_eq!(plat_value(192), 258);
        // every value lies in its bin's range, the value printed is inside it
        for v in [1000u64, 4096, 100_000, 1_234_567, 999_999_999] {
            let i = plat_index(v);
            let mid = plat_value(i);
            assert!(mid.abs_diff(v) as f64 <= v as f64 / 64.0, "{v} -> {mid}");
        }
        assert_eq!(plat_index(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn welford_statistics_match_the_direct_ones() {
        let mut s = IoStat::default();
        for v in [10, 20, 30, 40] {
            s.add(v);
        }
        assert_eq!((s.min, s.max, s.samples), (10, 40, 4));
        assert!((s.mean - 25.0).abs() < 1e-12);
        assert!((s.s / 3.0 - 166.666_666_666).abs() < 1e-6); // sample variance
    }

    #[test]
    fn depth_buckets_are_fios() {
        let level = |n: u32| match n {
            0 | 1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        let batch = |n: u32| match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        for n in 0..300u32 {
            assert_eq!(depth_bucket(n), level(n), "{n}");
            assert_eq!(batch_bucket(n), batch(n), "{n}");
        }
    }

    #[test]
    fn latency_buckets_by_their_bounds() {
        for ns in (0..5000u64)
            .chain((0..40).map(|k| 1u64 << k))
            .chain([749, 750, 751, 999_999])
        {
            assert_eq!(
                lat_bucket(ns),
                LAT_BOUNDS.partition_point(|&b| b <= ns),
                "{ns}"
            );
        }
        assert_eq!(lat_bucket(1), 0);
        assert_eq!(lat_bucket(999), 9);
        assert_eq!(lat_bucket(1000), 10);
        assert_eq!(lat_bucket(249_999), 16);
        assert_eq!(lat_bucket(250_000), 17);
        assert_eq!(lat_bucket(1_500_000), 20);
        assert_eq!(lat_bucket(2_000_000_000), 31);
    }
}
