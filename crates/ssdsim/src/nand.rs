//! NAND: geometry (channels x dies x planes x blocks x pages), per-mode timing, and the
//! busy timelines of every plane and channel. Times are integer nanoseconds of virtual time.

use crate::channel::Channel;
use crate::profile::check::check;
use crate::profile::{Profile, ProfileError};
use crate::retry::Retry;
use crate::util::fastdiv::Divisor;

/// Size of one mapping unit (a logical block / physical slot).
pub const SLOT_BYTES: u64 = 4096;

#[derive(Debug, Clone)]
pub struct Geometry {
    pub channels: u32,
    pub dies: u32,
    pub planes: u32,
    /// FTL block = one block from every plane of a die (multi-plane erase unit).
    pub blocks_per_die: u32,
    pub slots_per_page: u32,
    /// 4 KiB slots of a block in native mode.
    pub slots_per_block: u32,
    pub bits: u32,
    /// log2(slots_per_page): page sizes are powers of two.
    pub page_shift: u32,
    /// Slots per block, blocks per die and planes as divisors: every page read splits a slot
    /// into block and offset, and finds its die and word line.
    spb_div: Divisor,
    bpd_div: Divisor,
    planes_div: Divisor,
}

impl Geometry {
    pub fn from_profile(p: &Profile) -> Geometry {
        let n = &p.nand;
        let slots_per_page = n.page_kib / 4;
        let slots_per_block = n.planes * n.pages_per_block * slots_per_page;
        Geometry {
            channels: n.channels,
            dies: n.channels * n.dies_per_channel,
            planes: n.planes,
            blocks_per_die: n.blocks_per_plane,
            slots_per_page,
            slots_per_block,
            bits: p.bits(),
            page_shift: slots_per_page.trailing_zeros(),
            spb_div: Divisor::new(slots_per_block),
            bpd_div: Divisor::new(n.blocks_per_plane),
            planes_div: Divisor::new(n.planes),
        }
    }
    pub fn total_blocks(&self) -> u32 {
        self.dies * self.blocks_per_die
    }
    pub fn total_slots(&self) -> u64 {
        self.total_blocks() as u64 * self.slots_per_block as u64
    }
    pub fn raw_bytes(&self) -> u64 {
        self.total_slots() * SLOT_BYTES
    }
    pub fn block_bytes(&self) -> u64 {
        self.slots_per_block as u64 * SLOT_BYTES
    }
    /// Slots a block holds when run in SLC mode.
    pub fn slc_slots_per_block(&self) -> u32 {
        self.slots_per_block / self.bits
    }
    pub fn static_slc_blocks_per_die(&self, p: &Profile) -> u32 {
        let per_block = self.slc_slots_per_block() as f64 * SLOT_BYTES as f64;
        let total = (p.slc.static_gb * 1e9 / per_block).ceil() as u32;
        total.div_ceil(self.dies)
    }
    #[inline]
    pub fn die_of_block(&self, b: u32) -> u32 {
        self.bpd_div.quotient(b)
    }
    /// Block of physical slot `s`, and the slot's offset in it.
    #[inline]
    pub fn split_slot(&self, s: u32) -> (u32, u32) {
        let b = self.spb_div.quotient(s);
        (b, s - b * self.slots_per_block)
    }
    /// Word line of slot offset `off`: pages fill the planes in turn, a word line across them.
    #[inline]
    pub fn word_line(&self, off: u32) -> u32 {
        self.planes_div.quotient(off >> self.page_shift)
    }
    #[inline]
    pub fn channel_of_die(&self, d: u32) -> u32 {
        // Called for every NAND operation: a mask instead of a division where possible.
        if self.channels.is_power_of_two() {
            d & (self.channels - 1)
        } else {
            d % self.channels
        }
    }
    /// Plane holding slot offset `off` of a block: pages fill plane 0, 1, ... in turn.
    #[inline]
    pub fn plane_of(&self, off: u32) -> u32 {
        let page = off >> self.page_shift;
        if self.planes.is_power_of_two() {
            page & (self.planes - 1)
        } else {
            page % self.planes
        }
    }
}

