//! Garbage collection: greedy victim choice (fewest valid slots on the die), relocation
//! of the valid slots into the die's GC stream (native mode; relocating an SLC block is
//! folding), then erase; a step of it at a time in `relocation`.
//!
//! Foreground GC is paced like real firmware: once a die is short of free blocks it
//! takes a victim and moves v / (slots - v) of its slots per host slot written there, at
//! least one (the fraction carried over between host slots, so a victim more than half
//! valid is done just as the host has filled the room it frees), so host writes and GC interleave (the steady band
//! reviewers see) and the pace follows the victims' valid counts smoothly. Only if a
//! die runs down to its last free block does GC stop the world to finish. Folds, idle
//! GC and that hard stop collect whole victims. GC for room stops (`gc_stop`) once the
//! host writes to a die that has room again.

use super::mapping::NONE;
use super::Ftl;
use crate::SimError;

/// Idle GC's free-block target of each die, for `pct` % of the drive's blocks free: the
/// drive's count (rounded up) spread evenly over the dies, each at least `floor` (one above
/// GC's threshold). A die's own share rounded up would free up to a block a die more than
/// asked; on a drive of few blocks a die (a fit's trial drive) that is a tenth of the burst
/// the idle time buys.
pub(crate) fn idle_targets(blocks_per_die: u32, dies: u32, pct: f64, floor: u32) -> Vec<u32> {
    let total = (blocks_per_die as f64 * dies as f64 * pct / 100.0 - 1e-9).ceil().max(0.0) as u64;
    let n = dies.max(1) as u64;
    (0..n)
        .map(|d| ((total * (d + 1) / n - total * d / n) as u32).max(floor))
        .collect()
}

/// Free blocks per die below which GC stops host writes until it has freed one.
pub const HARD_FREE: u32 = 1;

/// Slots background GC moves between two checks for host reads (one program unit's
/// worth on most dies).
const BG_CHUNK: u32 = 8;

/// Victim slots queued at a time.
pub(super) const CHUNK: usize = 32;
/// Relocations ahead of its use that a queued slot's L2P entry is prefetched: one per
/// relocation, as a burst of them would wait for the CPU's few outstanding-miss slots.
pub(super) const AHEAD: usize = 32;

/// The GC state of one die: the victim being collected, if any, and the queue of its
/// upcoming slots. Worked on in place (paced GC steps it once per host slot).
#[derive(Debug, Clone)]
pub struct GcJob {
    /// NONE while the die collects nothing.
    pub victim: u32,
    pub(super) slc: bool,
    /// The victim is folded by a paced SLC reclaim (see `SlcCache::reclaim_running`).
    pub reclaim: bool,
    /// Collecting for room (GC, or a fold begun in idle time; not a paced fold or
    /// reclaim): once the die keeps more free blocks than its GC threshold while the host
    /// writes (a TRIM or stale blocks gave room back, or idle time began it), it stops.
    pub(super) for_room: bool,
    /// The victim was a greedy candidate (it is one again if the job stops).
    candidate: bool,
    /// Next slot offset to examine.
    pub(super) next: u32,
    /// Next entry of `queue` to relocate.
    pub(super) head: usize,
    /// Slots to move per host slot written on the die (see `ftl.gc_pace`); fractional
    /// paces carry the remainder over in `credit`. `base` is the pace it started with;
    /// `pace` may rise above it when the die runs short of room (`urge`).
    base: f64,
    pace: f64,
    /// Victim slots per host slot that keep up with the host: v / (slots - v) at start.
    keep_up: f64,
    credit: f64,
    pub(super) last_page: u32,
    pub(super) ready: u64,
    pub(super) done: u64,
    /// Upcoming (offset, logical block) of the victim, their L2P entries prefetched.
    pub(super) queue: Vec<(u32, u32)>,
}

impl GcJob {
    pub fn idle() -> GcJob {
        GcJob {
            victim: NONE,
            slc: false,
            reclaim: false,
            for_room: false,
            candidate: false,
            next: 0,
            head: 0,
            base: 0.0,
            pace: 0.0,
            keep_up: 0.0,
            credit: 0.0,
            last_page: NONE,
            ready: 0,
            done: 0,
            queue: Vec::with_capacity(128),
        }
    }

