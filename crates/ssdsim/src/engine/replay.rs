//! Trace replay: the drive fed an explicit list of I/Os (a recorded trace) instead of a
//! generated workload. Reads and writes go through the same `issue_io` path as every
//! phase, so the drive behaves exactly as in the other tests. Two timing modes:
//! - open loop (`queue_depth` 0): each I/O is submitted at its time, however many are
//!   outstanding (the drive's own queue slots still limit what it holds);
//! - closed loop (`queue_depth` N): N I/Os outstanding, the next one submitted when one
//!   completes, in trace order (fio's iodepth with no think time).
//!
//! Trims unmap their slots (the TRIM phase's cost: a command plus 1 ns per slot); a flush
//! completes when every scheduled program has. The controller draws active power while
//! an I/O is outstanding and idle power in the gaps between them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Command, Drive};
use crate::nand::SLOT_BYTES;
use crate::util::stats::{Histogram, Recorder, Row};
use crate::workload::{Io, LOOKAHEAD};
use crate::SimError;

pub const READ: u8 = 0;
pub const WRITE: u8 = 1;
pub const TRIM: u8 = 2;
pub const FLUSH: u8 = 3;
/// The largest read or write (the phases' block-size bound).
pub const MAX_IO_BYTES: u64 = 64 << 20;
/// The latest issue time of a replay (1e7 s, the longest timed step of any test).
pub const MAX_TIME_NS: u64 = 10_000_000 * 1_000_000_000;

/// The I/Os of a trace, one entry per I/O in submission order. Times are nanoseconds from
/// the start of the replay (used in open loop only; non-decreasing); offsets and lengths
/// are bytes (rounded out to the 4 KiB slots they touch).
pub struct TraceIos<'a> {
    pub time_ns: &'a [u64],
    pub op: &'a [u8],
    pub offset: &'a [u64],
    pub length: &'a [u64],
}

#[derive(Debug, Clone)]
pub struct ReplaySpec {
    /// 0: open loop (as timed); N: closed loop at queue depth N.
    pub queue_depth: u32,
    pub sample_interval_s: f64,
    pub segment_bytes: u64,
}

pub struct ReplayResult {
    pub phase: super::PhaseResult,
    pub read_hist: Histogram,
    pub write_hist: Histogram,
}

/// Controller time with no I/O outstanding, per interval, for the power model.
#[derive(Default)]
struct Idle {
    /// Idle ns already counted in the current interval.
    acc: u64,
    /// The drive has had nothing outstanding since then.
    since: Option<u64>,
    /// Idle ns over the whole replay (its busy time is the rest).
    total: u64,
}

impl<'a> TraceIos<'a> {
    fn check(&self, user_bytes: u64, open_loop: bool) -> Result<(), SimError> {
        let n = self.op.len();
        if self.time_ns.len() != n || self.offset.len() != n || self.length.len() != n {
            return Err(SimError(
                "replay: time_ns, op, offset and length must have one entry per I/O".into(),
            ));
        }
        for i in 0..n {
            let (op, off, len) = (self.op[i], self.offset[i], self.length[i]);
            if op > FLUSH {
                return Err(SimError(format!(
                    "replay: I/O {i}: op {op} (0 read, 1 write, 2 trim, 3 flush)"
                )));
            }
            if op != FLUSH {
                if len == 0 {
                    return Err(SimError(format!("replay: I/O {i}: length 0")));
                }
                if op != TRIM && len > MAX_IO_BYTES {
                    return Err(SimError(format!(
                        "replay: I/O {i}: {len} bytes, more than 64 MiB"
                    )));
                }
                let end = off
                    .checked_add(len)
                    .map(|e| e.div_ceil(SLOT_BYTES) * SLOT_BYTES);
                if end.is_none_or(|e| e > user_bytes) {
                    return Err(SimError(format!(
                        "replay: I/O {i}: bytes {off}..{} past the end of the drive ({user_bytes} bytes)",
                        off.saturating_add(len)
                    )));
                }
            }
            if open_loop && self.time_ns[i] > MAX_TIME_NS {
                return Err(SimError(format!("replay: I/O {i}: issued at {} ns, after 1e7 s (the longest replay)", self.time_ns[i])));
            }
            if open_loop && i > 0 && self.time_ns[i] < self.time_ns[i - 1] {
                return Err(SimError(format!(
                    "replay: I/O {i}: time goes back (times must be non-decreasing)"
                )));
            }
        }
        Ok(())
    }

