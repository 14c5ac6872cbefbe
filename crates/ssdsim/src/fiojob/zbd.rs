//! fio's `zonemode=zbd` (fio's zbd.c, its rules restated) on the simulated drive: the
//! drive's LBA space cut into zones of `zone_size` bytes (the first `zone_cap` of each
//! writable), each with a write pointer, shared by every job of the run as fio shares one
//! device's zones. A conventional simulated drive is run as fio runs a non-zoned device
//! (fio's emulated zones): the zone state lives in the host; a zone reset is a trim of the
//! zone's LBAs, so what the drive does with whole invalidated zones follows from its FTL.
//!
//! Per I/O (`adjust`), before it is issued:
//! - writes go to a write target zone, at its write pointer: the zone the offset falls in
//!   when it may be written (at most `max_open` zones written at once, `job_max_open` per
//!   job, 0: no limit), else one of the write target zones (picked by the offset), else the
//!   next zone that may be; a zone with less than the smallest block left is finished; a full
//!   zone (or one due a reset by `zone_reset_threshold` / `zone_reset_frequency`) is reset
//!   first, after the job's I/Os in flight are in; the length is cut to the zone's end;
//! - reads, unless `read_beyond_wp`, only read written data: a zone with too little is
//!   swapped for the nearest one with enough (the next one for sequential reads), the offset
//!   and length kept below the write pointer; none left ends the job;
//! - trims reset the zone (a random trim of an empty zone takes the nearest written one).
//!
//! The write pointer moves when a write is issued; a zone leaves the write targets when the
//! write that fills it is issued (fio: when it completes, for an asynchronous engine).

use super::{JobSpec, READ, TRIM, WRITE};

/// A job's zbd options (fio's names).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZbdJob {
    pub zone_size: u64,
    /// Writable bytes from each zone's start (fio's zonecapacity; = zone_size by default).
    pub zone_cap: u64,
    pub max_open: u32,
    pub job_max_open: u32,
    pub read_beyond_wp: bool,
    pub reset_threshold: f64,
    pub reset_frequency: f64,
    /// fio's verify is on: full zones are not reset for writes (their data is still to be
    /// verified), they are skipped.
    pub verify: bool,
}

/// One I/O after the zone rules, or the end of the job (fio's io_u_eof).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Adjusted {
    /// (direction, offset, length), and the zone (start, length) to reset before it.
    Io(usize, u64, u64, Option<(u64, u64)>),
    Eof,
}

/// Per job: its zone range and what it has done.
#[derive(Debug, Clone, Default)]
pub struct JobZones {
    pub min_zone: u32,
    pub max_zone: u32,
    pub file_offset: u64,
    pub io_size: u64,
    pub write_zones: u32,
    pub wrote: bool,
    pub started: bool,
    pub resets: u64,
    /// I/Os placed in the current pass over the region (an ended pass that placed some
    /// starts another, as fio loops while its byte count is not reached).
    pub pass_ios: u64,
}

pub struct Zones {
    pub zone_size: u64,
    cap: u64,
    nr: u32,
    wp: Vec<u64>,
    write: Vec<bool>,
    /// fio's write target zones array (zone indices, in the order they were added).
    write_zones: Vec<u32>,
    max_write: u32,
    /// Bytes below the write pointers of the zones in the write range (fio's
    /// wp_valid_data_bytes), and the write countdown to the next threshold reset.
    vdb: u64,
    write_cnt: u64,
}

impl Zones {
    /// The zones of a drive of `user_bytes`, for the jobs with zbd options (all with the
    /// same zone geometry and max_open_zones, checked when the job file is compiled).
    pub fn new(specs: &[JobSpec], user_bytes: u64) -> Option<Zones> {
        let z = specs.iter().find_map(|s| s.zbd)?;
        let size = z.zone_size.max(512);
        let nr = user_bytes.div_ceil(size) as u32;
        let mut zones = Zones {
            zone_size: size,
            cap: z.zone_cap.clamp(512, size),
            nr,
            wp: (0..nr as u64).map(|i| i * size).collect(),
            write: vec![false; nr as usize],
            write_zones: vec![],
            max_write: z.max_open,
            vdb: 0,
            write_cnt: 0,
        };
        zones.reset_write_cnt(z.reset_frequency);
        Some(zones)
    }

