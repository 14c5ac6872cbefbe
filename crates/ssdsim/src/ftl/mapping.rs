//! Page-level mapping: L2P (logical 4 KiB block -> physical slot) and P2L (slot -> logical
//! block), per-block valid counts and write pointers, and valid-count buckets of closed
//! blocks per die so greedy GC finds its victim in O(1) amortised.

pub const NONE: u32 = u32::MAX;

pub struct Mapping {
    pub l2p: Vec<u32>,
    pub p2l: Vec<u32>,
    pub valid: Vec<u32>,
    /// Slots written so far in each block (its write pointer).
    pub written: Vec<u32>,
    pub mapped: u64,
    spb: u32,
    bpd: u32,
    // Doubly linked lists of closed blocks, one list per (die, valid count).
    next: Vec<u32>,
    prev: Vec<u32>,
    in_bucket: Vec<bool>,
    closed: Vec<bool>,
    heads: Vec<u32>,
    /// Per die: no non-empty bucket below this valid count.
    min_hint: Vec<u32>,
}

impl Mapping {
    pub fn new(user_slots: u64, blocks: u32, spb: u32, bpd: u32, dies: u32) -> Mapping {
        let slots = blocks as usize * spb as usize;
        Mapping {
            l2p: vec![NONE; user_slots as usize],
            p2l: vec![NONE; slots],
            valid: vec![0; blocks as usize],
            written: vec![0; blocks as usize],
            mapped: 0,
            spb,
            bpd,
            next: vec![NONE; blocks as usize],
            prev: vec![NONE; blocks as usize],
            in_bucket: vec![false; blocks as usize],
            closed: vec![false; blocks as usize],
            heads: vec![NONE; dies as usize * (spb as usize + 1)],
            min_hint: vec![0; dies as usize],
        }
    }

    #[inline]
    fn head_idx(&self, b: u32, v: u32) -> usize {
        (b / self.bpd) as usize * (self.spb as usize + 1) + v as usize
    }

    #[inline]
    fn unlink(&mut self, b: u32) {
        let v = self.valid[b as usize];
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p == NONE {
            let h = self.head_idx(b, v);
            self.heads[h] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn link(&mut self, b: u32) {
        let v = self.valid[b as usize];
        let h = self.head_idx(b, v);
        let n = self.heads[h];
        self.next[b as usize] = n;
        self.prev[b as usize] = NONE;
        if n != NONE {
            self.prev[n as usize] = b;
        }
        self.heads[h] = b;
        let die = (b / self.bpd) as usize;
        if v < self.min_hint[die] {
            self.min_hint[die] = v;
        }
    }

    /// A block is full. Greedy candidates join the buckets; static SLC blocks do not
    /// (collecting one frees no general block, so only folding reclaims them).
    pub fn close(&mut self, b: u32, candidate: bool) {
        debug_assert!(!self.closed[b as usize]);
        self.closed[b as usize] = true;
        if candidate {
            self.in_bucket[b as usize] = true;
            self.link(b);
        }
    }

    /// Remove a closed block from the candidates (it is being collected).
    pub fn withdraw(&mut self, b: u32) {
        if self.in_bucket[b as usize] {
            self.unlink(b);
            self.in_bucket[b as usize] = false;
        }
        self.closed[b as usize] = false;
    }

    pub fn is_closed(&self, b: u32) -> bool {
        self.closed[b as usize]
    }

    /// Mark physical slot `s` stale (its logical block was rewritten or trimmed).
    #[inline]
    pub fn invalidate(&mut self, s: u32) {
        let b = s / self.spb;
        self.p2l[s as usize] = NONE;
        if self.in_bucket[b as usize] {
            self.unlink(b);
            self.valid[b as usize] -= 1;
            self.link(b);
        } else {
            self.valid[b as usize] -= 1;
        }
    }

    /// Point logical block `lba` at slot `s`, invalidating its previous copy.
    #[inline]
    pub fn remap(&mut self, lba: u32, s: u32) {
        let old = self.l2p[lba as usize];
        if old == NONE {
            self.mapped += 1;
        } else {
            self.invalidate(old);
        }
        self.l2p[lba as usize] = s;
        self.p2l[s as usize] = lba;
        self.valid[(s / self.spb) as usize] += 1;
    }

    /// Move a still-valid logical block from `from` to `to` (GC relocation).
    #[inline]
    pub fn relocate(&mut self, lba: u32, from: u32, to: u32) {
        self.p2l[from as usize] = NONE;
        self.valid[(from / self.spb) as usize] -= 1;
        self.l2p[lba as usize] = to;
        self.p2l[to as usize] = lba;
        self.valid[(to / self.spb) as usize] += 1;
    }

    pub fn unmap(&mut self, lba: u32) {
        let old = self.l2p[lba as usize];
        if old != NONE {
            self.invalidate(old);
            self.l2p[lba as usize] = NONE;
            self.mapped -= 1;
        }
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

    /// Forget everything (secure erase).
    pub fn clear(&mut self) {
        self.l2p.fill(NONE);
        self.p2l.fill(NONE);
        self.valid.fill(0);
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
