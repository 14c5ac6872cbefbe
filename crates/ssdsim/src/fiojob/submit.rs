//! How a fio job's I/O reaches the drive (through the one path every I/O takes, the
//! engine's `issue_io`): reads and writes of whole 4 KiB slots, trims and
//! Write Zeroes / Uncorrectable through the trim path, NVMe Verify read inside the drive;
//! with the job's depth figures and its completion event.

use std::cmp::Reverse;

use crate::engine::{Command, Drive};
use crate::fiojob::report::depth_bucket;
use crate::fiojob::stream::Req;
use crate::fiojob::wave_state::WaveState;
use crate::fiojob::{READ, TRIM, WMODE_UNCOR, WMODE_VERIFY, WMODE_ZEROES, WRITE};
use crate::ftl::mapping::NONE;
use crate::nand::SLOT_BYTES;
use crate::workload::Io;
use crate::SimError;

impl Drive {
    /// Issue `req` of job `k` at `t` (after the zone reset `reset`, if any): the depth
    /// figures, the drive, the completion event; when it completes.
    #[inline(always)]
    pub(super) fn issue_req(
        &mut self,
        req: Req,
        reset: Option<(u64, u64)>,
        t: u64,
        k: usize,
        w: &mut WaveState,
    ) -> Result<u64, SimError> {
        w.l.outstanding += 1;
        *w.total_out += 1;
        w.o.issued += 1;
        let ends_ramp = w.l.ramp_open && w.l.ramp_submit && t >= w.l.stats_from;
        if ends_ramp {
            // fio's ramp ends at this submission (io_u_queued): its count and depth are
            // reset with it, its submission counted after
            w.l.ramp_open = false;
            w.l.ramp_skip[req.dir] += 1;
        }
        if t >= w.l.stats_from && !w.l.nullq.on() {
            // one I/O per submission (the null engine's batch: counted as it is committed)
            if !ends_ramp {
                w.o.depths.level[depth_bucket(w.l.outstanding)] += 1;
            }
            w.o.depths.submit[1] += 1;
        }
        if let Some((start, len)) = reset {
            // the zone reset: a trim of the zone's LBAs, before the write
            let r = Req {
                dir: TRIM,
                offset: start,
                len,
                mode: 0,
            };
            let mut none = 0;
            self.submit_req(r, t, *w.total_out, &mut none)?;
        }
        let done = self.submit_req(req, t, *w.total_out, &mut w.o.dirs[READ].unwritten)?;
        w.heap.push(Reverse((
            done,
            t,
            k as u32,
            ((req.dir as u32) << 30) | (req.len / 512) as u32,
            req.offset,
        )));
        Ok(done)
    }

    /// One job I/O at `t`: reads and writes through `issue_io` (whole 4 KiB slots they
    /// touch), trims through the trim path (the slots they cover entirely).
    fn submit_req(
        &mut self,
        r: Req,
        t: u64,
        outstanding: usize,
        unwritten: &mut u64,
    ) -> Result<u64, SimError> {
        let first = r.offset / SLOT_BYTES;
        if r.dir == TRIM || r.mode == WMODE_ZEROES || r.mode == WMODE_UNCOR {
            let a = r.offset.div_ceil(SLOT_BYTES);
            let b = (r.offset + r.len) / SLOT_BYTES;
            let trim = Some((a as u32, b.saturating_sub(a) as u32));
            return self.submit_command(Command::TrimOrFlush(trim), t, outstanding);
        }
        let slots = (r.offset + r.len).div_ceil(SLOT_BYTES) - first;
        if r.dir == READ {
            let map = &self.ftl.map;
            if (first..first + slots).any(|l| map.slot(l as u32) == NONE) {
                *unwritten += 1;
            }
        } else if r.mode == WMODE_VERIFY {
            return self.verify(first as u32, slots as u32, t, outstanding);
        } else {
            debug_assert_eq!(r.dir, WRITE);
        }
        let io = Io {
            lba: first as u32,
            slots: slots as u32,
            read: r.dir == READ,
        };
        self.submit_command(Command::Io(io), t, outstanding)
    }
}

impl Drive {
    /// NVMe Verify of `slots` slots from `lba` at `t`: the drive reads the range from NAND
    /// and checks it (ECC) inside; no data crosses the link. Completes when the last page
    /// is read, plus the command overhead.
    fn verify(
        &mut self,
        lba: u32,
        slots: u32,
        t: u64,
        outstanding: usize,
    ) -> Result<u64, SimError> {
        let tc = self.host.accept(t, outstanding);
        self.background(tc)?;
        let (_, last) = self.ftl.read(lba, slots, tc);
        let done = last.max(tc) + self.host.host_latency;
        self.host.completes(done, outstanding);
        Ok(done)
    }
}
