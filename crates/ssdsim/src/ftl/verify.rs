//! Consistency checks of the FTL state, used by the property tests (read-only, O(size)).

use super::mapping::NONE;
use super::Ftl;

impl Ftl {
    /// Every invariant the FTL must keep; the first violation as one line.
    pub fn check_invariants(&self) -> Result<(), String> {
        let g = &self.nand.geo;
        let spb = g.slots_per_block;
        let m = &self.map;
        let mut mapped = 0u64;
        for lba in 0..m.user_slots() {
            let s = m.slot(lba as u32);
            if s != NONE {
                mapped += 1;
                if m.p2l[s as usize] != lba as u32 {
                    return Err(format!(
                        "L2P[{lba}] = {s} but P2L[{s}] = {}",
                        m.p2l[s as usize]
                    ));
                }
            }
        }
        if mapped != m.mapped {
            return Err(format!(
                "mapped count {} != {} mapped LBAs",
                m.mapped, mapped
            ));
        }
        let open: Vec<u32> = self.alloc.open_blocks().collect();
        let collecting: Vec<u32> = self.collecting().collect();
        let (mut n_free, mut n_open, mut n_closed) = (0u32, 0u32, 0u32);
        let (mut valid_in, mut blocks_in) = ([0u64; 3], [0u64; 3]);
        for b in 0..g.total_blocks() {
            let base = (b * spb) as usize;
            let written = m.written[b as usize];
            let cap = self.block_cap(b);
            if written > cap {
                return Err(format!("block {b}: written {written} > capacity {cap}"));
            }
            let mut valid = 0;
            for off in 0..spb as usize {
                if m.is_valid((base + off) as u32) {
                    let l = m.p2l[base + off];
                    if off as u32 >= written {
                        return Err(format!(
                            "block {b}: slot {off} mapped past the write pointer {written}"
                        ));
                    }
                    if m.slot(l) != (base + off) as u32 {
                        return Err(format!(
                            "P2L[{}] = {l} but L2P[{l}] = {}",
                            base + off,
                            m.slot(l)
                        ));
                    }
                    valid += 1;
                }
            }
            if valid != m.valid[b as usize] {
                return Err(format!(
                    "block {b}: valid count {} != {valid} valid slots",
                    m.valid[b as usize]
                ));
            }
            let is_open = open.contains(&b);
            let closed = m.is_closed(b);
            if is_open && closed {
                return Err(format!("block {b} is both open and a GC candidate"));
            }
            if collecting.contains(&b) {
                if is_open || closed {
                    return Err(format!(
                        "block {b} is being collected but also open or a candidate"
                    ));
                }
                n_open += 1;
            } else if is_open {
                n_open += 1;
            } else if closed {
                n_closed += 1;
            } else {
                if written != 0 {
                    return Err(format!(
                        "block {b}: neither open nor closed but written {written}"
                    ));
                }
                n_free += 1;
            }
            let mode = m.mode(b) as usize;
            valid_in[mode] += valid as u64;
            blocks_in[mode] += 1;
            if mode == super::mapping::SLC_DYNAMIC as usize && self.alloc.is_static(b) {
                return Err(format!("static block {b} runs as dynamic SLC"));
            }
            if closed && valid == 0 && self.release_enabled() && !m.dead.contains(&b) {
                return Err(format!(
                    "block {b}: closed with no valid data but not released"
                ));
            }
        }
        let pooled: u32 = (0..g.dies)
            .map(|d| self.alloc.free_count(d) + self.alloc.free_static_count(d))
            .sum();
        if pooled != n_free {
            return Err(format!(
                "free pools hold {pooled} blocks but {n_free} blocks are free"
            ));
        }
        if n_free + n_open + n_closed != g.total_blocks() {
            return Err("block accounting does not add up".into());
        }
        if valid_in != m.valid_in {
            return Err(format!(
                "valid slots by mode {:?} != {valid_in:?} counted",
                m.valid_in
            ));
        }
        if blocks_in != m.blocks_in {
            return Err(format!(
                "blocks by mode {:?} != {blocks_in:?} counted",
                m.blocks_in
            ));
        }
        let reclaim_jobs = self
            .gc_jobs
            .iter()
            .filter(|j| j.active() && j.reclaim)
            .count() as u32;
        if reclaim_jobs != self.slc.reclaim_running {
            return Err(format!(
                "paced reclaim: {} blocks running != {reclaim_jobs} dies folding for it",
                self.slc.reclaim_running
            ));
        }
        if self.gc_engines.limited() {
            let mut holders: Vec<u32> = self.gc_engines.holders().collect();
            let mut busy: Vec<u32> = (0..g.dies).filter(|&d| self.collecting_on(d)).collect();
            holders.sort_unstable();
            busy.sort_unstable();
            if holders != busy {
                return Err(format!(
                    "dies holding GC engines {holders:?} != dies collecting {busy:?}"
                ));
            }
        }
        Ok(())
    }

    /// Physical slot holding `lba`, if mapped.
    pub fn lookup(&self, lba: u32) -> Option<u32> {
        let s = self.map.slot(lba);
        (s != NONE).then_some(s)
    }
}