    pub fn job(&self, s: &JobSpec) -> JobZones {
        JobZones {
            min_zone: (s.offset / self.zone_size) as u32,
            max_zone: (s.offset + s.size)
                .div_ceil(self.zone_size)
                .min(self.nr as u64) as u32,
            file_offset: s.offset,
            io_size: s.size,
            ..Default::default()
        }
    }

    fn start(&self, z: u32) -> u64 {
        z as u64 * self.zone_size
    }

    fn cap_end(&self, z: u32) -> u64 {
        self.start(z) + self.cap
    }

    fn remainder(&self, z: u32) -> u64 {
        self.cap_end(z).saturating_sub(self.wp[z as usize])
    }

    fn zone_of(&self, off: u64) -> u32 {
        ((off / self.zone_size) as u32).min(self.nr - 1)
    }

    fn reset_write_cnt(&mut self, freq: f64) {
        self.write_cnt = if freq > 0.0 {
            (1.0 / freq).min(u32::MAX as f64) as u64
        } else {
            u32::MAX as u64
        };
    }

    /// fio's __zbd_write_zone_get: may zone `z` be written by job `jz` (it joins the write
    /// target zones if there is room)?
    fn write_zone_get(&mut self, zo: &ZbdJob, jz: &mut JobZones, z: u32) -> bool {
        if zo.verify && self.remainder(z) == 0 {
            return false;
        }
        if self.max_write == 0 {
            return true;
        }
        if self.write[z as usize] {
            return self.remainder(z) != 0;
        }
        if (zo.job_max_open > 0 && jz.write_zones >= zo.job_max_open)
            || self.write_zones.len() as u32 >= self.max_write
        {
            return false;
        }
        self.write_zones.push(z);
        self.write[z as usize] = true;
        jz.write_zones += 1;
        true
    }

    fn write_zone_put(&mut self, jz: &mut JobZones, z: u32) {
        if !self.write[z as usize] {
            return;
        }
        self.write[z as usize] = false;
        self.write_zones.retain(|&x| x != z);
        jz.write_zones = jz.write_zones.saturating_sub(1);
    }

    /// fio's pick_random_zone_idx: a write target index from the I/O's place in the range.
    fn pick_index(&self, jz: &JobZones, off: u64) -> usize {
        let n = self.write_zones.len() as u64;
        ((off.saturating_sub(jz.file_offset) as u128 * n as u128 / jz.io_size.max(1) as u128)
            as u64)
            .min(n.saturating_sub(1)) as usize
    }

    /// fio's zbd_pick_write_zone: the first write target zone, from the picked index on,
    /// inside the job's range.
    fn pick_write_zone(&self, jz: &JobZones, off: u64) -> Option<u32> {
        let n = self.write_zones.len();
        let first = self.pick_index(jz, off);
        (0..n)
            .map(|i| self.write_zones[(first + i) % n])
            .find(|&z| jz.min_zone <= z && z < jz.max_zone)
    }

    fn finish(&mut self, jz: &mut JobZones, z: u32) {
        self.write_zone_put(jz, z);
        self.wp[z as usize] = self.start(z) + self.zone_size;
    }

    fn next_zone(jz: &JobZones, z: u32) -> u32 {
        if z + 1 >= jz.max_zone {
            jz.min_zone
        } else {
            z + 1
        }
    }

