//! A fio job file compiled to the simulator's own workload: one `JobSpec` per job and per
//! numjobs clone, each its own I/O stream (stream.rs) with its own queue depth, all on the
//! one drive at once (run.rs, on the engine's drive). fio's meaning for the pattern
//! options (rw kinds, mixes, block-size splits, sizes and offsets, rates, think time, random
//! distributions, time limits, steady state); everything in virtual time, seeded.

mod completion;
pub mod dist;
mod end_sync;
pub mod flow;
pub mod lat_target;
pub mod live;
pub mod logs;
mod null_queue;
pub mod pass;
pub mod randmap;
pub mod report;
pub mod run;
pub mod steady;
pub mod stream;
mod submit;
pub mod sync_kind;
pub mod sync_ops;
pub mod unit_log;
pub mod verify;
mod wave_state;
pub mod zbd;

/// Data directions, as fio numbers them.
pub const READ: usize = 0;
pub const WRITE: usize = 1;
pub const TRIM: usize = 2;

/// How a write I/O is carried out (fio's io_uring_cmd `write_mode`; all counted as writes,
/// as fio counts them): `Write` a data write; `Zeroes` NVMe Write Zeroes and `Uncor` Write
/// Uncorrectable, both through the trim path (the mapping of the 4 KiB slots the range
/// covers entirely is dropped: no NAND program, no data over the link); `Verify` NVMe
/// Verify, a read of the range inside the drive (NAND reads, no data over the link).
pub const WMODE_WRITE: u8 = 0;
pub const WMODE_ZEROES: u8 = 1;
pub const WMODE_UNCOR: u8 = 2;
pub const WMODE_VERIFY: u8 = 3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    Uniform,
    Zipf(f64),
    Pareto(f64),
    Normal(f64),
    /// Zones (`zones`): access share per byte range.
    Zoned,
    /// fio's `sequence:B1,B2,...` (`sequence`): the block indices in that order, repeated
    /// (with `sequence_stride`, each cycle one sequence length further on).
    Sequence,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SsMetric {
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
    /// Mean completion latency of each check interval.
    Lat,
    LatSlope,
}

/// fio's steady-state rule (fio's steadystate.c): every `interval_ns` (fio's
/// steadystate_check_interval) after `ramp_ns`, one value of the metric (IOPS and bandwidth
/// per second, or the mean completion latency, ns); once the last `dur_ns / interval_ns`
/// values are in, the job stops when their largest deviation from their mean (or the
/// least-squares slope) is under `limit` (a % of the mean when `pct`).
#[derive(Debug, Clone, Copy)]
pub struct SsRule {
    pub metric: SsMetric,
    pub limit: f64,
    pub pct: bool,
    pub dur_ns: u64,
    pub interval_ns: u64,
    pub ramp_ns: u64,
}

impl SsRule {
    pub fn intervals(&self) -> usize {
        (self.dur_ns / self.interval_ns.max(1)).max(1) as usize
    }
}

/// What a finishing job stops when the job file sets `exitall` (fio's exit_what).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's default).
    Group,
    /// Every job running now; the next stonewalled jobs still run.
    Stonewall,
    /// Every job, running or not started.
    All,
}

