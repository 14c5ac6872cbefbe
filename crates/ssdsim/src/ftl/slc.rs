//! SLC write cache: a static part (dedicated SLC-mode blocks) plus a dynamic part that
//! borrows free native blocks in SLC mode, capped by a share of the free user space so it
//! shrinks as the drive fills (or, in performance mode, open while at most a share of the
//! LBAs is mapped). When full: write native directly or fold first; folding in
//! idle time and, if the firmware does it, periodic reclaim while writing direct (blocking,
//! or paced alongside the writes with a return to SLC writes once the batch is folded).

use super::alloc::Stream;
use super::mapping::SLC_DYNAMIC;
use super::Ftl;
use crate::nand::{Geometry, SLOT_BYTES};
use crate::profile::Profile;
use crate::SimError;
use std::collections::VecDeque;

#[derive(Clone)]
pub struct SlcCache {
    pub enabled: bool,
    static_slots: u64,
    dynamic_max_slots: u64,
    dynamic_share: f64,
    /// Performance mode: the dynamic part only while at most this share of the user
    /// LBAs is mapped (0: off).
    mapped_max: f64,
    bits: u64,
    block_slots: u64,
    fold_when_full: bool,
    fold_pace: f64,
    pub idle_fold: bool,
    direct_during_gc: bool,
    reclaim_interval_slots: u64,
    reclaim_slots: u64,
    reclaim_pace: f64,
    reclaim_min_free: f64,
    direct_since_reclaim: u64,
    /// A paced reclaim: cached slots still to fold (whole blocks are started), and SLC
    /// blocks started and not yet erased. SLC writes resume when both are zero.
    reclaim_left: u64,
    pub reclaim_running: u32,
    /// (blocks' worth of valid data in dynamic SLC blocks, the least free user space
    /// that allows one more block then; u64::MAX: none). Asked on every host write while
    /// the cache is full: the allowance only grows with free space, so one search per
    /// change of the occupancy in blocks replaces float math per write (the free space
    /// changes on every write while the drive fills).
    allow_memo: (u64, u64),
    /// (lo, hi, blocks): `blocks_of` answers `blocks` for valid counts in (lo, hi].
    blocks_memo: (u64, u64, u64),
    /// Closed SLC blocks per die, oldest first, with the erase generation they closed in.
    queue: Vec<VecDeque<(u32, u32)>>,
    generation: Vec<u32>,
}

impl SlcCache {
    pub fn new(p: &Profile, g: &Geometry, static_per_die: u32) -> SlcCache {
        let s = &p.slc;
        let block_slots = g.slc_slots_per_block() as u64;
        let gb = |x: f64| (x * 1e9 / SLOT_BYTES as f64) as u64;
        SlcCache {
            enabled: g.bits > 1 && (s.static_gb > 0.0 || s.dynamic_max_gb > 0.0),
            static_slots: static_per_die as u64 * g.dies as u64 * block_slots,
            dynamic_max_slots: gb(s.dynamic_max_gb),
            dynamic_share: s.dynamic_share,
            mapped_max: s.dynamic_mapped_max_pct / 100.0,
            bits: g.bits as u64,
            block_slots,
            fold_when_full: s.when_full == "fold",
            fold_pace: s.fold_pace,
            idle_fold: s.idle_fold,
            direct_during_gc: s.direct_during_gc,
            reclaim_interval_slots: gb(s.reclaim_interval_gb),
            reclaim_slots: gb(s.reclaim_gb),
            reclaim_pace: s.reclaim_pace,
            reclaim_min_free: s.reclaim_min_free_pct / 100.0,
            direct_since_reclaim: 0,
            reclaim_left: 0,
            reclaim_running: 0,
            allow_memo: (u64::MAX, u64::MAX),
            blocks_memo: (0, 0, 0),
            queue: vec![VecDeque::new(); g.dies as usize],
            generation: vec![0; g.total_blocks() as usize],
        }
    }

    /// The dynamic part's allowance: a share of the free user space in native terms, or
    /// in performance mode all of it while few enough LBAs are mapped (monotone in the
    /// free space either way, see `least_free_for`).
    fn dynamic_cap_slots(&self, user_slots: u64, mapped: u64) -> u64 {
        if self.mapped_max > 0.0 {
            let fast = mapped as f64 <= self.mapped_max * user_slots as f64;
            return if fast { self.dynamic_max_slots } else { 0 };
        }
        let free = user_slots.saturating_sub(mapped) as f64;
        self.dynamic_max_slots
            .min((self.dynamic_share * free / self.bits as f64) as u64)
    }

