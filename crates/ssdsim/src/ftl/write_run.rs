//! Host write runs. A large sequential write places its slots page by page on one die
//! after another; once a page's first slot has been written the full way (`write_slot`:
//! the stream chosen, a block opened, a program issued, GC paced), the page's other
//! slots often meet none of that: they go to consecutive slots of the open block, inside
//! the program unit being gathered, with the mapping-table journal far from full. Such a
//! run is placed with one allocation and one pass of table updates (`write_run`), and
//! gives the same tables, counters and times as writing its slots one by one.
//!
//! On a die that collects nothing the run needs free blocks above the GC threshold (no
//! step starts). On a die collecting a victim, each host slot would pace a GC step; the
//! run hands those steps to GC as one budget (`paced_run`), after its own remappings.
//! That order is safe while the remappings and the steps touch nothing of each other's:
//! no old copy of the run lies in the victim (a step would have moved it first), the
//! victim outlasts the steps (no job ends or starts) and the open GC block takes every
//! slot they move (no block closes into the valid-count buckets the run's invalidations
//! reorder, none is taken from the free pools the blocks the run empties return to).

use super::alloc::Stream;
use super::relocation::Budget;
use super::Ftl;
use crate::SimError;

/// Longest run (slots): a run stays within a host page (at most 8 slots: 32 KiB pages),
/// and each slot's time is kept for the GC steps it paces.
pub const RUN_MAX: u32 = 8;

impl Ftl {
    /// How many of the next `want` host slots, logical blocks `lba..`, `write_run` may
    /// place: 0 unless every one of them would take the fast path of `write_slot` (the
    /// host page already begun, so its stream is chosen; the open block of that stream
    /// takes them without filling or completing a program unit; no mapping-cache lookup;
    /// no checkpoint) and GC allows it (see the module doc).
    #[inline]
    pub fn run_room(&self, lba: u32, want: u32) -> u32 {
        #[cfg(feature = "verify")]
        if !self.runs {
            return 0;
        }
        let d = self.alloc.host_die();
        // A page not begun: its stream is chosen by `write_slot`.
        let Some(stream) = self.alloc.host_page_stream() else {
            return 0;
        };
        let k = want
            .min(self.alloc.host_page_left(self.nand.geo.slots_per_page))
            .min(self.alloc.run_room(d, stream, &self.map.written))
            .min(RUN_MAX);
        if k == 0 || self.cmt.enabled() || !self.checkpoint.takes(k as u64) {
            return 0;
        }
        if self.collecting_on(d) {
            return self.paced_room(d, lba, k);
        }
        if self.alloc.free_count(d) <= self.gc_threshold() {
            return 0;
        }
        k
    }

    /// `run_room` of `k` slots from `lba` on die `d`, which is collecting: `k` if the
    /// run's remappings may come before the GC steps they pace, else 0.
    #[inline(never)]
    fn paced_room(&self, d: u32, lba: u32, k: u32) -> u32 {
        if self.gc_move > 0 {
            return 0; // firmware time per step, charged slot by slot
        }
        let job = &self.gc_jobs[d as usize];
        let mut moves = 0u64;
        job.paced(k, |n| moves += n as u64);
        let victim = job.victim;
        if self.map.valid[victim as usize] as u64 <= moves
            || (self.alloc.open_room(d, Stream::Gc, &self.map.written) as u64) < moves
            || !self.checkpoint.takes(k as u64 + moves)
        {
            return 0;
        }
        let g = &self.nand.geo;
        let (first, end) = (victim * g.slots_per_block, (victim + 1) * g.slots_per_block);
        // Unmapped blocks read as NONE, outside every block.
        if (lba..lba + k).any(|l| (first..end).contains(&self.map.slot(l))) {
            return 0;
        }
        k
    }

    /// Slot `j` of the coming run was placed at `t` (times only grow).
    #[inline(always)]
    pub fn run_slot_at(&mut self, j: u32, t: u64) {
        self.run_at[j as usize] = t;
    }

    /// Write logical blocks `lba..lba + k` (`k` from `run_room`), placed at the times given
    /// to `run_slot_at` (a program unit is ready when its last slot is).
    #[inline]
    pub fn write_run(&mut self, lba: u32, k: u32) -> Result<(), SimError> {
        let d = self.alloc.host_die();
        let t = self.run_at[k as usize - 1];
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
        let moves = self.counters.gc_moves;
        if self.collecting_on(d) {
            self.paced_run(d, k)?;
        }
        self.counters.host_write_slots += k as u64;
        self.checkpoint.count(k as u64 + self.counters.gc_moves - moves);
        self.advance_host_cursor_by(k, t);
        Ok(())
    }

    /// The GC steps the run's `k` slots pace on die `d`, each at its slot's time, as one.
    #[inline(never)]
    fn paced_run(&mut self, d: u32, k: u32) -> Result<(), SimError> {
        #[cfg(feature = "verify")]
        {
            self.paced_run_slots += k as u64;
        }
        let mut steps = [(0u64, 0u32); RUN_MAX as usize];
        let job = &mut self.gc_jobs[d as usize];
        let mut i = 0;
        let at = &self.run_at;
        let credit = job.paced(k, |n| {
            steps[i] = (at[i], n);
            i += 1;
        });
        job.set_credit(credit);
        let (&(t, n), more) = steps[..k as usize].split_first().expect("a run of one slot or more");
        self.gc_step_budget(d, &mut Budget { t, n, more })
    }
}
