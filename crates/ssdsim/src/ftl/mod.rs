//! Flash translation layer: page mapping, block allocation with striping over dies,
//! greedy GC, the SLC write cache and the mapping-table cache, all driving the NAND
//! timelines. One `Ftl` is one drive's firmware state.

pub mod alloc;
pub mod checkpoint;
pub mod cmt;
pub mod footprint;
pub mod gc;
pub mod gc_engines;
pub mod mapping;
pub mod read_ahead;
pub mod relocation;
pub mod release;
pub mod slc;
pub mod staging;
pub mod verify;
pub mod write_run;

use crate::host::WriteBuffer;
use crate::nand::{transfer_ns, Nand, SLOT_BYTES};
use crate::profile::Profile;
use crate::SimError;
use alloc::{Alloc, Stream};
use checkpoint::Checkpoint;
use cmt::Cmt;
use gc_engines::GcEngines;
use mapping::{Mapping, NONE};
use read_ahead::ReadAhead;
use slc::SlcCache;
use staging::Staging;

/// The block named for mapping-page reads: none of the data's blocks.
const MAP_BLOCK: u32 = u32::MAX;

/// Cumulative internal counters (bytes are 4 KiB slots unless named otherwise).
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    pub host_write_slots: u64,
    pub nand_slc_slots: u64,
    pub nand_native_slots: u64,
    pub map_write_bytes: u64,
    pub gc_moves: u64,
    pub slc_fold_slots: u64,
    /// Times a die ran out of free blocks and GC stopped host writes to it until a whole
    /// victim was collected (the hard stop; each one is a latency spike).
    pub gc_stalls: u64,
}

#[derive(Clone)]
pub struct Ftl {
    pub nand: Nand,
    pub map: Mapping,
    pub alloc: Alloc,
    pub slc: SlcCache,
    pub cmt: Cmt,
    pub ra: ReadAhead,
    pub buffer: WriteBuffer,
    pub counters: Counters,
    pub user_slots: u64,
    /// Per die: the victim it is collecting, if any.
    gc_jobs: Vec<gc::GcJob>,
    pub(crate) gc_engines: GcEngines,
    pub(crate) staging: Staging,
    /// Write sequence number of the data in each physical slot (tests only): lets the
    /// property tests check that a read finds the version last written.
    #[cfg(feature = "verify")]
    pub stamps: Vec<u64>,
    #[cfg(feature = "verify")]
    pub write_seq: u64,
    /// Host writes may go as runs (`write_run`), TRIMs drop a block's copies together
    /// (`Mapping::unmap_range`) and host reads gather a page's blocks in one loop
    /// (`read_slots`); off, every slot goes through `write_slot`, `unmap` and the read
    /// loop's full step (the property tests compare the two).
    #[cfg(feature = "verify")]
    pub runs: bool,
    /// Host slots written as part of a run (tests only).
    #[cfg(feature = "verify")]
    pub run_slots: u64,
    /// GC steps batch a victim page's slots into runs (`gc_runs`); off, each slot moves
    /// alone (`gc_step_slots`: the property tests compare the two).
    #[cfg(feature = "verify")]
    pub gc_batches: bool,
    gc_threshold: u32,
    pub(crate) gc_pace: f64,
    /// `ftl.gc_urgency`: the GC pace rises as a die's room runs short (see `urge`).
    pub(crate) gc_urgency: bool,
    idle_gc: bool,
    /// `ftl.release_dead`: blocks whose data is all stale are released at once.
    release_enabled: bool,
    /// `ftl.erase_at_open`: freed blocks wait unerased until they are opened.
    pub(crate) erase_at_open: bool,
    /// Idle GC's free-block target of each die: the drive's share spread evenly (the dies'
    /// targets differ by at most a block), so a share means the same on a drive of few
    /// blocks a die as on a large one.
    idle_gc_target: Vec<u32>,
    /// Write-idle time (ns) after which GC works in the background while the host reads.
    pub idle_gc_delay: u64,
    /// Controller time per flash read issued for the host (`host.read_op_us`), serial,
    /// and when the controller is free to issue the next.
    read_op: u64,
    read_op_busy: u64,
    /// The flash reads this command issued: (block, word line, issue time). A read of the
    /// other plane's page on a word line already read joins that read (one multi-plane read).
    read_ops: Vec<(u32, u32, u64)>,
    /// The dies an idle period still has work for (kept: `idle` runs every millisecond of
    /// a gap between commands).
    idle_left: Vec<u32>,
    /// The controller's read path for flash data (`host.read_mbps`, bytes per ms; 0 = no
    /// limit), and when it is free.
    read_path: u64,
    read_path_busy: u64,
    /// `mapping.checkpoint_gb`: the whole table is written when the journal is full.
    checkpoint: Checkpoint,
    /// Controller time per slot GC relocates in the write path (`ftl.gc_move_us`), and
    /// what is owed to the command core since the last `take_firmware_ns`.
    gc_move: u64,
    firmware_owed: u64,
    pub(crate) idle_gc_max_valid: u32,
}