    #[inline]
    pub fn active(&self) -> bool {
        self.victim != NONE
    }

    /// Collect nothing (secure erase).
    pub fn reset(&mut self) {
        self.victim = NONE;
        self.queue.clear();
    }
}

impl Ftl {
    /// Hard stop: before a block is taken for host data, collect on die `d` until it
    /// keeps more than the last free block GC itself needs.
    pub(crate) fn ensure_free(&mut self, d: u32, t: u64) -> Result<(), SimError> {
        while self.alloc.free_count(d) <= HARD_FREE {
            self.counters.gc_stalls += 1;
            if !self.gc_one(d, t)? {
                return Err(SimError(format!(
                    "die {d}: no block to collect (every closed block is fully valid; the drive is over-full)"
                )));
            }
        }
        Ok(())
    }

    /// Die `d` is down to the free blocks GC keeps in reserve, or just above.
    #[inline]
    pub(crate) fn near_reserve(&self, d: u32) -> bool {
        self.alloc.free_count(d) <= self.gc_threshold().max(HARD_FREE) + 1
    }

    /// Die `d` if it has room for host data, else the next die in order that has (`d`
    /// if none has: the drive is over-full and the write fails at the hard stop).
    #[inline(never)]
    pub(crate) fn die_with_room(&mut self, d: u32) -> u32 {
        let dies = self.nand.geo.dies;
        let spb = self.nand.geo.slots_per_block;
        let mut e = d;
        for _ in 0..dies {
            let full = self.near_reserve(e)
                && !self.collecting_on(e)
                && self.map.min_valid(e).is_none_or(|(_, v)| v >= spb);
            if !full {
                return e;
            }
            e = if e + 1 == dies { 0 } else { e + 1 }; // the next die, no division
        }
        d
    }

    /// The greedy victim of die `d` worth collecting: any block that would yield space;
    /// in idle time only one at most `ftl.idle_gc_max_valid_pct` valid (moving fuller
    /// blocks is not worth the wear).
    fn victim(&mut self, d: u32, idle: bool) -> Option<u32> {
        let limit = if idle {
            self.idle_gc_max_valid
        } else {
            self.nand.geo.slots_per_block
        };
        self.map
            .min_valid(d)
            .filter(|&(_, v)| v < limit)
            .map(|(b, _)| b)
    }

    /// Idle GC still wants blocks on die `d` (below its idle free-block target).
    pub(crate) fn idle_gc_wanted(&self, d: u32) -> bool {
        self.idle_gc && self.alloc.free_count(d) < self.idle_gc_target[d as usize]
    }

    /// Collect the greedy victim of die `d` at `t` completely. Returns false if there is
    /// none worth collecting (see `victim`).
    pub(crate) fn gc_one(&mut self, d: u32, t: u64) -> Result<bool, SimError> {
        if self.gc_jobs[d as usize].active() {
            self.gc_finish(d, t)?;
            return Ok(true);
        }
        let Some(victim) = self.victim(d, false) else {
            return Ok(false);
        };
        // A die out of free blocks collects at once: its GC preempts the engines (a die
        // that waited for another die's whole victim first would stall its writes for
        // seconds).
        self.gc_start(d, victim, None);
        self.gc_finish(d, t)?;
        Ok(true)
    }

    /// Background GC while the host only reads: from `t` to `end`, every die with fewer
    /// free blocks than the idle target and a victim within the idle limit moves its
    /// victim's slots a chunk at a time in the die time the reads leave, so reads wait at
    /// most one chunk (firmware resumes host reads between background operations).
    pub(crate) fn background_gc(&mut self, t: u64, end: u64) -> Result<(), SimError> {
        for d in 0..self.nand.geo.dies {
            loop {
                let now = t.max(self.nand.die_free(d));
                if now >= end {
                    break;
                }
                if !self.gc_jobs[d as usize].active() {
                    if self.erase_dirty(d, now) {
                        continue;
                    }
                    if !self.idle_gc_wanted(d) {
                        break;
                    }
                    match self.victim(d, true) {
                        Some(victim) if self.engine_now(d, now) => self.gc_start(d, victim, None),
                        _ => break,
                    }
                }
                self.gc_step(d, now, BG_CHUNK)?;
            }
        }
        Ok(())
    }

