//! Garbage collection: greedy victim choice (fewest valid slots on the die), relocation
//! of the valid slots into the die's GC stream (native mode; relocating an SLC block is
//! folding), then erase. Runs in the foreground when a die is short of free blocks and
//! in idle time.

use super::alloc::Stream;
use super::mapping::NONE;
use super::Ftl;
use crate::nand::SLOT_BYTES;
use crate::SimError;

impl Ftl {
    /// Collect the greedy victim of die `d` at `t`. Returns false if no block would
    /// yield space. In idle time only blocks at most half valid are worth the wear.
    pub(crate) fn gc_one(&mut self, d: u32, t: u64, idle: bool) -> Result<bool, SimError> {
        let spb = self.nand.geo.slots_per_block;
        let Some((victim, valid)) = self.map.min_valid(d) else {
            return Ok(false);
        };
        let limit = if idle { spb / 2 } else { spb };
        if valid >= limit {
            return Ok(false);
        }
        self.collect(victim, d, t)?;
        Ok(true)
    }

    /// Relocate every valid slot of closed block `victim` on die `d`, then erase it.
    pub(crate) fn collect(&mut self, victim: u32, d: u32, t: u64) -> Result<u64, SimError> {
        let g = &self.nand.geo;
        let (spb, spp) = (g.slots_per_block, g.slots_per_page);
        let page_bytes = spp as u64 * SLOT_BYTES;
        let slc = self.alloc.is_slc(victim);
        let written = self.map.written[victim as usize];
        let base = victim * spb;
        self.map.withdraw(victim);
        let mut last_page = NONE;
        let mut ready = t;
        let mut done = t;
        for off in 0..written {
            let s = base + off;
            let lba = self.map.p2l[s as usize];
            if lba == NONE {
                continue;
            }
            let page = off / spp;
            if page != last_page {
                last_page = page;
                let plane = self.nand.geo.plane_of(off);
                ready = self.nand.read(t, d, plane, slc, page_bytes);
                done = done.max(ready);
            }
            let to = self.alloc_slot(Stream::Gc, d, ready)?;
            self.map.relocate(lba, s, to);
            #[cfg(feature = "verify")]
            {
                self.stamps[to as usize] = self.stamps[s as usize];
            }
            self.counters.gc_moves += 1;
            if slc {
                self.counters.slc_fold_slots += 1;
            }
        }
        debug_assert_eq!(self.map.valid[victim as usize], 0);
        let erased = self.nand.erase(done, d);
        if slc {
            self.slc.used_slots -= written as u64;
            if !self.alloc.is_static(victim) {
                self.slc.dynamic_blocks -= 1;
            }
        }
        self.slc.on_erase(victim);
        self.map.written[victim as usize] = 0;
        self.alloc.release(victim);
        Ok(erased)
    }
}