impl Ftl {
    pub fn new(p: &Profile, buffer: WriteBuffer) -> Ftl {
        let nand = Nand::new(p);
        let g = nand.geo.clone();
        let user_slots = (p.user_capacity_gb * 1e9) as u64 / SLOT_BYTES;
        let static_per_die = g.static_slc_blocks_per_die(p);
        Ftl {
            map: Mapping::new(
                user_slots,
                g.total_blocks(),
                g.slots_per_block,
                g.blocks_per_die,
                g.dies,
            ),
            alloc: Alloc::new(&g, static_per_die, p.ftl.striping == "dynamic"),
            slc: SlcCache::new(p, &g, static_per_die),
            cmt: Cmt::new(p, user_slots),
            ra: ReadAhead::new(p.ftl.read_ahead_kib),
            buffer,
            counters: Counters::default(),
            user_slots,
            gc_jobs: vec![gc::GcJob::idle(); g.dies as usize],
            // As many engines as dies is no limit.
            gc_engines: GcEngines::new(if p.ftl.gc_engines >= g.dies {
                0
            } else {
                p.ftl.gc_engines
            }),
            staging: Staging::new(p.ftl.gc_buffers),
            #[cfg(feature = "verify")]
            stamps: vec![0; g.total_slots() as usize],
            #[cfg(feature = "verify")]
            write_seq: 0,
            #[cfg(feature = "verify")]
            runs: true,
            #[cfg(feature = "verify")]
            run_slots: 0,
            #[cfg(feature = "verify")]
            gc_batches: true,
            gc_threshold: p.ftl.gc_threshold_blocks,
            gc_pace: p.ftl.gc_pace,
            gc_urgency: p.ftl.gc_urgency,
            idle_gc: p.ftl.idle_gc,
            release_enabled: p.ftl.release_dead,
            erase_at_open: p.ftl.erase_at_open,
            idle_gc_delay: (p.ftl.idle_gc_delay_ms * 1e6) as u64,
            read_op: (p.host.read_op_us * 1000.0).round() as u64,
            read_op_busy: 0,
            read_ops: Vec::new(),
            idle_left: Vec::new(),
            read_path: (p.host.read_mbps * 1000.0).round() as u64,
            read_path_busy: 0,
            checkpoint: Checkpoint::new(p.mapping.checkpoint_gb),
            gc_move: (p.ftl.gc_move_us * 1000.0).round() as u64,
            firmware_owed: 0,
            idle_gc_max_valid: (g.slots_per_block as f64 * p.ftl.idle_gc_max_valid_pct / 100.0)
                as u32,
            idle_gc_target: gc::idle_targets(
                g.blocks_per_die,
                g.dies,
                p.ftl.idle_gc_target_pct,
                p.ftl.gc_threshold_blocks + 1,
            ),
            nand,
        }
    }

