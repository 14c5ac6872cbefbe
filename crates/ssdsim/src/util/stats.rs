//! Output of a phase: per-interval series, per-segment-of-bytes series, a log-linear
//! latency histogram with percentiles, and totals.

/// Columns of the per-interval series, in row order.
pub const SERIES: [&str; 20] = [
    "t_s",
    "iops",
    "mbps",
    "read_mbps",
    "write_mbps",
    "lat_mean_us",
    "lat_max_us",
    "host_write_bytes",
    "nand_write_bytes",
    "nand_slc_write_bytes",
    "nand_native_write_bytes",
    "waf",
    "erases",
    "gc_moves",
    "free_blocks",
    "slc_used_bytes",
    "slc_capacity_bytes",
    "cmt_hit_rate",
    "power_w",
    "ios",
];
pub type Row = [f64; SERIES.len()];

/// Cumulative drive counters sampled at interval boundaries.
#[derive(Debug, Clone, Copy, Default)]
pub struct Snapshot {
    pub host_write_bytes: u64,
    pub nand_slc_bytes: u64,
    pub nand_native_bytes: u64,
    pub map_write_bytes: u64,
    pub erases: u64,
    pub gc_moves: u64,
    pub gc_stalls: u64,
    pub cmt_lookups: u64,
    pub cmt_hits: u64,
    pub energy_j: f64,
    pub slc_fold_bytes: u64,
    pub free_blocks: u64,
    pub slc_used_bytes: u64,
    pub slc_capacity_bytes: u64,
}

impl Snapshot {
    pub fn nand_bytes(&self) -> u64 {
        self.nand_slc_bytes + self.nand_native_bytes + self.map_write_bytes
    }

    /// The drive's counters since `start` (bytes, WAF, erases, GC, mapping-cache hits) and
    /// its levels now (free blocks, SLC occupancy): the totals a phase and a session share.
    pub fn since(&self, start: &Snapshot) -> [(&'static str, f64); 12] {
        let (s, b) = (self, start);
        let host = (s.host_write_bytes - b.host_write_bytes) as f64;
        let nand = (s.nand_bytes() - b.nand_bytes()) as f64;
        let lookups = (s.cmt_lookups - b.cmt_lookups) as f64;
        [
            ("host_write_bytes", host),
            ("nand_write_bytes", nand),
            (
                "nand_slc_write_bytes",
                (s.nand_slc_bytes - b.nand_slc_bytes) as f64,
            ),
            (
                "nand_native_write_bytes",
                (s.nand_native_bytes - b.nand_native_bytes) as f64,
            ),
            ("waf", if host > 0.0 { nand / host } else { f64::NAN }),
            ("erases", (s.erases - b.erases) as f64),
            ("gc_moves", (s.gc_moves - b.gc_moves) as f64),
            ("gc_stalls", (s.gc_stalls - b.gc_stalls) as f64),
            (
                "slc_fold_bytes",
                (s.slc_fold_bytes - b.slc_fold_bytes) as f64,
            ),
            ("free_blocks", s.free_blocks as f64),
            ("slc_used_bytes", s.slc_used_bytes as f64),
            (
                "cmt_hit_rate",
                if lookups > 0.0 {
                    (s.cmt_hits - b.cmt_hits) as f64 / lookups
                } else {
                    f64::NAN
                },
            ),
        ]
    }
}

/// Latency histogram: exact below 64 ns, then 32 sub-buckets per power of two (~3 %).
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    pub total: u64,
    sum: u128,
    pub min: u64,
    pub max: u64,
}

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; 64 + 58 * SUB as usize],
            total: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Histogram {
    #[inline]
    fn index(v: u64) -> usize {
        if v < 64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros() as u64;
        let sub = (v >> (e - SUB_BITS as u64)) & (SUB - 1);
        (64 + (e - 6) * SUB + sub) as usize
    }

    fn bounds(i: usize) -> (u64, u64) {
        if i < 64 {
            return (i as u64, i as u64 + 1);
        }
        let k = i as u64 - 64;
        let e = k / SUB + 6;
        let sub = k % SUB;
        let shift = e - SUB_BITS as u64;
        ((SUB + sub) << shift, (SUB + sub + 1) << shift)
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[Self::index(ns)] += 1;
        self.total += 1;
        self.sum += ns as u128;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// Value (ns) at quantile q in [0, 1]: the midpoint of the bucket holding it.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = Self::bounds(i);
                let mid = (lo + hi - 1) as f64 / 2.0;
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// Non-empty buckets as (upper bound ns, count).
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (Self::bounds(i).1, c))
            .collect()
    }
}

