//! A job's per-interval figures as fio takes them (stat.c): every `bw_ns` / `iops_ns` of
//! the job's time one bandwidth and one IOPS sample per direction that completed I/O in
//! the interval (an interval without I/O gives no sample, so an idle stretch costs
//! nothing); the latency log's entries, each the mean of a window closed by the first
//! completion at or past its end (and the last, partial window at the job's end); the
//! histogram log's per-window bin counts. The samples feed fio's bw/iops statistics
//! (report.rs); the entries are kept only for a job that writes logs, within a byte budget
//! shared by the run's jobs (past it the job's logs stop and say so). A log of an entry per
//! I/O (fio's `log_avg_msec=0`) is written as the run goes (unit_log.rs); a bandwidth or
//! IOPS log of that kind makes each I/O a sample, as fio's add_bw_sample / add_iops_sample
//! (bytes x 10^6 / its completion latency in ns; 1), in place of the per-interval ones.

use super::report::{plat_index, PLAT_NR};
use super::JobOut;

/// A job's samples and log windows, as its spec asks for them.
#[derive(Clone, Copy)]
pub struct LogPlan {
    /// Sample intervals (bwavgtime, iopsavgtime), ns.
    pub bw_ns: u64,
    pub iops_ns: u64,
    /// Keep the averaged logs' entries; the latency log's window (0: an entry per I/O, not
    /// kept here) and the histogram log's (0: none), ms.
    pub keep: bool,
    pub lat_ms: u64,
    pub hist_ms: u64,
    /// A bandwidth / IOPS log of an entry per I/O: each I/O is a sample.
    pub unit_bw: bool,
    pub unit_iops: bool,
    /// Metadata bytes per 4096-byte block (extended LBA): fio's bandwidth counts them.
    pub md_bytes: u64,
    /// The bandwidth and IOPS logs' windows (ms) when each I/O is a sample but the log
    /// keeps their means (fio's log_compression with a log_avg_msec); 0: no such log.
    pub unit_avg_ms: [u64; 2],
}

/// fio's slack (ms) for closing a bandwidth or IOPS log window early (stat.c LOG_MSEC_SLACK).
const LOG_MSEC_SLACK: u64 = 1;

/// One log entry: (ms since the job's start, direction, kind, value).
pub type LogEntry = (u64, u8, u8, u64);
pub const KIND_BW: u8 = 0;
pub const KIND_IOPS: u8 = 1;
pub const KIND_LAT: u8 = 2;
/// A histogram log entry: (ms, direction, block size, the window's non-empty bins).
pub type HistEntry = (u64, u8, u64, Vec<(u16, u32)>);

/// Bytes of log entries a run keeps at most (over every job).
pub const LOG_BUDGET: u64 = 256 << 20;

pub struct JobLog {
    from: u64,
    plan: LogPlan,
    keep: bool,
    bw_ns: u64,
    iops_ns: u64,
    lat_ms: u64,
    hist_ms: u64,
    bw_next: u64,
    iops_next: u64,
    bw_acc: [u64; 3],
    iops_acc: [u64; 3],
    /// Latency log windows per direction: (latency sum, count), and the window's start (ms).
    lat_win: [(u64, u64); 3],
    lat_last: [u64; 3],
    /// Histogram log windows per direction (bins), and each window's start (ms, 0 unset).
    hist_win: Vec<Vec<u32>>,
    hist_last: [u64; 3],
    /// Per-I/O bandwidth and IOPS samples averaged per window (unit_avg_ms): per log and
    /// direction (sum, count), and each window's start (ms).
    unit_win: [[(f64, u64); 3]; 2],
    unit_last: [[u64; 3]; 2],
}

impl JobLog {
    /// A job whose figures count from `from`, as `plan` asks for them.
    pub fn new(from: u64, plan: LogPlan) -> JobLog {
        let bw_ns = plan.bw_ns.max(1_000_000);
        let iops_ns = plan.iops_ns.max(1_000_000);
        let hist_ms = plan.hist_ms;
        JobLog {
            from,
            plan,
            keep: plan.keep,
            bw_ns,
            iops_ns,
            lat_ms: plan.lat_ms,
            hist_ms,
            bw_next: from + bw_ns,
            iops_next: from + iops_ns,
            bw_acc: [0; 3],
            iops_acc: [0; 3],
            lat_win: [(0, 0); 3],
            lat_last: [0; 3],
            hist_win: if hist_ms > 0 {
                vec![vec![0; PLAT_NR]; 3]
            } else {
                vec![]
            },
            hist_last: [0; 3],
            unit_win: [[(0.0, 0); 3]; 2],
            unit_last: [[0; 3]; 2],
        }
    }

