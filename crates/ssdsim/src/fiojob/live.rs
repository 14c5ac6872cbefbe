//! A fio job's state while it runs (run.rs), and what couples the jobs of a wave: fio's
//! exitall (`end_jobs`) and fio's flow control (`flow_pass`, `wake_flow`; flow.rs).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::fiojob::flow::Flows;
use crate::fiojob::lat_target::LatTarget;
use crate::fiojob::logs::{JobLog, LogPlan};
use crate::fiojob::unit_log;
use crate::fiojob::sync_kind::SyncKind;
use crate::fiojob::stream::{Req, Stream};
use crate::fiojob::verify::PieceLog;
use crate::fiojob::zbd::JobZones;
use crate::fiojob::{ExitWhat, JobOut, JobSpec};

/// Heap entries: (time, issue time or WAKE, job, dir << 30 | len / 512).
/// (when, issued at or WAKE / FLOW_WAKE, job, direction and length or sync info, offset).
pub(crate) type Event = Reverse<(u64, u64, u32, u32, u64)>;
pub(crate) const WAKE: u64 = u64::MAX;
/// A job held by its flow checks again (the flow moved).
pub(crate) const FLOW_WAKE: u64 = u64::MAX - 1;

/// Where a job is in its pass (fio's thread_main loop: do_io, then do_verify).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Issuing the pass's I/O.
    Io,
    /// The pass issues no more: its I/Os in flight complete.
    Drain,
    /// Reading back what the pass wrote.
    Verify,
}

/// What holds a job from issuing (Live::hold bits): think time pending (its I/Os in flight
/// complete first), a quiesce (latency target, zone reset), its flow (held: until its I/Os
/// are in, or waiting for the flow to move), a full queue (fio's wait_for_completions), a
/// trim or sync its engine does in the issuing call (sync_ops.rs), or a flush of fio's
/// end_fsync or fsync_on_close (end_sync.rs).
pub(crate) const THINK: u8 = 1;
pub(crate) const QUIESCE: u8 = 2;
pub(crate) const FLOW_HOLD: u8 = 4;
pub(crate) const FLOW_WAIT: u8 = 8;
pub(crate) const FULL: u8 = 16;
pub(crate) const SYNC: u8 = 32;

/// The null engine's job's next I/O, as decided while its batch was out (null_queue.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Decided {
    #[default]
    No,
    Io,
    Sync(SyncKind),
}

/// A null engine's batch (all zero for another engine).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NullQueue {
    /// I/Os per batch (0: not the null engine's queue).
    pub batch: u32,
    /// I/Os queued in the open batch, and whether its last one is a sync.
    pub open: u32,
    pub last_sync: bool,
    /// A batch committed and not yet reaped.
    pub busy: bool,
    pub decided: Decided,
    /// At iodepth 1 the null engine completes each I/O in the call: its commit hook, where
    /// it counts submissions and reaps, is never reached (sync_ops::Calls).
    pub uncounted: bool,
}

impl NullQueue {
    pub fn new(s: &JobSpec) -> NullQueue {
        NullQueue {
            batch: s.calls.null_batch.min(s.iodepth),
            uncounted: s.calls.sync_io && s.calls.commit_hook,
            ..Default::default()
        }
    }

    #[inline]
    pub fn on(&self) -> bool {
        self.batch > 0
    }
}

