//! Host side of the controller: interface ceiling (link timelines), per-command firmware
//! overhead, the drive's queue limit (NCQ), and the write buffer that acknowledges writes
//! and drains as NAND programs complete.

use crate::nand::{transfer_ns, SLOT_BYTES};
use crate::profile::Profile;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Usable link rate in MB/s before protocol efficiency: SATA 6 Gb/s with 8b/10b is
/// 600 MB/s; PCIe lanes per generation after line coding.
pub fn raw_link_mbps(p: &Profile) -> f64 {
    let h = &p.host;
    if h.interface == "sata" {
        return 600.0;
    }
    let per_lane = match h.pcie_gen {
        1 => 250.0,
        2 => 500.0,
        3 => 984.6,
        4 => 1969.2,
        5 => 3938.5,
        _ => 7877.0,
    };
    per_lane * h.lanes as f64
}

pub fn link_mbps(p: &Profile) -> f64 {
    raw_link_mbps(p) * p.host.protocol_efficiency
}

#[derive(Clone)]
pub struct Host {
    /// Link rate after protocol overhead.
    link_bytes_per_ms: u64,
    /// The last (bytes, ns) computed: a phase moves one I/O size, so this saves a
    /// division per command.
    link_memo: (u64, u64),
    /// SATA is half duplex: one timeline for both directions.
    duplex: bool,
    link_in: u64,
    link_out: u64,
    /// Controller write path: time per 4 KiB slot (0 = no limit), and when it is free.
    slot_write_ns: u64,
    write_busy: u64,
    ctrl_busy: u64,
    pub overhead: u64,
    pub host_latency: u64,
    /// Controller write-path latency before a write is acknowledged (pipelined).
    pub write_latency: u64,
    /// Firmware time per mapping page a write changes (`host.map_update_us`), and the
    /// logical blocks one mapping page covers (4 B entries in a NAND page).
    pub map_update: u64,
    pub map_page_slots: u32,
    pub max_qd: usize,
    /// Large commands stream (`host.stream_commands`); otherwise a write's data counts as
    /// arrived when all of it has, and a read's link transfer starts after its last page.
    stream: bool,
    /// Completion times of commands the drive holds (only used when the host queues
    /// more than the drive accepts).
    slots: BinaryHeap<Reverse<u64>>,
}

impl Host {
    pub fn new(p: &Profile) -> Host {
        let mbps = link_mbps(p);
        Host {
            link_bytes_per_ms: (mbps * 1000.0).round().max(1.0) as u64,
            link_memo: (0, 0),
            duplex: p.host.interface != "sata",
            link_in: 0,
            link_out: 0,
            slot_write_ns: if p.host.write_mbps > 0.0 {
                transfer_ns(SLOT_BYTES, (p.host.write_mbps * 1000.0).round() as u64)
            } else {
                0
            },
            write_busy: 0,
            ctrl_busy: 0,
            overhead: (p.host.command_overhead_us * 1000.0).round().max(1.0) as u64,
            host_latency: (p.host.host_latency_us * 1000.0).round() as u64,
            write_latency: (p.host.write_latency_us * 1000.0).round() as u64,
            map_update: (p.host.map_update_us * 1000.0).round() as u64,
            map_page_slots: (p.nand.page_kib * 1024 / 4).max(1),
            max_qd: p.host.max_queue_depth as usize,
            stream: p.host.stream_commands,
            slots: BinaryHeap::new(),
        }
    }

    fn link_ns(&mut self, bytes: u64) -> u64 {
        if self.link_memo.0 != bytes {
            self.link_memo = (bytes, transfer_ns(bytes, self.link_bytes_per_ms));
        }
        self.link_memo.1
    }

    /// A command submitted at `t` (with `outstanding` commands in flight at the host)
    /// enters the drive once a queue slot is free, then costs firmware time.
    /// Returns the time the controller has parsed it.
    pub fn accept(&mut self, t: u64, outstanding: usize) -> u64 {
        let mut start = t;
        if outstanding > self.max_qd {
            while self.slots.len() >= self.max_qd {
                let Reverse(f) = self.slots.pop().unwrap();
                start = start.max(f);
            }
        }
        let s = start.max(self.ctrl_busy);
        self.ctrl_busy = s + self.overhead;
        self.ctrl_busy
    }

