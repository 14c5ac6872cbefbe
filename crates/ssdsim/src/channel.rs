//! A NAND channel bus. Transfers are booked as the FTL schedules them, which is not in
//! time order: a die with a long backlog books its read transfer far ahead. A plain
//! "free at" time would then make every other die on the channel wait for that future
//! transfer although the bus is idle until it; so the channel keeps the gaps its
//! bookings left open (a few, the latest ones), and a transfer that fits in one uses it.

/// Gaps kept per channel; when full, the one that closes first (the stalest) is dropped.
const GAPS: usize = 8;
/// Gaps shorter than this (ns) are not kept: no transfer fits in them.
const MIN_GAP: u64 = 1_000;

#[derive(Debug, Clone, Default)]
pub struct Channel {
    /// End of the last booked transfer.
    busy: u64,
    gaps: [(u64, u64); GAPS],
    n: usize,
    /// At least the latest end of a kept gap (not lowered when one is used up): most
    /// early transfers end after it, and so need no look at the gaps.
    max_end: u64,
    /// End of the last transfer booked ahead of the others (`book_first`).
    first_until: u64,
}

impl Channel {
    /// Book a transfer of `len` ns that can start at `t`; returns its start.
    #[inline]
    pub fn book(&mut self, t: u64, len: u64) -> u64 {
        if t >= self.busy {
            if t - self.busy >= MIN_GAP {
                self.add_gap(self.busy, t);
            }
            self.busy = t + len;
            return t;
        }
        // A transfer that cannot end by `max_end` fits in no gap.
        let n = if t + len <= self.max_end { self.n } else { 0 };
        for i in 0..n {
            let (gs, ge) = self.gaps[i];
            let s = t.max(gs);
            if s + len <= ge {
                self.n -= 1;
                self.gaps[i] = self.gaps[self.n];
                if s - gs >= MIN_GAP {
                    self.add_gap(gs, s);
                }
                if ge - (s + len) >= MIN_GAP {
                    self.add_gap(s + len, ge);
                }
                return s;
            }
        }
        let s = self.busy;
        self.busy = s + len;
        s
    }

    /// Book a transfer of `len` ns that goes ahead of everything booked for later (the
    /// data of a host read: the controller serves it before queued background
    /// transfers). It starts at `t`, or when the previous such transfer ends; what was
    /// booked after it is displaced by `len`. Returns its start.
    #[inline]
    pub fn book_first(&mut self, t: u64, len: u64) -> u64 {
        let s = t.max(self.first_until);
        self.first_until = s + len;
        if s >= self.busy {
            if s - self.busy >= MIN_GAP {
                self.add_gap(self.busy, s);
            }
            self.busy = s + len;
        } else {
            self.busy += len;
        }
        s
    }

    fn add_gap(&mut self, s: u64, e: u64) {
        self.max_end = self.max_end.max(e);
        if self.n == GAPS {
            // The first gap with the earliest end.
            let (mut stalest, mut end) = (0, self.gaps[0].1);
            for (i, g) in self.gaps.iter().enumerate().skip(1) {
                if g.1 < end {
                    (stalest, end) = (i, g.1);
                }
            }
            self.gaps[stalest] = (s, e);
        } else {
            self.gaps[self.n] = (s, e);
            self.n += 1;
        }
    }

    /// Nothing may be booked before `t` any more (a purge or an idle gap).
    pub fn advance_to(&mut self, t: u64) {
        self.busy = self.busy.max(t);
        self.first_until = self.first_until.max(t);
        self.n = 0;
        self.max_end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Channel;
    use proptest::prelude::*;

    #[test]
    fn an_early_transfer_uses_the_gap_before_a_future_one() {
        let mut c = Channel::default();
        assert_eq!(c.book(100_000, 50_000), 100_000); // a future read transfer
        assert_eq!(c.book(10_000, 20_000), 10_000); // fits before it
        assert_eq!(c.book(20_000, 80_000), 150_000); // too long for the gap: after it
        assert_eq!(c.book(30_000, 20_000), 30_000); // the rest of the gap
        assert_eq!(c.book(40_000, 40_000), 50_000);
        assert_eq!(c.book(40_000, 20_000), 230_000); // [90 us, 100 us) is too short
    }

    proptest! {
        #[test]
        fn transfers_never_overlap_nor_start_early(ops in prop::collection::vec((0u64..2_000_000, 1u64..60_000), 1..200)) {
            let mut c = Channel::default();
            let mut booked: Vec<(u64, u64)> = Vec::new();
            for (t, len) in ops {
                let s = c.book(t, len);
                prop_assert!(s >= t);
                for &(bs, be) in &booked {
                    prop_assert!(s + len <= bs || s >= be, "[{}, {}) overlaps [{}, {})", s, s + len, bs, be);
                }
                booked.push((s, s + len));
            }
        }
    }
}
