//! One job's I/O stream, generated as it is issued (O(1) memory whatever its length, but
//! for the random map of I/Os of several sizes, one bit per block): direction (rw kind,
//! rwmixread, trimwrite), offset (sequential per direction with `:N` skips and strided
//! zones, or random: the random map, uniform, zipf, pareto, normal, zoned), then the block
//! size (bs / bsrange / bssplit per direction, one that fits in what is left of the region),
//! in fio's order (io_u.c fill_io_u). A pass over the region ends when its offsets do (the
//! sequential end, the random map covered): `next_io` gives None, and the runner starts the
//! next pass (`new_pass`) as fio's next loop does, unless the stream wraps (time_based).

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::dist::{below, unit, Permutation, Skew, Zipf};
use super::randmap::RandMap;
use super::{Dist, JobSpec, READ, TRIM, WRITE};

#[derive(Debug, Clone, Copy)]
pub struct Req {
    pub dir: usize,
    pub offset: u64,
    pub len: u64,
    /// A write's mode (super::WMODE_*; 0 for reads and trims).
    pub mode: u8,
}

#[derive(Clone)]
pub struct Stream {
    rng: Xoshiro256PlusPlus,
    /// The generator as seeded: a new pass of a job with randrepeat starts from it again
    /// (fio re-seeds on each loop).
    rng0: Xoshiro256PlusPlus,
    seed: u64,
    base: u64,
    size: u64,
    ba: u64,
    blocks: u64,
    /// Offsets past the region's end wrap to its start (time_based, zonemode=zbd) instead
    /// of ending the pass.
    pub wrap: bool,
    /// The device's size: a sequential run with holes (`rw=write:4k`) wraps to the region's
    /// start once its offset from the region's start is past it (fio's get_next_seq_offset
    /// compares that offset with real_file_size), so only a region that starts at 0 and
    /// ends with the device wraps; past the region's end short of it, the pass is over.
    pub dev_room: u64,
    /// fio's random map, when an I/O may cover several blocks (block sizes that differ, or
    /// larger than blockalign): the blocks covered this pass.
    randmap: Option<RandMap>,
    /// bsrange per direction (min, max; (0, 0): the bs / bssplit list).
    bs_range: [(u64, u64); 3],
    /// Per direction: its one block size (0: several), its smallest.
    fixed: [u64; 3],
    min_lens: [u64; 3],
    random: bool,
    read: bool,
    write: bool,
    trimwrite: bool,
    rwmixread: u32,
    /// fio's rwmix cycle (io_u.c get_rw_ddir): the current direction, the I/Os issued per
    /// direction, and the count the current direction must reach before a new draw.
    mix_dir: usize,
    mix_issues: u64,
    issues: [u64; 2],
    /// Cumulative weights per direction.
    bs: [Vec<(u64, f64)>; 3],
    cursor: [u64; 3],
    skip: i64,
    /// random, rw=...:N: I/Os left in the current sequential run (or of the same offset)
    run_left: u64,
    identical: bool,
    last_start: u64,
    last_end: u64,
    /// percentage_random per direction, and where each direction's last I/O ended.
    perc_rand: [u32; 3],
    dir_end: [u64; 3],
    map: Option<Permutation>,
    pass: u64,
    skew: Option<Skew>,
    salt: u64,
    zones: Vec<(f64, u64, u64)>,
    /// random_distribution=sequence: the block indices, stride mode, I/Os per direction.
    sequence: Vec<u64>,
    sequence_stride: bool,
    seq_count: [u64; 3],
    zone_size: u64,
    zone_skip: u64,
    zone_done: [u64; 3],
    /// trimwrite: the block just trimmed, written next.
    pending_write: Option<Req>,
    /// write_mode split (cumulative %) and its own draw state (fio's wmode_state).
    wmode: [u32; 4],
    wmode_state: u64,
}

