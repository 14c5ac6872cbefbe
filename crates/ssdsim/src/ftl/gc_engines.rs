//! GC engines: how many dies may collect (GC or fold) at the same time. Controllers with
//! little SRAM stage the pages they move in a few buffers, so only that many dies
//! collect at once; the others wait for one (`ftl.gc_engines`, 0 = one per die, the
//! default, which needs no bookkeeping).

use super::mapping::NONE;

#[derive(Debug, Clone)]
pub struct GcEngines {
    /// Per engine: the die whose job holds it (NONE: free) and when it was last released.
    holder: Vec<u32>,
    free_at: Vec<u64>,
}

impl GcEngines {
    /// `n` engines; 0 = unlimited.
    pub fn new(n: u32) -> GcEngines {
        GcEngines {
            holder: vec![NONE; n as usize],
            free_at: vec![0; n as usize],
        }
    }

    pub fn limited(&self) -> bool {
        !self.holder.is_empty()
    }

    /// Unlimited, or an engine is free by `t`.
    pub fn free_by(&self, t: u64) -> bool {
        !self.limited() || self.ready_at(t).is_some()
    }

    /// A free engine released by `t` (a job can start now), if any.
    pub fn ready_at(&self, t: u64) -> Option<usize> {
        (0..self.holder.len()).find(|&e| self.holder[e] == NONE && self.free_at[e] <= t)
    }

    /// The free engine released first, and when; None while every engine is held.
    pub fn earliest(&self) -> Option<(usize, u64)> {
        (0..self.holder.len())
            .filter(|&e| self.holder[e] == NONE)
            .map(|e| (e, self.free_at[e]))
            .min_by_key(|&(_, f)| f)
    }

    /// Dies whose jobs hold an engine.
    pub fn holders(&self) -> impl Iterator<Item = u32> + '_ {
        self.holder.iter().copied().filter(|&d| d != NONE)
    }

    pub fn take(&mut self, e: usize, d: u32) {
        self.holder[e] = d;
    }

    /// Die `d`'s job ended at `t`: free its engine.
    pub fn release(&mut self, d: u32, t: u64) {
        if let Some(e) = self.holder.iter().position(|&h| h == d) {
            self.holder[e] = NONE;
            self.free_at[e] = t;
        }
    }

    pub fn reset(&mut self, t: u64) {
        self.holder.iter_mut().for_each(|h| *h = NONE);
        self.free_at.iter_mut().for_each(|f| *f = t);
    }
}