    #[inline]
    fn slots(&self, i: usize) -> (u32, u32) {
        let first = self.offset[i] / SLOT_BYTES;
        let end = (self.offset[i] + self.length[i]).div_ceil(SLOT_BYTES);
        (first as u32, (end - first) as u32)
    }
}

impl Drive {
    /// Replay `ios` from the drive's current time. `on_sample` gets every finished
    /// interval; returning false stops the replay (the result holds what was recorded).
    pub fn replay(
        &mut self,
        ios: &TraceIos,
        spec: &ReplaySpec,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<ReplayResult, SimError> {
        let open = spec.queue_depth == 0;
        ios.check(self.user_bytes(), open)?;
        if !(0.0001..=3600.0).contains(&spec.sample_interval_s) {
            return Err(SimError(format!(
                "sample_interval_s = {}: must be in 0.0001..3600",
                spec.sample_interval_s
            )));
        }
        self.phases_run += 1;
        let start = self.snapshot();
        let t0 = self.now;
        let mut rec = Recorder::new(t0, spec.sample_interval_s, spec.segment_bytes, start);
        let (mut rh, mut wh) = (Histogram::default(), Histogram::default());
        let (mut trims, mut flushes, mut trim_bytes) = (0u64, 0u64, 0u64);
        let (mut trim_lat, mut flush_lat) = (0u128, 0u128);
        let n = ios.op.len();
        // Closed loop: the same depth argument as an io phase at that depth. Open loop:
        // at most the drive's queue slots outstanding; an I/O arriving when they are all
        // taken waits at the host (in arrival order) for the next completion, its latency
        // counted from its arrival (what the host's slot model gives, without a heap of
        // every waiting I/O).
        let depth = if open {
            self.host.max_qd.max(1)
        } else {
            spec.queue_depth as usize
        };
        let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> =
            BinaryHeap::with_capacity(depth.min(1 << 16));
        let mut idle = Idle {
            acc: 0,
            since: Some(t0),
            total: 0,
        };
        let (mut next, mut end, mut stopped) = (0usize, t0, false);
        // the last completion handled (a waiting I/O is submitted then)
        let mut now = t0;
        loop {
            let due = (open && next < n && !stopped).then(|| t0 + ios.time_ns[next]);
            let first_done = heap.peek().map(|&Reverse((d, _, _))| d);
            let complete = match (first_done, due) {
                (Some(d), Some(t)) => d <= t || heap.len() >= depth,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => {
                    if !open && next < n && !stopped && heap.is_empty() {
                        // closed loop start: fill the queue at t0
                        while next < n && heap.len() < depth {
                            let done = self.submit(ios, next, t0, depth, &mut idle, &mut rec)?;
                            heap.push(Reverse((done, t0, next as u32)));
                            next += 1;
                        }
                        continue;
                    }
                    break;
                }
            };
            if complete {
                let Reverse((done, at, i)) = heap.pop().unwrap();
                now = done;
                if done >= rec.next && !stopped {
                    stopped = !self.close_replay(&mut rec, done, &mut idle, on_sample);
                }
                let i = i as usize;
                let lat = done - at;
                match ios.op[i] {
                    READ => {
                        rh.record(lat);
                        rec.complete(done, lat, ios.length[i], true);
                    }
                    WRITE => {
                        wh.record(lat);
                        rec.complete(done, lat, ios.length[i], false);
                    }
                    TRIM => {
                        trims += 1;
                        trim_bytes += ios.length[i];
                        trim_lat += lat as u128;
                    }
                    _ => {
                        flushes += 1;
                        flush_lat += lat as u128;
                    }
                }
                end = end.max(done);
                if !open && next < n && !stopped {
                    let d2 = self.submit(ios, next, done, depth, &mut idle, &mut rec)?;
                    heap.push(Reverse((d2, done, next as u32)));
                    next += 1;
                } else if heap.is_empty() {
                    idle.since = Some(done);
                }
            } else {
                let arrival = due.unwrap();
                let t = arrival.max(now);
                if idle.since.is_some() && t >= rec.next {
                    stopped = !self.close_replay(&mut rec, t, &mut idle, on_sample);
                    if stopped {
                        continue;
                    }
                }
                let outstanding = if open { heap.len() + 1 } else { depth };
                let done = self.submit(ios, next, t, outstanding, &mut idle, &mut rec)?;
                heap.push(Reverse((done, arrival, next as u32)));
                next += 1;
            }
        }
        // The last partial interval's controller energy (the idle part at idle power).
        let p = self.profile.power.clone();
        let from = rec.next - rec.interval_ns();
        let span = end.saturating_sub(from);
        let idle_ns = idle.acc.min(span);
        self.ctrl_energy_j +=
            (p.controller_active_w * (span - idle_ns) as f64 + p.idle_w * idle_ns as f64) / 1e9;
        let tail = end.saturating_sub(from);
        if rec.rows.is_empty() || (rec.pending_ios() > 0 && 2 * tail >= rec.interval_ns()) {
            let row = rec.close(end.max(from + 1), self.snapshot());
            on_sample(&row);
        }
        self.now = end.max(t0);
        let mut phase = self.finish(rec, start, end, stopped);
        let mean = |s: u128, k: u64| {
            if k > 0 {
                s as f64 / k as f64 / 1e3
            } else {
                f64::NAN
            }
        };
        phase.totals.extend([
            ("busy_s", (end - t0).saturating_sub(idle.total) as f64 / 1e9),
            ("trim_ios", trims as f64),
            ("trim_bytes", trim_bytes as f64),
            ("flush_ios", flushes as f64),
            ("trim_lat_mean_us", mean(trim_lat, trims)),
            ("flush_lat_mean_us", mean(flush_lat, flushes)),
        ]);
        Ok(ReplayResult {
            phase,
            read_hist: rh,
            write_hist: wh,
        })
    }

    /// Submit trace I/O `i` at `t`; returns its completion.
    #[inline]
    fn submit(
        &mut self,
        ios: &TraceIos,
        i: usize,
        t: u64,
        depth: usize,
        idle: &mut Idle,
        rec: &mut Recorder,
    ) -> Result<u64, SimError> {
        if let Some(s) = idle.since.take() {
            idle.acc += t - s.max(rec.next - rec.interval_ns());
            idle.total += t - s;
        }
        // As an io phase does (engine/mod.rs `issue`): the L2P entry of an I/O far ahead,
        // then, once its line has arrived, the valid bit of a write's old copy; the
        // trace's random offsets would each wait on memory otherwise
        if let Some(&far) = ios.op.get(i + LOOKAHEAD - 1) {
            if far <= WRITE {
                self.ftl.map.prefetch_l2p(ios.slots(i + LOOKAHEAD - 1).0);
            }
        }
        if ios.op.get(i + LOOKAHEAD / 2) == Some(&WRITE) {
            self.ftl.map.prefetch_old(ios.slots(i + LOOKAHEAD / 2).0);
        }
        let op = ios.op[i];
        let cmd = if op == READ || op == WRITE {
            let (lba, slots) = ios.slots(i);
            Command::Io(Io {
                lba,
                slots,
                read: op == READ,
            })
        } else {
            Command::TrimOrFlush((op == TRIM).then(|| ios.slots(i)))
        };
        self.submit_command(cmd, t, depth)
    }

    /// Close every interval ending at or before `t`: the controller's energy for each is
    /// active power for the busy part and idle power for the rest.
    fn close_replay(
        &mut self,
        rec: &mut Recorder,
        t: u64,
        idle: &mut Idle,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> bool {
        let (active, idle_w) = (
            self.profile.power.controller_active_w,
            self.profile.power.idle_w,
        );
        let mut go_on = true;
        while t >= rec.next {
            let from = rec.next - rec.interval_ns();
            let idle_ns = (idle.acc + idle.since.map_or(0, |s| rec.next - s.max(from)))
                .min(rec.interval_ns());
            idle.acc = 0;
            self.ctrl_energy_j +=
                (active * (rec.interval_ns() - idle_ns) as f64 + idle_w * idle_ns as f64) / 1e9;
            let row = rec.close(rec.next, self.snapshot());
            go_on &= on_sample(&row);
            if idle.since.is_some() && go_on {
                // Nothing outstanding: every later interval up to `t` is wholly idle (the
                // background work of the gap runs when the next I/O is submitted).
                return self.close_quiet(rec, t, idle_w, on_sample);
            }
        }
        go_on
    }
}