    /// The command core works `ns` on something else (GC's firmware work) from `t` on:
    /// commands it has not parsed yet wait.
    #[inline]
    pub fn firmware(&mut self, t: u64, ns: u64) {
        if ns > 0 {
            self.ctrl_busy = self.ctrl_busy.max(t) + ns;
        }
    }

    /// Firmware time for the mapping updates of a write of `slots` logical blocks from
    /// `lba`: `map_update` per mapping page the blocks span (0 when off).
    #[inline]
    pub fn map_update_ns(&self, lba: u32, slots: u32) -> u64 {
        if self.map_update == 0 || slots == 0 {
            return 0;
        }
        let pages = (lba + slots - 1) / self.map_page_slots - lba / self.map_page_slots + 1;
        pages as u64 * self.map_update
    }

    /// Tell the queue-slot model when an accepted command completes.
    pub fn completes(&mut self, done: u64, outstanding: usize) {
        if outstanding > self.max_qd {
            self.slots.push(Reverse(done));
        }
    }

    /// Host-to-drive data transfer of a write payload of `bytes` submitted at `t`. The data
    /// streams in: the `Inflow` says when each 4 KiB slot of it has arrived.
    pub fn transfer_in(&mut self, t: u64, bytes: u64) -> Inflow {
        let d = self.link_ns(bytes);
        let busy = if self.duplex {
            &mut self.link_in
        } else {
            &mut self.link_out
        };
        let s = t.max(*busy);
        *busy = s + d;
        let n = (bytes / SLOT_BYTES).max(1);
        let link = if self.stream {
            Step::new((s, d), n)
        } else {
            Step::whole((s, d))
        };
        Inflow { slots: n, link }
    }

    /// The controller's write path (`host.write_mbps`: firmware and data-path work on host
    /// data) takes a slot buffered at `t`; returns when the slot may join a program unit.
    /// It sits behind the write buffer: a write is acknowledged once its data is buffered,
    /// so at QD1 the host's round trip overlaps the path, and the path's rate shows once the
    /// buffer is full, at any queue depth.
    #[inline]
    pub fn write_path(&mut self, t: u64) -> u64 {
        if self.slot_write_ns == 0 {
            return t;
        }
        self.write_busy = self.write_busy.max(t) + self.slot_write_ns;
        self.write_busy
    }

    /// Drive-to-host transfer of a read payload of `bytes` whose first page is in the
    /// controller at `first` and last at `last`: it streams as the data arrives, so it
    /// ends a page's transfer after the last page at the earliest.
    pub fn transfer_out(&mut self, first: u64, last: u64, bytes: u64, page_bytes: u64) -> u64 {
        let d = self.link_ns(bytes);
        let first = if self.stream { first } else { last };
        let s = first.max(self.link_out);
        let tail = if bytes > page_bytes {
            transfer_ns(page_bytes, self.link_bytes_per_ms)
        } else {
            d
        };
        self.link_out = (s + d).max(last + tail);
        self.link_out
    }

    pub fn reset_queue(&mut self) {
        self.slots.clear();
    }
}

/// A write payload streaming into the controller over the link. `next_arrival` gives
/// the arrival of each 4 KiB slot in turn (stepped, no division per slot).
pub struct Inflow {
    slots: u64,
    link: Step,
}

/// start + d * i / n for i = 1, 2, ...: whole steps and a carried remainder.
struct Step {
    at: u64,
    step: u64,
    rem: u64,
    carry: u64,
}

impl Step {
    /// Every slot arrives at the end (no streaming).
    fn whole((start, d): (u64, u64)) -> Step {
        Step {
            at: start + d,
            step: 0,
            rem: 0,
            carry: 0,
        }
    }

    #[inline]
    fn new((start, d): (u64, u64), n: u64) -> Step {
        if n == 1 {
            // A 4 KiB command, nearly every random I/O: no division.
            return Step {
                at: start,
                step: d,
                rem: 0,
                carry: 0,
            };
        }
        Step {
            at: start,
            step: d / n,
            rem: d % n,
            carry: 0,
        }
    }
    #[inline]
    fn next(&mut self, n: u64) -> u64 {
        self.at += self.step;
        self.carry += self.rem;
        if self.carry >= n {
            self.carry -= n;
            self.at += 1;
        }
        self.at
    }
}

