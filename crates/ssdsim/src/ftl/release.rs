//! Block release. A closed block whose last valid slot is overwritten or trimmed holds
//! nothing worth collecting: firmware returns it to the free pool at once (so the SLC
//! cache's occupancy and the free-block count follow the valid data, not the history of
//! writes) and erases it in the background when the die has time. A released block
//! taken before that is erased inline (alloc.rs `take_free`).

use super::mapping::NATIVE;
use super::Ftl;

impl Ftl {
    /// Release every block that died since the last call (`Mapping::dead`). Runs after
    /// every host write: the check is inlined, the work is not.
    #[inline(always)]
    pub(crate) fn release_dead(&mut self) {
        if !self.map.dead.is_empty() {
            self.release_dead_now();
        }
    }

    #[inline(never)]
    fn release_dead_now(&mut self) {
        let dead = std::mem::take(&mut self.map.dead);
        for &b in &dead {
            // Skip stale entries: a block GC took meanwhile, or one written again.
            if !self.release_enabled || !self.map.is_closed(b) || self.map.valid[b as usize] != 0 {
                continue;
            }
            self.map.withdraw(b);
            self.forget_block(b);
            self.alloc.release_dirty(b);
        }
        self.map.dead = dead;
        self.map.dead.clear();
    }

    /// Block `b` holds no valid data and leaves every structure that tracks written
    /// blocks (its mode, write pointer and place in the SLC fold queue).
    pub(crate) fn forget_block(&mut self, b: u32) {
        debug_assert_eq!(self.map.valid[b as usize], 0);
        self.map.set_mode(b, NATIVE);
        self.slc.on_erase(b);
        self.map.written[b as usize] = 0;
    }

    /// Background erase on die `d` at `t` of one released block; false if none is left.
    pub(crate) fn erase_dirty(&mut self, d: u32, t: u64) -> bool {
        if self.erase_at_open {
            return false; // erased when opened
        }
        match self.alloc.take_dirty(d) {
            Some(b) => {
                self.nand.erase(t, d);
                self.alloc.release(b);
                true
            }
            None => false,
        }
    }
}
