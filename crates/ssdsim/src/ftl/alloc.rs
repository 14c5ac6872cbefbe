//! Block allocation: free pools per die (static SLC blocks apart), one open block per
//! die per stream, write striping over all dies page by page, and program-unit
//! scheduling (a program starts once a die has a full unit of data).

use super::mapping::{NATIVE, NONE, SLC_DYNAMIC, SLC_STATIC};
use super::Ftl;
use crate::nand::{Geometry, SLOT_BYTES};
use crate::SimError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    HostSlc = 0,
    HostNative = 1,
    Gc = 2,
}
const STREAMS: usize = 3;

/// The open block of one (die, stream) and the program unit being gathered for it.
#[derive(Clone, Copy, Debug)]
struct Open {
    /// NONE if none.
    block: u32,
    /// The block's mode, and its capacity and program unit (slots) in that mode: fixed
    /// while it is open, and read for every slot allocated.
    slc: bool,
    cap: u32,
    unit: u32,
    /// Slots gathered for the next program operation, and the time the last of them
    /// arrived.
    fill: u32,
    ready: u64,
}

const CLOSED: Open = Open {
    block: NONE,
    slc: false,
    cap: 0,
    unit: 0,
    fill: 0,
    ready: 0,
};

/// The free blocks of one die (general or static SLC): erased ones, and released ones
/// whose stale data still needs an erase (taken only when no erased block is left).
#[derive(Debug, Clone, Default)]
pub struct Pool {
    erased: Vec<u32>,
    dirty: Vec<u32>,
}

impl Pool {
    fn fresh(blocks: std::ops::Range<u32>) -> Pool {
        // Lowest block first (popped from the end).
        Pool {
            erased: blocks.rev().collect(),
            dirty: Vec::new(),
        }
    }
    pub fn len(&self) -> u32 {
        (self.erased.len() + self.dirty.len()) as u32
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn dirty(&self) -> u32 {
        self.dirty.len() as u32
    }
    /// A free block, and whether it must be erased first.
    fn pop(&mut self) -> Option<(u32, bool)> {
        self.erased
            .pop()
            .map(|b| (b, false))
            .or_else(|| self.dirty.pop().map(|b| (b, true)))
    }
}

#[derive(Clone)]
pub struct Alloc {
    bpd: u32,
    static_per_die: u32,
    free: Vec<Pool>,
    free_static: Vec<Pool>,
    /// Per (die, stream).
    open: Vec<Open>,
    host_die: u32,
    host_page_fill: u32,
    /// The stream of the host page being filled (its first slot chose it).
    host_stream: Stream,
    /// `ftl.striping = "dynamic"`.
    dynamic: bool,
}

impl Alloc {
    pub fn new(g: &Geometry, static_per_die: u32, dynamic: bool) -> Alloc {
        let mut a = Alloc {
            bpd: g.blocks_per_die,
            static_per_die,
            free: Vec::new(),
            free_static: Vec::new(),
            open: vec![CLOSED; g.dies as usize * STREAMS],
            host_die: 0,
            host_page_fill: 0,
            host_stream: Stream::HostNative,
            dynamic,
        };
        a.reset(g);
        a
    }

    pub fn reset(&mut self, g: &Geometry) {
        self.free = (0..g.dies)
            .map(|d| Pool::fresh(d * self.bpd + self.static_per_die..(d + 1) * self.bpd))
            .collect();
        self.free_static = (0..g.dies)
            .map(|d| Pool::fresh(d * self.bpd..d * self.bpd + self.static_per_die))
            .collect();
        self.open.fill(CLOSED);
        self.host_die = 0;
        self.host_page_fill = 0;
    }