fn cumulative(v: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let total: f64 = v.iter().map(|x| x.1).sum::<f64>().max(1e-12);
    let mut acc = 0.0;
    v.iter()
        .map(|&(b, w)| {
            acc += w / total;
            (b, acc)
        })
        .collect()
}

/// Whether a random job needs fio's bit map (an I/O may cover several blocks) rather than
/// the keyed permutation (each I/O one block).
pub fn needs_randmap(j: &JobSpec) -> bool {
    let ba = if j.ba > 0 { j.ba } else { j.min_bs() };
    j.random
        && j.randommap
        && j.dist == Dist::Uniform
        && (0..3).any(|d| {
            [j.read, j.write || j.trimwrite, j.trim || j.trimwrite][d]
                && (j.bs_range[d].1 > 0 || j.bs[d].iter().any(|&(b, _)| b != ba))
        })
}

/// Blocks of fio's random map for a job (fio's last_block: the region less what the
/// smallest block size over blockalign would leave past the end, in blockalign units).
pub fn map_blocks(j: &JobSpec) -> u64 {
    let min = j.min_bs();
    let ba = if j.ba > 0 { j.ba } else { min };
    (j.size - min.saturating_sub(ba).min(j.size)) / ba
}

impl Stream {
    pub fn new(j: &JobSpec) -> Stream {
        let ba = if j.ba > 0 { j.ba } else { j.min_bs() };
        let blocks = (j.size / ba).max(1);
        let seed = j.seed;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let skew = match j.dist {
            Dist::Zipf(t) => Some(Skew::Zipf(Zipf::new(blocks, t))),
            Dist::Pareto(h) => Some(Skew::Pareto(h.ln() / (1.0 - h).ln())),
            Dist::Normal(pct) => Some(Skew::Normal(
                (blocks as f64 * pct / 100.0)
                    .ceil()
                    .min((blocks / 2) as f64),
            )),
            _ => None,
        };
        let salt = super::dist::mix(seed ^ 0x5eed);
        let randmap = needs_randmap(j).then(|| RandMap::new(map_blocks(j).max(1)));
        let map = (j.random && j.randommap && j.dist == Dist::Uniform && randmap.is_none())
            .then(|| Permutation::new(blocks, seed));
        let zones = if j.dist == Dist::Zoned {
            j.zones.clone()
        } else {
            vec![]
        };
        let _ = unit(&mut rng);
        Stream {
            rng0: rng.clone(),
            rng,
            seed,
            base: j.offset,
            size: j.size,
            ba,
            blocks: if randmap.is_some() {
                map_blocks(j).max(1)
            } else {
                blocks
            },
            wrap: j.time_based || j.zbd.is_some(),
            dev_room: j.size,
            randmap,
            bs_range: j.bs_range,
            fixed: [0, 1, 2].map(|d| {
                if j.bs_range[d].1 == 0 && j.bs[d].len() == 1 {
                    j.bs[d][0].0
                } else {
                    0
                }
            }),
            min_lens: [0, 1, 2].map(|d| match j.bs_range[d] {
                (min, max) if max > 0 => min,
                _ => j.bs[d].iter().map(|x| x.0).min().unwrap_or(512),
            }),
            random: j.random,
            read: j.read,
            write: j.write,
            trimwrite: j.trimwrite,
            rwmixread: j.rwmixread,
            mix_dir: READ,
            mix_issues: 0,
            issues: [0; 2],
            bs: [
                cumulative(&j.bs[0]),
                cumulative(&j.bs[1]),
                cumulative(&j.bs[2]),
            ],
            cursor: [0; 3],
            skip: j.seq_skip,
            run_left: 0,
            identical: j.seq_identical,
            last_start: 0,
            last_end: 0,
            perc_rand: j.perc_rand,
            dir_end: [0; 3],
            map,
            pass: 0,
            skew,
            salt,
            zones: {
                let total: f64 = zones.iter().map(|z| z.0).sum::<f64>().max(1e-12);
                let mut acc = 0.0;
                zones
                    .iter()
                    .map(|&(a, s, l)| {
                        acc += a / total;
                        (acc, s, l)
                    })
                    .collect()
            },
            sequence: if j.dist == Dist::Sequence {
                j.sequence.clone()
            } else {
                vec![]
            },
            sequence_stride: j.sequence_stride,
            seq_count: [0; 3],
            zone_size: j.zone_size,
            zone_skip: j.zone_skip,
            zone_done: [0; 3],
            wmode: {
                let mut acc = 0;
                j.write_mode.map(|p| {
                    acc += p;
                    acc
                })
            },
            wmode_state: super::dist::mix(seed ^ 0x3d0de),
            pending_write: None,
        }
    }

