//! fio's latency target (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`; fio's io_u.c lat_target_*): the job's queue depth searched for the deepest
//! that keeps `percentile` % of each window's I/Os within the target. From depth 1 it
//! doubles while windows succeed (bisects once one has failed, between the last good and
//! the first bad depth); a failed window halves toward the last good depth. When a success
//! leaves the depth unchanged, the job drains, its figures restart, and one more window at
//! that depth ends it (unless `latency_run`: then it keeps adjusting).

/// What the job does after a step of the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatStep {
    Go,
    /// Let the outstanding I/Os complete before issuing more (fio's io_u_quiesce).
    Quiesce,
    /// Quiesce, then restart the job's figures: the final window at the found depth.
    QuiesceAndRestart,
    /// The final window is over: the job is done.
    Done,
    /// An I/O over the target at depth 1 with a 100 % percentile: fio stops the job
    /// (ETIMEDOUT).
    Fatal,
}

#[derive(Debug, Clone)]
pub struct LatTarget {
    target_ns: u64,
    window_ns: u64,
    pct: f64,
    keep_running: bool,
    iodepth: u32,
    pub qd: u32,
    high: u32,
    low: u32,
    stable: u32,
    /// Start of the current window, I/Os completed before it, and its I/Os over the target.
    ts: u64,
    ios: u64,
    failed: u64,
    end_run: bool,
}

impl LatTarget {
    pub fn new(
        target_ns: u64,
        window_ns: u64,
        pct: f64,
        keep_running: bool,
        iodepth: u32,
        begin: u64,
    ) -> LatTarget {
        LatTarget {
            target_ns,
            window_ns,
            pct,
            keep_running,
            iodepth,
            qd: 1,
            high: iodepth,
            low: 1,
            stable: 0,
            ts: begin,
            ios: 0,
            failed: 0,
            end_run: false,
        }
    }

    fn new_cycle(&mut self, t: u64, completed: u64) {
        self.ts = t;
        self.ios = completed;
        self.failed = 0;
    }

    /// A window failed: a shallower queue (none below 1).
    fn fail(&mut self, t: u64, completed: u64) -> LatStep {
        if self.qd == 1 {
            return LatStep::Fatal;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.new_cycle(t, completed);
        LatStep::Quiesce
    }

    fn success(&mut self, t: u64, completed: u64) -> LatStep {
        let qd = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        if self.high != self.iodepth {
            self.qd = (self.qd + self.high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.iodepth);
        let mut step = LatStep::Go;
        if !self.keep_running && self.qd == qd {
            if self.end_run {
                step = LatStep::Done;
            } else {
                self.end_run = true;
                step = LatStep::QuiesceAndRestart;
            }
        }
        self.new_cycle(t, completed);
        step
    }

    /// A read or write completed with latency `lat_ns` (`completed` I/Os so far, it included).
    pub fn on_complete(&mut self, lat_ns: u64, t: u64, completed: u64) -> LatStep {
        if lat_ns <= self.target_ns {
            return LatStep::Go;
        }
        if self.pct >= 100.0 {
            return self.fail(t, completed);
        }
        self.failed += 1;
        LatStep::Go
    }

    /// After a completion (outside the ramp): judge the window once it is over.
    pub fn check(&mut self, t: u64, completed: u64) -> LatStep {
        if t.saturating_sub(self.ts) < self.window_ns {
            return LatStep::Go;
        }
        let ios = completed - self.ios;
        let ok = 100.0 * (ios as f64 - self.failed as f64) / ios as f64;
        if ok >= self.pct {
            self.success(t, completed)
        } else {
            match self.fail(t, completed) {
                LatStep::Fatal => LatStep::Go, // fio ignores it here: depth 1 stays
                s => s,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_doubles_to_the_maximum_then_one_final_window() {
        let mut l = LatTarget::new(1_000, 100, 99.0, false, 8, 0);
        let mut steps = vec![];
        for w in 1..=6u64 {
            steps.push((l.check(w * 100, w * 10), l.qd));
        }
        assert_eq!(
            steps[..5],
            [
                (LatStep::Go, 2),
                (LatStep::Go, 4),
                (LatStep::Go, 8),
                (LatStep::QuiesceAndRestart, 8),
                (LatStep::Done, 8)
            ]
        );
    }

    #[test]
    fn a_failed_window_bisects_toward_the_last_good_depth() {
        let mut l = LatTarget::new(1_000, 100, 90.0, false, 64, 0);
        l.check(100, 10); // 1 -> 2
        l.check(200, 20); // 2 -> 4
        l.check(300, 30); // 4 -> 8
        for _ in 0..5 {
            l.on_complete(5_000, 350, 31);
        }
        assert_eq!(l.check(400, 40), LatStep::Quiesce); // half over the target
        assert_eq!(l.qd, 6); // between the last good (4) and the bad (8)
    }
}
