//! Mapping-table checkpoints. A controller that keeps its whole L2P table in DRAM logs
//! each change in a journal; when the journal is full (`mapping.checkpoint_gb` of remapped
//! blocks: host writes and GC moves) the firmware writes the whole table (4 B per 4 KiB of user capacity) to its
//! system blocks, striped over every die, and host programs queue behind it. The stall
//! lasts the table's size over the drive's program rate, whatever the spare area (unlike
//! a stall that waits for GC). System blocks are reserved: they take no user blocks.

use super::Ftl;
use crate::nand::SLOT_BYTES;

/// Bytes per mapping-table entry (one 4 KiB logical block).
const ENTRY_BYTES: u64 = 4;

#[derive(Debug, Clone, Default)]
pub struct Checkpoint {
    /// Remapped slots (host writes and GC relocations) between checkpoints (0 = never).
    every: u64,
    /// Remapped slots since the last checkpoint.
    since: u64,
}

impl Checkpoint {
    pub fn new(checkpoint_gb: f64) -> Checkpoint {
        Checkpoint {
            every: (checkpoint_gb * 1e9 / SLOT_BYTES as f64).round() as u64,
            since: 0,
        }
    }

    /// `n` slots were remapped; true when the journal is full.
    #[inline(always)]
    pub fn count(&mut self, n: u64) -> bool {
        if self.every == 0 {
            return false;
        }
        self.since += n;
        if self.since < self.every {
            return false;
        }
        self.since = 0;
        true
    }

    /// `n` more remapped slots leave the journal short of full (`count` would not fire).
    #[inline(always)]
    pub fn takes(&self, n: u64) -> bool {
        self.every == 0 || self.since + n < self.every
    }

    /// A purge empties the journal.
    pub fn reset(&mut self) {
        self.since = 0;
    }
}

impl Ftl {
    /// Write the whole mapping table at `t`: native program units on every die in turn.
    #[inline(never)]
    pub(crate) fn write_checkpoint(&mut self, t: u64) {
        let dies = self.nand.geo.dies as u64;
        let unit = self.nand.timing(false).unit_slots as u64 * SLOT_BYTES;
        let table = self.map.user_slots() as u64 * ENTRY_BYTES;
        let units = table.div_ceil(unit);
        for i in 0..units {
            self.nand.program(t, (i % dies) as u32, false, unit);
        }
        self.counters.map_write_bytes += units * unit;
    }
}