#[derive(Debug, Clone)]
pub struct JobSpec {
    pub name: String,
    /// stonewall / wait_for: a wave starts when every job of the wave before has finished.
    pub wave: u32,
    /// Reporting group (new_group / stonewall): what `exitall` stops by default.
    pub group: u32,
    /// fio's exitall (set for every job when any job sets it): when a job ends, the jobs
    /// `exit_what` names (the ending job's) stop.
    pub exitall: bool,
    pub exit_what: ExitWhat,
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub random: bool,
    /// trimwrite: each block trimmed, then written.
    pub trimwrite: bool,
    pub rwmixread: u32,
    /// rw=KIND:N: sequential: bytes skipped after each I/O (negative: backwards); random:
    /// I/Os per random offset (the next ones in sequence; with `seq_identical`, the same
    /// offset again: fio's rw_sequencer=identical).
    pub seq_skip: i64,
    pub seq_identical: bool,
    /// fio's percentage_random per direction: the share of a random job's I/Os at a random
    /// offset; the others go on from where the direction's last I/O ended.
    pub perc_rand: [u32; 3],
    /// Per direction: (bytes, weight).
    pub bs: [Vec<(u64, f64)>; 3],
    /// bsrange per direction: (min, max) bytes, drawn as fio draws it; (0, 0): `bs`.
    pub bs_range: [(u64, u64); 3],
    pub offset: u64,
    pub size: u64,
    /// Bytes to transfer per loop (fio's io_size, else size; 0: no byte bound).
    pub io_size: u64,
    /// fio's loops: passes over the region at least (each with its own verify).
    pub loops: u64,
    /// I/Os to issue (0: no bound), per loop, counted after the ramp.
    pub number_ios: u64,
    pub iodepth: u32,
    pub time_based: bool,
    pub runtime_ns: u64,
    pub ramp_ns: u64,
    pub startdelay_ns: u64,
    pub rate_bps: [u64; 3],
    pub rate_iops: [u64; 3],
    pub rate_poisson: bool,
    pub thinktime_ns: u64,
    pub thinktime_blocks: u64,
    pub dist: Dist,
    /// (access share 0..1, start byte within the region, length bytes).
    pub zones: Vec<(f64, u64, u64)>,
    pub sequence: Vec<u64>,
    pub sequence_stride: bool,
    pub seed: u64,
    /// fio's randrepeat: each pass repeats the first one's draws (fio re-seeds per loop).
    pub randrepeat: bool,
    pub randommap: bool,
    /// Random offsets are multiples of this (fio's blockalign, default the smallest bs).
    pub ba: u64,
    /// zonemode=strided: `zone_size` bytes of I/O, then `zone_skip` bytes skipped.
    pub zone_size: u64,
    pub zone_skip: u64,
    pub ss: Option<SsRule>,
    /// group_reporting: the steady-state rule judges the reporting group's summed figures.
    pub ss_group: bool,
    /// fio's latency target (0: none): the depth searched for, within `iodepth`
    /// (lat_target.rs).
    pub lat_target_ns: u64,
    pub lat_window_ns: u64,
    pub lat_pct: f64,
    pub lat_run: bool,
    /// Interval of the latency log's windows (log_avg_msec), ns; 0: an entry per I/O.
    pub log_ns: u64,
    /// The job's logs of an entry per I/O (fio's log_avg_msec=0; unit_log.rs).
    pub unit_log: unit_log::UnitLogSpec,
    /// Intervals of the bandwidth and IOPS samples (fio's bwavgtime, iopsavgtime), ns.
    pub bw_ns: u64,
    pub iops_ns: u64,
    /// The job writes fio's logs: keep their entries (logs.rs); `hist_ms`: the histogram
    /// log's interval (write_hist_log, log_hist_msec; 0: none).
    pub keep_log: bool,
    pub hist_ms: u64,
    /// fio's verify (verify.rs), when the job writes with verify set.
    pub verify: Option<verify::Verify>,
    /// fio's write_mode split: % of writes per mode (WMODE_*: write, zeroes, uncor,
    /// verify), drawn per write I/O as fio draws it (0..99 against the running sum).
    pub write_mode: [u32; 4],
    /// fio's flow control (flow.rs): the job's weight in its flow (0: none), the flow's id,
    /// and how long a held job waits before it checks again (0: until the flow moves).
    pub flow: u32,
    pub flow_id: u32,
    pub flow_sleep_ns: u64,
    /// fio's zonemode=zbd (zbd.rs), or none.
    pub zbd: Option<zbd::ZbdJob>,
    /// fio's reaping (backend.c wait_for_completions): once the queue is full, the job
    /// takes completions `complete_min` at a time (at most `complete_max` per take) until
    /// at most `iodepth_low` are outstanding, and only then submits again.
    pub iodepth_low: u32,
    pub complete_min: u32,
    pub complete_max: u32,
    /// fio's rate_min / rate_iops_min per direction (0: none), checked every `rate_cycle_ns`
    /// after the first 2 s: a job under it ends with fio's error.
    pub rate_min_bps: [u64; 3],
    pub rate_min_iops: [u64; 3],
    pub rate_cycle_ns: u64,
    /// How the job's engine issues a trim and a sync, and fio's syncs (sync_ops.rs).
    pub calls: sync_ops::Calls,
}

