//! The drive in virtual time: runs phases (purge, I/O in a closed loop at queue depth x
//! jobs, TRIM of a range, idle) against the host model and the FTL, and records series.

use std::collections::VecDeque;

use crate::ftl::Ftl;
use crate::host::{self, Host, WriteBuffer};
use crate::nand::SLOT_BYTES;
use crate::power::ops_energy_j;
use crate::profile::Profile;
use crate::util::prefault::Prefault;
use crate::util::stats::{Recorder, Row, Snapshot};
use crate::workload::{Io, PhaseKind, PhaseSpec, Workload, LOOKAHEAD};
use crate::SimError;

/// Slots of a large write whose old copies are prefetched ahead of their invalidation.
const OLD_AHEAD: u32 = 8;

/// Open-ended service, one I/O at a time (NBD export): a child module, so it shares the
/// drive's private state and `serve` with the phases.
pub mod session;
// Trace replay: a child module, so it feeds I/Os through the same private path.
pub mod replay;

pub struct PhaseResult {
    pub rows: Vec<Row>,
    pub segments: Vec<[f64; 3]>,
    pub hist: crate::util::stats::Histogram,
    pub totals: Vec<(&'static str, f64)>,
    /// The sample callback asked to stop: what is here is what was recorded so far.
    pub interrupted: bool,
}

/// Cloning a drive copies its whole state (tables, timelines, counters, virtual time and
/// phase count): the copy runs on exactly as the original would (`DriveState`).
#[derive(Clone)]
pub struct Drive {
    pub profile: Profile,
    pub ftl: Ftl,
    // The `pub(crate)` fields and methods are the drive's one I/O path and its phase
    // bookkeeping, open to the fio workload above (fiojob::run) so it runs on them too.
    pub(crate) host: Host,
    pub(crate) now: u64,
    seed: u64,
    pub(crate) phases_run: u64,
    pub(crate) ctrl_energy_j: f64,
    /// Completion of the last host write: the drive is write-idle from then on.
    last_write: u64,
    /// Latest completion of any host command: nothing is in flight from then on.
    last_done: u64,
    /// Background GC has been given the die time up to here.
    bg_until: u64,
    /// NAND page size in bytes (the unit data reaches the controller in).
    page_bytes: u64,
}

/// Outstanding I/O: (completion, issue time, slots, read).
type Pending = (u64, u64, u32, bool);

/// A command a trace or a fio job submits (`submit_command`): a read or write, or a TRIM of
/// (first slot, slots) (`Some`) or a flush (`None`).
pub(crate) enum Command {
    Io(Io),
    TrimOrFlush(Option<(u32, u32)>),
}

/// Put `p` into `q`, kept in ascending order (the earliest completion first). A new I/O
/// usually completes after every outstanding one, so this is mostly a push at the back:
/// cheaper than a heap's sift over the whole queue depth. Equal entries are
/// indistinguishable, so the order among them does not matter.
#[inline(always)]
fn enqueue(q: &mut VecDeque<Pending>, p: Pending) {
    if q.back().is_none_or(|b| *b <= p) {
        q.push_back(p);
    } else {
        let i = q.partition_point(|x| *x <= p);
        q.insert(i, p);
    }
}

/// The job after `j` of `jobs`, round robin (no division in the I/O loop).
#[inline(always)]
fn next_of(j: usize, jobs: usize) -> usize {
    if j + 1 == jobs {
        0
    } else {
        j + 1
    }
}

impl Drive {
    pub fn new(profile: Profile, seed: u64) -> Drive {
        let nand_geo = crate::nand::Geometry::from_profile(&profile);
        let max_unit = {
            let n = &profile.nand;
            n.planes * n.slc.prog_pages.max(n.native.prog_pages) * (n.page_kib / 4)
        };
        // One program unit per die per host stream must fit, or striping stalls.
        let min_slots = 2 * nand_geo.dies as u64 * max_unit as u64;
        let host = Host::new(&profile);
        let buffer = WriteBuffer::for_profile(&profile, min_slots);
        Drive {
            ftl: Ftl::new(&profile, buffer),
            host,
            profile,
            now: 0,
            seed,
            phases_run: 0,
            ctrl_energy_j: 0.0,
            last_write: 0,
            last_done: 0,
            bg_until: 0,
            page_bytes: nand_geo.slots_per_page as u64 * SLOT_BYTES,
        }
    }

