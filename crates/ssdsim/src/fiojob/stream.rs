//! One job's I/O stream, generated as it is issued (O(1) memory whatever its length):
//! direction (rw kind, rwmixread, trimwrite), block size (bs / bsrange / bssplit per
//! direction), offset (sequential per direction with `:N` skips and strided zones, or
//! random: the random map, uniform, zipf, pareto, normal, zoned), as fio draws them.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::dist::{below, unit, Permutation, Skew, Zipf};
use super::{Dist, JobSpec, READ, TRIM, WRITE};

#[derive(Debug, Clone, Copy)]
pub struct Req {
    pub dir: usize,
    pub offset: u64,
    pub len: u64,
    /// A write's mode (super::WMODE_*; 0 for reads and trims).
    pub mode: u8,
}

pub struct Stream {
    rng: Xoshiro256PlusPlus,
    base: u64,
    size: u64,
    ba: u64,
    blocks: u64,
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
    /// random, rw=...:N: I/Os left in the current sequential run
    run_left: u64,
    last_end: u64,
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
        let map = (j.random && j.randommap && j.dist == Dist::Uniform)
            .then(|| Permutation::new(blocks, seed));
        let zones = if j.dist == Dist::Zoned {
            j.zones.clone()
        } else {
            vec![]
        };
        let _ = unit(&mut rng);
        Stream {
            rng,
            base: j.offset,
            size: j.size,
            ba,
            blocks,
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
            last_end: 0,
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
    #[inline]
    fn direction(&mut self) -> usize {
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

    #[inline]
    fn block_size(&mut self, dir: usize) -> u64 {
        let v = &self.bs[dir];
        if v.len() == 1 {
            return v[0].0;
        }
        let u = unit(&mut self.rng);
        v.iter().find(|x| u < x.1).unwrap_or(v.last().unwrap()).0
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

    #[inline]
    fn random_offset(&mut self, len: u64, dir: usize) -> u64 {
        let blk = if !self.sequence.is_empty() {
            self.sequence_block(dir)
        } else if let Some(map) = self.map.as_mut() {
            match map.next_block() {
                Some(b) => b,
                None => {
                    self.pass += 1;
                    map.rekey(self.salt.wrapping_add(self.pass));
                    map.next_block().unwrap_or(0)
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
            return (start / self.ba * self.ba + below(&mut self.rng, zb) * self.ba)
                .min(self.size - len);
        } else {
            below(&mut self.rng, self.blocks)
        };
        (blk * self.ba).min(self.size - len)
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

    /// The next I/O of the stream.
    #[inline]
    pub fn next_io(&mut self) -> Req {
        if let Some(w) = self.pending_write.take() {
            return w;
        }
        let dir = if self.trimwrite {
            TRIM
        } else {
            self.direction()
        };
        let len = self.block_size(if self.trimwrite { WRITE } else { dir });
        let off = if self.random {
            if self.skip > 1 && self.run_left > 0 && self.last_end + len <= self.size {
                self.run_left -= 1;
                self.last_end
            } else {
                self.run_left = (self.skip.max(1) - 1) as u64;
                self.random_offset(len, dir)
            }
        } else {
            let mut c = self.cursor[dir];
            if self.zone_size > 0 && self.zone_done[dir] >= self.zone_size {
                c += self.zone_skip;
                self.zone_done[dir] = 0;
            }
            if c + len > self.size {
                c = 0;
            }
            let next = (c + len) as i64 + self.skip;
            // backwards (a negative skip) wraps to the region's last block
            self.cursor[dir] = if next < 0 {
                self.size - len
            } else {
                next as u64
            };
            self.zone_done[dir] += len;
            c
        };
        self.last_end = off + len;
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
        r
    }
}
