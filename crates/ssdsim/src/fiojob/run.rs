//! Jobs of a fio job file on the drive at once, in virtual time (a child of the engine,
//! so every I/O takes the drive's one path, `issue_io`). Each job keeps its own queue
//! depth; rates, think time, start delays and time limits gate when a job may issue next;
//! waves (stonewall, wait_for) run one after another. Memory is O(jobs), not O(I/Os).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Drive;
use crate::fiojob::flow::Flows;
use crate::fiojob::lat_target::{LatStep, LatTarget};
use crate::fiojob::live::{
    check_min_rate, end_jobs, flow_pass, wake_flow, Event, Live, FLOW_WAKE, WAKE,
};
use crate::fiojob::steady::SsUnit;
use crate::fiojob::stream::{Req, Stream};
use crate::fiojob::zbd::{Adjusted, Zones};
use crate::fiojob::{
    DirOut, JobOut, JobSpec, READ, TRIM, WMODE_UNCOR, WMODE_VERIFY, WMODE_ZEROES, WRITE,
};
use crate::ftl::mapping::NONE;
use crate::nand::SLOT_BYTES;
use crate::stats::{Recorder, Row};
use crate::workload::Io;
use crate::{PhaseResult, SimError};

pub struct FioRun {
    pub phase: PhaseResult,
    pub jobs: Vec<JobOut>,
}