/// The room the profile's geometry leaves, checked after each field's range
/// (`ssdsim::load_profile`): physical addresses fit 32 bits, static SLC leaves native
/// blocks on every die, and the user capacity fits the raw NAND less static SLC and the
/// GC reserve.
pub fn check_room(p: &Profile) -> Result<(), ProfileError> {
    let (f, s) = (&p.ftl, &p.slc);
    let g = Geometry::from_profile(p);
    check!(
        g.total_slots() < u32::MAX as u64 - 1,
        "nand geometry",
        format!("{} GiB raw", g.raw_bytes() >> 30),
        "below 16 TiB raw (32-bit physical addresses)"
    );
    let user_bytes = (p.user_capacity_gb * 1e9) as u64;
    let static_blocks = g.static_slc_blocks_per_die(p) as u64;
    check!(
        static_blocks + f.gc_threshold_blocks as u64 + 8 < g.blocks_per_die as u64,
        "slc.static_gb",
        s.static_gb,
        "small enough to leave native blocks on every die"
    );
    let native_blocks = g.blocks_per_die as u64 - static_blocks;
    // GC needs room for its threshold plus open blocks (host, SLC, GC) on every die.
    let reserve = f.gc_threshold_blocks as u64 + 4;
    let usable = (native_blocks.saturating_sub(reserve)) * g.dies as u64 * g.block_bytes();
    check!(
        user_bytes <= usable,
        "user_capacity_gb",
        p.user_capacity_gb,
        format!(
            "<= {:.3} (raw NAND {:.3} GB less static SLC and GC reserve blocks)",
            usable as f64 / 1e9,
            g.raw_bytes() as f64 / 1e9
        )
    );
    Ok(())
}

/// Timing of one cell mode, in ns.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub read: u64,
    pub prog: u64,
    /// Slots written by one (multi-plane) program operation on a die.
    pub unit_slots: u32,
}

/// Operation counts, for energy and for the internal counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpCounts {
    pub erases: u64,
    pub transfer_bytes: u64,
    /// The arrays' busy time sensing pages (read retries included) and programming them
    /// (ns): their energy follows it (`power::ops_energy_j`).
    pub read_ns: u64,
    pub program_ns: u64,
}

#[derive(Clone)]
pub struct Nand {
    pub geo: Geometry,
    pub slc: Timing,
    pub native: Timing,
    pub erase: u64,
    /// Native read time of each page type of a word line (`nand.native.read_levels`), and
    /// how many types there are (1: every page takes `native.read`).
    read_by_type: [u64; 4],
    page_types: u32,
    types_div: Divisor,
    /// Read retry of native reads as wear and retention move the cells' voltages
    /// (`nand.retry`, `nand.read_retry_pct`); it keeps every block's P/E count and age.
    pub retry: Retry,
    /// Channel speed in bytes per ms (see `transfer_ns`).
    ch_bytes_per_ms: u64,
    /// Channel time of one page, the size of every read and most programs (saves a
    /// division per operation).
    page_bytes: u64,
    page_xfer: u64,
    /// (bytes, channel ns) of a program unit in SLC and in native mode, the size of
    /// nearly every program.
    unit_xfer: [(u64, u64); 2],
    pub plane_busy: Vec<u64>,
    /// Per die, the latest of its planes' times (`die_free`, asked for every host page).
    die_busy: Vec<u64>,
    /// Per die, the end of its last erase (dynamic striping steers host pages around a
    /// die still erasing).
    erase_until: Vec<u64>,
    /// End of the last host read booked on each plane (host reads queue behind host
    /// reads only; see `host_read`).
    host_read_until: Vec<u64>,
    /// Program/erase suspend for host reads (`nand.read_suspend`), and its latency.
    suspend: bool,
    suspend_ns: u64,
    /// Per die, the suspension serving host reads now or last: the time its reads may
    /// start (reads arriving by then join it), and when the suspended operation may be
    /// suspended again: one program-verify step after its reads (see `host_read`).
    suspend_reads_from: Vec<u64>,
    resume_until: Vec<u64>,
    /// Per die, the end of the time its suspended work is held for host reads: reads
    /// on different planes at once hold it once, not once each.
    held_until: Vec<u64>,
    /// Per plane, the page its register holds from the last host read (block, page of
    /// the plane, when it was sensed): while nothing else has run on the plane since, a
    /// host read of the same page moves it out again without sensing it anew.
    register: Vec<(u32, u32, u64)>,
    /// Host reads move only the codewords they need (`nand.partial_transfer`).
    pub partial_transfer: bool,
    pub channels: Vec<Channel>,
    /// The controller's native program pipeline (`nand.native_write_mbps`), serving the
    /// dies in turn: when each die may next start a native program unit through it, the
    /// time one unit takes in it, and the time between a die's turns (0 = no limit).
    native_pipe_next: Vec<u64>,
    native_pipe_ns: u64,
    native_pipe_turn_ns: u64,
    native_pipe_bytes_per_ms: u64,
    pub ops: OpCounts,
}

