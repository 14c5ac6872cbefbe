//! Read retry: a native-mode page read whose data the ECC cannot decode at the current
//! read reference voltages is read again at the next read-retry entry's voltages (one more
//! tR). How often a read needs it depends on how far the cells' threshold voltages have
//! moved since they were programmed:
//! - retention: charge leaks from the cells, and the shift grows with the logarithm of the
//!   time since programming (Cai et al., "Data Retention in MLC NAND Flash Memory", HPCA
//!   2015); in 3D charge-trap NAND most of it happens within hours ("early retention
//!   loss", Luo et al., SIGMETRICS 2018);
//! - wear: every program/erase cycle widens the distributions, so the same shift costs
//!   more retry steps (Park et al., ASPLOS 2021; Zhao et al., FAST 2013 for the
//!   soft-decision sensing LDPC needs as the raw bit error rate grows).
//!
//! The mean number of retry steps of a read of block `b` at time `t` is
//!   steps = (fresh + (rated - fresh) x pe(b) / rated_pe) x ln(1 + age / onset) / ln(1 + year / onset)
//! (the profile's `nand.retry`: steps at one year of retention on fresh NAND and at the
//! rated endurance, the onset of the logarithmic retention loss), plus the flat share of
//! `nand.read_retry_pct`. Each decode of the read fails with probability steps / (1 +
//! steps), so the number of retries is geometric with that mean. Every block's P/E count
//! (from `nand.retry.start_pe`, the wear the drive has before the run) and the time it was
//! last opened for writing are kept here; SLC-mode reads never retry (their margins are
//! several times wider).

use crate::profile::Profile;

const YEAR_NS: f64 = 365.0 * 86400.0 * 1e9;

#[derive(Clone)]
pub struct Retry {
    /// The age model is on (`nand.retry.enabled` and a non-zero step count).
    model: bool,
    /// Mean retry steps at one year of retention, at 0 P/E cycles, and their growth per
    /// P/E cycle.
    fresh: f64,
    per_pe: f64,
    /// 1 / onset (per ns) and 1 / ln(1 + year / onset).
    inv_onset: f64,
    inv_year_log: f64,
    /// Mean steps of the flat share (`nand.read_retry_pct`), added at every age.
    flat: f64,
    /// Fixed threshold of the flat share alone (the age model off): no float work per read.
    flat_threshold: u32,
    /// Per block: P/E cycles, and when it was last opened for writing (ns).
    pe: Vec<u32>,
    written_at: Vec<u64>,
    /// Per block: the decode-failure threshold last computed, and until when it holds: the
    /// mean grows with the log of the age, so it is computed again only once the age has
    /// grown by 1/64 (under 2 % of the mean; the log is the costly part of a read).
    threshold: Vec<u32>,
    until: Vec<u64>,
    rng: u64,
}

impl Retry {
    pub fn new(p: &Profile, blocks: u32) -> Retry {
        let r = &p.nand.retry;
        let q = p.nand.read_retry_pct / 100.0;
        let model = r.enabled && (r.steps_fresh > 0.0 || r.steps_rated > 0.0);
        let onset_ns = (r.onset_s * 1e9).max(1.0);
        Retry {
            model,
            fresh: r.steps_fresh,
            per_pe: if r.rated_pe > 0 { (r.steps_rated - r.steps_fresh) / r.rated_pe as f64 } else { 0.0 },
            inv_onset: 1.0 / onset_ns,
            inv_year_log: 1.0 / (YEAR_NS / onset_ns).ln_1p(),
            flat: q / (1.0 - q),
            flat_threshold: (q * u32::MAX as f64) as u32,
            pe: if model { vec![r.start_pe; blocks as usize] } else { Vec::new() },
            written_at: if model { vec![0; blocks as usize] } else { Vec::new() },
            threshold: if model { vec![0; blocks as usize] } else { Vec::new() },
            until: if model { vec![0; blocks as usize] } else { Vec::new() },
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Block `b` is opened for writing at `t` (it was erased for it: one more P/E cycle).
    #[inline]
    pub fn on_open(&mut self, b: u32, t: u64) {
        if self.model {
            self.pe[b as usize] += 1;
            self.written_at[b as usize] = t;
            self.until[b as usize] = 0;
        }
    }

    /// Mean retry steps of a native read of block `b` at `t`.
    pub fn mean_steps(&self, b: u32, t: u64) -> f64 {
        if !self.model {
            return self.flat;
        }
        let age = t.saturating_sub(self.written_at[b as usize]) as f64;
        let wear = self.fresh + self.per_pe * self.pe[b as usize] as f64;
        self.flat + wear.max(0.0) * (age * self.inv_onset).ln_1p() * self.inv_year_log
    }

    /// Retry steps this native read of block `b` at `t` takes (0 = it decodes at once).
    /// Inlined into every page read; the threshold's rare update is not.
    #[inline(always)]
    pub fn steps(&mut self, b: u32, t: u64) -> u32 {
        let threshold = if self.model {
            let i = b as usize;
            if t >= self.until[i] {
                self.update_threshold(b, t);
            }
            self.threshold[i]
        } else {
            self.flat_threshold
        };
        if threshold == 0 {
            return 0;
        }
        let mut n = 0;
        while self.draw() < threshold {
            n += 1;
        }
        n
    }

    /// The decode-failure threshold of block `b` at `t`, and until when it holds.
    #[inline(never)]
    fn update_threshold(&mut self, b: u32, t: u64) {
        let i = b as usize;
        let m = self.mean_steps(b, t);
        self.threshold[i] = (m / (1.0 + m) * u32::MAX as f64) as u32;
        self.until[i] = t + (t.saturating_sub(self.written_at[i]) / 64).max(1);
    }

    /// P/E cycles of block `b` (0 when the age model is off).
    pub fn pe(&self, b: u32) -> u32 {
        self.pe.get(b as usize).copied().unwrap_or(0)
    }

    /// A uniform 32-bit draw (xorshift64*; fixed seed, so runs stay deterministic).
    #[inline]
    fn draw(&mut self) -> u32 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }
}