impl Drive {
    /// Run the jobs (already checked against the drive) from the drive's current time.
    /// `on_sample` gets the drive's rows; returning false stops the run (what was
    /// recorded so far is kept, `phase.interrupted` set).
    pub fn run_fiojob(
        &mut self,
        specs: &[JobSpec],
        sample_interval_s: f64,
        segment_bytes: u64,
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
        for w in 0..=waves {
            if stopped {
                break;
            }
            let idx: Vec<usize> = (0..specs.len()).filter(|&i| specs[i].wave == w).collect();
            if idx.is_empty() {
                continue;
            }
            let (end, st) = self.run_wave(
                specs, &idx, t, &mut outs, &mut rec, &mut flows, &mut zones, on_sample,
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
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<(u64, bool), SimError> {
        let watts = self.profile.power.controller_active_w;
        let mut live: Vec<Live> = idx
            .iter()
            .map(|&i| {
                let s = &specs[i];
                let begin = t0 + s.startdelay_ns;
                let stats_from = begin + s.ramp_ns;
                let deadline = if s.runtime_ns > 0 {
                    stats_from + s.runtime_ns
                } else {
                    u64::MAX
                };
                Live {
                    stream: Stream::new(s),
                    next: None,
                    outstanding: 0,
                    depth: if s.lat_target_ns > 0 { 1 } else { s.iodepth },
                    issued_bytes: 0,
                    issued_ios: 0,
                    not_before: begin,
                    rate_at: [begin; 3],
                    since_think: 0,
                    think_pending: false,
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
                    quiesce: false,
                    restart: false,
                    completed: 0,
                    lat_done: false,
                    wake_at: 0,
                    stats_from,
                    deadline,
                    done: outs[i].terminated,
                    ended: outs[i].terminated,
                    terminated: outs[i].terminated,
                    term_at: begin,
                    begin,
                    last_done: begin,
                    interval: [(0, 0, 0); 3],
                    interval_end: stats_from + s.log_ns,
                    flow_hold: false,
                    flow_wait: false,
                    flow_wake: false,
                    ss_unit: None,
                    zones: zones.as_ref().filter(|_| s.zbd.is_some()).map(|z| z.job(s)),
                    zbd_ready: None,
                    full: false,
                    reapable: 0,
                    min_evts: 1,
                    done_bytes: [0; 3],
                    done_ios: [0; 3],
                    rate_chk: [(0, 0, 0); 3],
                }
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
        // steady-state units: a job's own rule, or one per reporting group (group_reporting:
        // fio judges the group's summed figures and stops all its jobs together)
        let mut units: Vec<SsUnit> = vec![];
        for (k, l) in live.iter_mut().enumerate() {
            let s = &specs[idx[k]];
            let Some(rule) = s.ss else { continue };
            let shared = units
                .iter()
                .position(|u| s.ss_group && u.group == Some(s.group));
            let u = shared.unwrap_or_else(|| {
                units.push(SsUnit::new(
                    rule,
                    l.stats_from,
                    s.ss_group.then_some(s.group),
                ));
                units.len() - 1
            });
            units[u].members.push(k);
            l.ss_unit = Some(u);
        }
        for (k, l) in live.iter_mut().enumerate() {
            if l.ended {
                flows.exit(idx[k]); // stopped before it started (exitall)
            }
            let at = l.not_before;
            heap.push(Reverse((at, WAKE, k as u32, 0)));
            l.wake_at = at;
        }
        let mut ended: Vec<usize> = vec![];
        while let Some(Reverse((t, at, k, info))) = heap.pop() {
            let k = k as usize;
            let spec = &specs[idx[k]];
            if at == WAKE {
                if live[k].wake_at != t {
                    continue; // superseded
                }
                live[k].wake_at = 0;
                live[k].flow_wait = false; // its time limit, or a wait of its own: check again
            } else if at == FLOW_WAKE {
                live[k].flow_wake = false;
                live[k].flow_wait = false;
            } else {
                // a completion
                let mut ss_hit = None;
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
                l.reapable += 1;
                l.reap(spec.depth_low(), spec.complete_max);
                l.done_bytes[dir] += len;
                l.done_ios[dir] += 1;
                l.last_done = l.last_done.max(t);
                let o = &mut outs[idx[k]];
                if at >= l.stats_from {
                    let d = &mut o.dirs[dir];
                    let lat = t - at;
                    d.ios += 1;
                    d.bytes += len;
                    d.lat.record(lat);
                    d.lat_sumsq += (lat as f64) * (lat as f64);
                    match d.bs_counts.iter_mut().find(|x| x.0 == len) {
                        Some(x) => x.1 += 1,
                        None => d.bs_counts.push((len, 1)),
                    }
                    // per-interval samples (fio's logs and bw / iops statistics)
                    while t >= l.interval_end {
                        let ms = (l.interval_end - l.stats_from) / 1_000_000;
                        for (dd, iv) in l.interval.iter_mut().enumerate() {
                            if iv.1 > 0 || (spec_dir(spec, dd) && ms > 0) {
                                o.samples.push((ms, dd as u8, iv.0, iv.1, iv.2));
                            }
                            *iv = (0, 0, 0);
                        }
                        l.interval_end += spec.log_ns;
                    }
                    let iv = &mut l.interval[dir];
                    iv.0 += len;
                    iv.1 += 1;
                    iv.2 += lat;
                    if let Some(u) = l.ss_unit {
                        if units[u].complete(t, len, lat) {
                            ss_hit = Some(u);
                        }
                    }
                }
                if l.think_pending && l.outstanding == 0 {
                    l.think_pending = false;
                    l.not_before = t + spec.thinktime_ns;
                }
                if dir != TRIM {
                    l.completed += 1;
                }
                if let (Some(lt), true) = (l.lat.as_mut(), dir != TRIM) {
                    let mut step = lt.on_complete(t - at, t, l.completed);
                    if step == LatStep::Go && at >= l.stats_from {
                        step = lt.check(t, l.completed);
                    }
                    l.depth = lt.qd;
                    match step {
                        LatStep::Go => {}
                        LatStep::Quiesce => l.quiesce = true,
                        LatStep::QuiesceAndRestart => {
                            l.quiesce = true;
                            l.restart = true;
                        }
                        LatStep::Done | LatStep::Fatal => {
                            l.done = true;
                            l.lat_done = true;
                        }
                    }
                }
                if l.quiesce && l.outstanding == 0 {
                    l.quiesce = false;
                    if std::mem::take(&mut l.restart) {
                        // the final window: the job's figures from now (fio's reset_all_stats)
                        let o = &mut outs[idx[k]];
                        o.dirs = Default::default();
                        o.samples.clear();
                        l.interval = [(0, 0, 0); 3];
                        l.stats_from = t;
                        l.interval_end = t + spec.log_ns;
                    }
                }
                if l.flow_hold && l.outstanding == 0 {
                    // held by its flow, its I/Os in: it waits flow_sleep, then checks again
                    l.flow_hold = false;
                    l.not_before = l.not_before.max(t + spec.flow_sleep_ns);
                }
                let l = &mut live[k];
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
                if l.done || l.think_pending || l.quiesce || l.flow_hold || l.flow_wait || l.full {
                    break;
                }
                if l.outstanding >= l.depth {
                    // the queue is full: fio waits for completions before it submits again
                    l.full = true;
                    l.min_evts = spec.complete_min.min(l.outstanding).max(1);
                    l.reap(spec.depth_low(), spec.complete_max);
                    break;
                }
                let bounded = !spec.time_based;
                if t >= l.deadline
                    || (bounded && spec.io_size > 0 && l.issued_bytes >= spec.io_size)
                    || (spec.number_ios > 0 && l.issued_ios >= spec.number_ios)
                {
                    l.done = true;
                    break;
                }
                let req = match l.next {
                    Some(r) => r,
                    None => {
                        let r = l.stream.next_io();
                        l.next = Some(r);
                        r
                    }
                };
                let ok_at = l.not_before.max(l.rate_at[req.dir]);
                if ok_at > t {
                    if l.wake_at == 0 || l.wake_at > ok_at {
                        l.wake_at = ok_at;
                        heap.push(Reverse((ok_at, WAKE, k as u32, 0)));
                    }
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
                        l.quiesce = true;
                        break;
                    }
                    (req, reset) = placed;
                }
                let l = &mut live[k];
                l.next = None;
                // the rate: the next I/O of this direction is due one interval later
                let gap = {
                    let mut g = 0f64;
                    if spec.rate_bps[req.dir] > 0 {
                        g = g.max(req.len as f64 * 1e9 / spec.rate_bps[req.dir] as f64);
                    }
                    if spec.rate_iops[req.dir] > 0 {
                        g = g.max(1e9 / spec.rate_iops[req.dir] as f64);
                    }
                    if spec.rate_poisson && g > 0.0 {
                        rng_state =
                            crate::fiojob::dist::mix(rng_state.wrapping_add(0x9E37_79B9_7F4A_7C15));
                        let u = ((rng_state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                        g *= -u.ln();
                    }
                    g
                };
                if gap > 0.0 {
                    l.rate_at[req.dir] =
                        l.rate_at[req.dir].max(l.stats_from.min(t)) + gap.round() as u64;
                }
                if !(spec.trimwrite && req.dir == TRIM) {
                    // trimwrite: the writes are the job's I/O (fio counts each trim with its write)
                    l.issued_bytes += req.len;
                    l.issued_ios += 1;
                }
                l.outstanding += 1;
                total_out += 1;
                l.since_think += 1;
                if spec.thinktime_ns > 0 && l.since_think >= spec.thinktime_blocks {
                    l.since_think = 0;
                    l.think_pending = true;
                }
                let o = &mut outs[idx[k]];
                o.issued += 1;
                if let Some((start, len)) = reset {
                    // the zone reset: a trim of the zone's LBAs, before the write
                    let r = Req {
                        dir: TRIM,
                        offset: start,
                        len,
                        mode: 0,
                    };
                    let mut none = 0;
                    self.submit_req(r, t, total_out, &mut none)?;
                }
                let done = self.submit_req(req, t, total_out, &mut o.dirs[READ].unwritten)?;
                heap.push(Reverse((
                    done,
                    t,
                    k as u32,
                    ((req.dir as u32) << 30) | (req.len / 512) as u32,
                )));
            }
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
        // the last, partial log interval is not a sample (as fio's averaged logs)
        for (k, l) in live.iter().enumerate() {
            let spec = &specs[idx[k]];
            let o = &mut outs[idx[k]];
            o.start_ns = l.stats_from;
            o.zone_resets = l.zones.as_ref().map_or(0, |z| z.resets);
            o.end_ns = if l.terminated {
                l.last_done.max(l.term_at).max(l.stats_from)
            } else if spec.time_based
                && !o.ss_attained
                && !l.lat_done
                && o.rate_min_failed.is_none()
            {
                l.deadline
            } else {
                l.last_done.max(l.stats_from)
            };
        }
        Ok((end, stopped))
    }

    /// One job I/O at `t`: reads and writes through `issue_io` (whole 4 KiB slots they
    /// touch), trims through the trim path (the slots they cover entirely).
    fn submit_req(
        &mut self,
        r: Req,
        t: u64,
        outstanding: usize,
        unwritten: &mut u64,
    ) -> Result<u64, SimError> {
        let first = r.offset / SLOT_BYTES;
        if r.dir == TRIM || r.mode == WMODE_ZEROES || r.mode == WMODE_UNCOR {
            let a = r.offset.div_ceil(SLOT_BYTES);
            let b = (r.offset + r.len) / SLOT_BYTES;
            self.background(t)?;
            return Ok(self.issue_trim_or_flush(
                Some((a as u32, b.saturating_sub(a) as u32)),
                t,
                outstanding,
            ));
        }
        let slots = (r.offset + r.len).div_ceil(SLOT_BYTES) - first;
        if r.dir == READ {
            let map = &self.ftl.map;
            if (first..first + slots).any(|l| map.slot(l as u32) == NONE) {
                *unwritten += 1;
            }
        } else if r.mode == WMODE_VERIFY {
            return self.verify(first as u32, slots as u32, t, outstanding);
        } else {
            debug_assert_eq!(r.dir, WRITE);
            self.background(t)?;
        }
        self.issue_io(
            Io {
                lba: first as u32,
                slots: slots as u32,
                read: r.dir == READ,
            },
            t,
            outstanding,
        )
    }
}

impl Drive {
    /// NVMe Verify of `slots` slots from `lba` at `t`: the drive reads the range from NAND
    /// and checks it (ECC) inside; no data crosses the link. Completes when the last page
    /// is read, plus the command overhead.
    fn verify(
        &mut self,
        lba: u32,
        slots: u32,
        t: u64,
        outstanding: usize,
    ) -> Result<u64, SimError> {
        let tc = self.host.accept(t, outstanding);
        self.background(tc)?;
        let (_, last) = self.ftl.read(lba, slots, tc);
        let done = last.max(tc) + self.host.host_latency;
        self.host.completes(done, outstanding);
        Ok(done)
    }
}

fn spec_dir(s: &JobSpec, d: usize) -> bool {
    [s.read, s.write || s.trimwrite, s.trim || s.trimwrite][d]
}
