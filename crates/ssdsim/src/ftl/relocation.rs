//! Relocation: one GC step moves up to `n` valid slots of a die's victim into the die's
//! GC stream, and erases the victim once it holds no valid slot (moved, or overwritten
//! by the host meanwhile). Upcoming victim slots wait in the job's queue; the L2P entry
//! of each is prefetched `AHEAD` relocations before its use. The valid slots of one
//! victim page move together: one read, then runs of destination slots.
//!
//! A paced step moves two slots on average, so what it costs besides the moves counts:
//! the step works on the job in place, with the mapping, allocation and NAND borrowed
//! apart from it, and only a run that meets an edge of the open GC block (a new block, a
//! complete program unit: 1 in 24 slots on TLC) goes out of line through `alloc_run`.

use super::alloc::{Alloc, Stream};
use super::gc::{GcJob, AHEAD, CHUNK};
use super::mapping::{at, at_mut, Mapping, NONE};
use super::{Counters, Ftl};
use crate::nand::SLOT_BYTES;
use crate::SimError;

/// Victim slots gathered for the open GC block but not placed yet: queue[start..start +
/// len], whose reads are done by `ready`; `room` slots fit before the block's next edge.
struct Batch {
    start: usize,
    len: u32,
    ready: u64,
    room: u32,
}

/// What a step's fast path works on besides its job: borrowed apart from the job, so
/// the job stays in place.
struct Parts<'a> {
    map: &'a mut Mapping,
    alloc: &'a mut Alloc,
    counters: &'a mut Counters,
    #[cfg(feature = "verify")]
    stamps: &'a mut [u64],
}

impl Parts<'_> {
    /// Place the batched runs (all on the fast path of allocation: only counts, as
    /// `alloc_run` does there) and empty the batch.
    #[inline(always)]
    fn place(&mut self, d: u32, victim: u32, spb: u32, queue: &[(u32, u32)], batch: &mut Batch) {
        let m = batch.len;
        if m == 0 {
            return;
        }
        let written = &mut self.map.written;
        let (b, off, slc) = self.alloc.take_run(d, Stream::Gc, written, batch.ready, m);
        if slc {
            self.counters.nand_slc_slots += m as u64;
        } else {
            self.counters.nand_native_slots += m as u64;
        }
        let s = batch.start;
        let run = &queue[s..s + m as usize];
        let to = b * spb + off;
        self.map.relocate(victim, run, to, b);
        #[cfg(feature = "verify")]
        for (x, &(from, _)) in run.iter().enumerate() {
            self.stamps[to as usize + x] = self.stamps[from as usize];
        }
        batch.start += m as usize;
        batch.room -= m;
        batch.len = 0;
        batch.ready = 0;
    }
}

impl Ftl {
    /// Move up to `n` valid slots of die `d`'s victim at `t` (the die is collecting);
    /// erase the victim once it holds no valid slot.
    pub(crate) fn gc_step(&mut self, d: u32, t: u64, mut n: u32) -> Result<(), SimError> {
        let job = at_mut(&mut self.gc_jobs, d as usize);
        debug_assert!(job.active());
        if job.last_page == NONE {
            job.ready = t;
            job.done = t;
        }
        let mut moved = 0;
        #[cfg(feature = "verify")]
        if !self.gc_batches {
            return self.gc_step_slots(d, t, n);
        }
        while let Some((start, k)) = self.gc_runs(d, t, &mut n, &mut moved) {
            self.gc_edge_run(d, start, k)?;
        }
        let job = at_mut(&mut self.gc_jobs, d as usize);
        self.counters.gc_moves += moved;
        if job.slc {
            self.counters.slc_fold_slots += moved;
        }
        if *at(&self.map.valid, job.victim as usize) == 0 {
            self.gc_erase(d, t);
        }
        Ok(())
    }

