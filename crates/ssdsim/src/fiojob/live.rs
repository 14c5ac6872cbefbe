//! A fio job's state while it runs (run.rs), and what couples the jobs of a wave: fio's
//! exitall (`end_jobs`) and fio's flow control (`flow_pass`, `wake_flow`; flow.rs).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::fiojob::flow::Flows;
use crate::fiojob::lat_target::LatTarget;
use crate::fiojob::stream::{Req, Stream};
use crate::fiojob::zbd::JobZones;
use crate::fiojob::{ExitWhat, JobOut, JobSpec};

/// Heap entries: (time, issue time or WAKE, job, dir << 30 | len / 512).
pub(crate) type Event = Reverse<(u64, u64, u32, u32)>;
pub(crate) const WAKE: u64 = u64::MAX;
/// A job held by its flow checks again (the flow moved).
pub(crate) const FLOW_WAKE: u64 = u64::MAX - 1;

pub(crate) struct Live {
    pub stream: Stream,
    pub next: Option<Req>,
    pub outstanding: u32,
    pub depth: u32,
    pub issued_bytes: u64,
    pub issued_ios: u64,
    /// Earliest time the job may issue (start delay, think time).
    pub not_before: u64,
    /// Per direction: earliest time the rate allows the next I/O.
    pub rate_at: [u64; 3],
    pub since_think: u64,
    pub think_pending: bool,
    /// Latency target: the depth search; issue nothing until the outstanding I/Os are in
    /// (`quiesce`), then restart the figures when `restart` (the final window).
    pub lat: Option<LatTarget>,
    pub quiesce: bool,
    pub restart: bool,
    pub completed: u64,
    /// Ended by the latency target's search (done, or nothing meets the target).
    pub lat_done: bool,
    pub wake_at: u64,
    pub stats_from: u64,
    pub deadline: u64,
    pub done: bool,
    /// Issues no more and has nothing outstanding (fio's thread exit).
    pub ended: bool,
    /// Stopped by another job's end (exitall), at `term_at`.
    pub terminated: bool,
    pub term_at: u64,
    pub begin: u64,
    pub last_done: u64,
    // per log interval: (bytes, ios, latency sum) per direction
    pub interval: [(u64, u64, u64); 3],
    pub interval_end: u64,
    /// Held by its flow (flow.rs): until its I/Os in flight are in (then `flow_sleep`), or
    /// until the flow moves (a FLOW_WAKE, `flow_wake` while one is pending).
    pub flow_hold: bool,
    pub flow_wait: bool,
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
    pub full: bool,
    pub reapable: u32,
    pub min_evts: u32,
    /// Completed bytes and I/Os per direction, and the rate_min check's last (bytes, I/Os,
    /// time).
    pub done_bytes: [u64; 3],
    pub done_ios: [u64; 3],
    pub rate_chk: [(u64, u64, u64); 3],
}

impl Live {
    /// fio's wait_for_completions: with the queue full, take completions `min_evts` at a
    /// time, at most `max` each, until no more than `low` are outstanding; otherwise (or
    /// once the job issues no more) take them as they come.
    pub fn reap(&mut self, low: u32, max: u32) {
        if !self.full || self.done {
            self.outstanding -= self.reapable;
            self.reapable = 0;
            self.full = false;
            return;
        }
        while self.reapable >= self.min_evts {
            let r = self.reapable.min(max.max(self.min_evts));
            self.outstanding -= r;
            self.reapable -= r;
            if self.outstanding <= low {
                self.full = false;
                return;
            }
        }
    }
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
                heap.push(Reverse((l.not_before, WAKE, k as u32, 0)));
            }
        } else {
            l.flow_hold = true;
        }
        return false;
    }
    if !moves && l.deadline == u64::MAX {
        l.done = true;
        return false;
    }
    l.flow_wait = true;
    if l.deadline != u64::MAX && (l.wake_at == 0 || l.wake_at > l.deadline) {
        l.wake_at = l.deadline;
        heap.push(Reverse((l.deadline, WAKE, k as u32, 0)));
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
        if m != k && lm.flow_wait && !lm.flow_wake && flows.of(idx[m]) == Some(f) {
            lm.flow_wake = true;
            heap.push(Reverse((t, FLOW_WAKE, m as u32, 0)));
        }
    }
}