    #[inline]
    pub fn is_static(&self, b: u32) -> bool {
        b % self.bpd < self.static_per_die
    }
    pub fn free_count(&self, d: u32) -> u32 {
        self.free[d as usize].len()
    }
    pub fn free_static_count(&self, d: u32) -> u32 {
        self.free_static[d as usize].len()
    }
    /// Free blocks of die `d` that still need an erase.
    pub fn dirty_count(&self, d: u32) -> u32 {
        self.free[d as usize].dirty() + self.free_static[d as usize].dirty()
    }
    /// The open block of stream `s` on die `d` takes another slot (its capacity is kept
    /// while open: no lookup of its mode and no division).
    #[inline]
    pub fn open_has_room(&self, d: u32, s: Stream, written: &[u32]) -> bool {
        let o = &self.open[d as usize * STREAMS + s as usize];
        o.block != NONE && written[o.block as usize] < o.cap
    }
    /// Slots the open block of stream `s` on die `d` takes on the fast path of
    /// `alloc_run` (before it fills or completes a program unit); 0 if none is open.
    #[inline]
    pub fn run_room(&self, d: u32, s: Stream, written: &[u32]) -> u32 {
        let o = &self.open[d as usize * STREAMS + s as usize];
        if o.block == NONE {
            return 0;
        }
        (o.cap - written[o.block as usize]).min(o.unit - 1 - o.fill)
    }
    /// Take `k` slots (at most `run_room`) of the open block of stream `s` on die `d` for
    /// data available at `t`: the fast path of `Ftl::alloc_run`, whose bookkeeping is only
    /// counts. Returns (block, first offset, SLC mode); the caller counts the slots.
    #[inline(always)]
    pub(crate) fn take_run(
        &mut self,
        d: u32,
        s: Stream,
        written: &mut [u32],
        t: u64,
        k: u32,
    ) -> (u32, u32, bool) {
        let o = &mut self.open[d as usize * STREAMS + s as usize];
        debug_assert!(o.block != NONE);
        debug_assert!(k <= (o.cap - written[o.block as usize]).min(o.unit - 1 - o.fill));
        let b = o.block;
        let off = written[b as usize];
        written[b as usize] = off + k;
        o.fill += k;
        o.ready = o.ready.max(t);
        (b, off, o.slc)
    }
    /// Slots the open block of stream `s` on die `d` still takes (0 if none is open).
    pub fn open_room(&self, d: u32, s: Stream, written: &[u32]) -> u32 {
        let o = &self.open[d as usize * STREAMS + s as usize];
        if o.block == NONE {
            0
        } else {
            o.cap - written[o.block as usize]
        }
    }
    #[inline]
    pub fn host_die(&self) -> u32 {
        self.host_die
    }
    /// The stream of the host page being filled, if one is begun: a page is programmed
    /// as one unit, so its slots share the stream chosen for its first.
    #[inline]
    pub fn host_page_stream(&self) -> Option<Stream> {
        (self.host_page_fill != 0).then_some(self.host_stream)
    }
    #[inline]
    pub fn begin_host_page(&mut self, s: Stream) {
        self.host_stream = s;
    }
    /// Slots of the host page being filled still to write (`slots_per_page` if none is
    /// begun).
    #[inline]
    pub fn host_page_left(&self, slots_per_page: u32) -> u32 {
        slots_per_page - self.host_page_fill
    }
    /// Count `k` host slots written (at most the page's rest); true when they completed a
    /// page (the next slot goes to the next die).
    #[inline]
    fn host_page_done(&mut self, slots_per_page: u32, k: u32) -> bool {
        self.host_page_fill += k;
        if self.host_page_fill == slots_per_page {
            self.host_page_fill = 0;
            return true;
        }
        false
    }
    pub fn used_blocks(&self, d: u32, written: &[u32]) -> u32 {
        (d * self.bpd..(d + 1) * self.bpd)
            .filter(|&b| written[b as usize] > 0)
            .count() as u32
    }
    /// Every free pool in order, die by die (tests only: the order decides which block
    /// opens next).
    #[cfg(feature = "verify")]
    pub fn pool_order(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for p in self.free.iter().chain(&self.free_static) {
            out.push(NONE);
            out.extend(&p.erased);
            out.push(NONE);
            out.extend(&p.dirty);
        }
        out
    }
    /// Every open block (they are not GC candidates).
    pub fn open_blocks(&self) -> impl Iterator<Item = u32> + '_ {
        self.open.iter().map(|o| o.block).filter(|&b| b != NONE)
    }
    fn pool(&mut self, b: u32) -> &mut Pool {
        let d = (b / self.bpd) as usize;
        if self.is_static(b) {
            &mut self.free_static[d]
        } else {
            &mut self.free[d]
        }
    }
    /// Block `b` was erased: back to its pool.
    pub(crate) fn release(&mut self, b: u32) {
        self.pool(b).erased.push(b);
    }
    /// Block `b` holds only stale data: back to its pool, to be erased before reuse.
    pub(crate) fn release_dirty(&mut self, b: u32) {
        self.pool(b).dirty.push(b);
    }
    /// Take a dirty block of die `d` to erase in the background (general pool first).
    pub(crate) fn take_dirty(&mut self, d: u32) -> Option<u32> {
        self.free[d as usize]
            .dirty
            .pop()
            .or_else(|| self.free_static[d as usize].dirty.pop())
    }
}

