//! A NAND channel bus. Transfers are booked as the FTL schedules them, which is not in
//! time order: a die with a long backlog books its read transfer far ahead. A plain
//! "free at" time would then make every other die on the channel wait for that future
//! transfer although the bus is idle until it; so the channel keeps the gaps its
//! bookings left open (a few, the latest ones), and a transfer that fits in one uses it.

/// Gaps kept per channel; when full, the one that closes first (the stalest) is dropped.
const GAPS: usize = 8;
const _: () = assert!(GAPS == 8, "add_gap's search is written for 8 gaps");
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

/// The first gap with the earliest end, found in a tree of compares three deep rather
/// than a chain of seven (every host read of a busy channel adds a gap).
#[inline(always)]
fn stalest(g: &[(u64, u64); GAPS]) -> usize {
    // the earlier of two, the first on a tie (`a` holds the lower indices)
    let first = |a: (usize, u64), b: (usize, u64)| if b.1 < a.1 { b } else { a };
    let pair = |i: usize| first((i, g[i].1), (i + 1, g[i + 1].1));
    first(first(pair(0), pair(2)), first(pair(4), pair(6))).0
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
            self.gaps[stalest(&self.gaps)] = (s, e);
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
    use super::{Channel, GAPS};
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
        /// The tree finds the gap a scan in order finds: the first of the earliest ends.
        #[test]
        fn stalest_is_the_first_earliest(ends in prop::array::uniform8(0u64..4)) {
            let g = ends.map(|e| (0, e));
            let scan = (0..GAPS).fold(0, |m, i| if g[i].1 < g[m].1 { i } else { m });
            prop_assert_eq!(super::stalest(&g), scan);
        }

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
