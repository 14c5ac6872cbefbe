//! Jobs of a fio job file on the drive at once, in virtual time: every I/O takes the
//! drive's one path, `issue_io`, which the engine opens to the crate for this. Each job
//! keeps its own queue depth; rates, think time, start delays and time limits gate when a
//! job may issue next; waves (stonewall, wait_for) run one after another. Memory is
//! O(jobs), not O(I/Os).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use crate::engine::Drive;
use crate::fiojob::completion;
use crate::fiojob::flow::Flows;
use crate::fiojob::live::{
    check_min_rate, end_jobs, flow_pass, rate_due, rate_gap, wake_flow, Event, Live, Phase,
    FLOW_WAIT, FLOW_WAKE, FULL, QUIESCE, THINK, WAKE,
};
use crate::fiojob::logs::LOG_BUDGET;
use crate::fiojob::null_queue::{self, Next};
use crate::fiojob::pass;
use crate::fiojob::steady::SsUnit;
use crate::fiojob::stream::Req;
use crate::fiojob::sync_ops;
use crate::fiojob::unit_log;
use crate::fiojob::wave_state::WaveState;
use crate::fiojob::zbd::{Adjusted, Zones};
use crate::fiojob::{DirOut, JobOut, JobSpec, READ, TRIM, WRITE};
use crate::util::stats::{Recorder, Row};
use crate::{PhaseResult, SimError};

pub struct FioRun {
    pub phase: PhaseResult,
    pub jobs: Vec<JobOut>,
}

