//! A phase spec and the stream of I/Os it produces (sequential or uniform random, read
//! share, block size, LBA range, jobs). Deterministic for a given seed.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::nand::SLOT_BYTES;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    Purge,
    Io,
    Trim,
    Idle,
}

#[derive(Debug, Clone)]
pub struct PhaseSpec {
    pub kind: PhaseKind,
    pub read_pct: u32,
    pub random: bool,
    pub block_size: u64,
    pub queue_depth: u32,
    pub jobs: u32,
    pub offset: u64,
    /// 0 = to the end of the drive.
    pub length: u64,
    pub stop_bytes: Option<u64>,
    pub stop_seconds: Option<f64>,
    pub seconds: Option<f64>,
    /// Idle: end as soon as the drive has no background work left (`seconds` is the cap).
    pub until_quiet: bool,
    pub sample_interval_s: f64,
    pub segment_bytes: u64,
}

impl PhaseSpec {
    pub fn new(kind: PhaseKind) -> PhaseSpec {
        PhaseSpec {
            kind,
            read_pct: 0,
            random: false,
            block_size: 128 * 1024,
            queue_depth: 32,
            jobs: 1,
            offset: 0,
            length: 0,
            stop_bytes: None,
            stop_seconds: None,
            seconds: None,
            until_quiet: false,
            sample_interval_s: 1.0,
            segment_bytes: 1_000_000_000,
        }
    }

    /// A sequential write pass over at least nine tenths of a drive of `user_bytes`, with no
    /// time limit (a validated spec: its length resolved).
    pub fn writes_whole_drive(&self, user_bytes: u64) -> bool {
        let bytes = self.length.min(self.stop_bytes.unwrap_or(u64::MAX));
        self.kind == PhaseKind::Io
            && self.read_pct == 0
            && !self.random
            && self.stop_seconds.is_none()
            && bytes >= user_bytes / 10 * 9
    }

