//! Mapping-table cache. With full DRAM every lookup hits. DRAM-less drives cache mapping
//! pages in a small SRAM or in host memory (HMB): a miss reads the mapping page from
//! flash before the user data, and evicting a dirty page writes it back. CLOCK eviction.

use super::mapping::NONE;
use crate::profile::Profile;

pub struct Access {
    pub miss: Option<u32>,
    pub writeback: Option<u32>,
}

#[derive(Clone)]
pub struct Cmt {
    enabled: bool,
    entries_per_page: u32,
    slot_of: Vec<u32>,
    owner: Vec<u32>,
    referenced: Vec<bool>,
    dirty: Vec<bool>,
    hand: usize,
    used: usize,
    cap: usize,
    /// Latency of a lookup that hits (HMB: a round trip to host memory).
    pub hit_ns: u64,
    pub lookups: u64,
    pub hits: u64,
}

impl Cmt {
    pub fn new(p: &Profile, user_slots: u64) -> Cmt {
        let enabled = p.mapping.kind != "dram";
        let page_bytes = p.nand.page_kib as u64 * 1024;
        let entries_per_page = (page_bytes / 4) as u32;
        let pages = user_slots.div_ceil(entries_per_page as u64) as usize;
        let cap = if enabled {
            ((p.mapping.cache_mib * 1048576.0) as u64 / page_bytes).max(1) as usize
        } else {
            0
        };
        let cap = cap.min(pages.max(1));
        Cmt {
            enabled,
            entries_per_page,
            slot_of: vec![NONE; if enabled { pages } else { 0 }],
            owner: vec![NONE; cap],
            referenced: vec![false; cap],
            dirty: vec![false; cap],
            hand: 0,
            used: 0,
            cap,
            hit_ns: if p.mapping.kind == "hmb" {
                (p.mapping.hmb_access_us * 1000.0) as u64
            } else {
                0
            },
            lookups: 0,
            hits: 0,
        }
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    #[inline]
    pub fn map_page(&self, lba: u32) -> u32 {
        lba / self.entries_per_page
    }

    pub fn access(&mut self, lba: u32, write: bool) -> Access {
        self.lookups += 1;
        let mp = self.map_page(lba);
        let s = self.slot_of[mp as usize];
        if s != NONE {
            self.hits += 1;
            self.referenced[s as usize] = true;
            self.dirty[s as usize] |= write;
            return Access {
                miss: None,
                writeback: None,
            };
        }
        let v = if self.used < self.cap {
            self.used += 1;
            self.used - 1
        } else {
            while self.referenced[self.hand] {
                self.referenced[self.hand] = false;
                self.hand = (self.hand + 1) % self.cap;
            }
            let v = self.hand;
            self.hand = (self.hand + 1) % self.cap;
            v
        };
        let old = self.owner[v];
        let writeback = if old != NONE {
            self.slot_of[old as usize] = NONE;
            self.dirty[v].then_some(old)
        } else {
            None
        };
        self.owner[v] = mp;
        self.slot_of[mp as usize] = v as u32;
        self.referenced[v] = true;
        self.dirty[v] = write;
        Access {
            miss: Some(mp),
            writeback,
        }
    }

    pub fn reset(&mut self) {
        self.slot_of.fill(NONE);
        self.owner.fill(NONE);
        self.referenced.fill(false);
        self.dirty.fill(false);
        self.hand = 0;
        self.used = 0;
    }
}