/// Accumulates completions into intervals and segments.
pub struct Recorder {
    pub t0: u64,
    interval: u64,
    pub next: u64,
    ios: u64,
    rbytes: u64,
    wbytes: u64,
    lat_sum: u128,
    lat_max: u64,
    last: Snapshot,
    pub rows: Vec<Row>,
    segment: u64,
    seg_moved: u64,
    seg_last_t: u64,
    pub segments: Vec<[f64; 3]>,
    pub hist: Histogram,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl Recorder {
    pub fn new(t0: u64, interval_s: f64, segment_bytes: u64, start: Snapshot) -> Recorder {
        let interval = ((interval_s * 1e9) as u64).max(1000);
        Recorder {
            t0,
            interval,
            next: t0 + interval,
            ios: 0,
            rbytes: 0,
            wbytes: 0,
            lat_sum: 0,
            lat_max: 0,
            last: start,
            rows: Vec::new(),
            segment: segment_bytes.max(4096),
            seg_moved: 0,
            seg_last_t: t0,
            segments: Vec::new(),
            hist: Histogram::default(),
            read_ios: 0,
            write_ios: 0,
            read_bytes: 0,
            write_bytes: 0,
        }
    }

    /// One I/O completed at `done` after `lat` ns.
    #[inline]
    pub fn complete(&mut self, done: u64, lat: u64, bytes: u64, read: bool) {
        self.ios += 1;
        self.lat_sum += lat as u128;
        self.lat_max = self.lat_max.max(lat);
        self.hist.record(lat);
        if read {
            self.rbytes += bytes;
            self.read_ios += 1;
            self.read_bytes += bytes;
        } else {
            self.wbytes += bytes;
            self.write_ios += 1;
            self.write_bytes += bytes;
        }
        self.seg_moved += bytes;
        while self.seg_moved >= self.segment {
            self.seg_moved -= self.segment;
            let dt = (done - self.seg_last_t).max(1) as f64 / 1e9;
            let n = self.segments.len() as f64 + 1.0;
            self.segments.push([
                n * self.segment as f64 / 1e9,
                self.segment as f64 / 1e6 / dt,
                (done - self.t0) as f64 / 1e9,
            ]);
            self.seg_last_t = done;
        }
    }

    /// The phase ends at `end`: bytes moved since the last whole segment (a write that is
    /// not a whole number of segments, or one stopped early) make a last, shorter segment,
    /// so the series ends where the phase's totals do. Less than a block is rounding.
    pub fn close_segments(&mut self, end: u64) {
        if self.seg_moved >= 4096 && end > self.seg_last_t {
            let whole = self.segments.len() as f64 * self.segment as f64;
            self.segments.push([
                (whole + self.seg_moved as f64) / 1e9,
                self.seg_moved as f64 / 1e6 / ((end - self.seg_last_t) as f64 / 1e9),
                (end - self.t0) as f64 / 1e9,
            ]);
            self.seg_moved = 0;
            self.seg_last_t = end;
        }
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval
    }

    pub fn interval_secs(&self) -> f64 {
        self.interval as f64 / 1e9
    }

    pub fn pending_ios(&self) -> u64 {
        self.ios
    }

    /// Skip `n` whole intervals over which nothing happened (no I/O; the drive's counters
    /// stood still and `s` is its state after them, energy included): they get no row. The
    /// engine skips only inside a stretch of quiet intervals, after closing the first of them
    /// and before closing the last, so each skipped row is the same as the last one but for
    /// its time (every rate 0, counters unchanged).
    pub fn skip(&mut self, n: u64, s: Snapshot) {
        debug_assert_eq!(self.ios, 0, "only quiet intervals are skipped");
        self.next += n * self.interval;
        self.last = s;
    }

    /// Close the interval ending at `end` (normally `self.next`) with the drive state `s`.
    pub fn close(&mut self, end: u64, s: Snapshot) -> Row {
        let start = self.next - self.interval;
        let secs = (end - start).max(1) as f64 / 1e9;
        let host = s.host_write_bytes - self.last.host_write_bytes;
        let nand = s.nand_bytes() - self.last.nand_bytes();
        let lookups = s.cmt_lookups - self.last.cmt_lookups;
        let row: Row = [
            (end - self.t0) as f64 / 1e9,
            self.ios as f64 / secs,
            (self.rbytes + self.wbytes) as f64 / 1e6 / secs,
            self.rbytes as f64 / 1e6 / secs,
            self.wbytes as f64 / 1e6 / secs,
            if self.ios > 0 {
                self.lat_sum as f64 / self.ios as f64 / 1e3
            } else {
                f64::NAN
            },
            if self.ios > 0 {
                self.lat_max as f64 / 1e3
            } else {
                f64::NAN
            },
            host as f64,
            nand as f64,
            (s.nand_slc_bytes - self.last.nand_slc_bytes) as f64,
            (s.nand_native_bytes - self.last.nand_native_bytes) as f64,
            if host > 0 {
                nand as f64 / host as f64
            } else {
                f64::NAN
            },
            (s.erases - self.last.erases) as f64,
            (s.gc_moves - self.last.gc_moves) as f64,
            s.free_blocks as f64,
            s.slc_used_bytes as f64,
            s.slc_capacity_bytes as f64,
            if lookups > 0 {
                (s.cmt_hits - self.last.cmt_hits) as f64 / lookups as f64
            } else {
                f64::NAN
            },
            (s.energy_j - self.last.energy_j) / secs,
            self.ios as f64,
        ];
        self.rows.push(row);
        self.last = s;
        self.ios = 0;
        self.rbytes = 0;
        self.wbytes = 0;
        self.lat_sum = 0;
        self.lat_max = 0;
        self.next += self.interval;
        row
    }
}
