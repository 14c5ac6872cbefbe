//! Sequential read-ahead: once a read starts where the previous one ended, the
//! controller reads the next `ftl.read_ahead_kib` into its buffer while the host is
//! still taking the current data, so a sequential stream at low queue depth overlaps
//! the flash reads of the next command with the transfer of this one.

use super::mapping::NONE;
use super::Ftl;
use crate::nand::SLOT_BYTES;

#[derive(Debug, Clone)]
pub struct ReadAhead {
    /// Window in slots (0: the firmware does no read-ahead).
    window: u32,
    /// Where a sequential stream's next read starts.
    next: u32,
    /// Logical blocks [next, end) are read ahead, in the buffer from `ready` on.
    end: u32,
    ready: u64,
}

impl ReadAhead {
    pub fn new(kib: u32) -> ReadAhead {
        ReadAhead {
            window: (kib as u64 * 1024 / SLOT_BYTES) as u32,
            next: NONE,
            end: 0,
            ready: 0,
        }
    }

    /// Writes, TRIMs and purges make the read-ahead data stale.
    #[inline]
    pub fn forget(&mut self) {
        self.next = NONE;
        self.end = 0;
    }
}

impl Ftl {
    /// Host read of `n` logical blocks from `lba` issued at `t`: served from the
    /// read-ahead buffer when a sequential stream already fetched them, else from flash.
    /// Returns when the first and the last of the data are in the controller.
    pub fn read(&mut self, lba: u32, n: u32, t: u64) -> (u64, u64) {
        if self.ra.window == 0 {
            return self.read_slots(lba, n, t);
        }
        let sequential = lba == self.ra.next;
        let last = lba + n;
        let (ready, fetched) = if sequential && last <= self.ra.end {
            let r = self.ra.ready.max(t);
            ((r, r), self.ra.end)
        } else {
            (self.read_slots(lba, n, t), last)
        };
        if sequential {
            let to = last
                .saturating_add(self.ra.window)
                .min(self.user_slots as u32);
            if to > fetched {
                self.ra.ready = self.read_slots(fetched, to - fetched, t).1;
            }
            self.ra.end = to.max(fetched);
        } else {
            self.ra.end = 0;
        }
        self.ra.next = last;
        ready
    }
}