pub(crate) struct Live {
    /// THINK | QUIESCE | FLOW_HOLD | FLOW_WAIT | FULL | SYNC: one test before each issue.
    pub holds: u8,
    pub stream: Stream,
    pub next: Option<Req>,
    pub outstanding: u32,
    pub depth: u32,
    pub phase: Phase,
    /// Passes left beyond this one that fio's loops still owes, and the pass's start.
    pub loops_left: u64,
    pub pass_start: u64,
    /// Bytes this pass issued (fio's bytes_issued), and the pass's bounds (pass.rs).
    pub pass_bytes: u64,
    pub bounds: [u64; 3],
    /// Per direction, whether its bytes count to the job's bound (JobSpec::counted); a
    /// verify_only job issues nothing (fio's dry run).
    pub counted: [bool; 3],
    pub dry: bool,
    /// The pass ended because its offsets did (fio's files done).
    pub files_done: bool,
    /// fsync_on_close's fsync(2) failed as the file closed with I/Os in flight (an sg
    /// character device: sync_ops::Calls): fio's error, the job ends after this pass.
    pub close_failed: bool,
    /// The time of the pass (or its verify) so far is counted in the runtimes.
    pub accounted: bool,
    /// Bytes issued by fio's counting rule (JobSpec::counted), all passes, ramp included;
    /// bytes and I/Os completed after the ramp (fio's io_bytes, io_blocks).
    pub issue_counted: u64,
    pub done_bytes_all: u64,
    pub done_ios_all: u64,
    /// fio's verify: the written pieces, the backlog batch left, pieces completed (their
    /// writes in) and read back, and whether the last I/O was a write.
    pub pieces: Option<PieceLog>,
    pub verify_batch: u64,
    pub pieces_done: u64,
    pub pieces_taken: u64,
    pub last_write: bool,
    /// The job's per-interval figures and logs.
    pub log: JobLog,
    /// Earliest time the job may issue (start delay, think time).
    pub not_before: u64,
    /// Per direction: earliest time the rate allows the next I/O.
    pub rate_at: [u64; 3],
    pub since_think: u64,
    /// Latency target: the depth search; issue nothing until the outstanding I/Os are in
    /// (`quiesce`), then restart the figures when `restart` (the final window).
    pub lat: Option<LatTarget>,
    pub restart: bool,
    pub completed: u64,
    /// Ended by the latency target's search (done, or nothing meets the target).
    pub lat_done: bool,
    pub wake_at: u64,
    pub stats_from: u64,
    /// fio's ramp ends (ramp_time_over resets the figures) at the first completion at or
    /// past `stats_from` or, where the engine queues (`ramp_submit`), the first submission:
    /// the I/Os issued before it, the one that ends it too, are not counted in the I/Os
    /// (`ramp_skip`: submissions to take off a direction's count; a queued one keeps its
    /// bytes and latency, as fio adds them as it completes).
    pub ramp_open: bool,
    pub ramp_submit: bool,
    pub ramp_skip: [u32; 3],
    pub deadline: u64,
    pub done: bool,
    /// Issues no more and has nothing outstanding (fio's thread exit).
    pub ended: bool,
    /// Stopped by another job's end (exitall), at `term_at`.
    pub terminated: bool,
    pub term_at: u64,
    pub begin: u64,
    pub last_done: u64,
    /// Held by its flow (flow.rs): until its I/Os in flight are in (then `flow_sleep`), or
    /// until the flow moves (a FLOW_WAKE, `flow_wake` while one is pending).
    pub flow_wake: bool,
    /// The steady-state rule judging this job: its own, or its reporting group's
    /// (group_reporting), an index into the wave's units.
    pub ss_unit: Option<usize>,
    /// zonemode=zbd: the job's zone range and counts, and an I/O placed by the zone rules
    /// that waits for the job's I/Os in flight (a zone reset goes first).
    pub zones: Option<JobZones>,
    pub zbd_ready: Option<(Req, Option<(u64, u64)>)>,
    /// fio's full queue: the job takes completions (`reapable`: completed, not yet taken)
    /// before it submits again; `min_evts`, how many each take waits for.
    pub reapable: u32,
    pub min_evts: u32,
    /// Completed bytes and I/Os per direction, and the rate_min check's last (bytes, I/Os,
    /// time).
    pub done_bytes: [u64; 3],
    pub done_ios: [u64; 3],
    pub rate_chk: [(u64, u64, u64); 3],
    /// When the synchronous trim or sync holding the job (SYNC) completes, and whether
    /// completions were taken as it returned; writes issued (fio's io_issues, for fsync=N)
    /// and whether the last I/O taken was a sync.
    pub sync_until: u64,
    pub deferred: bool,
    pub writes_issued: u64,
    pub last_was_sync: bool,
    /// fio's end_fsync / fsync_on_close (end_sync.rs): the pass's flush was issued, when the
    /// last one returned, and the job's flush at its end was issued.
    pub flushed: bool,
    pub flush_done: u64,
    pub closed: bool,
    /// The null engine's batch (null_queue.rs).
    pub nullq: NullQueue,
}

