//! fio's steady-state rule (fio's steadystate.c), judged as I/Os complete: every check
//! interval one value of the metric (IOPS or bytes per second, or the mean completion
//! latency, ns; whole numbers, as fio keeps them), for one job or a reporting group's jobs
//! summed; once the window holds `dur / interval` values, the rule holds when their largest
//! deviation from their mean (or their least-squares slope) is under the limit.

use std::collections::VecDeque;

use super::live::Live;
use super::{JobSpec, SsMetric, SsRule};

pub struct SsUnit {
    pub rule: SsRule,
    /// The reporting group judged as one (group_reporting), or None: one job.
    pub group: Option<u32>,
    /// Indices (in the wave) of the jobs judged.
    pub members: Vec<usize>,
    pub attained: bool,
    from: u64,
    next: u64,
    /// This interval's (I/Os, bytes, latency sum).
    acc: (u64, u64, u64),
    window: VecDeque<f64>,
}

impl SsUnit {
    /// The wave's steady-state units: a job's own rule, or one per reporting group
    /// (group_reporting: fio judges the group's summed figures and stops all its jobs
    /// together); each job of `live` (the wave's jobs, `idx` into `specs`) told its unit.
    pub(crate) fn assign(specs: &[JobSpec], idx: &[usize], live: &mut [Live]) -> Vec<SsUnit> {
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
        units
    }

    pub fn new(rule: SsRule, from: u64, group: Option<u32>) -> SsUnit {
        SsUnit {
            rule,
            group,
            members: vec![],
            attained: false,
            from,
            next: from + rule.interval_ns,
            acc: (0, 0, 0),
            window: VecDeque::new(),
        }
    }

    /// An I/O of `len` bytes completed at `t` after `lat` ns: true when the rule holds
    /// (once).
    pub fn complete(&mut self, t: u64, len: u64, lat: u64) -> bool {
        let r = self.rule;
        let mut hit = false;
        while t >= self.next && !self.attained {
            // intervals that start within the ramp are not judged (ss_ramp)
            if self.next - r.interval_ns >= self.from + r.ramp_ns {
                self.window.push_back(value(&r, self.acc));
            }
            self.acc = (0, 0, 0);
            self.next += r.interval_ns;
            while self.window.len() > r.intervals() {
                self.window.pop_front();
            }
            if self.window.len() == r.intervals() && met(&self.window, &r) {
                self.attained = true;
                hit = true;
            }
        }
        self.acc.0 += 1;
        self.acc.1 += len;
        self.acc.2 += lat;
        hit
    }
}

/// One check interval's value of the rule's metric.
fn value(ss: &SsRule, (ios, bytes, lat_sum): (u64, u64, u64)) -> f64 {
    let per_s = |x: u64| (x as f64 * 1e9 / ss.interval_ns as f64).floor();
    match ss.metric {
        SsMetric::Iops | SsMetric::IopsSlope => per_s(ios),
        SsMetric::Bw | SsMetric::BwSlope => per_s(bytes),
        SsMetric::Lat | SsMetric::LatSlope => lat_sum.checked_div(ios).unwrap_or(0) as f64,
    }
}

/// fio's criterion over the window (oldest first): the largest deviation from the mean, or
/// the least-squares slope, absolute or as a % of the mean; met when under the limit.
fn met(w: &VecDeque<f64>, ss: &SsRule) -> bool {
    let n = w.len() as f64;
    let sum_y: f64 = w.iter().sum();
    let mean = sum_y / n;
    let slope = matches!(
        ss.metric,
        SsMetric::IopsSlope | SsMetric::BwSlope | SsMetric::LatSlope
    );
    let crit = if slope {
        let sum_x = n * (n - 1.0) / 2.0;
        let sum_x_sq = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
        let sum_xy: f64 = w.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
        let sl = (sum_xy - sum_x * sum_y / n) / (sum_x_sq - sum_x * sum_x / n);
        if ss.pct {
            100.0 * sl / mean
        } else {
            sl
        }
    } else {
        let dev = w.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
        if ss.pct {
            100.0 * dev / mean
        } else {
            dev
        }
    };
    crit.abs() < ss.limit // NaN (a zero mean, one interval) is never met
}