    /// Write one logical block arriving in the write buffer at `t`.
    #[inline]
    pub fn write_slot(&mut self, lba: u32, t: u64) -> Result<(), SimError> {
        let moves = self.counters.gc_moves;
        if self.cmt.enabled() {
            self.map_lookup(lba, true, t);
        }
        let die = self.alloc.host_die();
        let stream = match self.alloc.host_page_stream() {
            Some(stream) => stream,
            None => {
                let stream = self.choose_host_stream(die, t)?;
                self.alloc.begin_host_page(stream);
                stream
            }
        };
        let (s, b) = self.alloc_slot(stream, die, t)?;
        self.map.remap(lba, s, b);
        self.release_dead();
        self.gc_pace(die, t)?;
        #[cfg(feature = "verify")]
        {
            self.write_seq += 1;
            self.stamps[s as usize] = self.write_seq;
        }
        self.counters.host_write_slots += 1;
        // The journal logs every remapping: this write's and those of the GC it drove.
        if self.checkpoint.count(1 + self.counters.gc_moves - moves) {
            self.write_checkpoint(t);
        }
        self.advance_host_cursor(t);
        if self.gc_move > 0 {
            // GC done in the write path (paced, the hard stop, folds) costs the
            // controller firmware time per relocated slot.
            self.firmware_owed += (self.counters.gc_moves - moves) * self.gc_move;
        }
        Ok(())
    }

    /// Controller firmware time the write path's GC has used since the last call (ns):
    /// the command core is busy that long (see `Host::firmware`).
    #[inline]
    pub fn take_firmware_ns(&mut self) -> u64 {
        std::mem::take(&mut self.firmware_owed)
    }

    /// Read `n` consecutive logical blocks starting at `lba`, issued at `t`. Returns
    /// when the first and the last page of data are in the controller (a large command
    /// streams to the host from the first on); unmapped blocks need no flash access.
    pub fn read_slots(&mut self, lba: u32, n: u32, t: u64) -> (u64, u64) {
        let (mut first, mut last) = (u64::MAX, t);
        self.read_ops.clear();
        let mut last_map_page = NONE;
        let mut t_start = t;
        // The page being gathered: (page, issue time, slots asked for on it).
        let mut pending: Option<(u32, u64, u32)> = None;
        let (cmt, page_shift) = (self.cmt.enabled(), self.nand.geo.page_shift);
        // (tests compare it with slot by slot, `runs`)
        #[cfg(feature = "verify")]
        let gather = !cmt && self.runs;
        #[cfg(not(feature = "verify"))]
        let gather = !cmt;
        let mut i = 0;
        while i < n {
            let l = lba + i;
            i += 1;
            let s = self.map.slot(l);
            if s == NONE {
                // Unmapped: answered from the mapping table, no flash access.
                continue;
            }
            if cmt {
                let mp = self.cmt.map_page(l);
                if mp != last_map_page {
                    last_map_page = mp;
                    t_start = self.map_lookup(l, false, t);
                }
            }
            let page = s >> page_shift;
            let k = match &mut pending {
                Some((p, _, k)) if *p == page => {
                    *k += 1;
                    k
                }
                _ => {
                    if let Some((p, at, k)) = pending {
                        let ready = self.read_page(p, at, k);
                        (first, last) = (first.min(ready), last.max(ready));
                    }
                    &mut pending.insert((page, t_start, 1)).2
                }
            };
            if gather {
                // The blocks after it on the same page (sequential data) join it at once:
                // no mapping-cache lookup between them.
                while i < n {
                    let s = self.map.slot(lba + i);
                    if s == NONE || s >> page_shift != page {
                        break;
                    }
                    *k += 1;
                    i += 1;
                }
            }
        }
        if let Some((p, at, k)) = pending {
            let ready = self.read_page(p, at, k);
            (first, last) = (first.min(ready), last.max(ready));
        }
        let last = last.max(t_start);
        (first.min(last), last)
    }