    /// fio's zbd_convert_to_write_zone: the zone a write aimed at `zb` goes to.
    fn write_zone(
        &mut self,
        zo: &ZbdJob,
        jz: &mut JobZones,
        off: u64,
        mut zb: u32,
        min_bs: u64,
        random: bool,
    ) -> Option<u32> {
        let rem = self.remainder(zb);
        if rem > 0 && rem < min_bs {
            self.finish(jz, zb);
            if zb + 1 >= jz.max_zone && !random {
                return None;
            }
            zb = Self::next_zone(jz, zb);
        }
        if self.write_zone_get(zo, jz, zb) {
            return Some(zb);
        }
        let limited = self.max_write > 0 || zo.job_max_open > 0;
        let mut z = if limited && !self.write_zones.is_empty() {
            self.write_zones[self.pick_index(jz, off)]
        } else {
            self.zone_of(off)
        }
        .clamp(jz.min_zone, jz.max_zone - 1);
        let examine = if !limited {
            true
        } else if self.write_zones.is_empty() {
            false
        } else {
            z = self.pick_write_zone(jz, off)?;
            true
        };
        if examine && self.remainder(z) >= min_bs {
            return Some(z);
        }
        // the chosen zone is full: another one
        if random {
            if self.write_zone_get(zo, jz, zb) {
                return Some(zb);
            }
            z = zb;
        }
        for _ in 0..jz.io_size / self.zone_size {
            z = Self::next_zone(jz, z);
            if self.write[z as usize] {
                continue;
            }
            if self.write_zone_get(zo, jz, z) {
                return Some(z);
            }
        }
        let targets: Vec<u32> = self.write_zones.clone();
        for z in targets {
            if z < jz.min_zone || z >= jz.max_zone {
                continue;
            }
            if self.remainder(z) >= min_bs && self.write_zone_get(zo, jz, z) {
                return Some(z);
            }
        }
        if random && !zo.verify {
            // every write target has less than a block left: finish one and write there
            if let Some(z) = self.pick_write_zone(jz, off) {
                self.finish(jz, z);
                return Some(z);
            }
        }
        None
    }

    /// fio's zbd_find_zone: the nearest zone in the job's range with `min` bytes written
    /// (after `zb` for sequential I/O; either side for random).
    fn find_zone(&self, jz: &JobZones, zb: u32, min: u64, random: bool) -> Option<u32> {
        let (lo, hi) = (jz.min_zone as i64, jz.max_zone as i64);
        let has = |z: i64| self.start(z as u32) + min <= self.wp[z as usize];
        let mut d = 1i64;
        loop {
            let (a, b) = (zb as i64 + d, zb as i64 - d);
            if a >= hi && (!random || b < lo) {
                return None;
            }
            if a < hi && has(a) {
                return Some(a as u32);
            }
            if random && b >= lo && has(b) {
                return Some(b as u32);
            }
            d += 1;
        }
    }

    fn reset(&mut self, jz: &mut JobZones, z: u32) -> bool {
        let data = self.wp[z as usize] - self.start(z);
        if data == 0 {
            return false;
        }
        self.vdb = self.vdb.saturating_sub(data);
        self.wp[z as usize] = self.start(z);
        jz.resets += 1;
        true
    }