    /// The job's figures start again at `t` (fio's reset_all_stats).
    pub fn restart(&mut self, t: u64) {
        *self = JobLog::new(t, self.plan);
    }

    /// The samples of every interval that ended at or before `t`.
    #[inline]
    fn tick(&mut self, t: u64, o: &mut JobOut, budget: &mut u64) {
        if t >= self.bw_next {
            let ms = (self.bw_next - self.from) / 1_000_000;
            let spent = self.bw_ns / 1_000_000;
            for d in 0..3 {
                let b = std::mem::take(&mut self.bw_acc[d]);
                if b > 0 {
                    let v = b * 1000 / spent / 1024; // KiB/s, as fio's
                    o.bw_stat[d].add(v);
                    self.entry(o, budget, (ms, d as u8, KIND_BW, v));
                }
            }
            self.bw_next += self.bw_ns * ((t - self.bw_next) / self.bw_ns + 1);
        }
        if t >= self.iops_next {
            let ms = (self.iops_next - self.from) / 1_000_000;
            let spent = self.iops_ns / 1_000_000;
            for d in 0..3 {
                let n = std::mem::take(&mut self.iops_acc[d]);
                if n > 0 {
                    let v = n * 1000 / spent;
                    o.iops_stat[d].add(v);
                    self.entry(o, budget, (ms, d as u8, KIND_IOPS, v));
                }
            }
            self.iops_next += self.iops_ns * ((t - self.iops_next) / self.iops_ns + 1);
        }
    }

    fn entry(&self, o: &mut JobOut, budget: &mut u64, e: LogEntry) {
        if !self.keep {
            return;
        }
        const SZ: u64 = std::mem::size_of::<LogEntry>() as u64;
        if *budget < SZ {
            o.log_truncated = true;
            return;
        }
        *budget -= SZ;
        o.log.push(e);
    }