impl Live {
    /// Job `s` of a wave that starts at `t0` (its start delay and ramp from there), on a
    /// drive of `user_bytes`; `terminated`: stopped before it started (exitall).
    pub fn new(
        s: &JobSpec,
        t0: u64,
        terminated: bool,
        zones: Option<JobZones>,
        user_bytes: u64,
    ) -> Live {
        let begin = t0.saturating_add(s.startdelay_ns);
        let stats_from = begin.saturating_add(s.ramp_ns);
        let deadline = if s.runtime_ns > 0 {
            stats_from.saturating_add(s.runtime_ns)
        } else {
            u64::MAX
        };
        let mut stream = Stream::new(s);
        // fio's get_next_seq_offset compares the offset from the region's start with the
        // device's size: a region that starts past 0 ends its pass before any wrap
        stream.dev_room = user_bytes;
        // fio's verify log: in write order under a random map (drawn again from the pass's
        // stream, but for zoned jobs, whose offsets the zone rules move), else sorted
        let pieces = (s.verify.is_some() && (s.write || s.trimwrite)).then(|| {
            match (s.random && s.randommap, s.zbd.is_some()) {
                (true, false) => PieceLog::replay(stream.clone()),
                (ordered, _) => PieceLog::new(ordered),
            }
        });
        Live {
            holds: 0,
            stream,
            next: None,
            outstanding: 0,
            depth: if s.lat_target_ns > 0 { 1 } else { s.iodepth },
            phase: Phase::Io,
            loops_left: s.loops.max(1) - 1,
            pass_start: begin,
            pass_bytes: 0,
            bounds: s.pass_bounds(),
            counted: [0, 1, 2].map(|d| s.counted(d)),
            dry: s.verify.is_some_and(|v| v.only),
            files_done: false,
            close_failed: false,
            accounted: false,
            issue_counted: 0,
            done_bytes_all: 0,
            done_ios_all: 0,
            pieces,
            verify_batch: 0,
            pieces_done: 0,
            pieces_taken: 0,
            last_write: false,
            log: JobLog::new(
                stats_from,
                LogPlan {
                    bw_ns: s.bw_ns,
                    iops_ns: s.iops_ns,
                    keep: s.keep_log,
                    lat_ms: s.log_ns / 1_000_000,
                    hist_ms: s.hist_ms,
                    unit_bw: s.unit_log.has(unit_log::BW)
                        || s.unit_log.averaged_ms(unit_log::BW) > 0,
                    unit_iops: s.unit_log.has(unit_log::IOPS)
                        || s.unit_log.averaged_ms(unit_log::IOPS) > 0,
                    unit_avg_ms: [
                        s.unit_log.averaged_ms(unit_log::BW),
                        s.unit_log.averaged_ms(unit_log::IOPS),
                    ],
                    md_bytes: s.unit_log.md_bytes,
                },
            ),
            not_before: begin,
            rate_at: [begin; 3],
            since_think: 0,
            lat: (s.lat_target_ns > 0).then(|| {
                LatTarget::new(
                    s.lat_target_ns,
                    s.lat_window_ns,
                    s.lat_pct,
                    s.lat_run,
                    s.iodepth,
                    begin,
                )
            }),
            restart: false,
            completed: 0,
            lat_done: false,
            wake_at: 0,
            stats_from,
            ramp_open: s.ramp_ns > 0,
            ramp_submit: !s.calls.sync_io,
            ramp_skip: [0; 3],
            deadline,
            done: terminated,
            ended: terminated,
            terminated,
            term_at: begin,
            begin,
            last_done: begin,
            flow_wake: false,
            ss_unit: None,
            zones,
            zbd_ready: None,
            reapable: 0,
            min_evts: 1,
            done_bytes: [0; 3],
            done_ios: [0; 3],
            rate_chk: [(0, 0, 0); 3],
            sync_until: 0,
            deferred: false,
            writes_issued: 0,
            last_was_sync: false,
            flushed: false,
            flush_done: 0,
            closed: false,
            nullq: NullQueue::new(s),
        }
    }

    #[inline]
    pub fn held(&self, what: u8) -> bool {
        self.holds & what != 0
    }

