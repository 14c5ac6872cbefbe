//! Host side of the controller: interface ceiling (link timelines), per-command firmware
//! overhead, the drive's queue limit (NCQ), and the write buffer that acknowledges writes
//! and drains as NAND programs complete.

use crate::nand::transfer_ns;
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
    /// Controller write path rate (0 = no limit), and when it is free.
    write_bytes_per_ms: u64,
    write_busy: u64,
    ctrl_busy: u64,
    pub overhead: u64,
    pub host_latency: u64,
    pub max_qd: usize,
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
            write_bytes_per_ms: (p.host.write_mbps * 1000.0).round() as u64,
            write_busy: 0,
            ctrl_busy: 0,
            overhead: (p.host.command_overhead_us * 1000.0).round().max(1.0) as u64,
            host_latency: (p.host.host_latency_us * 1000.0).round() as u64,
            max_qd: p.host.max_queue_depth as usize,
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

    /// Tell the queue-slot model when an accepted command completes.
    pub fn completes(&mut self, done: u64, outstanding: usize) {
        if outstanding > self.max_qd {
            self.slots.push(Reverse(done));
        }
    }

    /// Host-to-drive data transfer (write payload), then through the controller's
    /// write path if it has a limit (pipelined with the link: it starts with the link
    /// transfer and holds the data at most its own rate).
    pub fn transfer_in(&mut self, t: u64, bytes: u64) -> u64 {
        let d = self.link_ns(bytes);
        let busy = if self.duplex { &mut self.link_in } else { &mut self.link_out };
        let s = t.max(*busy);
        *busy = s + d;
        let arrived = *busy;
        if self.write_bytes_per_ms == 0 {
            return arrived;
        }
        self.write_busy = s.max(self.write_busy) + transfer_ns(bytes, self.write_bytes_per_ms);
        arrived.max(self.write_busy)
    }

    /// Drive-to-host data transfer (read payload).
    pub fn transfer_out(&mut self, t: u64, bytes: u64) -> u64 {
        let d = self.link_ns(bytes);
        let s = t.max(self.link_out);
        self.link_out = s + d;
        self.link_out
    }

    pub fn reset_queue(&mut self) {
        self.slots.clear();
    }
}

/// Write buffer: `cap` 4 KiB slots. A slot is taken when host data arrives and freed when
/// the program operation holding it completes.
pub struct WriteBuffer {
    pub cap: u64,
    used: u64,
    /// (free time, slots) of scheduled programs.
    pending: BinaryHeap<Reverse<(u64, u64)>>,
}

impl WriteBuffer {
    /// The profile's buffer, enlarged to `min_slots` if smaller: the controller must hold
    /// program units for every die to stripe at all.
    pub fn for_profile(p: &Profile, min_slots: u64) -> WriteBuffer {
        WriteBuffer::new((p.host.write_buffer_kib as u64 / 4).max(min_slots))
    }

    pub fn new(cap: u64) -> WriteBuffer {
        WriteBuffer { cap, used: 0, pending: BinaryHeap::new() }
    }

    /// Admit one slot of host data at `t`; returns when it is in the buffer.
    #[inline]
    pub fn admit(&mut self, mut t: u64) -> u64 {
        while let Some(&Reverse((f, n))) = self.pending.peek() {
            if f <= t || self.used >= self.cap {
                self.pending.pop();
                self.used -= n;
                t = t.max(f);
            } else {
                break;
            }
        }
        self.used += 1;
        t
    }

    /// `n` buffered slots are freed at `at` (their program completes then).
    #[inline]
    pub fn release_at(&mut self, at: u64, n: u64) {
        self.pending.push(Reverse((at, n)));
    }

    pub fn clear(&mut self) {
        self.used = 0;
        self.pending.clear();
    }
}