/// Time to move `bytes` at `bytes_per_ms` (a NAND channel, the host link, the
/// controller's write path), in ns, rounded up.
pub(crate) fn transfer_ns(bytes: u64, bytes_per_ms: u64) -> u64 {
    (bytes * 1_000_000).div_ceil(bytes_per_ms)
}

fn ns(us: f64) -> u64 {
    (us * 1000.0).round().max(1.0) as u64
}

impl Nand {
    pub fn new(p: &Profile) -> Nand {
        let geo = Geometry::from_profile(p);
        let spp = geo.slots_per_page;
        let mk = |t: &crate::profile::ModeTiming| Timing {
            read: ns(t.read_us),
            prog: ns(t.prog_us),
            unit_slots: geo.planes * t.prog_pages * spp,
        };
        let slc = mk(&p.nand.slc);
        let native = if geo.bits == 1 {
            slc
        } else {
            mk(&p.nand.native)
        };
        // channel_mbps MB/s = channel_mbps * 1000 bytes per ms.
        let bytes_per_ms = (p.nand.channel_mbps * 1000.0).round().max(1.0) as u64;
        let page_bytes = spp as u64 * SLOT_BYTES;
        let unit = |t: &Timing| {
            let bytes = t.unit_slots as u64 * SLOT_BYTES;
            (bytes, transfer_ns(bytes, bytes_per_ms))
        };
        let pipe_bytes_per_ms = (p.nand.native_write_mbps * 1000.0).round() as u64;
        let native_unit_bytes = native.unit_slots as u64 * SLOT_BYTES;
        let levels = &p.nand.native.read_levels;
        let mut read_by_type = [native.read; 4];
        if geo.bits > 1 && levels.len() == geo.bits as usize {
            let mean = levels.iter().sum::<u32>() as f64 / levels.len() as f64;
            for (r, &l) in read_by_type.iter_mut().zip(levels) {
                *r = ns(p.nand.native.read_us * l as f64 / mean);
            }
        }
        let page_types = if geo.bits > 1 && !levels.is_empty() { geo.bits } else { 1 };
        Nand {
            read_by_type,
            page_types,
            types_div: Divisor::new(page_types),
            retry: Retry::new(p, geo.total_blocks()),
            native_pipe_next: vec![0; geo.dies as usize],
            native_pipe_ns: if pipe_bytes_per_ms > 0 { transfer_ns(native_unit_bytes, pipe_bytes_per_ms) } else { 0 },
            native_pipe_turn_ns: if pipe_bytes_per_ms > 0 {
                transfer_ns(native_unit_bytes * geo.dies as u64, pipe_bytes_per_ms)
            } else {
                0
            },
            native_pipe_bytes_per_ms: pipe_bytes_per_ms,
            page_bytes,
            page_xfer: transfer_ns(page_bytes, bytes_per_ms),
            unit_xfer: [unit(&native), unit(&slc)],
            plane_busy: vec![0; (geo.dies * geo.planes) as usize],
            die_busy: vec![0; geo.dies as usize],
            erase_until: vec![0; geo.dies as usize],
            host_read_until: vec![0; (geo.dies * geo.planes) as usize],
            register: vec![(u32::MAX, 0, 0); (geo.dies * geo.planes) as usize],
            suspend: p.nand.read_suspend,
            suspend_ns: (p.nand.suspend_us * 1000.0).round() as u64,
            suspend_reads_from: vec![0; geo.dies as usize],
            resume_until: vec![0; geo.dies as usize],
            held_until: vec![0; geo.dies as usize],
            partial_transfer: p.nand.partial_transfer,
            channels: vec![Channel::default(); geo.channels as usize],
            geo,
            slc,
            native,
            erase: ns(p.nand.erase_us),
            ch_bytes_per_ms: bytes_per_ms,
            ops: OpCounts::default(),
        }
    }