    /// The least free space (user slots, at most `user_slots`) whose allowance holds
    /// `need` slots, or u64::MAX: a binary search, as the allowance is monotone in it.
    fn least_free_for(&self, need: u64, user_slots: u64) -> u64 {
        let holds = |free: u64| need <= self.dynamic_cap_slots(user_slots, user_slots - free);
        if !holds(user_slots) {
            return u64::MAX;
        }
        let (mut lo, mut hi) = (0, user_slots);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if holds(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// Slots one reclaim folds: `reclaim_gb`, or with `reclaim_min_free_pct` less as the
    /// free user space falls towards that share, and none below it.
    fn reclaim_batch(&self, user_slots: u64, mapped: u64) -> u64 {
        if self.reclaim_min_free <= 0.0 {
            return self.reclaim_slots;
        }
        let free = user_slots.saturating_sub(mapped) as f64 / user_slots.max(1) as f64;
        let scale = ((free - self.reclaim_min_free) / (1.0 - self.reclaim_min_free)).max(0.0);
        (self.reclaim_slots as f64 * scale) as u64
    }

    pub fn capacity_slots(&self, user_slots: u64, mapped: u64) -> u64 {
        if !self.enabled {
            return 0;
        }
        self.static_slots + self.dynamic_cap_slots(user_slots, mapped)
    }

    /// Blocks' worth of `valid` slots (rounded up), without a division per host write:
    /// the last answer holds while `valid` stays in its range.
    #[inline]
    fn blocks_of(&mut self, valid: u64) -> u64 {
        let (lo, hi, blocks) = self.blocks_memo;
        if valid == 0 || (valid > lo && valid <= hi) {
            return if valid == 0 { 0 } else { blocks };
        }
        let blocks = valid.div_ceil(self.block_slots);
        self.blocks_memo = (
            (blocks - 1) * self.block_slots,
            blocks * self.block_slots,
            blocks,
        );
        blocks
    }

    /// Room for one more dynamic SLC block, given the cache's occupancy in blocks.
    #[inline]
    fn dynamic_allowed(&mut self, blocks: u64, user_slots: u64, mapped: u64) -> bool {
        if self.allow_memo.0 != blocks {
            let need = (blocks + 1) * self.block_slots;
            self.allow_memo = (blocks, self.least_free_for(need, user_slots));
        }
        user_slots.saturating_sub(mapped) >= self.allow_memo.1
    }

    /// Block `b` of die `d`, taken from the queue and not folded after all: the oldest again.
    pub fn requeue_oldest(&mut self, b: u32, d: u32) {
        self.queue[d as usize].push_front((b, self.generation[b as usize]));
    }

    pub fn on_close(&mut self, b: u32, d: u32) {
        self.queue[d as usize].push_back((b, self.generation[b as usize]));
    }

    /// A paced reclaim is under way: the host writes native until it is done.
    #[inline]
    fn reclaiming(&self) -> bool {
        self.reclaim_left > 0 || self.reclaim_running > 0
    }

    /// A block of the paced reclaim was folded and erased.
    pub fn on_folded(&mut self) {
        self.reclaim_running = self.reclaim_running.saturating_sub(1);
    }

    /// Block `b` left the cache (erased, or released with no valid data).
    pub fn on_erase(&mut self, b: u32) {
        self.generation[b as usize] = self.generation[b as usize].wrapping_add(1);
    }

    pub fn reset(&mut self) {
        self.direct_since_reclaim = 0;
        self.reclaim_left = 0;
        self.reclaim_running = 0;
        self.queue.iter_mut().for_each(|q| q.clear());
    }
}

impl Ftl {
    #[inline]
    fn slc_room(&mut self, d: u32) -> bool {
        if self.alloc.free_static_count(d) > 0 {
            return true;
        }
        // A new dynamic block must leave the die above its GC threshold, or taking it
        // would start GC at once (and host writes would alternate SLC and native).
        if self.slc.direct_during_gc && self.alloc.free_count(d) <= self.gc_threshold() + 1 {
            return false;
        }
        // With blocks released as their data goes stale, the occupancy is the valid data
        // (in blocks); without, every dynamic block in SLC mode counts until it is erased.
        let m = SLC_DYNAMIC as usize;
        let blocks = if self.release_enabled() {
            self.slc.blocks_of(self.map.valid_in[m])
        } else {
            self.map.blocks_in[m]
        };
        self.slc
            .dynamic_allowed(blocks, self.user_slots, self.map.mapped)
    }

    /// Where the next host page on die `d` goes: the SLC cache while it has room,
    /// otherwise the profile's when-full policy.
    #[inline]
    pub(crate) fn choose_host_stream(&mut self, d: u32, t: u64) -> Result<Stream, SimError> {
        if !self.slc.enabled {
            return Ok(Stream::HostNative);
        }
        // GC in the foreground on this die: client firmware writes native rather than
        // take SLC blocks it would have to fold again.
        if self.slc.direct_during_gc && self.alloc.free_count(d) <= self.gc_threshold() {
            return Ok(Stream::HostNative);
        }
        if self
            .alloc
            .open_has_room(d, Stream::HostSlc, &self.map.written)
        {
            return Ok(Stream::HostSlc);
        }
        if self.slc.reclaiming() {
            self.reclaim_paced(d, t);
            return Ok(Stream::HostNative);
        }
        if self.slc_room(d) {
            return Ok(Stream::HostSlc);
        }
        if self.slc.fold_when_full {
            self.start_fold(d, t, self.slc.fold_pace);
            return Ok(Stream::HostNative);
        }
        if self.slc.reclaim_interval_slots > 0 {
            // Chosen once per host page (`write_slot`): count the page's slots.
            self.slc.direct_since_reclaim += self.nand.geo.slots_per_page as u64;
            if self.slc.direct_since_reclaim >= self.slc.reclaim_interval_slots {
                self.slc.direct_since_reclaim = 0;
                // None below the free space the firmware reclaims at.
                let batch = self.slc.reclaim_batch(self.user_slots, self.map.mapped);
                if batch > 0 && self.slc.reclaim_pace > 0.0 {
                    self.slc.reclaim_left = batch;
                    self.reclaim_paced(d, t);
                } else if batch > 0 {
                    self.reclaim(t, batch)?;
                }
            }
        }
        Ok(Stream::HostNative)
    }

    /// The oldest closed SLC block of die `d` still in the cache.
    pub(crate) fn oldest_slc(&mut self, d: u32) -> Option<u32> {
        while let Some((b, gen)) = self.slc.queue[d as usize].pop_front() {
            if gen == self.slc.generation[b as usize] && self.map.is_slc(b) && self.map.is_closed(b)
            {
                return Some(b);
            }
        }
        None
    }

    /// Unless die `d` is already collecting or no GC engine is free, start folding its
    /// oldest SLC block, `pace` SLC slots per host slot written on the die (see `gc_pace`).
    /// Returns the slots the block holds (0: nothing started).
    fn start_fold(&mut self, d: u32, t: u64, pace: f64) -> u64 {
        if self.collecting_on(d) || !self.gc_engines.free_by(t) {
            return 0;
        }
        match self.oldest_slc(d) {
            Some(b) => {
                let took = self.engine_now(d, t);
                debug_assert!(took, "an engine was free by t");
                self.gc_start(d, b, Some(pace));
                self.map.written[b as usize] as u64
            }
            None => 0,
        }
    }

    /// A paced reclaim on die `d` at a host write: start its next block while slots are
    /// left to fold; give up what is left once the cache holds nothing more to fold.
    fn reclaim_paced(&mut self, d: u32, t: u64) {
        if self.slc.reclaim_left == 0 {
            return;
        }
        let started = self.start_fold(d, t, self.slc.reclaim_pace);
        if started > 0 {
            self.gc_jobs[d as usize].reclaim = true;
            self.slc.reclaim_running += 1;
            self.slc.reclaim_left = self.slc.reclaim_left.saturating_sub(started);
        } else if self.slc_valid_slots() == 0 {
            self.slc.reclaim_left = 0;
        }
    }

    /// Fold the oldest closed SLC block of die `d` into native blocks. The free-block
    /// reserve is restored first: folding a static block consumes native blocks but
    /// gives back only a static one.
    pub(crate) fn fold_one(&mut self, d: u32, t: u64) -> Result<bool, SimError> {
        while let Some(b) = self.oldest_slc(d) {
            self.ensure_free(d, t)?;
            if !self.map.is_closed(b) {
                continue; // greedy GC just collected it
            }
            self.collect(b, d, t)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Firmware reclaim while writing: fold `batch` slots of the cache, die by die.
    fn reclaim(&mut self, t: u64, batch: u64) -> Result<(), SimError> {
        let mut folded = 0u64;
        let per_block = self.slc.block_slots;
        while folded < batch {
            let mut any = false;
            for d in 0..self.nand.geo.dies {
                if self.fold_one(d, t)? {
                    folded += per_block;
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        Ok(())
    }
}