    /// The step's runs while the open GC block takes them on its fast path: each run is
    /// the queued slots of one victim page still valid (the host may have overwritten
    /// some since they were queued), at most `n`, compacted in place after the batch as
    /// (slot, logical block); runs wait in the batch and are placed together (their
    /// `ready` the latest of their reads). Returns a run that meets an edge (its start in
    /// the queue and length), the batch before it placed, or None when the step is done.
    /// The valid count still includes batched slots: if only they are left, the queue
    /// runs out first.
    #[inline(always)]
    fn gc_runs(&mut self, d: u32, t: u64, n: &mut u32, moved: &mut u64) -> Option<(usize, u32)> {
        let Ftl {
            gc_jobs,
            map,
            alloc,
            nand,
            counters,
            #[cfg(feature = "verify")]
            stamps,
            ..
        } = self;
        let mut parts = Parts {
            map,
            alloc,
            counters,
            #[cfg(feature = "verify")]
            stamps,
        };
        let job: &mut GcJob = at_mut(gc_jobs, d as usize);
        let (spb, page_shift) = (nand.geo.slots_per_block, nand.geo.page_shift);
        let victim = job.victim;
        let written = *at(&parts.map.written, victim as usize);
        let base = victim * spb;
        let queue = &mut job.queue;
        let mut batch = Batch {
            start: job.head,
            len: 0,
            ready: 0,
            room: parts.alloc.run_room(d, Stream::Gc, &parts.map.written),
        };
        while *n > 0 && *at(&parts.map.valid, victim as usize) > 0 {
            if job.head == queue.len() {
                parts.place(d, victim, spb, queue, &mut batch);
                queue.clear();
                job.head = 0;
                batch.start = 0;
            }
            if queue.len() - job.head < AHEAD && job.next < written {
                job.next = parts.map.valid_slots_from::<CHUNK>(victim, job.next, queue);
            }
            let Some(&(first, _)) = queue.get(job.head) else {
                break;
            };
            let page = first >> page_shift;
            let start = batch.start + batch.len as usize;
            let (mut h, mut k) = (job.head, 0);
            {
                let (q, map) = (&mut queue[..], &*parts.map);
                while k < *n as usize && h < q.len() {
                    let (off, lba) = q[h];
                    if off >> page_shift != page {
                        break;
                    }
                    h += 1;
                    // One prefetch per relocation (the queue is filled long before its
                    // entries come within AHEAD of the head).
                    if let Some(&(_, ahead)) = q.get(h + AHEAD - 1) {
                        map.prefetch_l2p(ahead);
                    }
                    if map.is_valid(base + off) {
                        // start + k < h <= q.len().
                        *at_mut(q, start + k) = (base + off, lba);
                        k += 1;
                    }
                }
            }
            job.head = h;
            if k == 0 {
                continue;
            }
            if page != job.last_page {
                job.last_page = page;
                let g = &nand.geo;
                let (plane, wl_page) = (g.plane_of(first), g.word_line(first));
                let page_bytes = g.slots_per_page as u64 * SLOT_BYTES;
                job.ready = nand.read(t, d, plane, victim, wl_page, job.slc, page_bytes);
                job.done = job.done.max(job.ready);
            }
            *moved += k as u64;
            *n -= k as u32;
            if batch.len + k as u32 <= batch.room {
                batch.len += k as u32;
                batch.ready = batch.ready.max(job.ready);
                continue;
            }
            parts.place(d, victim, spb, queue, &mut batch);
            return Some((start, k as u32));
        }
        parts.place(d, victim, spb, queue, &mut batch);
        None
    }