    /// A mixed job's direction, by fio's rule: once the current direction has issued
    /// `mix_issues` I/Os, draw one (READ with probability rwmixread %); on a change, the new
    /// direction runs until its own issue count reaches the old one's count times the new
    /// direction's share (fio's set_rwmix_bytes).
    /// With rates (`due`: each direction's next due time, and now), fio's rate_ddir then
    /// moves a direction that is ahead of its rate to the other one, if that one has a share
    /// of the mix and is due (or is due first); the switch becomes the current direction.
    #[inline]
    fn direction(&mut self, due: Option<([u64; 2], u64)>) -> usize {
        if self.read && self.write {
            if self.issues[self.mix_dir] >= self.mix_issues {
                let v = 1 + below(&mut self.rng, 100);
                let d = if v <= self.rwmixread as u64 {
                    READ
                } else {
                    WRITE
                };
                if d != self.mix_dir {
                    let share = if d == READ {
                        self.rwmixread
                    } else {
                        100 - self.rwmixread
                    };
                    self.mix_issues = self.issues[self.mix_dir] * share as u64 / 100;
                }
                self.mix_dir = d;
            }
            if let Some((at, now)) = due {
                let (d, o) = (self.mix_dir, self.mix_dir ^ 1);
                let o_share = if o == READ {
                    self.rwmixread
                } else {
                    100 - self.rwmixread
                };
                if at[d] > now && o_share > 0 && (at[o] <= now || at[o] < at[d]) {
                    self.mix_dir = o;
                }
            }
            self.issues[self.mix_dir] += 1;
            self.mix_dir
        } else if self.read {
            READ
        } else if self.write {
            WRITE
        } else {
            TRIM
        }
    }

    /// A block size of direction `dir` that fits in `room` bytes, drawn as fio draws it
    /// (io_u.c get_next_buflen): bsrange: min + max x U, aligned down to min, at most max;
    /// bssplit: the entry drawn, or the next one in the list that fits, else a new draw.
    /// None when not even the smallest fits (the pass is over).
    #[inline(always)]
    fn block_size(&mut self, dir: usize, room: u64) -> Option<u64> {
        let fixed = self.fixed[dir];
        if fixed > 0 {
            return (fixed <= room).then_some(fixed);
        }
        let (min, max) = self.bs_range[dir];
        if max > 0 {
            if room < min {
                return None;
            }
            // the draws that fit are those under room's aligned part: draw among them alone
            let fit = (room / min * min) as f64 / max as f64;
            let u = unit(&mut self.rng) * fit.min(1.0);
            let b = min + (max as f64 * u) as u64;
            return Some((b - b % min).clamp(min, max));
        }
        let v = &self.bs[dir];
        if v.len() == 1 {
            return (v[0].0 <= room).then_some(v[0].0);
        }
        if !v
            .iter()
            .zip(std::iter::once(0.0).chain(v.iter().map(|x| x.1)))
            .any(|(x, lo)| x.0 <= room && x.1 > lo)
        {
            return None;
        }
        loop {
            let u = unit(&mut self.rng);
            let v = &self.bs[dir];
            let at = v.iter().position(|x| u < x.1).unwrap_or(v.len() - 1);
            let mut lo = if at == 0 { 0.0 } else { v[at - 1].1 };
            for x in &v[at..] {
                if x.0 <= room && x.1 > lo {
                    return Some(x.0);
                }
                lo = x.1;
            }
        }
    }