    /// The seed the drive was built with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn user_bytes(&self) -> u64 {
        self.ftl.user_slots * SLOT_BYTES
    }

    pub fn raw_bytes(&self) -> u64 {
        self.ftl.nand.geo.raw_bytes()
    }

    pub fn link_mbps(&self) -> f64 {
        host::link_mbps(&self.profile)
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        let c = &self.ftl.counters;
        Snapshot {
            host_write_bytes: c.host_write_slots * SLOT_BYTES,
            nand_slc_bytes: c.nand_slc_slots * SLOT_BYTES,
            nand_native_bytes: c.nand_native_slots * SLOT_BYTES,
            map_write_bytes: c.map_write_bytes,
            erases: self.ftl.nand.ops.erases,
            gc_moves: c.gc_moves,
            gc_stalls: c.gc_stalls,
            cmt_lookups: self.ftl.cmt.lookups,
            cmt_hits: self.ftl.cmt.hits,
            energy_j: ops_energy_j(&self.ftl.nand, &self.profile.power) + self.ctrl_energy_j,
            slc_fold_bytes: c.slc_fold_slots * SLOT_BYTES,
            free_blocks: self.ftl.free_blocks(),
            slc_used_bytes: self.ftl.slc_used_bytes(),
            slc_capacity_bytes: self.ftl.slc_capacity_bytes(),
        }
    }