    /// Place the run queue[start..start + k] of die `d`'s victim, which meets an edge of
    /// the open GC block: slot by slot at the edges, runs between them. The jobs are out
    /// of `self` meanwhile, so a GC block opened here leaves the pace alone (`urge`).
    #[inline(never)]
    fn gc_edge_run(&mut self, d: u32, start: usize, k: u32) -> Result<(), SimError> {
        let jobs = std::mem::take(&mut self.gc_jobs);
        let job = &jobs[d as usize];
        let mut r = Ok(());
        let mut j = 0;
        while j < k {
            let (to, tb, m) = match self.alloc_run(Stream::Gc, d, job.ready, k - j) {
                Ok(x) => x,
                Err(e) => {
                    r = Err(e);
                    break;
                }
            };
            let s = start + j as usize;
            let run = &job.queue[s..s + m as usize];
            self.map.relocate(job.victim, run, to, tb);
            #[cfg(feature = "verify")]
            for (x, &(from, _)) in run.iter().enumerate() {
                self.stamps[to as usize + x] = self.stamps[from as usize];
            }
            j += m;
        }
        self.gc_jobs = jobs;
        r
    }

    /// `gc_step` slot by slot, the reference the property tests hold the batched step to:
    /// each queued slot still valid has its page read (if not the last read) and goes
    /// through `alloc_run` and `relocate` alone, with the jobs out of `self` as at an edge.
    #[cfg(feature = "verify")]
    fn gc_step_slots(&mut self, d: u32, t: u64, mut n: u32) -> Result<(), SimError> {
        let mut jobs = std::mem::take(&mut self.gc_jobs);
        let job = &mut jobs[d as usize];
        let (spb, page_shift) = (self.nand.geo.slots_per_block, self.nand.geo.page_shift);
        let victim = job.victim;
        let (base, written) = (victim * spb, self.map.written[victim as usize]);
        let (mut moved, mut r) = (0, Ok(()));
        while n > 0 && self.map.valid[victim as usize] > 0 {
            if job.head == job.queue.len() {
                job.queue.clear();
                job.head = 0;
            }
            if job.queue.len() - job.head < AHEAD && job.next < written {
                job.next = self.map.valid_slots_from::<CHUNK>(victim, job.next, &mut job.queue);
            }
            let Some(&(off, lba)) = job.queue.get(job.head) else {
                break;
            };
            job.head += 1;
            if !self.map.is_valid(base + off) {
                continue;
            }
            let page = off >> page_shift;
            if page != job.last_page {
                job.last_page = page;
                let g = &self.nand.geo;
                let (plane, wl_page) = (g.plane_of(off), g.word_line(off));
                let page_bytes = g.slots_per_page as u64 * SLOT_BYTES;
                job.ready = self.nand.read(t, d, plane, victim, wl_page, job.slc, page_bytes);
                job.done = job.done.max(job.ready);
            }
            let (to, tb) = match self.alloc_run(Stream::Gc, d, job.ready, 1) {
                Ok((to, tb, _)) => (to, tb),
                Err(e) => {
                    r = Err(e);
                    break;
                }
            };
            self.map.relocate(victim, &[(base + off, lba)], to, tb);
            self.stamps[to as usize] = self.stamps[(base + off) as usize];
            moved += 1;
            n -= 1;
        }
        let slc = job.slc;
        self.gc_jobs = jobs;
        r?;
        self.counters.gc_moves += moved;
        if slc {
            self.counters.slc_fold_slots += moved;
        }
        if self.map.valid[victim as usize] == 0 {
            self.gc_erase(d, t);
        }
        Ok(())
    }

    /// Die `d`'s victim is empty: erase it at `t` (or once its last read is done) and
    /// return it to its pool (unerased with `erase_at_open`).
    #[inline(never)]
    fn gc_erase(&mut self, d: u32, t: u64) {
        let job = &mut self.gc_jobs[d as usize];
        let (victim, reclaim, done) = (job.victim, job.reclaim, job.done);
        job.reset();
        debug_assert_eq!(self.map.valid[victim as usize], 0);
        if reclaim {
            self.slc.on_folded();
        }
        self.forget_block(victim);
        if self.erase_at_open {
            // erased when it is next opened (alloc.rs `take_free`)
            self.gc_engines.release(d, done.max(t));
            self.alloc.release_dirty(victim);
        } else {
            let erased = self.nand.erase(done.max(t), d);
            self.gc_engines.release(d, erased);
            self.alloc.release(victim);
        }
    }
}