impl Inflow {
    /// When the whole payload is in the controller.
    pub fn end(&self) -> u64 {
        let l = &self.link;
        l.at + l.step * self.slots + l.rem // `whole` steps: their `at`
    }

    /// When the next slot of the payload is in the controller.
    #[inline]
    pub fn next_arrival(&mut self) -> u64 {
        self.link.next(self.slots)
    }
}

/// Write buffer: `cap` 4 KiB slots. A slot is taken when host data arrives and freed when
/// the program operation holding it completes.
#[derive(Clone)]
pub struct WriteBuffer {
    pub cap: u64,
    used: u64,
    /// (free time, slots) of scheduled programs.
    pending: BinaryHeap<Reverse<(u64, u64)>>,
    /// The program whose slots are being promised to writes that wait for them: (free
    /// time, slots not promised yet), taken out of `pending`.
    promising: Option<(u64, u64)>,
}

impl WriteBuffer {
    /// The profile's buffer, enlarged to `min_slots` if smaller: the controller must hold
    /// program units for every die to stripe at all.
    pub fn for_profile(p: &Profile, min_slots: u64) -> WriteBuffer {
        WriteBuffer::new((p.host.write_buffer_kib as u64 / 4).max(min_slots))
    }

    pub fn new(cap: u64) -> WriteBuffer {
        WriteBuffer {
            cap,
            used: 0,
            pending: BinaryHeap::new(),
            promising: None,
        }
    }

    /// Admit one slot of host data at `t`; returns when it is in the buffer. Slots whose
    /// program has completed by `t` are free; when none is, the write waits for a slot
    /// of the program that completes first (writes arriving before then wait for it
    /// too: a slot is never given out before it is free).
    #[inline]
    pub fn admit(&mut self, t: u64) -> u64 {
        // A full buffer waiting for the program it is promising from: the common case of
        // a write stream faster than the NAND.
        if let Some((f, left)) = self.promising {
            if f > t
                && self.used >= self.cap
                && self
                    .pending
                    .peek()
                    .is_none_or(|&Reverse((e, _))| e > t && f <= e)
            {
                self.promising = (left > 1).then_some((f, left - 1));
                return f;
            }
        }
        if let Some((f, left)) = self.promising {
            if f <= t {
                self.used -= left;
                self.promising = None;
            }
        }
        while let Some(&Reverse((f, n))) = self.pending.peek() {
            if f > t {
                break;
            }
            self.pending.pop();
            self.used -= n;
        }
        if self.used < self.cap {
            self.used += 1;
            return t;
        }
        // Full: promise a slot of the program that completes first (`used` keeps counting it).
        let earliest = self.pending.peek().map(|&Reverse((f, _))| f);
        let (f, left) = match self.promising {
            Some((f, left)) if earliest.is_none_or(|e| f <= e) => (f, left),
            current => {
                if let Some(p) = current {
                    self.pending.push(Reverse(p));
                }
                let Reverse(next) = self
                    .pending
                    .pop()
                    .expect("a full buffer has programs pending");
                next
            }
        };
        self.promising = (left > 1).then_some((f, left - 1));
        f.max(t)
    }

    /// `n` buffered slots are freed at `at` (their program completes then).
    #[inline]
    pub fn release_at(&mut self, at: u64, n: u64) {
        self.pending.push(Reverse((at, n)));
    }

    /// When every scheduled program holding buffered data has completed (a flush; data
    /// of a program unit not yet full is not counted: the model has no padding).
    pub fn drained_at(&self) -> u64 {
        let pending = self
            .pending
            .iter()
            .map(|&Reverse((f, _))| f)
            .max()
            .unwrap_or(0);
        pending.max(self.promising.map_or(0, |(f, _)| f))
    }

    pub fn clear(&mut self) {
        self.used = 0;
        self.pending.clear();
        self.promising = None;
    }
}