    pub fn timing(&self, slc: bool) -> &Timing {
        if slc {
            &self.slc
        } else {
            &self.native
        }
    }

    #[inline]
    pub fn xfer_ns(&self, bytes: u64) -> u64 {
        if bytes == self.page_bytes {
            return self.page_xfer;
        }
        transfer_ns(bytes, self.ch_bytes_per_ms)
    }

    /// Array read time of a page: SLC mode, or the native page type of page `wl_page`
    /// (its index among its plane's pages in the block) of block `b`, read at `t`, with
    /// its read retries: each failed decode costs one more read at the next retry entry's
    /// voltages.
    #[inline(always)]
    fn t_read(&mut self, slc: bool, wl_page: u32, b: u32, t: u64) -> u64 {
        if slc {
            self.ops.read_ns += self.slc.read;
            return self.slc.read;
        }
        let tr = if self.page_types == 1 {
            self.native.read
        } else {
            // wl_page % page_types (the page's type), without a division
            self.read_by_type[(wl_page - self.types_div.quotient(wl_page) * self.page_types) as usize]
        };
        let tr = tr * (1 + self.retry.steps(b, t) as u64);
        self.ops.read_ns += tr;
        tr
    }

    /// The time every plane of die `d` is free.
    #[inline]
    pub fn die_free(&self, d: u32) -> u64 {
        #[cfg(feature = "verify")]
        {
            let (p, s) = (
                self.geo.planes as usize,
                d as usize * self.geo.planes as usize,
            );
            assert_eq!(
                self.die_busy[d as usize],
                self.plane_busy[s..s + p].iter().copied().max().unwrap_or(0)
            );
        }
        self.die_busy[d as usize]
    }

    fn occupy_die(&mut self, d: u32, until: u64) {
        let p = self.geo.planes as usize;
        let s = d as usize * p;
        for b in &mut self.plane_busy[s..s + p] {
            *b = until;
        }
        self.die_busy[d as usize] = until;
    }