impl JobSpec {
    pub fn check(&self, user_bytes: u64) -> Result<(), String> {
        let n = &self.name;
        if self.size == 0
            || self
                .offset
                .checked_add(self.size)
                .is_none_or(|e| e > user_bytes)
        {
            return Err(format!(
                "job {n}: offset {} + size {}: past the end of the drive ({user_bytes} bytes)",
                self.offset, self.size
            ));
        }
        if !(1..=65536).contains(&self.iodepth) {
            return Err(format!(
                "job {n}: iodepth {}: must be 1..65536",
                self.iodepth
            ));
        }
        if !(self.read || self.write || self.trim) {
            return Err(format!("job {n}: no data direction"));
        }
        for d in 0..3 {
            // a zbd trim is a zone reset: a zone long
            let used = [self.read, self.write, self.trim][d];
            let max = match self.zbd {
                Some(z) if d == TRIM || (self.trim && !used) => z.zone_size.max(64 << 20),
                _ => 64 << 20,
            };
            if self.bs[d].is_empty()
                || self.bs[d]
                    .iter()
                    .any(|&(b, w)| b == 0 || b > max || b % 512 != 0 || w < 0.0)
            {
                return Err(format!(
                    "job {n}: block sizes must be multiples of 512 up to 64 MiB"
                ));
            }
        }
        for (d, &(lo, hi)) in self.bs_range.iter().enumerate() {
            if hi > 0 && (lo == 0 || lo % 512 != 0 || hi < lo || hi > 64 << 20) {
                return Err(format!(
                    "job {n}: bsrange of direction {d}: {lo}-{hi}: multiples of 512 up to 64 MiB"
                ));
            }
        }
        if self.bs.iter().flatten().any(|&(b, _)| b > self.size)
            || self.bs_range.iter().any(|&(lo, _)| lo > self.size)
        {
            return Err(format!(
                "job {n}: a block size is larger than the job's size {}",
                self.size
            ));
        }
        if self.io_size == 0 && self.number_ios == 0 && self.runtime_ns == 0 {
            return Err(format!(
                "job {n}: nothing bounds it (size, io_size, number_ios or runtime)"
            ));
        }
        if self.time_based && self.runtime_ns == 0 {
            return Err(format!("job {n}: time_based needs a runtime"));
        }
        if let Some(ss) = self.ss {
            if ss.interval_ns < 1_000_000 || ss.dur_ns < ss.interval_ns {
                return Err(format!(
                    "job {n}: steady state: the check interval must be at least 1 ms and at most ss_dur"
                ));
            }
        }
        if self.lat_target_ns > 0 && !(0.0..=100.0).contains(&self.lat_pct) {
            return Err(format!("job {n}: latency_percentile must be 0..100"));
        }
        if self.write_mode.iter().sum::<u32>() != 100 {
            return Err(format!("job {n}: write_mode shares must add up to 100 %"));
        }
        if self.flow > 1000 {
            return Err(format!(
                "job {n}: flow weight {}: must be 0..1000",
                self.flow
            ));
        }
        if let Some(z) = self.zbd {
            if z.zone_size < 512 || z.zone_cap == 0 || z.zone_cap > z.zone_size {
                return Err(format!(
                    "job {n}: zonemode=zbd: zone size {} / capacity {}: the size at least 512 bytes, the capacity 1 byte to the size",
                    z.zone_size, z.zone_cap
                ));
            }
            if self.bs[WRITE].iter().any(|&(b, _)| b > z.zone_cap) && self.write {
                return Err(format!(
                    "job {n}: zonemode=zbd: a write block size is larger than a zone"
                ));
            }
            if self.trim && self.bs[TRIM].iter().any(|&(b, _)| b != z.zone_size) {
                return Err(format!(
                    "job {n}: zonemode=zbd: the trim block size must be the zone size {} (a trim resets a zone)",
                    z.zone_size
                ));
            }
        }
        if (self.log_ns > 0 && self.log_ns < 1_000_000)
            || self.bw_ns < 1_000_000
            || self.iops_ns < 1_000_000
        {
            return Err(format!("job {n}: log or sample interval under 1 ms"));
        }
        if self.loops == 0 {
            return Err(format!("job {n}: loops must be at least 1"));
        }
        Ok(())
    }

    /// Bytes a pass may issue (fio's total_bytes).
    pub fn pass_total(&self) -> u64 {
        let s = self;
        if s.zbd.is_some() {
            return u64::MAX; // zonemode=zbd: a pass ends when the zone rules find no room (zbd.rs)
        }
        let mut total = s.size;
        if s.write && s.random && !s.randommap {
            total = total.max(s.io_size); // random overwrites: up to io_size before the verify
        }
        if s.write && s.verify.is_some_and(|v| v.backlog > 0) {
            total += s.size; // the backlog's reads are issued in the pass too
        }
        if s.trimwrite {
            total += s.io_size; // each byte trimmed, then written
        }
        total
    }