    /// fio's sequence distribution (io_u.c): the direction's I/O count picks the entry;
    /// with the stride each cycle moves one sequence length on (wrapping in the region).
    fn sequence_block(&mut self, dir: usize) -> u64 {
        let n = self.sequence.len() as u64;
        let c = self.seq_count[dir];
        self.seq_count[dir] += 1;
        let b = self.sequence[(c % n) as usize];
        let b = if self.sequence_stride {
            c / n * n + b
        } else {
            b
        };
        b % self.blocks
    }

    /// A random offset (bytes into the region) of direction `dir`; None when the random map
    /// is covered and the stream does not wrap (the pass is over).
    #[inline]
    fn random_offset(&mut self, dir: usize) -> Option<u64> {
        let blk = if !self.sequence.is_empty() {
            self.sequence_block(dir)
        } else if let Some(map) = self.map.as_mut() {
            match map.next_block() {
                Some(b) => b,
                None if self.wrap => {
                    self.pass += 1;
                    map.rekey(self.salt.wrapping_add(self.pass));
                    map.next_block().unwrap_or(0)
                }
                None => return None,
            }
        } else if let Some(m) = self.randmap.as_mut() {
            let b = below(&mut self.rng, self.blocks);
            if m.is_free(b) {
                b
            } else {
                match m.next_free(b) {
                    Some(f) => f,
                    None if self.wrap => {
                        m.clear(); // time_based: fio resets the map and draws again
                        below(&mut self.rng, self.blocks)
                    }
                    None => return None,
                }
            }
        } else if let Some(s) = &self.skew {
            s.block(&mut self.rng, self.blocks, self.salt)
        } else if !self.zones.is_empty() {
            let u = unit(&mut self.rng);
            let &(_, start, zlen) = self
                .zones
                .iter()
                .find(|z| u < z.0)
                .unwrap_or(self.zones.last().unwrap());
            let zb = (zlen / self.ba).max(1);
            return Some(start / self.ba * self.ba + below(&mut self.rng, zb) * self.ba);
        } else {
            below(&mut self.rng, self.blocks)
        };
        Some(blk * self.ba)
    }

    /// The I/O just drawn was moved (zonemode=zbd) to end at `end` (drive bytes): a
    /// sequential stream goes on from there, as fio's last position does.
    pub fn placed(&mut self, dir: usize, end: u64) {
        if !self.random {
            let e = end.saturating_sub(self.base);
            self.cursor[dir] = if e >= self.size { 0 } else { e };
        }
    }

    /// A new pass over the region (fio's next loop after a pass ended early): sequential
    /// positions back to the region's start.
    pub fn rewind(&mut self) {
        self.cursor = [0; 3];
        self.zone_done = [0; 3];
        self.pending_write = None;
    }

    /// The next pass over the region (fio's next loop, clear_io_state): positions back to
    /// the start, the random map empty; with `reseed` (randrepeat) every draw as in the
    /// first pass, so the pass repeats it.
    pub fn new_pass(&mut self, reseed: bool) {
        self.rewind();
        self.run_left = 0;
        self.mix_issues = 0;
        if reseed {
            self.rng = self.rng0.clone();
            self.wmode_state = super::dist::mix(self.seed ^ 0x3d0de);
        } else {
            self.pass += 1;
        }
        if let Some(m) = self.map.as_mut() {
            m.rekey(if reseed {
                self.seed
            } else {
                self.salt.wrapping_add(self.pass)
            });
        }
        if let Some(m) = self.randmap.as_mut() {
            m.clear();
        }
    }

    /// The smallest block size of direction `dir`.
    #[inline]
    fn min_len(&self, dir: usize) -> u64 {
        self.min_lens[dir]
    }