    /// In idle time, start on die `d` at `t` folding its oldest SLC block (`fold`) or
    /// collecting its greedy victim within the idle limit, and move `chunk` slots of it
    /// (`Ftl::idle` moves the rest). False if there is nothing to start.
    pub(crate) fn idle_start(&mut self, d: u32, t: u64, fold: bool, chunk: u32) -> Result<bool, SimError> {
        let victim = if fold {
            loop {
                let Some(b) = self.oldest_slc(d) else {
                    return Ok(false);
                };
                // a folded static block gives back only a static one: the reserve first
                self.ensure_free(d, t)?;
                if self.map.is_closed(b) {
                    break b;
                }
            }
        } else {
            match self.victim(d, true) {
                Some(b) => b,
                None => return Ok(false),
            }
        };
        let t = self.wait_engine(d, t)?;
        self.gc_start(d, victim, None);
        self.gc_step(d, t, chunk)?;
        Ok(true)
    }

    /// Relocate every valid slot of closed block `victim` on die `d`, then erase it.
    pub(crate) fn collect(&mut self, victim: u32, d: u32, t: u64) -> Result<(), SimError> {
        self.gc_finish(d, t)?;
        let t = self.wait_engine(d, t)?;
        self.gc_start(d, victim, None);
        self.gc_finish(d, t)
    }

    /// A job may start on die `d` at `t` without waiting: take an engine if one is free.
    #[inline]
    pub(crate) fn engine_now(&mut self, d: u32, t: u64) -> bool {
        if !self.gc_engines.limited() {
            return true;
        }
        match self.gc_engines.ready_at(t) {
            Some(e) => {
                self.gc_engines.take(e, d);
                true
            }
            None => false,
        }
    }

    /// Die `d` must collect now: take the engine free first, finishing another die's job
    /// if all are held. Returns when the engine is free.
    fn wait_engine(&mut self, d: u32, t: u64) -> Result<u64, SimError> {
        if !self.gc_engines.limited() {
            return Ok(t);
        }
        loop {
            if let Some((e, free)) = self.gc_engines.earliest() {
                self.gc_engines.take(e, d);
                return Ok(t.max(free));
            }
            let other = self.gc_engines.holders().next().expect("a held engine");
            self.gc_finish(other, t)?;
            if self.gc_engines.holders().any(|h| h == other) {
                return Err(SimError(format!(
                    "internal: die {other} holds a GC engine but collects nothing"
                )));
            }
        }
    }

    /// Paced foreground GC after a host slot was written on die `d` at `t`.
    #[inline]
    pub(crate) fn gc_pace(&mut self, d: u32, t: u64) -> Result<(), SimError> {
        if !self.gc_jobs[d as usize].active() {
            if self.alloc.free_count(d) > self.gc_threshold() {
                return Ok(());
            }
            match self.victim(d, false) {
                Some(victim) if self.engine_now(d, t) => self.gc_start(d, victim, None),
                _ => return Ok(()),
            }
        }
        if self.gc_jobs[d as usize].for_room && self.alloc.free_count(d) > self.gc_threshold() {
            // the die has room: GC paced by the host's writes there would slow them, and
            // dynamic striping would steer the host around the busy die, which then
            // takes fewer writes and paces its GC slower still, while the other dies
            // spend their free blocks
            self.gc_stop(d, t);
            return Ok(());
        }
        let job = &mut self.gc_jobs[d as usize];
        let credit = job.credit + job.pace;
        // floor: credit >= 0 and far below 2^32 (pace <= 4 x slots per block).
        let n = credit as u32;
        job.credit = credit - n as f64;
        self.gc_step(d, t, n)
    }