    /// Close every interval that ends at or before `t`, streaming each row.
    pub(crate) fn close_until(
        &mut self,
        rec: &mut Recorder,
        t: u64,
        watts: f64,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> bool {
        let mut go_on = true;
        while t >= rec.next {
            self.ctrl_energy_j += watts * rec.interval_secs();
            let row = rec.close(rec.next, self.snapshot());
            go_on &= on_sample(&row);
        }
        go_on
    }

    /// Close the intervals ending at or before `t` over each of which the drive does nothing
    /// (no I/O outstanding, no background work) and the controller draws `watts`. Such a
    /// stretch is stored as its first and last rows: the intervals between are the same as
    /// the last but for their time, so they are skipped (`Recorder::skip`). A quiet stretch
    /// costs the same time and memory however long it is.
    pub(crate) fn close_quiet(
        &mut self,
        rec: &mut Recorder,
        t: u64,
        watts: f64,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> bool {
        let n = if t >= rec.next { (t - rec.next) / rec.interval_ns() + 1 } else { 0 };
        if n < 3 {
            return self.close_until(rec, t, watts, on_sample);
        }
        if !self.close_until(rec, rec.next, watts, on_sample) {
            return false;
        }
        let skipped = n - 2;
        self.ctrl_energy_j += watts * rec.interval_secs() * skipped as f64;
        rec.skip(skipped, self.snapshot());
        self.close_until(rec, t, watts, on_sample)
    }

    /// Run one phase. `on_sample` gets every finished interval; returning false stops the
    /// phase early (the result then holds what was recorded so far).
    pub fn run(
        &mut self,
        spec: &PhaseSpec,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<PhaseResult, SimError> {
        let spec = spec
            .clone()
            .validated(self.user_bytes())
            .map_err(SimError)?;
        self.phases_run += 1;
        let seed = self.seed ^ self.phases_run.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let start = self.snapshot();
        let t0 = self.now;
        let mut rec = Recorder::new(t0, spec.sample_interval_s, spec.segment_bytes, start);
        let p = self.profile.power.clone();
        let mut interrupted = false;
        let end = match spec.kind {
            PhaseKind::Purge => {
                let end = self.ftl.purge(t0);
                self.host.reset_queue();
                self.ctrl_energy_j += p.controller_active_w * (end - t0) as f64 / 1e9;
                end
            }
            PhaseKind::Trim => {
                let (lba, n) = (
                    (spec.offset / SLOT_BYTES) as u32,
                    (spec.length / SLOT_BYTES) as u32,
                );
                self.ftl.trim(lba, n);
                // One DSM command per 2 GiB range, plus the table updates.
                let cmds = (spec.length >> 31) + 1;
                let end = t0 + cmds * self.host.overhead + n as u64;
                self.ctrl_energy_j += p.controller_active_w * (end - t0) as f64 / 1e9;
                end
            }
            PhaseKind::Idle => {
                let mut end = t0 + (spec.seconds.unwrap_or(0.0) * 1e9) as u64;
                let mut t = t0;
                while t < end && !interrupted {
                    let step = rec.next.min(end);
                    let busy = self.ftl.idle(t, step, self.ftl.nand.native.unit_slots)?;
                    if spec.until_quiet && !busy {
                        // Quiet: the phase ends when the last background operation does.
                        end = self.ftl.quiet_at(t);
                        if end >= rec.next {
                            interrupted = !self.close_until(&mut rec, end, p.idle_w, on_sample);
                        }
                        t = end;
                        break;
                    }
                    t = step;
                    if t == rec.next {
                        interrupted = !self.close_until(&mut rec, t, p.idle_w, on_sample);
                        if !busy && !interrupted {
                            // No background work left, and none starts without host I/O:
                            // the rest of the phase is quiet.
                            interrupted = !self.close_quiet(&mut rec, end, p.idle_w, on_sample);
                            t = t.max(rec.next - rec.interval_ns());
                        }
                    }
                }
                if !interrupted {
                    self.ftl.nand.advance_to(end);
                }
                self.bg_until = self.bg_until.max(t);
                t
            }
            PhaseKind::Io => {
                // A pass that writes the whole drive writes all of its tables: the kernel
                // zeroes their pages on another core meanwhile (stopped at the phase's end).
                let _paging = spec
                    .writes_whole_drive(self.user_bytes())
                    .then(|| Prefault::start(self.ftl.map.large_tables()));
                let (end, stopped) = self.run_io(&spec, seed, &mut rec, on_sample)?;
                interrupted = stopped;
                end
            }
        };
        if spec.kind == PhaseKind::Io {
            let start = rec.next - rec.interval_ns();
            self.ctrl_energy_j += p.controller_active_w * end.saturating_sub(start) as f64 / 1e9;
        }
        // A final stretch shorter than half an interval (the drain of the last queued
        // I/Os) would be a misleading row; it stays in the totals and the histogram.
        let tail = end.saturating_sub(rec.next - rec.interval_ns());
        if rec.rows.is_empty() || (rec.pending_ios() > 0 && 2 * tail >= rec.interval_ns()) {
            let row = rec.close(end.max(rec.next - rec.interval_ns() + 1), self.snapshot());
            on_sample(&row);
        }
        self.now = end.max(t0);
        Ok(self.finish(rec, start, end, interrupted))
    }

    fn run_io(
        &mut self,
        spec: &PhaseSpec,
        seed: u64,
        rec: &mut Recorder,
        on_sample: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<(u64, bool), SimError> {
        let mut wl = Workload::new(spec, seed);
        let t0 = rec.t0;
        let stop_at = spec
            .stop_seconds
            .map(|s| t0 + (s * 1e9) as u64)
            .unwrap_or(u64::MAX);
        let stop_bytes = spec.stop_bytes.unwrap_or(u64::MAX);
        let depth = (spec.queue_depth as usize) * (spec.jobs as usize);
        let watts = self.profile.power.controller_active_w;
        let mut queue: VecDeque<Pending> = VecDeque::with_capacity(depth);
        let mut issued = 0u64;
        let mut end = t0;
        let mut stopped = false;
        let mut next_job = 0usize;
        let jobs = spec.jobs as usize;
        // Never issue an I/O that would move past stop_bytes (a whole-drive pass must not
        // wrap around to the start).
        let bs = spec.block_size;
        let fits = |issued: u64| issued.saturating_add(bs) <= stop_bytes || issued == 0;
        for _ in 0..depth {
            if !fits(issued) {
                break;
            }
            let (done, bytes, read) = self.issue(&mut wl, next_job, t0, depth)?;
            next_job = next_of(next_job, jobs);
            issued += bytes;
            enqueue(&mut queue, (done, t0, bytes as u32 / 4096, read));
        }
        while let Some((done, at, slots, read)) = queue.pop_front() {
            if done >= rec.next && !stopped {
                stopped = !self.close_until(rec, done, watts, on_sample);
            }
            rec.complete(done, done - at, slots as u64 * SLOT_BYTES, read);
            end = end.max(done);
            if !stopped && done < stop_at && fits(issued) {
                let (d2, bytes, r2) = self.issue(&mut wl, next_job, done, depth)?;
                next_job = next_of(next_job, jobs);
                issued += bytes;
                enqueue(&mut queue, (d2, done, bytes as u32 / 4096, r2));
            }
        }
        Ok((end, stopped))
    }

    /// Issue one I/O at `t`; returns (completion, bytes, read).
    #[inline]
    fn issue(
        &mut self,
        wl: &mut Workload,
        job: usize,
        t: u64,
        outstanding: usize,
    ) -> Result<(u64, u64, bool), SimError> {
        let io = wl.next(job);
        // Two-stage prefetch: the L2P entry of a write far ahead, the P2L entry of its
        // old copy for one nearer (whose L2P line has arrived by now).
        if let (Some(far), Some(near)) = (wl.peek(LOOKAHEAD - 1), wl.peek(LOOKAHEAD / 2)) {
            self.ftl.map.prefetch_l2p(far.lba);
            self.ftl.map.prefetch_old(near.lba);
        }
        let done = self.issue_io(io, t, outstanding)?;
        Ok((done, io.slots as u64 * SLOT_BYTES, io.read))
    }

    /// One read or write submitted at `t` through the host and the FTL; returns its
    /// completion. The one path every I/O takes (phases, trace replay and sessions).
    #[inline(always)]
    pub(crate) fn issue_io(&mut self, io: Io, t: u64, outstanding: usize) -> Result<u64, SimError> {
        let bytes = io.slots as u64 * SLOT_BYTES;
        let tc = self.host.accept(t, outstanding);
        let done = if io.read {
            self.background(tc)?;
            let (first, last) = self.ftl.read(io.lba, io.slots, tc);
            self.host.transfer_out(first, last, bytes, self.page_bytes)
        } else {
            self.ftl.ra.forget();
            let mut flow = self.host.transfer_in(tc, bytes);
            // Each slot enters the write buffer as it arrives (a large write streams);
            // once the buffer admits later than the whole payload arrives, arrivals no
            // longer matter (admission times only grow).
            let (mut ack, all_in) = (tc, flow.end());
            // A large write's old copies lie anywhere after random writes: each slot's
            // valid-bitmap word is fetched a few slots ahead of its invalidation.
            for i in 0..io.slots.min(OLD_AHEAD) {
                self.ftl.map.prefetch_old(io.lba + i);
            }
            // Slots `run.0..run.1` take the fast path of the FTL together (`run_room`: no
            // GC, no program, no block opened, so no firmware time either): placed one by
            // one like the others, written as one run once the last is placed.
            let mut run = (0, 0);
            for i in 0..io.slots {
                let placed = self.place(io, i, &mut flow, &mut ack, all_in);
                if i < run.1 {
                    if i + 1 == run.1 {
                        self.ftl.write_run(io.lba + run.0, run.1 - run.0, placed)?;
                    }
                    continue;
                }
                self.ftl.write_slot(io.lba + i, placed)?;
                // GC driven by this slot ran when the slot was placed, not when it was buffered
                self.host.firmware(placed, self.ftl.take_firmware_ns());
                if i + 1 < io.slots {
                    run = (i + 1, i + 1 + self.ftl.run_room(io.slots - i - 1));
                }
            }
            // the firmware updates the mapping entries the write changed once it is placed
            let updates = self.host.map_update_ns(io.lba, io.slots);
            self.host.firmware(ack, updates);
            self.last_write = self.last_write.max(ack);
            ack + self.host.write_latency
        } + self.host.host_latency;
        self.host.completes(done, outstanding);
        self.last_done = self.last_done.max(done);
        Ok(done)
    }

    /// Slot `i` of write `io` enters the write buffer (after `ack`, the previous slot's
    /// admission, and its arrival over the link) and the write path: returns when it is
    /// placed. These times only grow.
    #[inline(always)]
    fn place(&mut self, io: Io, i: u32, flow: &mut host::Inflow, ack: &mut u64, all_in: u64) -> u64 {
        if i + OLD_AHEAD < io.slots {
            self.ftl.map.prefetch_old(io.lba + i + OLD_AHEAD);
        }
        let arrived = if *ack >= all_in {
            *ack
        } else {
            flow.next_arrival()
        };
        *ack = self.ftl.buffer.admit((*ack).max(arrived));
        self.host.write_path(*ack)
    }

    /// A command of a trace or a fio job submitted at `t`: the background work due by then
    /// first (a read does it inside `issue_io`, once the command is accepted), then a read
    /// or write through `issue_io`, or a TRIM or flush.
    pub(crate) fn submit_command(
        &mut self,
        cmd: Command,
        t: u64,
        outstanding: usize,
    ) -> Result<u64, SimError> {
        match cmd {
            Command::Io(io) => {
                if !io.read {
                    // write-idle time before it goes to background GC, as a read would give it
                    self.background(t)?;
                }
                self.issue_io(io, t, outstanding)
            }
            Command::TrimOrFlush(trim) => {
                self.background(t)?;
                Ok(self.issue_trim_or_flush(trim, t, outstanding))
            }
        }
    }

    /// A TRIM of `slots` slots from `lba` (`Some`) or a flush (`None`) submitted at `t`;
    /// returns its completion: the command overhead, then the table updates (1 ns a slot,
    /// as a trim phase) or the write buffer's drain (a program unit not yet full is not
    /// padded). Trace replay and sessions both issue them here.
    pub(crate) fn issue_trim_or_flush(&mut self, trim: Option<(u32, u32)>, t: u64, outstanding: usize) -> u64 {
        let tc = self.host.accept(t, outstanding);
        let done = match trim {
            Some((lba, slots)) => {
                if slots > 0 {
                    self.ftl.trim(lba, slots);
                }
                tc + slots as u64
            }
            None => tc.max(self.ftl.buffer.drained_at()),
        } + self.host.host_latency;
        self.host.completes(done, outstanding);
        self.last_done = self.last_done.max(done);
        done
    }

    /// Background work before a command submitted at `t` (checked once per millisecond of
    /// virtual time: cheap, and fine-grained enough for GC). The die time the host leaves
    /// while it only reads goes to GC (erases and collection); once no command has been in
    /// flight for `idle_gc_delay`, the drive is idle, as in an idle phase: the SLC cache
    /// folds too (a job's start delay or think time, a pause in a trace).
    #[inline]
    pub(crate) fn background(&mut self, t: u64) -> Result<(), SimError> {
        const STEP_NS: u64 = 1_000_000;
        let from = self.bg_until.max(self.last_write + self.ftl.idle_gc_delay);
        if t >= from + STEP_NS {
            let quiet = from.max(self.last_done + self.ftl.idle_gc_delay);
            if t > quiet {
                if quiet > from {
                    self.ftl.background_gc(from, quiet)?;
                }
                // (a gap between commands: whole blocks, the host's next command waits)
                self.ftl.idle(quiet, t, u32::MAX)?;
            } else {
                self.ftl.background_gc(from, t)?;
            }
            self.bg_until = t;
        }
        Ok(())
    }

    pub(crate) fn finish(&self, mut rec: Recorder, start: Snapshot, end: u64, interrupted: bool) -> PhaseResult {
        rec.close_segments(end);
        let s = self.snapshot();
        let dur = (end - rec.t0) as f64 / 1e9;
        let energy = s.energy_j - start.energy_j;
        let ios = (rec.read_ios + rec.write_ios) as f64;
        let moved = (rec.read_bytes + rec.write_bytes) as f64;
        let per_s = |x: f64| if dur > 0.0 { x / dur } else { 0.0 };
        let mbps = per_s(moved) / 1e6;
        let power = per_s(energy);
        let mut totals = vec![
            ("duration_s", dur),
            ("ios", ios),
            ("read_ios", rec.read_ios as f64),
            ("write_ios", rec.write_ios as f64),
            ("read_bytes", rec.read_bytes as f64),
            ("write_bytes", rec.write_bytes as f64),
            ("iops", per_s(ios)),
            ("mbps", mbps),
            ("energy_j", energy),
            ("avg_power_w", power),
            (
                "mbps_per_watt",
                if power > 0.0 { mbps / power } else { f64::NAN },
            ),
        ];
        // after "mbps", where the counters have always been
        totals.splice(8..8, s.since(&start));
        PhaseResult {
            rows: rec.rows,
            segments: rec.segments,
            hist: rec.hist,
            totals,
            interrupted,
        }
    }
}
