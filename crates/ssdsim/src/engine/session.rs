//! Open-ended service, one request at a time (the NBD export): each request arrives at a
//! virtual time the caller gives and gets its completion from `Drive::issue_io`, the path the
//! phases use, so the drive behaves exactly as in any test. Stretches with nothing in
//! flight are idle time: after the profile's idle delay (`ftl.idle_gc_delay_ms`) the
//! background work of an idle phase (erase, SLC fold, GC) runs in them.

use super::Drive;
use crate::nand::SLOT_BYTES;
use crate::util::stats::Snapshot;
use crate::workload::Io;
use crate::SimError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
    Flush,
}

/// Largest read or write one request may carry (NBD clients send at most 32 MiB).
pub const MAX_REQUEST_BYTES: u64 = 64 << 20;

/// The host may hold more commands than the drive's queue accepts: the queue-slot model
/// must see every command, so sessions always pass an `outstanding` above any queue limit.
const MANY: usize = usize::MAX;

impl Drive {
    /// Virtual time (ns) at which everything run so far has ended.
    pub fn now(&self) -> u64 {
        self.now
    }
}

pub struct Session {
    pub drive: Drive,
    /// Latest arrival so far: arrivals are served in order; an earlier one counts as now.
    last_at: u64,
    /// Latest completion: nothing is in flight after it.
    busy_until: u64,
    start: Snapshot,
    /// Per op (read, write, trim, flush): requests and bytes (trim: bytes unmapped).
    count: [u64; 4],
    bytes: [u64; 4],
}

impl Session {
    /// Serve `drive` from its current state and time on (phases may have run before).
    pub fn new(drive: Drive) -> Session {
        let now = drive.now;
        let start = drive.snapshot();
        Session {
            drive,
            last_at: now,
            busy_until: now,
            start,
            count: [0; 4],
            bytes: [0; 4],
        }
    }

    /// Bytes a client may address (whole 4 KiB slots).
    pub fn user_bytes(&self) -> u64 {
        let u = self.drive.user_bytes();
        u - u % SLOT_BYTES
    }

    /// The latest time the session has seen (arrival or `advance`), in virtual ns.
    pub fn now(&self) -> u64 {
        self.last_at
    }

    /// One request of `length` bytes at byte `offset`, arriving at `at` (virtual ns);
    /// returns its completion. Reads and writes cover every 4 KiB slot they touch (a
    /// partial slot counts as whole); a trim unmaps only the slots it covers entirely;
    /// a flush ignores offset and length and completes when the write buffer has drained.
    pub fn submit(&mut self, op: Op, offset: u64, length: u64, at: u64) -> Result<u64, SimError> {
        if op != Op::Flush {
            self.check(op, offset, length)?;
        }
        let at = at.max(self.last_at);
        self.last_at = at;
        self.idle_until(at)?;
        let d = &mut self.drive;
        let k = op as usize;
        let done = match op {
            Op::Read | Op::Write => {
                let first = offset / SLOT_BYTES;
                let slots = (offset + length).div_ceil(SLOT_BYTES) - first;
                let io = Io {
                    lba: first as u32,
                    slots: slots as u32,
                    read: op == Op::Read,
                };
                self.bytes[k] += length;
                d.issue_io(io, at, MANY)?
            }
            Op::Trim => {
                let (a, b) = (offset.div_ceil(SLOT_BYTES), (offset + length) / SLOT_BYTES);
                let n = b.saturating_sub(a);
                self.bytes[k] += n * SLOT_BYTES;
                d.issue_trim_or_flush(Some((a as u32, n as u32)), at, MANY)
            }
            Op::Flush => d.issue_trim_or_flush(None, at, MANY),
        };
        self.count[k] += 1;
        self.busy_until = self.busy_until.max(done);
        // A phase run after the session starts when the session's work has ended.
        d.now = d.now.max(done);
        Ok(done)
    }

    /// Let virtual time reach `t` with no new request: idle background work up to `t`
    /// (so counters read afterwards include it). Later arrivals before `t` count as `t`.
    pub fn advance(&mut self, t: u64) -> Result<(), SimError> {
        if t > self.last_at {
            self.last_at = t;
            self.idle_until(t)?;
        }
        Ok(())
    }

    /// Background work before `t`, as between the commands of a phase (`Drive::background`):
    /// GC in the die time reads leave, and idle work (folding too) once no command has been
    /// in flight for the idle delay.
    fn idle_until(&mut self, t: u64) -> Result<(), SimError> {
        self.drive.background(t)
    }

    fn check(&self, op: Op, offset: u64, length: u64) -> Result<(), SimError> {
        let cap = self.user_bytes();
        let name = format!("{op:?}").to_lowercase();
        if length == 0 {
            return Err(SimError(format!(
                "{name} of 0 bytes at offset {offset}: length must be > 0"
            )));
        }
        if offset.checked_add(length).is_none_or(|e| e > cap) {
            return Err(SimError(format!(
                "{name} of {length} bytes at offset {offset}: past the end of the drive ({cap} bytes)"
            )));
        }
        if op != Op::Trim && length > MAX_REQUEST_BYTES {
            return Err(SimError(format!(
                "{name} of {length} bytes: at most {MAX_REQUEST_BYTES} per request"
            )));
        }
        Ok(())
    }

    /// The drive's counters now: levels (free blocks, SLC occupancy, mapped data) and
    /// totals since the session began (bytes, WAF, erases, GC moves, requests per kind).
    pub fn counters(&self) -> Vec<(&'static str, f64)> {
        let s = self.drive.snapshot();
        let f = &self.drive.ftl;
        let mut out = vec![
            ("now_s", self.last_at as f64 / 1e9),
            ("busy_until_s", self.busy_until as f64 / 1e9),
            ("reads", self.count[0] as f64),
            ("writes", self.count[1] as f64),
            ("trims", self.count[2] as f64),
            ("flushes", self.count[3] as f64),
            ("read_bytes", self.bytes[0] as f64),
            ("write_bytes", self.bytes[1] as f64),
            ("trim_bytes", self.bytes[2] as f64),
            ("slc_capacity_bytes", s.slc_capacity_bytes as f64),
            ("mapped_bytes", (f.map.mapped * SLOT_BYTES) as f64),
        ];
        out.extend(s.since(&self.start));
        out
    }
}