    /// An I/O of `len` bytes at `offset` in direction `d` completed at `t` after `lat` ns.
    #[inline]
    #[allow(clippy::too_many_arguments)] // the I/O, the job's figures and the run's budget
    pub fn complete(
        &mut self,
        t: u64,
        d: usize,
        offset: u64,
        len: u64,
        lat: u64,
        o: &mut JobOut,
        budget: &mut u64,
    ) {
        if t >= self.bw_next.min(self.iops_next) {
            self.tick(t, o, budget);
        }
        let ms = (t - self.from) / 1_000_000;
        // fio's bytes of the I/O: an extended-LBA block's metadata moves with its data
        let host_len = len + len / 4096 * self.plan.md_bytes;
        if self.plan.unit_bw {
            let v = (host_len * 1_000_000).checked_div(lat).unwrap_or(0);
            o.bw_stat[d].add(v);
            self.unit_sample(KIND_BW, ms, d, v, o, budget);
        } else {
            self.bw_acc[d] += host_len;
        }
        if self.plan.unit_iops {
            o.iops_stat[d].add(1);
            self.unit_sample(KIND_IOPS, ms, d, 1, o, budget);
        } else {
            self.iops_acc[d] += 1;
        }
        if !self.keep {
            return;
        }
        if let Some(u) = o.unit_log.as_mut() {
            u.io(ms, d, offset, len, lat);
        }
        let w = &mut self.lat_win[d];
        w.0 += lat;
        w.1 += 1;
        if self.lat_ms == 0 {
            *w = (0, 0); // an entry per I/O (unit_log.rs)
        } else if ms >= self.lat_last[d] && ms - self.lat_last[d] >= self.lat_ms {
            let mean = (w.0 + w.1 / 2) / w.1;
            *w = (0, 0);
            self.lat_last[d] = ms - ms % self.lat_ms;
            self.entry(o, budget, (ms, d as u8, KIND_LAT, mean));
        }
        if self.hist_ms > 0 {
            self.hist_win[d][plat_index(lat)] += 1;
            if self.hist_last[d] == 0 {
                self.hist_last[d] = ms.max(1);
            }
            let window = ms.saturating_sub(self.hist_last[d]);
            if window >= self.hist_ms {
                let bins: Vec<(u16, u32)> = self.hist_win[d]
                    .iter_mut()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, c)| (i as u16, std::mem::take(c)))
                    .collect();
                let sz = 32 + 8 * bins.len() as u64;
                if *budget < sz {
                    o.log_truncated = true;
                } else {
                    *budget -= sz;
                    o.hist_log.push((ms, d as u8, host_len, bins));
                }
                self.hist_last[d] = ms - (window - self.hist_ms);
            }
        }
    }

    /// A per-I/O sample `v` of a log that keeps the means of `unit_avg_ms` windows, as fio's
    /// add_log_sample: the window closes at the first sample at or past its end (or within
    /// LOG_MSEC_SLACK of it), its mean rounded, the next window aligned to the period.
    fn unit_sample(&mut self, kind: u8, ms: u64, d: usize, v: u64, o: &mut JobOut, b: &mut u64) {
        let k = kind as usize;
        let period = self.plan.unit_avg_ms[k];
        if period == 0 || !self.keep {
            return;
        }
        let w = &mut self.unit_win[k][d];
        w.0 += v as f64;
        w.1 += 1;
        let last = self.unit_last[k][d];
        if ms < last || (ms - last < period && period - (ms - last) > LOG_MSEC_SLACK) {
            return;
        }
        let mean = unit_mean(std::mem::take(w));
        self.unit_last[k][d] = ms - ms % period;
        self.entry(o, b, (ms, d as u8, kind, mean));
    }

    /// The job ended at `end`: the samples of the intervals that ended before it (fio
    /// samples an interval while the job runs: none for one that ends with it), and the
    /// latency log's last, partial windows (fio's finalize_logs).
    pub fn finish(&mut self, end: u64, o: &mut JobOut, budget: &mut u64) {
        if end > self.bw_next.min(self.iops_next) {
            self.tick(end - 1, o, budget);
        }
        let ms = end.saturating_sub(self.from) / 1_000_000;
        for d in 0..3 {
            let w = std::mem::take(&mut self.lat_win[d]);
            if let Some(mean) = (w.0 + w.1 / 2).checked_div(w.1) {
                self.entry(o, budget, (ms, d as u8, KIND_LAT, mean));
            }
            for kind in [KIND_BW, KIND_IOPS] {
                let w = std::mem::take(&mut self.unit_win[kind as usize][d]);
                if w.1 > 0 {
                    self.entry(o, budget, (ms, d as u8, kind, unit_mean(w)));
                }
            }
        }
    }
}