    /// Resolve `length = 0` and check the spec against a drive of `user_bytes`.
    pub fn validated(mut self, user_bytes: u64) -> Result<PhaseSpec, String> {
        let cap = user_bytes - user_bytes % SLOT_BYTES;
        if self.length == 0 {
            self.length = cap.saturating_sub(self.offset);
        }
        if !self.offset.is_multiple_of(SLOT_BYTES) {
            return Err(format!(
                "offset = {}: must be a multiple of 4096",
                self.offset
            ));
        }
        if !self.length.is_multiple_of(SLOT_BYTES) {
            return Err(format!(
                "length = {}: must be a multiple of 4096",
                self.length
            ));
        }
        if self.offset + self.length > cap {
            return Err(format!(
                "offset + length = {}: past the end of the drive (user capacity {} bytes)",
                self.offset + self.length,
                cap
            ));
        }
        if self.read_pct > 100 {
            return Err(format!("read_pct = {}: must be 0..100", self.read_pct));
        }
        if !(0.0001..=3600.0).contains(&self.sample_interval_s) {
            return Err(format!(
                "sample_interval_s = {}: must be in 0.0001..3600",
                self.sample_interval_s
            ));
        }
        if self.segment_bytes < SLOT_BYTES {
            return Err(format!(
                "segment_bytes = {}: must be >= 4096",
                self.segment_bytes
            ));
        }
        match self.kind {
            PhaseKind::Io => {
                if self.block_size == 0
                    || !self.block_size.is_multiple_of(SLOT_BYTES)
                    || self.block_size > 64 << 20
                {
                    return Err(format!(
                        "block_size = {}: must be a multiple of 4096 up to 64 MiB",
                        self.block_size
                    ));
                }
                if self.block_size * self.jobs as u64 > self.length {
                    return Err(format!(
                        "length = {}: too small for {} job(s) of block_size {}",
                        self.length, self.jobs, self.block_size
                    ));
                }
                if !(1..=65536).contains(&self.queue_depth) {
                    return Err(format!(
                        "queue_depth = {}: must be 1..65536",
                        self.queue_depth
                    ));
                }
                if !(1..=1024).contains(&self.jobs) {
                    return Err(format!("jobs = {}: must be 1..1024", self.jobs));
                }
                if self.stop_bytes.is_none() && self.stop_seconds.is_none() {
                    return Err("io phase: needs stop_bytes or stop_seconds".into());
                }
                if let Some(s) = self.stop_seconds {
                    if !(s > 0.0 && s <= 1e7) {
                        return Err(format!("stop_seconds = {s}: must be in (0, 1e7]"));
                    }
                }
                if self.stop_bytes == Some(0) {
                    return Err("stop_bytes = 0: must be > 0".into());
                }
            }
            PhaseKind::Idle => match self.seconds {
                Some(s) if s > 0.0 && s <= 1e7 => {}
                _ => {
                    return Err(format!(
                        "seconds = {:?}: an idle phase needs seconds in (0, 1e7]",
                        self.seconds
                    ))
                }
            },
            PhaseKind::Purge | PhaseKind::Trim => {}
        }
        Ok(self)
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Io {
    pub lba: u32,
    pub slots: u32,
    pub read: bool,
}

/// Generates I/Os for each job: sequential jobs each own an equal part of the range
/// (wrapping at its end); random jobs pick uniformly aligned blocks in the whole range.
/// I/Os generated ahead for random workloads, so the engine can prefetch the mapping
/// entries they will touch (a power of two).
pub const LOOKAHEAD: usize = 16;

pub struct Workload {
    rng: Xoshiro256PlusPlus,
    ahead: [Io; LOOKAHEAD],
    head: usize,
    read_pct: u32,
    random: bool,
    bs_slots: u32,
    base: u64,
    blocks: u64,
    job_blocks: u64,
    cursor: Vec<u64>,
}

impl Workload {
    pub fn new(spec: &PhaseSpec, seed: u64) -> Workload {
        let bs_slots = (spec.block_size / SLOT_BYTES) as u32;
        let blocks = spec.length / spec.block_size;
        let jobs = spec.jobs.max(1) as u64;
        let mut w = Workload {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            ahead: [Io {
                lba: 0,
                slots: 0,
                read: false,
            }; LOOKAHEAD],
            head: 0,
            read_pct: spec.read_pct,
            random: spec.random,
            bs_slots,
            base: spec.offset / SLOT_BYTES,
            blocks,
            job_blocks: (blocks / jobs).max(1),
            cursor: vec![0; jobs as usize],
        };
        if w.random {
            for i in 0..LOOKAHEAD {
                w.ahead[i] = w.generate(0);
            }
        }
        w
    }

    /// The random I/O `k` places ahead of the next one (k < LOOKAHEAD).
    #[inline]
    pub fn peek(&self, k: usize) -> Option<Io> {
        self.random
            .then(|| self.ahead[(self.head + k) & (LOOKAHEAD - 1)])
    }

    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((self.rng.next_u64() as u128 * n as u128) >> 64) as u64
    }

    #[inline]
    pub fn next(&mut self, job: usize) -> Io {
        if !self.random {
            return self.generate(job);
        }
        let io = self.ahead[self.head];
        self.ahead[self.head] = self.generate(job);
        self.head = (self.head + 1) & (LOOKAHEAD - 1);
        io
    }

    #[inline]
    fn generate(&mut self, job: usize) -> Io {
        let read = match self.read_pct {
            0 => false,
            100 => true,
            p => self.below(100) < p as u64,
        };
        let blk = if self.random {
            self.below(self.blocks)
        } else {
            let c = self.cursor[job];
            self.cursor[job] = if c + 1 == self.job_blocks { 0 } else { c + 1 };
            job as u64 * self.job_blocks + c
        };
        Io {
            lba: (self.base + blk * self.bs_slots as u64) as u32,
            slots: self.bs_slots,
            read,
        }
    }
}