impl Ftl {
    /// Stripe host data page by page over all dies: in die order, or (dynamic striping)
    /// to the die free first at `t`, the next in die order on a tie.
    #[inline]
    pub(crate) fn advance_host_cursor(&mut self, t: u64) {
        self.advance_host_cursor_by(1, t);
    }

    /// `advance_host_cursor` after `k` slots of the host page, the last written at `t`.
    #[inline(always)]
    pub(crate) fn advance_host_cursor_by(&mut self, k: u32, t: u64) {
        let g = &self.nand.geo;
        if !self.alloc.host_page_done(g.slots_per_page, k) {
            return;
        }
        let dies = g.dies;
        let next = |d: u32| if d + 1 == dies { 0 } else { d + 1 };
        let mut best = next(self.alloc.host_die);
        // Steer around a die busy collecting (GC or folding) or erasing (a released block
        // taken before idle time erased it); a die free at `t` is as free as any.
        // Otherwise the next die in order: its turn comes as its last program ends, so
        // searching would find it anyway (and cost a scan per host page). An erase is not
        // such a turn: the host would wait for it with the buffer full of that die's pages
        // while the other dies idle.
        if self.alloc.dynamic
            && (self.collecting_on(best) || self.nand.erasing(best, t))
            && self.nand.die_free(best) > t
        {
            let mut best_free = self.nand.die_free(best);
            let mut d = best;
            for _ in 1..dies {
                d = next(d);
                let free = self.nand.die_free(d);
                if free < best_free {
                    (best, best_free) = (d, free);
                    if free <= t {
                        break; // free now: none is freer
                    }
                }
            }
        }
        // A die down to its reserve whose closed blocks are all fully valid has no room
        // for host data (GC would free nothing): the controller writes the next die that
        // has. Dies fill unevenly when pages are steered around busy ones (a conversion
        // of cached data running on some dies only) and GC keeps data on its die.
        // (a die collecting has room by that rule: no call for the common case after
        // random writes, where the dies collect through whole passes)
        if self.near_reserve(best) && !self.collecting_on(best) {
            best = self.die_with_room(best);
        }
        self.alloc.host_die = best;
    }

    /// Capacity (slots) of block `b` in its current mode.
    #[inline]
    pub(crate) fn block_cap(&self, b: u32) -> u32 {
        if self.map.is_slc(b) {
            self.nand.geo.slc_slots_per_block()
        } else {
            self.nand.geo.slots_per_block
        }
    }

    /// Take the next slot of `stream` on die `d`, for data available at `t`. Opens a
    /// block (running foreground GC first if free blocks are short) and issues the
    /// program once a unit is complete. Returns (slot, block).
    #[inline(always)]
    pub(crate) fn alloc_slot(
        &mut self,
        stream: Stream,
        d: u32,
        t: u64,
    ) -> Result<(u32, u32), SimError> {
        self.alloc_run(stream, d, t, 1).map(|(s, b, _)| (s, b))
    }

    /// Take up to `want` consecutive slots of `stream` on die `d` for data available at
    /// `t`: as many as the open block takes before it fills or a program unit completes,
    /// whose bookkeeping is then only counters (GC moves a victim page at a time this
    /// way); at those edges, one slot the full way. Returns (first slot, block, count).
    #[inline(always)]
    pub(crate) fn alloc_run(
        &mut self,
        stream: Stream,
        d: u32,
        t: u64,
        want: u32,
    ) -> Result<(u32, u32, u32), SimError> {
        let o = &mut self.alloc.open[d as usize * STREAMS + stream as usize];
        if o.block != NONE {
            let (b, slc) = (o.block, o.slc);
            let off = self.map.written[b as usize];
            // fill < unit always: a complete unit is programmed at once.
            let k = want.min(o.cap - off).min(o.unit - 1 - o.fill);
            if k > 0 {
                o.fill += k;
                o.ready = o.ready.max(t);
                self.map.written[b as usize] = off + k;
                self.count_slots(slc, k);
                return Ok((b * self.nand.geo.slots_per_block + off, b, k));
            }
        }
        let (s, b) = self.alloc_slot_edge(stream, d, t)?;
        Ok((s, b, 1))
    }