    /// Host read of `k` slots of physical page `page` at `t`: tR, then over the channel
    /// the codewords asked for (ONFI change read column), or the whole page.
    fn read_page(&mut self, page: u32, mut t: u64, k: u32) -> u64 {
        let g = &self.nand.geo;
        let s = page << g.page_shift;
        let (b, off) = g.split_slot(s);
        let (d, plane) = (g.die_of_block(b), g.plane_of(off));
        let word_line = g.word_line(off);
        let bytes = if self.nand.partial_transfer {
            k
        } else {
            g.slots_per_page
        } as u64
            * SLOT_BYTES;
        if self.read_op > 0 {
            // A partner page is among the command's last few reads: striping puts a die's
            // next page one round of the dies later.
            let recent = self
                .read_ops
                .len()
                .saturating_sub(2 * (g.dies * g.planes) as usize);
            if let Some(&(_, _, at)) = self.read_ops[recent..]
                .iter()
                .rev()
                .find(|&&(lb, lw, _)| lb == b && lw == word_line)
            {
                // The other plane's page of a word line already read: one multi-plane read.
                t = t.max(at);
            } else {
                // The controller issues flash reads one at a time.
                t = t.max(self.read_op_busy) + self.read_op;
                self.read_op_busy = t;
                self.read_ops.push((b, word_line, t));
            }
        }
        let slc = self.map.is_slc(b);
        let ready = self.nand.host_read(t, d, plane, b, word_line, slc, bytes);
        if self.read_path == 0 {
            return ready;
        }
        // Decoded and moved one page after another by the controller's read path.
        self.read_path_busy = self.read_path_busy.max(ready) + transfer_ns(bytes, self.read_path);
        self.read_path_busy
    }

    /// Look up (and for writes, dirty) the mapping entry of `lba` at `t`; returns when
    /// the entry is available. A miss reads the mapping page from flash first and may
    /// write back a dirty one. Out of line: only drives with a mapping cache call it, and
    /// it holds a whole page read.
    #[inline(never)]
    fn map_lookup(&mut self, lba: u32, write: bool, t: u64) -> u64 {
        let a = self.cmt.access(lba, write);
        let mut ready = t + self.cmt.hit_ns;
        let g = &self.nand.geo;
        let (dies, planes, page_bytes) = (g.dies, g.planes, g.slots_per_page as u64 * SLOT_BYTES);
        if let Some(mp) = a.miss {
            // One entry is needed: its codeword, or the whole mapping page.
            let bytes = if self.nand.partial_transfer { SLOT_BYTES } else { page_bytes };
            // (mapping pages live in SLC blocks of their own: named here by a block no
            // data has and the map page's place on its plane, so each is its own page)
            let on_plane = mp / (dies * planes);
            ready = self.nand.host_read(t, mp % dies, (mp / dies) % planes, MAP_BLOCK, on_plane, true, bytes);
        }
        if let Some(mp) = a.writeback {
            self.nand.program(t, mp % dies, true, page_bytes);
            self.counters.map_write_bytes += page_bytes;
        }
        ready
    }

    pub fn trim(&mut self, lba: u32, n: u32) {
        self.ra.forget();
        #[cfg(feature = "verify")]
        if !self.runs {
            for l in lba..lba + n {
                if self.cmt.enabled() && self.map.slot(l) != NONE {
                    self.cmt.access(l, true);
                }
                self.map.unmap(l);
            }
            self.release_dead();
            return;
        }
        let cmt = &mut self.cmt;
        if cmt.enabled() {
            self.map.unmap_range(lba, n, |l| {
                cmt.access(l, true);
            });
        } else {
            self.map.unmap_range(lba, n, |_| {});
        }
        self.release_dead();
    }

    /// Secure erase: every block erased, nothing mapped. Returns the time it took (ns).
    pub fn purge(&mut self, t: u64) -> u64 {
        let g = self.nand.geo.clone();
        let mut end = t;
        for d in 0..g.dies {
            let used =
                (self.alloc.used_blocks(d, &self.map.written) + self.alloc.dirty_count(d)) as u64;
            end = end.max(t.max(self.nand.die_free(d)) + used * self.nand.erase);
            self.nand.ops.erases += used;
        }
        self.map.clear();
        self.gc_jobs.iter_mut().for_each(gc::GcJob::reset);
        self.gc_engines.reset(end);
        self.staging.reset(end);
        self.alloc.reset(&g);
        self.slc.reset();
        self.cmt.reset();
        self.ra.forget();
        self.buffer.clear();
        self.read_op_busy = 0;
        self.read_ops.clear();
        self.read_path_busy = 0;
        self.checkpoint.reset();
        self.firmware_owed = 0;
        self.nand.advance_to(end);
        end
    }