    /// The bounds a pass checks before each I/O (fio's do_io loop condition): its own bytes,
    /// the job's issued bytes, its I/Os (u64::MAX: none). A time_based pass ignores the job's
    /// bounds, and its own bytes but with verify; an engine that completes each I/O in the
    /// call never counts the pass's own bytes (fio's bytes_issued counts queued I/Os).
    pub fn pass_bounds(&self) -> [u64; 3] {
        let s = self;
        let own = if s.calls.sync_io {
            u64::MAX
        } else if !s.time_based || s.verify.is_some() {
            s.pass_total()
        } else {
            u64::MAX
        };
        if s.time_based {
            return [own, u64::MAX, u64::MAX];
        }
        let loops = s.loops.max(1);
        let nz = |x: u64| {
            if x > 0 {
                x.saturating_mul(loops)
            } else {
                u64::MAX
            }
        };
        [own, nz(s.io_size), nz(s.number_ios)]
    }

    /// fio's iodepth_low as fio fixes it up: 0 or more than iodepth means iodepth.
    pub fn depth_low(&self) -> u32 {
        if self.iodepth_low == 0 || self.iodepth_low > self.iodepth {
            self.iodepth
        } else {
            self.iodepth_low
        }
    }

    pub fn min_bs(&self) -> u64 {
        let dirs = [self.read, self.write, self.trim];
        (0..3)
            .filter(|&d| dirs[d])
            .flat_map(|d| {
                let (lo, hi) = self.bs_range[d];
                let r = (hi > 0).then_some(lo);
                self.bs[d].iter().map(|x| x.0).chain(r)
            })
            .min()
            .unwrap_or(4096)
    }

    /// The largest block size of the directions the job issues.
    pub fn max_bs(&self) -> u64 {
        let dirs = [self.read, self.write || self.trimwrite, self.trim];
        (0..3)
            .filter(|&d| dirs[d])
            .flat_map(|d| self.bs[d].iter().map(|x| x.0).chain([self.bs_range[d].1]))
            .max()
            .unwrap_or(4096)
    }

    /// fio's rule for the bytes that bound a job (backend.c io_bytes_exceeded): reads and
    /// writes of a mixed job, else the one direction it issues (a trimwrite's writes).
    pub fn counted(&self, d: usize) -> bool {
        if self.read && self.write {
            d != TRIM
        } else if self.write || self.trimwrite {
            d == WRITE
        } else if self.read {
            d == READ
        } else {
            d == TRIM
        }
    }
}

/// Per direction figures of one job (fio's read / write / trim objects).
#[derive(Clone, Default)]
pub struct DirOut {
    pub ios: u64,
    pub bytes: u64,
    /// Completion latencies in fio's bins.
    pub lat: report::Plat,
    /// Time the job spent in this direction (fio's runtime per direction), ns.
    pub runtime_ns: u64,
    /// Reads that touched a block never written (answered without reading flash).
    pub unwritten: u64,
    /// Block size -> I/Os.
    pub bs_counts: Vec<(u64, u64)>,
}

#[derive(Clone, Default)]
pub struct JobOut {
    pub dirs: [DirOut; 3],
    /// Virtual ns of the job's start (after startdelay and ramp) and of its end.
    pub start_ns: u64,
    pub end_ns: u64,
    /// fio's bandwidth (KiB/s) and IOPS sample statistics per direction.
    pub bw_stat: [report::IoStat; 3],
    pub iops_stat: [report::IoStat; 3],
    /// Log entries (logs.rs), for a job that writes logs; set when the run's log budget
    /// ran out before the job's end.
    pub log: Vec<logs::LogEntry>,
    pub hist_log: Vec<logs::HistEntry>,
    pub log_truncated: bool,
    /// The job's logs of an entry per I/O, being written (when the run was given a
    /// directory for them).
    pub unit_log: Option<unit_log::UnitLog>,
    /// fio's latency buckets (report.rs LAT_BUCKETS) and depth figures.
    pub lat_buckets: [u64; report::LAT_BUCKETS],
    pub depths: report::Depths,
    pub ss_attained: bool,
    /// Stopped by another job's end (fio's exitall), before it started or while it ran.
    pub terminated: bool,
    /// I/Os issued (ramp included) and bytes issued.
    pub issued: u64,
    /// zonemode=zbd: zone resets (fio's nr_zone_resets).
    pub zone_resets: u64,
    /// Latencies of fio's syncs (fsync=N, fdatasync=N: flushes of the drive; sync_file_range=
    /// FLAGS:N), and how many of them were sync_file_ranges.
    pub sync: report::Plat,
    pub sync_ranges: u64,
    /// rate_min / rate_iops_min not met: (direction, the rate over the last cycle, whether
    /// it is IOPS); the job ended there with fio's error (EIO).
    pub rate_min_failed: Option<(usize, u64, bool)>,
    /// fsync_on_close's fsync(2) failed as the file closed (live.rs): fio's error (EINVAL,
    /// "file close").
    pub close_failed: bool,
}