impl Drive {
    /// Run the jobs (already checked against the drive) from the drive's current time.
    /// `on_sample` gets the drive's rows; returning false stops the run (what was
    /// recorded so far is kept, `phase.interrupted` set). `log_dir`: where the jobs' logs
    /// of an entry per I/O are written as the run goes (none without it).
    pub fn run_fiojob(
        &mut self,
        specs: &[JobSpec],
        sample_interval_s: f64,
        segment_bytes: u64,
        log_dir: Option<&Path>,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<FioRun, SimError> {
        if specs.is_empty() {
            return Err(SimError("no jobs".into()));
        }
        for s in specs {
            s.check(self.user_bytes()).map_err(SimError)?;
        }
        if !(0.0001..=3600.0).contains(&sample_interval_s) {
            return Err(SimError(format!(
                "sample_interval_s = {sample_interval_s}: must be in 0.0001..3600"
            )));
        }
        self.phases_run += 1;
        let start = self.snapshot();
        let t0 = self.now;
        let mut rec = Recorder::new(t0, sample_interval_s, segment_bytes, start);
        let mut outs: Vec<JobOut> = vec![JobOut::default(); specs.len()];
        if let Some(dir) = log_dir {
            unit_log::create_all(specs, dir, &mut outs).map_err(SimError)?;
        }
        let mut t = t0;
        let mut stopped = false;
        let waves = specs.iter().map(|s| s.wave).max().unwrap_or(0);
        // fio's flows: every job with a weight joins when the job file is read
        let mut flows = Flows::new(
            &specs
                .iter()
                .map(|s| (s.flow, s.flow_id))
                .collect::<Vec<_>>(),
        );
        let mut zones = Zones::new(specs, self.user_bytes());
        let mut budget = LOG_BUDGET;
        for w in 0..=waves {
            if stopped {
                break;
            }
            let idx: Vec<usize> = (0..specs.len()).filter(|&i| specs[i].wave == w).collect();
            if idx.is_empty() {
                continue;
            }
            let (end, st) = self.run_wave(
                specs,
                &idx,
                t,
                &mut outs,
                &mut rec,
                &mut flows,
                &mut zones,
                &mut budget,
                on_sample,
            )?;
            for &i in &idx {
                flows.exit(i);
            }
            stopped = st;
            t = end.max(t);
        }
        let end = t;
        let watts = self.profile.power.controller_active_w;
        let from = rec.next - rec.interval_ns();
        self.ctrl_energy_j += watts * end.saturating_sub(from) as f64 / 1e9;
        let tail = end.saturating_sub(from);
        if rec.rows.is_empty() || (rec.pending_ios() > 0 && 2 * tail >= rec.interval_ns()) {
            let row = rec.close(end.max(from + 1), self.snapshot());
            on_sample(&row);
        }
        self.now = end.max(t0);
        let mut phase = self.finish(rec, start, end, stopped);
        let sum = |d: usize, f: &dyn Fn(&DirOut) -> u64| {
            outs.iter().map(|o| f(&o.dirs[d])).sum::<u64>() as f64
        };
        phase.totals.extend([
            ("trim_ios", sum(TRIM, &|d| d.ios)),
            ("trim_bytes", sum(TRIM, &|d| d.bytes)),
            ("unwritten_read_ios", sum(READ, &|d| d.unwritten)),
        ]);
        unit_log::finish_all(&mut outs).map_err(SimError)?;
        Ok(FioRun { phase, jobs: outs })
    }

    #[allow(clippy::too_many_arguments)] // the run's state, shared by its waves
    fn run_wave(
        &mut self,
        specs: &[JobSpec],
        idx: &[usize],
        t0: u64,
        outs: &mut [JobOut],
        rec: &mut Recorder,
        flows: &mut Flows,
        zones: &mut Option<Zones>,
        budget: &mut u64,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<(u64, bool), SimError> {
        let watts = self.profile.power.controller_active_w;
        let user_bytes = self.user_bytes();
        let mut live: Vec<Live> = idx
            .iter()
            .map(|&i| {
                let z = zones.as_ref().filter(|_| specs[i].zbd.is_some());
                Live::new(
                    &specs[i],
                    t0,
                    outs[i].terminated,
                    z.map(|z| z.job(&specs[i])),
                    user_bytes,
                )
            })
            .collect();
        let mut heap: BinaryHeap<Event> = BinaryHeap::with_capacity(
            idx.iter()
                .map(|&i| specs[i].iodepth as usize)
                .sum::<usize>()
                + idx.len(),
        );
        let mut total_out = 0usize;
        let mut stopped = false;
        let mut end = t0;
        let mut rng_state = specs[idx[0]].seed ^ 0xA5A5;
        let mut units = SsUnit::assign(specs, idx, &mut live);
        for (k, l) in live.iter_mut().enumerate() {
            if l.ended {
                flows.exit(idx[k]); // stopped before it started (exitall)
            }
            let at = l.not_before;
            heap.push(Reverse((at, WAKE, k as u32, 0, 0)));
            l.wake_at = at;
        }
        let mut ended: Vec<usize> = vec![];
        while let Some(Reverse((t, at, k, info, off))) = heap.pop() {
            let k = k as usize;
            let spec = &specs[idx[k]];
            if at == WAKE {
                if live[k].wake_at != t {
                    continue; // superseded
                }
                live[k].wake_at = 0;
                live[k].hold(FLOW_WAIT, false); // its time limit, or a wait of its own: check again
            } else if at == FLOW_WAKE {
                live[k].flow_wake = false;
                live[k].hold(FLOW_WAIT, false);
            } else if sync_ops::defer(spec, &live[k], t, (t, at, k as u32, info, off), &mut heap) {
                continue; // taken once the job's synchronous trim or sync returns
            } else if sync_ops::sync_done(
                spec,
                &mut live[k],
                &mut outs[idx[k]],
                (t, at, info),
                &mut total_out,
            ) {
                end = end.max(t);
            } else {
                // a completion
                total_out -= 1;
                let dir = (info >> 30) as usize;
                let len = (info & ((1 << 30) - 1)) as u64 * 512;
                if t >= rec.next && !stopped {
                    stopped = !self.close_until(rec, t, watts, on_sample);
                }
                if dir != TRIM {
                    rec.complete(t, t - at, len, dir == READ);
                }
                end = end.max(t);
                let l = &mut live[k];
                let taken = if sync_ops::taken_in_call(spec, l, t) {
                    0
                } else {
                    l.reapable += 1;
                    sync_ops::completed(l, dir, t);
                    l.reap(spec.depth_low(), spec.complete_max)
                };
                let o = &mut outs[idx[k]];
                let io = (dir, off, len, at, t);
                let ss_hit = completion::account(spec, l, o, io, taken, &mut units, budget);
                if !l.done && at >= l.stats_from && spec.rate_cycle_ns > 0 {
                    if let Some(f) = check_min_rate(spec, l, t) {
                        l.done = true; // fio: "rate_min not met", the job ends with EIO
                        outs[idx[k]].rate_min_failed = Some(f);
                    }
                }
                if let Some(u) = ss_hit {
                    for &m in &units[u].members {
                        live[m].done = true;
                        outs[idx[m]].ss_attained = true;
                    }
                }
            }
            if stopped {
                live[k].done = true;
            }
            // issue what the job may issue now
            loop {
                let l = &mut live[k];
                if l.done || l.holds != 0 || t >= l.deadline {
                    l.done |= l.holds == 0 && t >= l.deadline;
                    if l.done {
                        let mut w = WaveState::new(l, &mut outs[idx[k]], &mut total_out, &mut heap);
                        // end_fsync's or fsync_on_close's flush, if one is due
                        self.end_sync(spec, t, k, &mut w)?;
                    }
                    break;
                }
                if l.phase == Phase::Drain {
                    if l.outstanding > 0 {
                        break; // the pass's I/Os complete first
                    }
                    let mut w = WaveState::new(l, &mut outs[idx[k]], &mut total_out, &mut heap);
                    if self.end_sync(spec, t, k, &mut w)? {
                        break; // end_fsync's flush returns first
                    }
                    let moved = [0, 1, 2].map(|d| w.o.dirs[d].bytes);
                    let mut rt = [0, 1, 2].map(|d| w.o.dirs[d].runtime_ns);
                    pass::io_done(spec, w.l, &mut rt, moved, t);
                    (0..3).for_each(|d| w.o.dirs[d].runtime_ns = rt[d]);
                    self.between_passes(spec, t, k, &mut w)?;
                    continue;
                }
                if l.outstanding >= l.depth {
                    // the queue is full: fio waits for completions before it submits again
                    // (the null engine's batch: all of it)
                    l.hold(FULL, true);
                    l.min_evts = match l.nullq.on() {
                        true => l.outstanding,
                        false => spec.complete_min.min(l.outstanding).max(1),
                    };
                    l.reap(spec.depth_low(), spec.complete_max);
                    break;
                }
                let read_back = if l.phase == Phase::Verify {
                    if null_queue::waits(l) {
                        break; // the null engine's batch is out
                    }
                    match l.pieces.as_mut().and_then(|p| p.take()) {
                        Some(p) => Some(p),
                        None if l.outstanding > 0 => break,
                        None => {
                            let o = &mut outs[idx[k]];
                            let mut rt = [0, 1, 2].map(|d| o.dirs[d].runtime_ns);
                            pass::verify_done(spec, l, &mut rt, t);
                            (0..3).for_each(|d| o.dirs[d].runtime_ns = rt[d]);
                            let mut w = WaveState::new(l, o, &mut total_out, &mut heap);
                            self.between_passes(spec, t, k, &mut w)?;
                            continue;
                        }
                    }
                } else if pass::pass_over(l) {
                    l.phase = Phase::Drain;
                    continue;
                } else if null_queue::pending(l) {
                    None // the null engine's batch is out: the job's next I/O is decided first
                } else {
                    pass::backlog_piece(spec, l)
                };
                if let Some((offset, len)) = read_back {
                    // fio's verify: a read of a written piece, as soon as the queue allows
                    l.pass_bytes += len;
                    l.last_write = false;
                    let req = Req {
                        dir: READ,
                        offset,
                        len,
                        mode: 0,
                    };
                    if total_out == 0 && t >= rec.next && !stopped {
                        stopped = !self.close_quiet(rec, t, watts, on_sample);
                    }
                    let mut w = WaveState::new(l, &mut outs[idx[k]], &mut total_out, &mut heap);
                    let done = self.issue_req(req, None, t, k, &mut w)?;
                    sync_ops::issued(spec, w.l, READ, done);
                    null_queue::queued(w.l, w.o, false, t);
                    continue;
                }
                let req = match l.next {
                    Some(r) => r,
                    None => match l.stream.next_io_rated(rate_due(spec, l, t)) {
                        Some(r) => {
                            l.next = Some(r);
                            r
                        }
                        None => {
                            l.files_done = true; // the pass's offsets are over
                            // fio closes the file now; the last I/O in flight, if any,
                            // closes it as it completes, where a failed fsync is an error
                            l.close_failed |= spec.calls.close_fails && l.outstanding > 0;
                            l.phase = Phase::Drain;
                            continue;
                        }
                    },
                };
                match null_queue::next(spec, l) {
                    Next::Wait => break, // the null engine's batch is out
                    Next::Sync(kind) => {
                        // fio's fsync=N: before the I/O after every Nth write
                        let mut w = WaveState::new(l, &mut outs[idx[k]], &mut total_out, &mut heap);
                        self.issue_sync(spec, t, k, &mut w, kind)?;
                        null_queue::queued(w.l, w.o, true, t);
                        continue;
                    }
                    Next::Io => {}
                }
                if l.dry {
                    pass::dry_issue(l, &mut outs[idx[k]], req, t);
                    continue;
                }
                let ok_at = l.not_before.max(l.rate_at[req.dir]);
                if ok_at > t {
                    if l.wake_at == 0 || l.wake_at > ok_at {
                        l.wake_at = ok_at;
                        heap.push(Reverse((ok_at, WAKE, k as u32, 0, 0)));
                    }
                    break;
                }
                if sync_ops::must_drain(spec, &live[k], req.dir) {
                    live[k].hold(QUIESCE, true); // its I/Os in flight complete first
                    break;
                }
                // fio's flow control, then (zonemode=zbd) the zone rules place the I/O; an
                // I/O placed but waiting (a zone reset waits for the job's I/Os in flight, as
                // fio quiesces before it) has passed its flow check already
                if live[k].zbd_ready.is_none() {
                    if let Some(f) = flows.of(idx[k]) {
                        if !flow_pass(specs, idx, &mut live, flows, k, t, &mut heap) {
                            break;
                        }
                        flows.issued(idx[k]);
                        wake_flow(idx, &mut live, flows, f, k, t, &mut heap);
                    }
                }
                let mut req = req;
                let mut reset = None;
                if let (Some(zs), Some(zo)) = (zones.as_mut(), spec.zbd.as_ref()) {
                    let l = &mut live[k];
                    let placed = match l.zbd_ready.take() {
                        Some(x) => x,
                        None => {
                            let jz = l.zones.as_mut().expect("zbd job has zones");
                            let min_bs = spec.bs[req.dir].iter().map(|x| x.0).min().unwrap_or(512);
                            match zs.adjust(zo, jz, spec, req.dir, req.offset, req.len, min_bs) {
                                Adjusted::Eof => {
                                    // the pass ends (fio's io_u_eof); fio starts another
                                    // while the job's bytes are not done, unless the pass
                                    // did nothing
                                    l.next = None;
                                    if std::mem::take(&mut jz.pass_ios) == 0 {
                                        l.done = true;
                                        break;
                                    }
                                    l.stream.rewind();
                                    continue;
                                }
                                Adjusted::Io(dir, offset, len, rs) => {
                                    jz.pass_ios += 1;
                                    l.stream.placed(dir, offset + len);
                                    (
                                        Req {
                                            dir,
                                            offset,
                                            len,
                                            mode: req.mode,
                                        },
                                        rs,
                                    )
                                }
                            }
                        }
                    };
                    if placed.1.is_some() && l.outstanding > 0 {
                        l.zbd_ready = Some(placed);
                        l.hold(QUIESCE, true);
                        break;
                    }
                    (req, reset) = placed;
                }
                let l = &mut live[k];
                l.next = None;
                // the rate: the next I/O of this direction is due one interval later
                let gap = rate_gap(spec, req, &mut rng_state);
                if gap > 0.0 {
                    l.rate_at[req.dir] =
                        l.rate_at[req.dir].max(l.stats_from.min(t)) + gap.round() as u64;
                }
                l.pass_bytes += req.len;
                if l.counted[req.dir] {
                    l.issue_counted += req.len;
                }
                l.last_write = req.dir == WRITE;
                if let (WRITE, Some(p)) = (req.dir, l.pieces.as_mut()) {
                    p.log(req.offset, req.len); // for the verify
                }
                l.since_think += 1;
                if spec.thinktime_ns > 0 && l.since_think >= spec.thinktime_blocks {
                    l.since_think = 0;
                    l.hold(THINK, true);
                }
                if total_out == 0 && t >= rec.next && !stopped {
                    // the drive idled since its last completion: its rows, compactly
                    stopped = !self.close_quiet(rec, t, watts, on_sample);
                }
                let mut w = WaveState::new(l, &mut outs[idx[k]], &mut total_out, &mut heap);
                let done = self.issue_req(req, reset, t, k, &mut w)?;
                sync_ops::issued(spec, w.l, req.dir, done);
                null_queue::queued(w.l, w.o, false, t);
            }
            null_queue::stopped(&mut live[k], &mut outs[idx[k]], t);
            if live[k].done {
                live[k].reap(spec.depth_low(), spec.complete_max); // it issues no more
            }
            ended.clear();
            end_jobs(specs, idx, &mut live, outs, k, t, &mut ended);
            for &j in &ended {
                if let Some(f) = flows.exit(idx[j]) {
                    wake_flow(idx, &mut live, flows, f, j, t, &mut heap);
                }
            }
        }
        for (k, l) in live.iter_mut().enumerate() {
            let o = &mut outs[idx[k]];
            pass::job_end(&specs[idx[k]], l, o);
            l.log.finish(o.end_ns, o, budget);
        }
        Ok((end, stopped))
    }
}