    /// One I/O of job `jz` (options `zo`) through the zone rules (fio's zbd_adjust_ddir
    /// and zbd_adjust_block), the zone state moved as the I/O is issued.
    #[allow(clippy::too_many_arguments)] // an I/O and the job it belongs to
    pub fn adjust(
        &mut self,
        zo: &ZbdJob,
        jz: &mut JobZones,
        spec: &JobSpec,
        mut dir: usize,
        off: u64,
        len: u64,
        min_bs: u64,
    ) -> Adjusted {
        let random = spec.random;
        if !jz.started {
            // fio's zbd_file_reset: with verify, a writing job resets its zones before it
            // writes, so that no reset falls between the writes and their verification
            jz.started = true;
            if zo.verify && spec.write {
                let (a, b) = (jz.min_zone, jz.max_zone);
                let mut any = false;
                for z in a..b {
                    any |= self.reset(jz, z);
                    self.write_zone_put(jz, z);
                }
                if any {
                    let span = Some((self.start(a), (b - a) as u64 * self.zone_size));
                    return match self.adjust(zo, jz, spec, dir, off, len, min_bs) {
                        Adjusted::Io(d, o, l, _) => Adjusted::Io(d, o, l, span),
                        Adjusted::Eof => Adjusted::Eof,
                    };
                }
            }
        }
        if dir == READ
            && spec.read
            && spec.write
            && !jz.wrote
            && !zo.read_beyond_wp
            && spec.rwmixread < 100
        {
            dir = WRITE; // nothing to read yet: the first I/O writes (fio's zbd_adjust_ddir)
        }
        let zb = self.zone_of(off);
        match dir {
            READ => {
                if zo.read_beyond_wp {
                    return Adjusted::Io(READ, off, len, None);
                }
                let mut z = zb;
                let mut range = self.wp[z as usize] - self.start(z);
                let mut off = off;
                if range < min_bs || (!random && off + min_bs > self.wp[z as usize]) {
                    let Some(n) = self.find_zone(jz, zb, min_bs, random) else {
                        return Adjusted::Eof;
                    };
                    z = n;
                    range = self.wp[z as usize] - self.start(z);
                    if !random {
                        off = self.start(z);
                    }
                }
                if range <= len {
                    off = self.start(z);
                } else if random {
                    off =
                        self.start(z) + ((off - self.start(zb)) % (range - len)) / min_bs * min_bs;
                }
                let l = len.min(self.wp[z as usize] - off) / min_bs * min_bs;
                Adjusted::Io(READ, off, l, None)
            }
            WRITE => {
                jz.wrote = true;
                let min_bs = spec
                    .bs
                    .get(WRITE)
                    .and_then(|v| v.iter().map(|x| x.0).min())
                    .unwrap_or(min_bs);
                let mut z = zb;
                loop {
                    let Some(n) = self.write_zone(zo, jz, off, z, min_bs, random) else {
                        return Adjusted::Eof;
                    };
                    z = n;
                    let rem = self.remainder(z);
                    if !(rem > 0 && rem < min_bs) {
                        break;
                    }
                }
                let mut reset_due = false;
                if zo.reset_frequency > 0.0
                    && self.vdb as f64 >= jz.io_size as f64 * zo.reset_threshold
                {
                    self.write_cnt = self.write_cnt.saturating_sub(1);
                    if self.write_cnt == 0 {
                        self.reset_write_cnt(zo.reset_frequency);
                        reset_due = true;
                    }
                }
                let mut reset = None;
                if reset_due || min_bs > self.remainder(z) {
                    if zo.verify && !reset_due {
                        return Adjusted::Eof; // fio verifies what is written instead
                    }
                    if self.reset(jz, z) {
                        reset = Some((self.start(z), self.zone_size));
                    }
                }
                let at = self.wp[z as usize];
                let l = len.min(self.cap_end(z) - at) / min_bs * min_bs;
                if l < min_bs {
                    return Adjusted::Eof;
                }
                self.wp[z as usize] = at + l;
                self.vdb += l;
                if at + l >= self.cap_end(z) {
                    self.write_zone_put(jz, z);
                }
                Adjusted::Io(WRITE, at, l, reset)
            }
            _ => {
                let mut z = zb;
                if random && self.wp[z as usize] == self.start(z) {
                    match self.find_zone(jz, zb, 1, true) {
                        Some(n) => z = n,
                        None => return Adjusted::Eof,
                    }
                }
                self.reset(jz, z);
                self.write_zone_put(jz, z);
                Adjusted::Io(TRIM, self.start(z), len, None)
            }
        }
    }

    /// Where every zone's write pointer is (tests).
    pub fn write_pointers(&self) -> &[u64] {
        &self.wp
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Dist, ExitWhat};
    use super::*;

    const MB: u64 = 1 << 20;