    #[inline]
    fn count_slots(&mut self, slc: bool, k: u32) {
        if slc {
            self.counters.nand_slc_slots += k as u64;
        } else {
            self.counters.nand_native_slots += k as u64;
        }
    }

    /// `alloc_slot` when the slot opens a block or completes a program unit.
    #[inline(never)]
    fn alloc_slot_edge(&mut self, stream: Stream, d: u32, t: u64) -> Result<(u32, u32), SimError> {
        let i = d as usize * STREAMS + stream as usize;
        let mut b = self.alloc.open[i].block;
        if b == NONE || self.map.written[b as usize] == self.alloc.open[i].cap {
            if b != NONE {
                let slc = self.alloc.open[i].slc;
                self.map.close(b, !(slc && self.alloc.is_static(b)));
                if slc {
                    self.slc.on_close(b, d);
                }
                self.alloc.open[i].block = NONE;
            }
            b = self.open_new(stream, d, t)?;
            let slc = self.map.is_slc(b);
            let (cap, unit) = (self.block_cap(b), self.nand.timing(slc).unit_slots);
            // A unit being gathered carries over into the new block.
            let o = &mut self.alloc.open[i];
            (o.block, o.slc, o.cap, o.unit) = (b, slc, cap, unit);
        }
        let off = self.map.written[b as usize];
        self.map.written[b as usize] = off + 1;
        let o = &mut self.alloc.open[i];
        let (slc, unit) = (o.slc, o.unit);
        o.fill += 1;
        o.ready = o.ready.max(t);
        if o.fill == unit {
            let ready = o.ready;
            (o.fill, o.ready) = (0, 0);
            let bytes = unit as u64 * SLOT_BYTES;
            if Ftl::stream_is_host(stream) {
                let done = self.nand.program(ready, d, slc, bytes);
                self.buffer.release_at(done, unit as u64);
            } else if self.staging.limited() {
                // A GC unit waits for a staging buffer and holds it until programmed.
                let (i, at) = self.staging.acquire(ready);
                let done = self.nand.program(at, d, slc, bytes);
                self.staging.hold(i, done);
            } else {
                self.nand.program(ready, d, slc, bytes);
            }
        }
        self.count_slots(slc, 1);
        Ok((b * self.nand.geo.slots_per_block + off, b))
    }

    fn open_new(&mut self, stream: Stream, d: u32, t: u64) -> Result<u32, SimError> {
        let (b, mode) = match stream {
            Stream::HostSlc => match self.alloc.free_static[d as usize].pop() {
                Some((b, dirty)) => {
                    if dirty {
                        self.nand.erase(t, d);
                    }
                    (b, SLC_STATIC)
                }
                None => {
                    self.ensure_free(d, t)?;
                    (self.take_free(d, t)?, SLC_DYNAMIC)
                }
            },
            Stream::HostNative => {
                self.ensure_free(d, t)?;
                (self.take_free(d, t)?, NATIVE)
            }
            // GC may dig into the reserve the threshold keeps for it.
            Stream::Gc => (self.take_free(d, t)?, NATIVE),
        };
        self.map.set_mode(b, mode);
        self.nand.retry.on_open(b, t);
        // Opening a block changes the room GC has to finish in.
        self.urge(d);
        Ok(b)
    }

    /// A free block of die `d` for data arriving at `t`; a released block that still
    /// holds stale data is erased first (inline: no erased block was left).
    fn take_free(&mut self, d: u32, t: u64) -> Result<u32, SimError> {
        let (b, dirty) = self.alloc.free[d as usize].pop().ok_or_else(|| {
            SimError(format!(
                "die {d} ran out of free blocks (spare area too small for GC)"
            ))
        })?;
        if dirty {
            self.nand.erase(t, d);
        }
        Ok(b)
    }
}