    /// Read one page from `plane` of die `d` (the `wl_page`th of its plane in block `b`)
    /// and move `bytes` over the channel.
    /// Returns when the data is in the controller. Inlined: GC reads a page every few
    /// relocations.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn read(&mut self, t: u64, d: u32, plane: u32, b: u32, wl_page: u32, slc: bool, bytes: u64) -> u64 {
        let ready = self.sense(t, d, plane, b, wl_page, slc);
        self.transfer_out(d, ready, bytes, false)
    }

    /// Sense one page into its plane's register; returns when it is there.
    #[inline(always)]
    fn sense(&mut self, t: u64, d: u32, plane: u32, b: u32, wl_page: u32, slc: bool) -> u64 {
        let pi = (d * self.geo.planes + plane) as usize;
        let tr = self.t_read(slc, wl_page, b, t);
        let start = t.max(self.plane_busy[pi]);
        let ready = start + tr;
        self.plane_busy[pi] = ready;
        let db = &mut self.die_busy[d as usize];
        *db = (*db).max(ready);
        ready
    }

    /// When the page (block `b`, `wl_page`) is still in the register of plane `pi` from a
    /// host read, the time it was sensed: nothing has been booked on the plane since (a
    /// program, an erase, another read, or an idle gap, `advance_to`, moves its time on).
    #[inline(always)]
    fn in_register(&self, pi: usize, b: u32, wl_page: u32) -> Option<u64> {
        let (rb, rp, at) = self.register[pi];
        (rb == b && rp == wl_page && self.plane_busy[pi] == at).then_some(at)
    }

    /// Move `bytes` read on die `d` (in its register from `ready`) over the channel, ahead
    /// of what the channel has booked for later (`first`, a host read) or in turn. Returns
    /// when the data is in the controller.
    #[inline(always)]
    fn transfer_out(&mut self, d: u32, ready: u64, bytes: u64, first: bool) -> u64 {
        let c = self.geo.channel_of_die(d) as usize;
        let x = self.xfer_ns(bytes);
        let start = if first {
            self.channels[c].book_first(ready, x)
        } else {
            self.channels[c].book(ready, x)
        };
        self.ops.transfer_bytes += bytes;
        start + x
    }

    /// A host read of one page from `plane` of die `d` (block `b`) issued at `t`, moving `bytes` over
    /// the channel. With read suspend, host reads go ahead of everything else the die
    /// and its channel have queued (GC reads, programs, erases, their transfers): the
    /// controller suspends a running program or erase, which takes `suspend_ns`, reads,
    /// and resumes it (Wu & He, FAST 2012); the work it displaced ends later by the time
    /// the read held the die. Host reads queue behind earlier host reads on the plane.
    /// Reads on different planes at once hold the die's work once. One suspension serves
    /// the reads that arrive while the die is being suspended; the
    /// resumed operation then runs to the end of its next program-verify step before it
    /// can be suspended again (a step is 2 x `suspend_ns`: suspending waits for the end
    /// of the current step, half a step on average), so a stream of reads slows programs
    /// and erases down but never stops them. Without suspend, a read waits for the plane
    /// like any operation. Inlined into the FTL's page read (a call of seven arguments
    /// cost about 20 instructions a page).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn host_read(&mut self, t: u64, d: u32, plane: u32, b: u32, wl_page: u32, slc: bool, bytes: u64) -> u64 {
        let pi = (d * self.geo.planes + plane) as usize;
        if let Some(at) = self.in_register(pi, b, wl_page) {
            // the page is still in the register (its other codewords were just moved
            // out): only the transfer, no sensing
            return self.transfer_out(d, t.max(at), bytes, self.suspend);
        }
        if !self.suspend {
            let ready = self.sense(t, d, plane, b, wl_page, slc);
            self.register[pi] = (b, wl_page, ready);
            return self.transfer_out(d, ready, bytes, false);
        }
        let di = d as usize;
        let busy = self.plane_busy[pi];
        let queued = self.host_read_until[pi];
        let tr = self.t_read(slc, wl_page, b, t);
        // When this read may start while other work is pending on the plane: in the
        // suspension being set up, in a new one now, or in the next one the resumed
        // operation allows.
        let (opens, reads_from) = if t <= self.suspend_reads_from[di] {
            (false, self.suspend_reads_from[di])
        } else {
            let at = t.max(self.resume_until[di]);
            (true, at + self.suspend_ns)
        };
        let ready = if busy <= t || busy <= queued || (opens && busy <= reads_from - self.suspend_ns) {
            // nothing but host reads ahead on the plane (or it is done by the time a
            // suspension could start): read after them
            let ready = t.max(busy).max(queued) + tr;
            self.plane_busy[pi] = ready;
            let db = &mut self.die_busy[di];
            *db = (*db).max(ready);
            ready
        } else {
            if opens {
                self.suspend_reads_from[di] = reads_from;
            }
            let from = reads_from.max(queued);
            let ready = from + tr;
            // the suspended work ends later by the read (and the suspension it opened),
            // less what reads on the die's other planes already hold it for
            let hold_from = if opens { (reads_from - self.suspend_ns).max(queued) } else { from };
            let held = ready.saturating_sub(hold_from.max(self.held_until[di]));
            self.held_until[di] = self.held_until[di].max(ready);
            let p = self.geo.planes as usize;
            let stop = reads_from - self.suspend_ns;
            let planes = &mut self.plane_busy[di * p..(di + 1) * p];
            for b in planes.iter_mut() {
                if *b > stop {
                    *b += held;
                }
            }
            self.die_busy[di] = planes.iter().copied().max().unwrap_or(0);
            self.resume_until[di] = self.resume_until[di].max(ready + 2 * self.suspend_ns);
            ready
        };
        self.host_read_until[pi] = ready;
        // (a read inside a suspension leaves the register to the resumed operation:
        // the plane's time is then that operation's end, not `ready`)
        self.register[pi] = (b, wl_page, ready);
        self.transfer_out(d, ready, bytes, true)
    }

    /// Transfer `bytes` to die `d` and program them (one multi-plane program operation).
    /// Returns when the program has finished.
    #[inline]
    pub fn program(&mut self, t: u64, d: u32, slc: bool, bytes: u64) -> u64 {
        let c = self.geo.channel_of_die(d) as usize;
        let (unit_bytes, unit_xfer) = self.unit_xfer[slc as usize];
        let x = if bytes == unit_bytes { unit_xfer } else { self.xfer_ns(bytes) };
        // A native program's data passes the controller's native pipeline (ECC encode,
        // program scheduling) before it goes to the die. The pipeline serves the dies in
        // turn, so each die has 1/dies of its rate: a die's native programs start at least
        // a turn apart, whatever order the FTL books them in (GC and idle folds book a
        // die's work ahead of the others').
        let t = if !slc && self.native_pipe_ns > 0 {
            let (e, turn) = if bytes == unit_bytes {
                (self.native_pipe_ns, self.native_pipe_turn_ns)
            } else {
                let e = transfer_ns(bytes, self.native_pipe_bytes_per_ms);
                (e, e * self.geo.dies as u64)
            };
            let next = &mut self.native_pipe_next[d as usize];
            let start = t.max(*next);
            *next = start + turn;
            start + e
        } else {
            t
        };
        let loaded = self.channels[c].book(t, x) + x;
        let tp = if slc { self.slc.prog } else { self.native.prog };
        let done = loaded.max(self.die_free(d)) + tp;
        self.occupy_die(d, done);
        self.ops.program_ns += tp;
        self.ops.transfer_bytes += bytes;
        done
    }

    /// Erase one (multi-plane) block on die `d`.
    pub fn erase(&mut self, t: u64, d: u32) -> u64 {
        let done = t.max(self.die_free(d)) + self.erase;
        self.occupy_die(d, done);
        self.erase_until[d as usize] = done;
        self.ops.erases += 1;
        done
    }

    /// Die `d` has an erase booked that ends after `t`.
    #[inline]
    pub fn erasing(&self, d: u32, t: u64) -> bool {
        self.erase_until[d as usize] > t
    }

    /// Move every timeline to at least `t` (after a purge or an idle gap).
    pub fn advance_to(&mut self, t: u64) {
        for b in self.plane_busy.iter_mut() {
            *b = (*b).max(t);
        }
        for b in self.die_busy.iter_mut() {
            *b = (*b).max(t);
        }
        for b in self.host_read_until.iter_mut() {
            *b = (*b).max(t);
        }
        for c in self.channels.iter_mut() {
            c.advance_to(t);
        }
        for b in self.native_pipe_next.iter_mut() {
            *b = (*b).max(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Geometry;
    use crate::util::fastdiv::Divisor;
    use proptest::prelude::*;

    proptest! {
        // A page read's block, offset, die and word line without divisions are the divisions'.
        #[test]
        fn slot_arithmetic_matches_division(planes in 1u32..=6, pages in 1u32..3000, shift in 0u32..5,
                                            bpd in 1u32..5000, s in any::<u32>(), b in any::<u32>()) {
            let spb = (planes * pages) << shift;
            let g = Geometry {
                channels: 1, dies: 1, planes, blocks_per_die: bpd, slots_per_page: 1 << shift,
                slots_per_block: spb, bits: 3, page_shift: shift,
                spb_div: Divisor::new(spb), bpd_div: Divisor::new(bpd), planes_div: Divisor::new(planes),
            };
            prop_assert_eq!(g.split_slot(s), (s / spb, s % spb));
            prop_assert_eq!(g.word_line(s % spb), ((s % spb) >> shift) / planes);
            prop_assert_eq!(g.die_of_block(b), b / bpd);
        }
    }
}
