//! Host write runs. A large sequential write places its slots page by page on one die
//! after another; once a page's first slot has been written the full way (`write_slot`:
//! the stream chosen, a block opened, a program issued, GC paced), the page's other
//! slots often meet none of that: they go to consecutive slots of the open block, inside
//! the program unit being gathered, on a die that is not collecting and has free blocks
//! above the GC threshold, with the mapping-table journal far from full. Such a run is
//! placed with one allocation and one pass of table updates (`write_run`), and gives the
//! same tables, counters and times as writing its slots one by one.

use super::alloc::Stream;
use super::Ftl;
use crate::SimError;

impl Ftl {
    /// How many of the next `want` host slots `write_run` may place: 0 unless every one
    /// of them would take the fast path of `write_slot` (the host page already begun, so
    /// its stream is chosen; the open block of that stream takes them without filling
    /// or completing a program unit; no mapping-cache lookup; no GC step, as the die
    /// collects nothing and keeps more free blocks than the GC threshold; no checkpoint).
    #[inline]
    pub fn run_room(&self, want: u32) -> u32 {
        #[cfg(feature = "verify")]
        if !self.runs {
            return 0;
        }
        let d = self.alloc.host_die();
        // Cheapest and likeliest refusals first: a die collecting (GC after random
        // writes), a page not begun (its stream is chosen by `write_slot`).
        if self.collecting_on(d) {
            return 0;
        }
        let Some(stream) = self.alloc.host_page_stream() else {
            return 0;
        };
        let k = want
            .min(self.alloc.host_page_left(self.nand.geo.slots_per_page))
            .min(self.alloc.run_room(d, stream, &self.map.written));
        if k == 0
            || self.cmt.enabled()
            || self.alloc.free_count(d) <= self.gc_threshold()
            || !self.checkpoint.takes(k as u64)
        {
            return 0;
        }
        k
    }

    /// Write logical blocks `lba..lba + k` (`k` from `run_room`), the last of them placed
    /// at `t` (the latest of their times: a program unit is ready when its last slot is).
    #[inline]
    pub fn write_run(&mut self, lba: u32, k: u32, t: u64) -> Result<(), SimError> {
        let d = self.alloc.host_die();
        let stream = self.alloc.host_page_stream().unwrap_or(Stream::HostNative);
        let (s, b, m) = self.alloc_run(stream, d, t, k)?;
        debug_assert_eq!(m, k, "write_run beyond run_room");
        self.map.remap_run(lba, k, s, b);
        // Blocks the run emptied are released in the order they died, as slot by slot:
        // nothing in between looks at them (no block opens, no GC step runs).
        self.release_dead();
        #[cfg(feature = "verify")]
        {
            self.run_slots += k as u64;
        }
        #[cfg(feature = "verify")]
        for j in 0..k {
            self.write_seq += 1;
            self.stamps[(s + j) as usize] = self.write_seq;
        }
        self.counters.host_write_slots += k as u64;
        self.checkpoint.count(k as u64);
        self.advance_host_cursor_by(k, t);
        Ok(())
    }
}