    /// Background work in idle time [t, end): erase released blocks, fold the SLC
    /// cache, then GC up to the idle free-block target, die by die, while the die has
    /// time left. A block is moved `chunk` slots at a time (u32::MAX: whole): in an idle
    /// period a program unit, as firmware takes host commands between background
    /// operations, so what is left of a block at `end` does not hold the die for the
    /// whole block (seconds of a QLC block) once the host is back: it is GC for room like
    /// any other (`gc_pace`). Returns whether work is left for after `end` (false: quiet).
    pub fn idle(&mut self, t: u64, end: u64, chunk: u32) -> Result<bool, SimError> {
        let dies = self.nand.geo.dies;
        // Whole blocks: die by die. In chunks: always the die free first, so that the
        // dies' chunks interleave on the channels they share as they would in time (die
        // by die, the first dies' many small transfers fill the channels' timelines and
        // starve the dies after them).
        let mut left = std::mem::take(&mut self.idle_left);
        left.clear();
        left.extend(0..dies);
        let mut busy = false;
        while !left.is_empty() {
            let i = if chunk == u32::MAX {
                0
            } else {
                (0..left.len()).min_by_key(|&i| self.nand.die_free(left[i])).unwrap_or(0)
            };
            let d = left[i];
            let now = t.max(self.nand.die_free(d));
            if now >= end {
                busy = true;
                left.remove(i);
                continue;
            }
            if self.gc_jobs[d as usize].active() {
                // a chunk from the job's own times: its reads overlap its last programs
                self.gc_step(d, if chunk == u32::MAX { now } else { t }, chunk)?;
                continue;
            }
            if self.erase_dirty(d, now) {
                continue;
            }
            // With few GC engines the dies take turns: none left in this idle period.
            if self.gc_engines.earliest().is_some_and(|(_, free)| free >= end) {
                busy = true;
                left.remove(i);
                continue;
            }
            if self.slc.idle_fold && self.idle_start(d, now, true, chunk)? {
                continue;
            }
            if self.idle_gc_wanted(d) && self.idle_start(d, now, false, chunk)? {
                continue;
            }
            left.remove(i);
        }
        self.idle_left = left;
        Ok(busy)
    }

    /// When the last background operation ends (every die's timeline), from `t` on.
    pub fn quiet_at(&self, t: u64) -> u64 {
        (0..self.nand.geo.dies)
            .map(|d| self.nand.die_free(d))
            .fold(t, u64::max)
    }

    pub fn free_blocks(&self) -> u64 {
        (0..self.nand.geo.dies)
            .map(|d| self.alloc.free_count(d) as u64)
            .sum()
    }

    /// Valid data held in SLC-mode blocks (static and dynamic).
    pub fn slc_used_bytes(&self) -> u64 {
        self.slc_valid_slots() * SLOT_BYTES
    }

    pub(crate) fn slc_valid_slots(&self) -> u64 {
        self.map.valid_in[mapping::SLC_STATIC as usize]
            + self.map.valid_in[mapping::SLC_DYNAMIC as usize]
    }

    pub fn slc_capacity_bytes(&self) -> u64 {
        self.slc.capacity_slots(self.user_slots, self.map.mapped) * SLOT_BYTES
    }

    pub(crate) fn release_enabled(&self) -> bool {
        self.release_enabled
    }

    pub(crate) fn gc_threshold(&self) -> u32 {
        self.gc_threshold
    }

    pub(crate) fn stream_is_host(s: Stream) -> bool {
        s != Stream::Gc
    }
}