    fn spec(random: bool, zbd: ZbdJob) -> JobSpec {
        JobSpec {
            name: "z".into(),
            wave: 0,
            group: 0,
            exitall: false,
            exit_what: ExitWhat::Group,
            read: false,
            write: true,
            trim: false,
            random,
            trimwrite: false,
            rwmixread: 0,
            seq_skip: 0,
            seq_identical: false,
            perc_rand: [100; 3],
            bs: [
                vec![(64 << 10, 1.0)],
                vec![(64 << 10, 1.0)],
                vec![(MB, 1.0)],
            ],
            bs_range: [(0, 0); 3],
            offset: 0,
            size: 16 * MB,
            io_size: 64 * MB,
            loops: 1,
            number_ios: 0,
            iodepth: 1,
            time_based: false,
            runtime_ns: 0,
            ramp_ns: 0,
            startdelay_ns: 0,
            rate_bps: [0; 3],
            rate_iops: [0; 3],
            rate_poisson: false,
            thinktime_ns: 0,
            thinktime_blocks: 1,
            dist: Dist::Uniform,
            zones: vec![],
            sequence: vec![],
            sequence_stride: false,
            seed: 1,
            randrepeat: true,
            randommap: false,
            ba: 0,
            zone_size: 0,
            zone_skip: 0,
            ss: None,
            ss_group: false,
            lat_target_ns: 0,
            lat_window_ns: 0,
            lat_pct: 100.0,
            lat_run: false,
            log_ns: 500_000_000,
            unit_log: Default::default(),
            bw_ns: 500_000_000,
            iops_ns: 500_000_000,
            keep_log: false,
            hist_ms: 0,
            verify: None,
            write_mode: [100, 0, 0, 0],
            flow: 0,
            flow_id: 0,
            flow_sleep_ns: 0,
            zbd: Some(zbd),
            iodepth_low: 0,
            calls: Default::default(),
            complete_min: 1,
            complete_max: 0,
            rate_min_bps: [0; 3],
            rate_min_iops: [0; 3],
            rate_cycle_ns: 0,
        }
    }

    fn zbd(max_open: u32, job_max_open: u32) -> ZbdJob {
        ZbdJob {
            zone_size: MB,
            zone_cap: MB,
            max_open,
            job_max_open,
            read_beyond_wp: false,
            reset_threshold: 0.0,
            reset_frequency: 0.0,
            verify: false,
        }
    }

    /// Random offsets from two jobs sharing the zones: every write starts at its zone's
    /// write pointer and stays inside the zone, and no more zones than the limits are
    /// written at once.
    #[test]
    fn writes_start_at_the_write_pointer_under_the_open_zone_limits() {
        let zo = zbd(5, 3);
        let s = spec(true, zo);
        let mut zones = Zones::new(std::slice::from_ref(&s), 32 * MB).unwrap();
        let mut jobs = [zones.job(&s), zones.job(&s)];
        let mut x = 12345u64;
        for i in 0..20_000 {
            x = super::super::dist::mix(x);
            let off = x % (16 * MB) / 4096 * 4096;
            let jz = &mut jobs[i % 2];
            let Adjusted::Io(dir, at, len, reset) =
                zones.adjust(&zo, jz, &s, WRITE, off, 64 << 10, 64 << 10)
            else {
                panic!("a write found no zone");
            };
            assert_eq!(dir, WRITE);
            let z = (at / MB) as usize;
            let wp_before = zones.write_pointers()[z] - len;
            assert_eq!(at, wp_before, "write off the write pointer");
            assert!(at + len <= (z as u64 + 1) * MB);
            if let Some((start, n)) = reset {
                assert_eq!((start, n), (z as u64 * MB, MB));
                assert_eq!(at, start);
            }
            assert!(zones.write_zones.len() <= 5);
            assert!(jobs.iter().all(|j| j.write_zones <= 3));
        }
        assert!(jobs.iter().map(|j| j.resets).sum::<u64>() > 0);
    }

    /// Reads stay below the write pointer; with nothing written there is nothing to read.
    #[test]
    fn reads_stay_below_the_write_pointers() {
        let zo = zbd(0, 0);
        let mut s = spec(false, zo);
        let mut zones = Zones::new(std::slice::from_ref(&s), 32 * MB).unwrap();
        let mut jz = zones.job(&s);
        s.read = true;
        s.write = false;
        assert_eq!(
            zones.adjust(&zo, &mut jz, &s, READ, 0, 64 << 10, 64 << 10),
            Adjusted::Eof
        );
        s.write = true;
        s.read = false;
        for _ in 0..3 {
            zones.adjust(&zo, &mut jz, &s, WRITE, 5 * MB, 64 << 10, 64 << 10);
        }
        s.read = true;
        s.write = false;
        // a read aimed at zone 0 goes to zone 5, the only one written, below its pointer
        let r = zones.adjust(&zo, &mut jz, &s, READ, 0, 256 << 10, 64 << 10);
        assert_eq!(r, Adjusted::Io(READ, 5 * MB, 192 << 10, None));
    }
}