    /// Catch-up pace (`ftl.gc_urgency`): a die whose free blocks have fallen below its GC
    /// threshold (GC lagged behind the host) collects at twice the rate that keeps up with
    /// the host until it is back, so it rarely reaches the hard stop at its last free block.
    /// Called when a block is opened on die `d` (the free count changes) and at a start.
    pub(crate) fn urge(&mut self, d: u32) {
        let behind = self.alloc.free_count(d) < self.gc_threshold();
        let urgency = self.gc_urgency;
        // Inside a GC step the jobs are taken out (`gc_step`): GC opening its own block
        // is accounted at the next host block.
        let Some(job) = self.gc_jobs.get_mut(d as usize) else {
            return;
        };
        if !urgency || !job.active() {
            return;
        }
        job.pace = if behind {
            job.base.max(2.0 * job.keep_up)
        } else {
            job.base
        };
    }

    /// Die `d` is collecting (or folding) a victim.
    pub(crate) fn collecting_on(&self, d: u32) -> bool {
        self.gc_jobs[d as usize].active()
    }

    /// Start collecting `victim` on die `d`, `pace` victim slots per host slot written
    /// on the die (by default as many as keep up with the host, see the module doc).
    pub(crate) fn gc_start(&mut self, d: u32, victim: u32, pace: Option<f64>) {
        let spb = self.nand.geo.slots_per_block;
        let v = self.map.valid[victim as usize];
        let candidate = self.map.is_candidate(victim);
        self.map.withdraw(victim);
        let keep_up = v as f64 / (spb - v).max(1) as f64;
        let for_room = pace.is_none();
        let pace = pace.unwrap_or(self.gc_pace * keep_up.max(1.0));
        let slc = self.map.is_slc(victim);
        let job = &mut self.gc_jobs[d as usize];
        debug_assert!(!job.active() && job.queue.is_empty());
        job.victim = victim;
        job.slc = slc;
        job.reclaim = false;
        job.for_room = for_room;
        job.candidate = candidate;
        job.next = 0;
        job.head = 0;
        job.base = pace;
        job.pace = pace;
        job.keep_up = keep_up;
        job.credit = 0.0;
        job.last_page = NONE;
        job.ready = 0;
        job.done = 0;
        self.urge(d);
    }

    /// Stop die `d`'s job at `t` with its victim partly moved: the victim is a closed
    /// block again (a candidate if it was one; the oldest of the SLC cache if it was
    /// taken from there) and the die's GC engine is free once its last operation ends.
    fn gc_stop(&mut self, d: u32, t: u64) {
        let job = &mut self.gc_jobs[d as usize];
        let (victim, candidate, done) = (job.victim, job.candidate, job.done);
        job.reset();
        self.map.close(victim, candidate);
        if self.map.is_slc(victim) {
            self.slc.requeue_oldest(victim, d);
        }
        self.gc_engines.release(d, done.max(t));
    }

    pub(crate) fn gc_finish(&mut self, d: u32, t: u64) -> Result<(), SimError> {
        while self.gc_jobs[d as usize].active() {
            self.gc_step(d, t, u32::MAX)?;
        }
        Ok(())
    }

    /// Blocks being collected (neither open nor GC candidates).
    pub fn collecting(&self) -> impl Iterator<Item = u32> + '_ {
        self.gc_jobs.iter().filter(|j| j.active()).map(|j| j.victim)
    }
}

#[cfg(test)]
mod tests {
    use super::idle_targets;

    #[test]
    fn idle_targets_spread_the_drives_share() {
        // 3 % of 8 dies x 256 blocks = 61.44 -> 62 blocks: six dies 8, two 7 (not 8 each)
        let t = idle_targets(256, 8, 3.0, 3);
        assert_eq!(t.iter().sum::<u32>(), 62);
        assert!(t.iter().all(|&x| x == 7 || x == 8));
        // a whole count stays whole on every die; the floor holds
        assert_eq!(idle_targets(1000, 4, 10.0, 3), vec![100; 4]);
        assert_eq!(idle_targets(100, 4, 0.0, 3), vec![3; 4]);
    }
}