/// A window's mean of (sum, count) samples, rounded as fio's __add_stat_to_log.
fn unit_mean((sum, n): (f64, u64)) -> u64 {
    (sum / n as f64 + 0.5) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn plan(bw_ns: u64, lat_ms: u64) -> LogPlan {
        LogPlan {
            bw_ns,
            iops_ns: bw_ns,
            keep: true,
            lat_ms,
            hist_ms: 0,
            unit_bw: false,
            unit_iops: false,
            md_bytes: 0,
            unit_avg_ms: [0, 0],
        }
    }

    #[test]
    fn idle_intervals_give_no_sample_and_cost_nothing() {
        let mut l = JobLog::new(0, plan(MS, 1));
        let mut o = JobOut::default();
        let mut budget = LOG_BUDGET;
        // one 4 KiB read a second for 100 s, 1 ms intervals: 100 samples, not 100 000
        for s in 0..100u64 {
            l.complete(
                s * 1000 * MS + 500_000,
                0,
                0,
                4096,
                100_000,
                &mut o,
                &mut budget,
            );
        }
        l.finish(100_000 * MS, &mut o, &mut budget);
        assert_eq!(o.bw_stat[0].samples, 100);
        assert_eq!(o.iops_stat[0].samples, 100);
        assert_eq!(o.bw_stat[0].min, 4000); // 4096 B in 1 ms: 4000 KiB/s
        assert!(o.log.len() <= 300, "{}", o.log.len());
    }

    #[test]
    fn latency_log_closes_windows_on_completions_and_keeps_the_last_partial_one() {
        let mut l = JobLog::new(0, plan(500 * MS, 500));
        let mut o = JobOut::default();
        let mut budget = LOG_BUDGET;
        for i in 1..=124u64 {
            l.complete(i * 10 * MS, 0, 0, 4096, 1000 + i, &mut o, &mut budget);
        }
        l.finish(1245 * MS, &mut o, &mut budget);
        let lat: Vec<u64> = o
            .log
            .iter()
            .filter(|e| e.2 == KIND_LAT)
            .map(|e| e.0)
            .collect();
        assert_eq!(lat, vec![500, 1000, 1245]);
        let bw: Vec<u64> = o
            .log
            .iter()
            .filter(|e| e.2 == KIND_BW)
            .map(|e| e.0)
            .collect();
        assert_eq!(bw, vec![500, 1000]); // no partial bandwidth sample, as fio's
    }

    #[test]
    fn a_spent_budget_stops_the_log_and_says_so() {
        let mut l = JobLog::new(0, plan(MS, 1));
        let mut o = JobOut::default();
        let mut budget = 3 * std::mem::size_of::<LogEntry>() as u64;
        for i in 0..10u64 {
            l.complete(i * 2 * MS + 1, 0, 0, 4096, 1, &mut o, &mut budget);
        }
        assert_eq!(o.log.len(), 3);
        assert!(o.log_truncated);
        assert_eq!(o.bw_stat[0].samples, 9); // the statistics go on
    }

    #[test]
    fn per_io_logs_make_each_io_a_sample_as_fio() {
        let mut p = plan(500 * MS, 0);
        p.unit_bw = true;
        p.unit_iops = true;
        let mut l = JobLog::new(0, p);
        let mut o = JobOut::default();
        let mut budget = LOG_BUDGET;
        for i in 1..=4u64 {
            l.complete(i * 400 * MS, 1, 0, 4096, 10_000 * i, &mut o, &mut budget);
        }
        l.finish(2000 * MS, &mut o, &mut budget);
        assert_eq!(o.bw_stat[1].samples, 4); // one per I/O, none per interval
        assert_eq!(o.bw_stat[1].max, 409_600); // 4096 B x 10^6 / 10 000 ns
        assert_eq!(o.iops_stat[1].samples, 4);
        assert_eq!(o.iops_stat[1].max, 1);
        assert!(o.log.is_empty()); // no latency window: its entries are per I/O
    }

    #[test]
    fn extended_lba_bandwidth_counts_each_blocks_metadata_as_fio() {
        // per I/O: 4160 B (4096 + 64) x 10^6 / 10 000 ns; per interval: 4160 B in 1 ms
        for (unit, want) in [(true, 416_000), (false, 4062)] {
            let mut p = plan(MS, 1);
            p.unit_bw = unit;
            p.md_bytes = 64;
            let mut l = JobLog::new(0, p);
            let mut o = JobOut::default();
            let mut budget = LOG_BUDGET;
            l.complete(MS / 2, 0, 0, 4096, 10_000, &mut o, &mut budget);
            l.finish(3 * MS, &mut o, &mut budget);
            assert_eq!(o.bw_stat[0].samples, 1);
            assert_eq!(o.bw_stat[0].max, want);
        }
    }

    #[test]
    fn averaged_per_io_samples_keep_a_windows_mean_as_fio_with_log_compression() {
        // an I/O each ms for 600 ms, 250 ms windows: a sample per I/O for the statistics,
        // an entry when a window ends (and one a ms early: fio's slack), and the last one
        let mut p = plan(500 * MS, 0);
        p.unit_bw = true;
        p.unit_iops = true;
        p.unit_avg_ms = [250, 250];
        let mut l = JobLog::new(0, p);
        let mut o = JobOut::default();
        let mut budget = LOG_BUDGET;
        for i in 1..=600u64 {
            l.complete(i * MS, 0, 0, 4096, 4096, &mut o, &mut budget);
        }
        l.finish(600 * MS + 1, &mut o, &mut budget);
        assert_eq!(o.bw_stat[0].samples, 600);
        assert_eq!(o.iops_stat[0].samples, 600);
        let at = |kind| -> Vec<(u64, u64)> {
            let mine = o.log.iter().filter(|e| e.2 == kind);
            mine.map(|e| (e.0, e.3)).collect()
        };
        let want = |v| vec![(249, v), (250, v), (499, v), (500, v), (600, v)];
        assert_eq!(at(KIND_IOPS), want(1));
        assert_eq!(at(KIND_BW), want(1_000_000)); // 4096 B x 10^6 / 4096 ns
    }
}
