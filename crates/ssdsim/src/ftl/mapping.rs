//! Page-level mapping: L2P (logical 4 KiB block -> physical slot) and P2L (slot -> logical
//! block), per-block valid counts and write pointers, and valid-count buckets of closed
//! blocks per die so greedy GC finds its victim in O(1) amortised.

use crate::util::fastdiv::Divisor;

pub const NONE: u32 = u32::MAX;

/// The cell mode a block runs in, as the mapping counts valid data by it.
pub const NATIVE: u8 = 0;
pub const SLC_STATIC: u8 = 1;
pub const SLC_DYNAMIC: u8 = 2;

/// Ask the CPU to start loading `v[i]`: the tables are far larger than the caches, and
/// random updates are bound by memory latency, so overlapping the misses is the speed.
/// Callers pass indices inside `v` (checked under `verify`); no bounds check otherwise, as
/// this runs once per relocation and a prefetch of any address is harmless.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(feature = "verify")]
    assert!(i < v.len());
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults or changes memory, and wrapping_add keeps the
    // address computation defined whatever `i` is.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            v.as_ptr().wrapping_add(i) as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        )
    }
}

/// A large zeroed table backed by transparent huge pages where the OS allows: L2P, P2L and
/// the valid bitmap are MBs to GBs accessed at random, and 4 KiB pages would make every
/// access a TLB miss. Zero is every table's empty value, so the memory comes from the OS
/// already zeroed and is touched only as the drive is written: a drive costs time and
/// memory for what it holds, not for its capacity (a 4 TB drive's tables are 8 GB).
fn table<T: Copy + Default>(n: usize) -> Vec<T> {
    // vec! of zeros allocates zeroed memory (calloc: fresh pages, not written here).
    let v: Vec<T> = vec![T::default(); n];
    let bytes = n * std::mem::size_of::<T>();
    #[cfg(target_os = "linux")]
    if bytes >= 4 << 20 {
        // madvise needs a page-aligned start; malloc's large blocks start just past one.
        let start = v.as_ptr() as usize;
        let aligned = (start + 4095) & !4095;
        let len = (start + bytes - aligned) & !4095;
        // SAFETY: advice on memory this Vec owns; failure is harmless.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
    v
}

/// A copy of a large table, made as `table` makes one (huge pages, zeroed memory from the
/// OS): chunks that are all zero are left untouched, so a copy of a drive costs memory for
/// what the drive holds, as the drive itself does.
fn table_copy<T: Copy + Default + PartialEq>(v: &[T]) -> Vec<T> {
    const CHUNK: usize = 1 << 16;
    let mut out = table::<T>(v.len());
    let zero = T::default();
    for (dst, src) in out.chunks_mut(CHUNK).zip(v.chunks(CHUNK)) {
        if src.iter().any(|x| *x != zero) {
            dst.copy_from_slice(src);
        }
    }
    out
}

/// Element `i` of `v` without a bounds check, for the few table accesses every host
/// write and GC relocation makes. Indices come from the tables themselves (slots below
/// the physical total, logical blocks below the user total), and builds with the
/// `verify` feature (the property tests) check them.
#[inline(always)]
pub(super) fn at<T>(v: &[T], i: usize) -> &T {
    #[cfg(feature = "verify")]
    assert!(i < v.len());
    // SAFETY: see above; i < v.len() by construction.
    unsafe { v.get_unchecked(i) }
}

#[inline(always)]
pub(super) fn at_mut<T>(v: &mut [T], i: usize) -> &mut T {
    #[cfg(feature = "verify")]
    assert!(i < v.len());
    // SAFETY: as for `at`.
    unsafe { v.get_unchecked_mut(i) }
}

pub struct Mapping {
    /// Slot of each logical block plus one; 0: not mapped (zero is the empty value of a
    /// freshly allocated table). Read it through `slot`.
    l2p: Vec<u32>,
    /// Logical block last written to each slot; meaningful only while the slot's valid
    /// bit is set (so invalidating a copy touches the small bitmap, not this table).
    pub p2l: Vec<u32>,
    /// One bit per physical slot: set while the slot holds the live copy of its block.
    vbits: Vec<u64>,
    pub valid: Vec<u32>,
    /// Each block's mode (NATIVE, SLC_STATIC, SLC_DYNAMIC), and the valid slots held in
    /// blocks of each mode: the SLC cache's occupancy follows its valid data.
    mode: Vec<u8>,
    pub valid_in: [u64; 3],
    /// Blocks in each mode (free blocks count as native).
    pub blocks_in: [u64; 3],
    /// Closed blocks whose last valid slot was overwritten or trimmed, for the FTL to
    /// release (firmware erases them in the background and reuses them).
    pub dead: Vec<u32>,
    /// Slots written so far in each block (its write pointer).
    pub written: Vec<u32>,
    pub mapped: u64,
    spb: u32,
    /// Slots per block and blocks per die as divisors (both on every host write).
    spb_div: Divisor,
    bpd_div: Divisor,
    // Doubly linked lists of closed blocks, one list per (die, valid count).
    next: Vec<u32>,
    prev: Vec<u32>,
    in_bucket: Vec<bool>,
    closed: Vec<bool>,
    heads: Vec<u32>,
    /// Per die: no non-empty bucket below this valid count.
    min_hint: Vec<u32>,
}

impl Clone for Mapping {
    /// The three large tables are copied as `table_copy` does; the rest as is.
    fn clone(&self) -> Mapping {
        Mapping {
            l2p: table_copy(&self.l2p),
            p2l: table_copy(&self.p2l),
            vbits: table_copy(&self.vbits),
            valid: self.valid.clone(),
            mode: self.mode.clone(),
            valid_in: self.valid_in,
            blocks_in: self.blocks_in,
            dead: self.dead.clone(),
            written: self.written.clone(),
            mapped: self.mapped,
            spb: self.spb,
            spb_div: self.spb_div,
            bpd_div: self.bpd_div,
            next: self.next.clone(),
            prev: self.prev.clone(),
            in_bucket: self.in_bucket.clone(),
            closed: self.closed.clone(),
            heads: self.heads.clone(),
            min_hint: self.min_hint.clone(),
        }
    }
}

impl Mapping {
    pub fn new(user_slots: u64, blocks: u32, spb: u32, bpd: u32, dies: u32) -> Mapping {
        let slots = blocks as usize * spb as usize;
        Mapping {
            l2p: table(user_slots as usize),
            p2l: table(slots),
            vbits: table(slots.div_ceil(64)),
            valid: vec![0; blocks as usize],
            mode: vec![NATIVE; blocks as usize],
            valid_in: [0; 3],
            blocks_in: [blocks as u64, 0, 0],
            dead: Vec::new(),
            written: vec![0; blocks as usize],
            mapped: 0,
            spb,
            spb_div: Divisor::new(spb),
            bpd_div: Divisor::new(bpd),
            next: vec![NONE; blocks as usize],
            prev: vec![NONE; blocks as usize],
            in_bucket: vec![false; blocks as usize],
            closed: vec![false; blocks as usize],
            heads: vec![NONE; dies as usize * (spb as usize + 1)],
            min_hint: vec![0; dies as usize],
        }
    }

    /// The die of block `b` and the index of its bucket list for valid count `v`.
    #[inline]
    fn bucket(&self, b: u32, v: u32) -> (usize, usize) {
        let die = self.bpd_div.quotient(b) as usize;
        (die, die * (self.spb as usize + 1) + v as usize)
    }

    /// Take block `b` out of its bucket list, whose head index is `h`.
    #[inline]
    fn unlink_at(&mut self, b: u32, h: usize) {
        let (p, n) = (*at(&self.prev, b as usize), *at(&self.next, b as usize));
        if p == NONE {
            *at_mut(&mut self.heads, h) = n;
        } else {
            *at_mut(&mut self.next, p as usize) = n;
        }
        if n != NONE {
            *at_mut(&mut self.prev, n as usize) = p;
        }
    }

    /// Put block `b` (valid count `v`, on `die`) at the head of list `h`.
    #[inline]
    fn link_at(&mut self, b: u32, h: usize, die: usize, v: u32) {
        let n = *at(&self.heads, h);
        *at_mut(&mut self.next, b as usize) = n;
        *at_mut(&mut self.prev, b as usize) = NONE;
        if n != NONE {
            *at_mut(&mut self.prev, n as usize) = b;
        }
        *at_mut(&mut self.heads, h) = b;
        let hint = at_mut(&mut self.min_hint, die);
        if v < *hint {
            *hint = v;
        }
    }

    fn unlink(&mut self, b: u32) {
        let (_, h) = self.bucket(b, self.valid[b as usize]);
        self.unlink_at(b, h);
    }

    fn link(&mut self, b: u32) {
        let v = self.valid[b as usize];
        let (die, h) = self.bucket(b, v);
        self.link_at(b, h, die, v);
    }

    /// A block is full. Greedy candidates join the buckets; static SLC blocks do not
    /// (collecting one frees no general block, so only folding reclaims them). A block
    /// whose data was all overwritten while it was open is dead at once.
    pub fn close(&mut self, b: u32, candidate: bool) {
        debug_assert!(!self.closed[b as usize]);
        self.closed[b as usize] = true;
        if candidate {
            self.in_bucket[b as usize] = true;
            self.link(b);
        }
        if self.valid[b as usize] == 0 {
            self.dead.push(b);
        }
    }

    #[inline]
    pub fn mode(&self, b: u32) -> u8 {
        *at(&self.mode, b as usize)
    }

    #[inline]
    pub fn is_slc(&self, b: u32) -> bool {
        self.mode(b) != NATIVE
    }

    /// Set the mode of block `b`, which holds no valid data (being opened or released).
    pub fn set_mode(&mut self, b: u32, mode: u8) {
        debug_assert_eq!(self.valid[b as usize], 0);
        self.blocks_in[self.mode[b as usize] as usize] -= 1;
        self.blocks_in[mode as usize] += 1;
        self.mode[b as usize] = mode;
    }

    /// Remove a closed block from the candidates (it is being collected).
    pub fn withdraw(&mut self, b: u32) {
        if self.in_bucket[b as usize] {
            self.unlink(b);
            self.in_bucket[b as usize] = false;
        }
        self.closed[b as usize] = false;
    }

    /// Block `b` is among the greedy candidates (closed, not static SLC, not collected).
    pub fn is_candidate(&self, b: u32) -> bool {
        self.in_bucket[b as usize]
    }

    pub fn is_closed(&self, b: u32) -> bool {
        self.closed[b as usize]
    }

    #[inline]
    pub fn is_valid(&self, s: u32) -> bool {
        at(&self.vbits, (s >> 6) as usize) >> (s & 63) & 1 == 1
    }
    #[inline]
    fn set_valid(&mut self, s: u32) {
        *at_mut(&mut self.vbits, (s >> 6) as usize) |= 1 << (s & 63);
    }
    #[inline]
    fn clear_valid(&mut self, s: u32) {
        *at_mut(&mut self.vbits, (s >> 6) as usize) &= !(1 << (s & 63));
    }

    /// Append to `out` the (offset, logical block) of up to `MAX` valid slots of block
    /// `b`, scanning from offset `from`; returns the offset to continue from. Gathered in
    /// a local array and appended at once (no capacity check per slot).
    pub fn valid_slots_from<const MAX: usize>(
        &self,
        b: u32,
        from: u32,
        out: &mut Vec<(u32, u32)>,
    ) -> u32 {
        let base = b as u64 * self.spb as u64;
        let end = base + self.spb as u64;
        let mut s = base + from as u64;
        let mut buf = [(0u32, 0u32); MAX];
        let mut k = 0;
        let mut next = self.spb;
        'scan: while s < end {
            let w = self.vbits[(s >> 6) as usize] >> (s & 63);
            let take = (64 - (s & 63)).min(end - s);
            let mut w = if take == 64 {
                w
            } else {
                w & ((1u64 << take) - 1)
            };
            while w != 0 {
                let slot = s + w.trailing_zeros() as u64;
                buf[k] = ((slot - base) as u32, *at(&self.p2l, slot as usize));
                w &= w - 1;
                k += 1;
                if k == MAX {
                    next = (slot + 1 - base) as u32;
                    break 'scan;
                }
            }
            s += take;
        }
        out.extend_from_slice(&buf[..k]);
        next
    }

    /// Mark physical slot `s` stale (its logical block was rewritten or trimmed).
    #[inline(always)]
    pub fn invalidate(&mut self, s: u32) {
        let b = self.spb_div.quotient(s);
        self.clear_valid(s);
        *at_mut(&mut self.valid_in, *at(&self.mode, b as usize) as usize) -= 1;
        let left = if self.in_bucket[b as usize] {
            self.bucket_down(b)
        } else {
            let v = at_mut(&mut self.valid, b as usize);
            *v -= 1;
            *v
        };
        if left == 0 && self.closed[b as usize] {
            self.dead.push(b);
        }
    }

    /// Decrement the valid count of bucketed block `b`, moving it to the head of the next
    /// lower bucket: `unlink`, decrement, `link` with one bucket computation (this runs on
    /// nearly every host write).
    #[inline]
    fn bucket_down(&mut self, b: u32) -> u32 {
        // v > 0: the slot being invalidated is counted in it.
        let v = *at(&self.valid, b as usize);
        let (die, h) = self.bucket(b, v);
        self.unlink_at(b, h);
        *at_mut(&mut self.valid, b as usize) = v - 1;
        self.link_at(b, h - 1, die, v - 1);
        v - 1
    }

    /// Point logical block `lba` at slot `s` (in block `b`), invalidating its previous copy.
    #[inline]
    pub fn remap(&mut self, lba: u32, s: u32, b: u32) {
        self.point(lba, s);
        *at_mut(&mut self.valid, b as usize) += 1;
        *at_mut(&mut self.valid_in, *at(&self.mode, b as usize) as usize) += 1;
    }

    /// `remap` of logical blocks `lba..lba + k` to slots `s..s + k` of block `b`, the
    /// block's counts raised once. Old copies in `b` itself are invalidated first; `b` is
    /// open (not closed, in no bucket), so only its count sees the order.
    #[inline]
    pub fn remap_run(&mut self, lba: u32, k: u32, s: u32, b: u32) {
        for j in 0..k {
            self.point(lba + j, s + j);
        }
        *at_mut(&mut self.valid, b as usize) += k;
        *at_mut(&mut self.valid_in, *at(&self.mode, b as usize) as usize) += k as u64;
    }

    /// `remap` but for the counts of `s`'s block, which are the caller's.
    #[inline(always)]
    fn point(&mut self, lba: u32, s: u32) {
        let old = *at(&self.l2p, lba as usize);
        if old == 0 {
            self.mapped += 1;
        } else {
            self.invalidate(old - 1);
        }
        *at_mut(&mut self.l2p, lba as usize) = s + 1;
        *at_mut(&mut self.p2l, s as usize) = lba;
        self.set_valid(s);
    }

    /// Move still-valid logical blocks from block `fb` to consecutive slots of block `tb`
    /// starting at `to` (GC relocation): `run` holds (slot, logical block) of each.
    #[inline(always)]
    pub fn relocate(&mut self, fb: u32, run: &[(u32, u32)], to: u32, tb: u32) {
        for (j, &(from, lba)) in run.iter().enumerate() {
            let to = to + j as u32;
            self.clear_valid(from);
            *at_mut(&mut self.l2p, lba as usize) = to + 1;
            *at_mut(&mut self.p2l, to as usize) = lba;
            self.set_valid(to);
        }
        let n = run.len() as u32;
        *at_mut(&mut self.valid, fb as usize) -= n;
        *at_mut(&mut self.valid, tb as usize) += n;
        let (mf, mt) = (*at(&self.mode, fb as usize), *at(&self.mode, tb as usize));
        *at_mut(&mut self.valid_in, mf as usize) -= n as u64;
        *at_mut(&mut self.valid_in, mt as usize) += n as u64;
    }

    /// `unmap` of logical blocks `lba..lba + n`, calling `mapped` with each that was
    /// mapped. Copies of consecutive blocks that lie in one physical block are dropped
    /// from its counts together: one move down the valid-count buckets instead of one per
    /// slot (a block moved down one bucket at a time ends at the head of the last, as it
    /// does moved at once, and dies at its last copy either way).
    pub fn unmap_range(&mut self, lba: u32, n: u32, mut mapped: impl FnMut(u32)) {
        let (mut block, mut copies) = (NONE, 0);
        for l in lba..lba + n {
            let old = *at(&self.l2p, l as usize);
            if old == 0 {
                continue;
            }
            mapped(l);
            let s = old - 1;
            let b = self.spb_div.quotient(s);
            if b != block {
                self.drop_copies(block, copies);
                (block, copies) = (b, 0);
            }
            self.clear_valid(s);
            *at_mut(&mut self.l2p, l as usize) = 0;
            copies += 1;
        }
        self.drop_copies(block, copies);
    }

    /// `m` valid copies in block `b` were invalidated (their bits already cleared).
    #[inline]
    fn drop_copies(&mut self, b: u32, m: u32) {
        if m == 0 {
            return;
        }
        self.mapped -= m as u64;
        *at_mut(&mut self.valid_in, *at(&self.mode, b as usize) as usize) -= m as u64;
        let left = if self.in_bucket[b as usize] {
            let v = *at(&self.valid, b as usize);
            let (die, h) = self.bucket(b, v);
            self.unlink_at(b, h);
            *at_mut(&mut self.valid, b as usize) = v - m;
            self.link_at(b, h - m as usize, die, v - m);
            v - m
        } else {
            let v = at_mut(&mut self.valid, b as usize);
            *v -= m;
            *v
        };
        if left == 0 && self.closed[b as usize] {
            self.dead.push(b);
        }
    }

    pub fn unmap(&mut self, lba: u32) {
        let old = self.l2p[lba as usize];
        if old != 0 {
            self.invalidate(old - 1);
            self.l2p[lba as usize] = 0;
            self.mapped -= 1;
        }
    }

    /// The slot holding logical block `lba`, NONE if it is not mapped.
    #[inline(always)]
    pub fn slot(&self, lba: u32) -> u32 {
        self.l2p[lba as usize].wrapping_sub(1)
    }

    /// Logical blocks the table maps (the user capacity in slots).
    pub fn user_slots(&self) -> usize {
        self.l2p.len()
    }

    /// The closed block of die `die` with the fewest valid slots (greedy victim).
    pub fn min_valid(&mut self, die: u32) -> Option<(u32, u32)> {
        let base = die as usize * (self.spb as usize + 1);
        let mut v = self.min_hint[die as usize];
        while v <= self.spb {
            let b = self.heads[base + v as usize];
            if b != NONE {
                self.min_hint[die as usize] = v;
                return Some((b, v));
            }
            v += 1;
        }
        self.min_hint[die as usize] = self.spb + 1;
        None
    }

    /// Every valid-count bucket list in order, die by die (tests only: the order decides
    /// which of equally valid blocks GC takes next).
    #[cfg(feature = "verify")]
    pub fn bucket_order(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (h, &head) in self.heads.iter().enumerate() {
            out.push(NONE - h as u32);
            let mut b = head;
            while b != NONE {
                out.push(b);
                b = self.next[b as usize];
            }
        }
        out
    }

    /// Warm the cache lines a write of `lba` will touch: first its L2P entry, then (once
    /// that is likely loaded) the P2L entry of its current copy.
    #[inline(always)]
    pub fn prefetch_l2p(&self, lba: u32) {
        prefetch(&self.l2p, lba as usize);
    }
    #[inline(always)]
    pub fn prefetch_old(&self, lba: u32) {
        let s = *at(&self.l2p, lba as usize);
        if s != 0 {
            prefetch(&self.vbits, ((s - 1) >> 6) as usize);
        }
    }

    /// The large tables as (start address, bytes), in the order a whole-drive write first
    /// touches them (util/prefault.rs): the valid bitmap, L2P in logical order, P2L.
    pub fn large_tables(&self) -> Vec<(usize, usize)> {
        fn range<T>(v: &[T]) -> (usize, usize) {
            (v.as_ptr() as usize, std::mem::size_of_val(v))
        }
        vec![range(&self.vbits), range(&self.l2p), range(&self.p2l)]
    }

    /// Forget everything (secure erase).
    pub fn clear(&mut self) {
        // Fresh zeroed tables rather than writing zeros: the old memory goes back to the OS.
        // P2L needs no reset (an entry counts only while its valid bit is set).
        let (lbas, words) = (self.l2p.len(), self.vbits.len());
        // the old tables go first, so a purge never holds two of them
        (self.l2p, self.vbits) = (Vec::new(), Vec::new());
        (self.l2p, self.vbits) = (table(lbas), table(words));
        self.valid.fill(0);
        self.mode.fill(NATIVE);
        self.valid_in = [0; 3];
        self.blocks_in = [self.valid.len() as u64, 0, 0];
        self.dead.clear();
        self.written.fill(0);
        self.next.fill(NONE);
        self.prev.fill(NONE);
        self.in_bucket.fill(false);
        self.closed.fill(false);
        self.heads.fill(NONE);
        self.min_hint.fill(0);
        self.mapped = 0;
    }
}
