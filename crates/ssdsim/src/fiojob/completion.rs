//! One completion as fio accounts it (io_u.c io_completed, account_io_completion): the
//! job's done counts, the ramp's end and what it resets, the direction's figures, samples
//! and logs, the steady-state rule, and the holds a completion may lift (think time, the
//! latency target's quiesce and restart, flow control).

use crate::fiojob::lat_target::LatStep;
use crate::fiojob::live::{Live, FLOW_HOLD, QUIESCE, THINK};
use crate::fiojob::report::{batch_bucket, depth_bucket, lat_bucket};
use crate::fiojob::steady::SsUnit;
use crate::fiojob::{JobOut, JobSpec, TRIM, WRITE};

/// An I/O of `len` bytes at `off` in direction `dir`, issued at `at`, completed at `t`;
/// `taken`: the completions the job reaped with it (0: taken in the issuing call). The
/// steady-state unit whose rule it met, if any.
pub(crate) fn account(
    spec: &JobSpec,
    l: &mut Live,
    o: &mut JobOut,
    (dir, off, len, at, t): (usize, u64, u64, u64, u64),
    taken: u32,
    units: &mut [SsUnit],
    budget: &mut u64,
) -> Option<usize> {
    let mut ss_hit = None;
    l.done_bytes[dir] += len;
    l.done_ios[dir] += 1;
    l.last_done = l.last_done.max(t);
    // fio's ramp ends at the first completion past it (ramp_time_over): this I/O and those
    // before it are not counted
    let ends_ramp = l.ramp_open && t >= l.stats_from;
    if ends_ramp {
        l.ramp_open = false;
    }
    if t >= l.stats_from && !ends_ramp {
        l.done_bytes_all += len;
        l.done_ios_all += 1;
    }
    if dir == WRITE && l.pieces.is_some() {
        l.pieces_done += 1;
    }
    // issued in the ramp and in flight as it ended (an engine that queues): fio adds its
    // bytes and latency as it completes, its count reset with the ramp
    let ramp_flight = at < l.stats_from && !l.ramp_open && l.ramp_submit;
    let counted = (at >= l.stats_from || ramp_flight) && !ends_ramp;
    if ends_ramp && at >= l.stats_from && !l.nullq.on() {
        // submitted past the ramp's end, its depth and submission counted then: fio resets
        // them with the ramp (a synchronous engine: depth 1)
        let b = depth_bucket(1);
        o.depths.level[b] = o.depths.level[b].saturating_sub(1);
        o.depths.submit[1] = o.depths.submit[1].saturating_sub(1);
    }
    if taken > 0 && counted {
        o.depths.complete[batch_bucket(taken)] += 1;
    }
    if counted {
        let d = &mut o.dirs[dir];
        let lat = t - at;
        if ramp_flight {
            // no count: fio counted its submission before the ramp's end
        } else if l.ramp_skip[dir] > 0 {
            l.ramp_skip[dir] -= 1; // submitted as the ramp ended: fio resets its count
        } else {
            d.ios += 1;
        }
        d.bytes += len;
        d.lat.record(lat);
        o.lat_buckets[lat_bucket(lat)] += 1;
        match d.bs_counts.iter_mut().find(|x| x.0 == len) {
            Some(x) => x.1 += 1,
            None => d.bs_counts.push((len, 1)),
        }
        // fio's per-interval samples and logs
        l.log.complete(t, dir, off, len, lat, o, budget);
        if let Some(u) = l.ss_unit {
            if units[u].complete(t, len, lat) {
                ss_hit = Some(u);
            }
        }
    }
    if l.held(THINK) && l.outstanding == 0 {
        l.hold(THINK, false);
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
            LatStep::Quiesce => l.hold(QUIESCE, true),
            LatStep::QuiesceAndRestart => {
                l.hold(QUIESCE, true);
                l.restart = true;
            }
            LatStep::Done | LatStep::Fatal => {
                l.done = true;
                l.lat_done = true;
            }
        }
    }
    if l.held(QUIESCE) && l.outstanding == 0 {
        l.hold(QUIESCE, false);
        if std::mem::take(&mut l.restart) {
            // the final window: the job's figures from now (fio's reset_all_stats)
            o.dirs = Default::default();
            o.bw_stat = Default::default();
            o.iops_stat = Default::default();
            o.log.clear();
            o.hist_log.clear();
            o.lat_buckets = Default::default();
            o.depths = Default::default();
            l.log.restart(t);
            l.stats_from = t;
            l.pass_start = t;
        }
    }
    if l.held(FLOW_HOLD) && l.outstanding == 0 {
        // held by its flow, its I/Os in: it waits flow_sleep, then checks again
        l.hold(FLOW_HOLD, false);
        l.not_before = l.not_before.max(t + spec.flow_sleep_ns);
    }
    ss_hit
}