    /// The next I/O of the stream; None when the pass is over.
    #[inline]
    pub fn next_io(&mut self) -> Option<Req> {
        self.next_io_rated(None)
    }

    /// The next I/O of the stream, a mixed job's direction chosen against its rates (`due`:
    /// each direction's next due time, and now; fio's rate_ddir); None when the pass is over.
    #[inline]
    pub fn next_io_rated(&mut self, due: Option<([u64; 2], u64)>) -> Option<Req> {
        if let Some(w) = self.pending_write.take() {
            return Some(w);
        }
        let dir = if self.trimwrite {
            TRIM
        } else {
            self.direction(due)
        };
        let bdir = if self.trimwrite { WRITE } else { dir };
        let (off, len) = if self.random {
            let run_at = if self.identical {
                self.last_start
            } else {
                self.last_end
            };
            let run = if self.skip > 1 && self.run_left > 0 {
                self.block_size(bdir, self.size.saturating_sub(run_at))
                    .map(|l| (run_at, l))
            } else if self.perc_rand[dir] < 100
                && 1 + below(&mut self.rng, 100) > self.perc_rand[dir] as u64
            {
                // fio's percentage_random: this one goes on from where the direction ended
                let at = self.dir_end[dir];
                let at = if at + self.min_len(bdir) > self.size { 0 } else { at };
                self.block_size(bdir, self.size - at).map(|l| (at, l))
            } else {
                None
            };
            match run {
                Some((at, len)) => {
                    self.run_left = self.run_left.saturating_sub(1);
                    (at, len)
                }
                None => {
                    self.run_left = (self.skip.max(1) - 1) as u64;
                    let off = self.random_offset(dir)?;
                    // the keyed permutation's blocks all fit; other draws keep the smallest
                    // block inside the region
                    let off = if self.map.is_some() {
                        off
                    } else {
                        off.min(self.size - self.min_len(bdir).min(self.size))
                    };
                    let mut len = self.block_size(bdir, self.size - off)?;
                    if let Some(m) = self.randmap.as_mut() {
                        // fio's mark_random_map: cut at the first block already covered
                        let covered = m.cover(off / self.ba, len.div_ceil(self.ba));
                        len = len.min(covered.max(1) * self.ba);
                    }
                    (off, len)
                }
            }
        } else {
            let mut c = self.cursor[dir];
            if self.zone_size > 0 && self.zone_done[dir] >= self.zone_size {
                c += self.zone_skip;
                self.zone_done[dir] = 0;
            }
            if c >= self.size || self.size - c < self.min_len(bdir) {
                // the region's end: the pass is over, unless the stream wraps (strided
                // zones wrap as fio moves the zone back to the start; backwards runs wrap)
                if !(self.wrap || self.zone_size > 0 || self.skip < 0) {
                    return None;
                }
                c = 0;
            }
            let len = self.block_size(bdir, self.size - c)?;
            let next = (c + len) as i64 + self.skip;
            // backwards (a negative skip) wraps to the region's last block; holes past the
            // device's end wrap to the region's start
            self.cursor[dir] = if next < 0 {
                self.size - len
            } else if self.skip > 0 && next as u64 >= self.dev_room {
                0
            } else {
                next as u64
            };
            self.zone_done[dir] += len;
            (c, len)
        };
        self.last_start = off;
        self.last_end = off + len;
        self.dir_end[dir] = off + len;
        let mode = if dir == WRITE && self.wmode[0] < 100 && !self.trimwrite {
            self.wmode_state = super::dist::mix(self.wmode_state.wrapping_add(1));
            let u = (self.wmode_state % 100) as u32;
            self.wmode.iter().position(|&c| u < c).unwrap_or(0) as u8
        } else {
            0
        };
        let r = Req {
            dir,
            offset: self.base + off,
            len,
            mode,
        };
        if self.trimwrite {
            self.pending_write = Some(Req { dir: WRITE, ..r });
        }
        Some(r)
    }
}