    #[inline]
    pub fn hold(&mut self, what: u8, on: bool) {
        if on {
            self.holds |= what;
        } else {
            self.holds &= !what;
        }
    }

    /// fio's wait_for_completions: with the queue full, take completions `min_evts` at a
    /// time, at most `max` each, until no more than `low` are outstanding; otherwise (or
    /// once the job issues no more) take them as they come. How many it took.
    pub fn reap(&mut self, low: u32, max: u32) -> u32 {
        let r = self.take(low, max);
        if self.nullq.busy && self.outstanding == 0 {
            // the null engine's batch is in, taken in the order it was queued: its last I/O
            // is the last taken (null_queue.rs)
            self.nullq.busy = false;
            self.last_was_sync = self.nullq.last_sync;
        }
        r
    }

    fn take(&mut self, low: u32, max: u32) -> u32 {
        if !self.held(FULL) || self.done {
            let r = std::mem::take(&mut self.reapable);
            self.outstanding -= r;
            self.hold(FULL, false);
            return r;
        }
        let mut taken = 0;
        while self.reapable >= self.min_evts {
            let r = self.reapable.min(max.max(self.min_evts));
            self.outstanding -= r;
            self.reapable -= r;
            taken += r;
            if self.outstanding <= low {
                self.hold(FULL, false);
                break;
            }
        }
        taken
    }
}

/// The time from `req` to the next I/O of its direction its job's rate allows (ns; 0:
/// no rate), linear or, with rate_process=poisson, drawn from `rng_state`.
/// A job with a rate (fio's should_check_rate): each of its directions' next due time (0
/// for one without a rate: always due), and now (after a think time); None without rates.
pub(crate) fn rate_due(spec: &JobSpec, l: &Live, t: u64) -> Option<([u64; 2], u64)> {
    let rated = |d: usize| spec.rate_bps[d] > 0 || spec.rate_iops[d] > 0;
    if !(rated(0) || rated(1)) {
        return None;
    }
    let at = |d: usize| if rated(d) { l.rate_at[d] } else { 0 };
    Some(([at(0), at(1)], t.max(l.not_before)))
}

pub(crate) fn rate_gap(spec: &JobSpec, req: Req, rng_state: &mut u64) -> f64 {
    let mut g = 0f64;
    if spec.rate_bps[req.dir] > 0 {
        g = g.max(req.len as f64 * 1e9 / spec.rate_bps[req.dir] as f64);
    }
    if spec.rate_iops[req.dir] > 0 {
        g = g.max(1e9 / spec.rate_iops[req.dir] as f64);
    }
    if spec.rate_poisson && g > 0.0 {
        *rng_state = crate::fiojob::dist::mix(rng_state.wrapping_add(0x9E37_79B9_7F4A_7C15));
        let u = ((*rng_state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        g *= -u.ln();
    }
    g
}

/// fio's __check_min_rate for job `l` at `t` (after each completion, from 2 s after the
/// job's start): per direction with bytes done, the rate over each `rate_cycle` against
/// its minimum. The direction and rate that fell short, if one did.
pub(crate) fn check_min_rate(s: &JobSpec, l: &mut Live, t: u64) -> Option<(usize, u64, bool)> {
    if t.saturating_sub(l.begin) / 1_000_000 < 2000 {
        return None;
    }
    for d in 0..3 {
        if l.done_bytes[d] == 0 || (s.rate_min_bps[d] == 0 && s.rate_min_iops[d] == 0) {
            continue;
        }
        let (b0, n0, t0) = l.rate_chk[d];
        if b0 > 0 || n0 > 0 {
            let spent = t.saturating_sub(t0) / 1_000_000;
            if spent == 0 || spent < s.rate_cycle_ns / 1_000_000 {
                continue;
            }
            if s.rate_min_bps[d] > 0 {
                let rate = (l.done_bytes[d] - b0) * 1000 / spent;
                if rate < s.rate_min_bps[d] {
                    return Some((d, rate, false));
                }
            } else {
                let rate = (l.done_ios[d] - n0) * 1000 / spent;
                if rate < s.rate_min_iops[d] {
                    return Some((d, rate, true));
                }
            }
        }
        l.rate_chk[d] = (l.done_bytes[d], l.done_ios[d], t);
    }
    None
}

/// Job `k` ends once it issues no more and its last I/O is in (fio's thread exit). With
/// fio's exitall, an ending job stops the jobs its exit_what names: they issue no more
/// (their I/Os in flight complete) and end in turn; jobs of later waves so named never start.
pub(crate) fn end_jobs(
    specs: &[JobSpec],
    idx: &[usize],
    live: &mut [Live],
    outs: &mut [JobOut],
    k: usize,
    t: u64,
    ended: &mut Vec<usize>,
) {
    let l = &live[k];
    if l.ended || !l.done || l.outstanding > 0 {
        return; // the common case, after every event: nothing ends (and nothing allocated)
    }
    let wave = specs[idx[k]].wave;
    let mut todo = vec![k];
    while let Some(j) = todo.pop() {
        let l = &mut live[j];
        if l.ended || !l.done || l.outstanding > 0 {
            continue;
        }
        l.ended = true;
        ended.push(j);
        let s = &specs[idx[j]];
        if !s.exitall {
            continue;
        }
        for (m, lm) in live.iter_mut().enumerate() {
            let sm = &specs[idx[m]];
            let hit = match s.exit_what {
                ExitWhat::Group => sm.group == s.group,
                ExitWhat::Stonewall => lm.begin <= t,
                ExitWhat::All => true,
            };
            if hit && !lm.done {
                lm.done = true;
                lm.terminated = true;
                lm.term_at = t.max(lm.begin);
                outs[idx[m]].terminated = true;
                todo.push(m);
            }
        }
        for (i, si) in specs.iter().enumerate() {
            if si.wave > wave
                && (s.exit_what == ExitWhat::All
                    || (s.exit_what == ExitWhat::Group && si.group == s.group))
            {
                outs[i].terminated = true;
            }
        }
    }
}

/// Job `k` of a flow may issue at `t` (fio's flow_threshold_exceeded). Held: with
/// `flow_sleep`, its I/Os in flight complete, then it waits that long; without, it waits
/// until the flow moves. When no other job of the flow can move it (each has ended, or is
/// held and running), fio would wait for ever: the job waits for its time limit, or ends.
pub(crate) fn flow_pass(
    specs: &[JobSpec],
    idx: &[usize],
    live: &mut [Live],
    flows: &Flows,
    k: usize,
    t: u64,
    heap: &mut BinaryHeap<Event>,
) -> bool {
    if !flows.held(idx[k]) {
        return true;
    }
    let f = flows.of(idx[k]);
    let moves = live.iter().enumerate().any(|(m, lm)| {
        m != k && !lm.ended && flows.of(idx[m]) == f && (lm.done || !flows.held(idx[m]))
    });
    let sleep = specs[idx[k]].flow_sleep_ns;
    let l = &mut live[k];
    if moves && sleep > 0 {
        if l.outstanding == 0 {
            l.not_before = l.not_before.max(t + sleep);
            if l.wake_at == 0 || l.wake_at > l.not_before {
                l.wake_at = l.not_before;
                heap.push(Reverse((l.not_before, WAKE, k as u32, 0, 0)));
            }
        } else {
            l.hold(FLOW_HOLD, true);
        }
        return false;
    }
    if !moves && l.deadline == u64::MAX {
        l.done = true;
        return false;
    }
    l.hold(FLOW_WAIT, true);
    if l.deadline != u64::MAX && (l.wake_at == 0 || l.wake_at > l.deadline) {
        l.wake_at = l.deadline;
        heap.push(Reverse((l.deadline, WAKE, k as u32, 0, 0)));
    }
    false
}

/// The jobs of flow `f` waiting for it to move (all but `k`) check again at `t`.
pub(crate) fn wake_flow(
    idx: &[usize],
    live: &mut [Live],
    flows: &Flows,
    f: usize,
    k: usize,
    t: u64,
    heap: &mut BinaryHeap<Event>,
) {
    for (m, lm) in live.iter_mut().enumerate() {
        if m != k && lm.held(FLOW_WAIT) && !lm.flow_wake && flows.of(idx[m]) == Some(f) {
            lm.flow_wake = true;
            heap.push(Reverse((t, FLOW_WAKE, m as u32, 0, 0)));
        }
    }
}
