//! Drive profile: the physical parameters of a drive (serde), validation with one-line
//! errors, and dotted-path overrides ("what if it had 8 channels").

use serde::{Deserialize, Serialize};
use std::fmt;

/// A one-line, user-facing error naming the field, the value and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileError(pub String);

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ProfileError {}

fn err<T>(msg: String) -> Result<T, ProfileError> {
    Err(ProfileError(msg))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: String,
    pub name: String,
    /// User-visible capacity in GB (10^9 bytes).
    pub user_capacity_gb: f64,
    pub host: Host,
    pub nand: Nand,
    #[serde(default)]
    pub ftl: Ftl,
    #[serde(default)]
    pub slc: Slc,
    #[serde(default)]
    pub mapping: Mapping,
    #[serde(default)]
    pub power: Power,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// "sata" (6 Gb/s, half duplex) or "pcie".
    pub interface: String,
    #[serde(default = "d_gen")]
    pub pcie_gen: u32,
    #[serde(default = "d_lanes")]
    pub lanes: u32,
    /// Share of the raw link rate left after protocol overhead (FIS/TLP headers).
    #[serde(default = "d_eff")]
    pub protocol_efficiency: f64,
    /// Controller firmware time per command (serialised): caps IOPS at 1e6/overhead.
    pub command_overhead_us: f64,
    /// Host driver + interrupt round trip added to every command's latency.
    #[serde(default = "d_host_lat")]
    pub host_latency_us: f64,
    /// Commands the drive accepts at once (SATA NCQ: 32).
    pub max_queue_depth: u32,
    /// Controller firmware time per flash page read it issues for the host, µs, one at
    /// a time (a controller whose NAND requests run on one small core): caps random
    /// reads at 1e6 / read_op_us IOPS and slows reads of scattered data, which touch
    /// more pages (0 = no such limit).
    #[serde(default)]
    pub read_op_us: f64,
    /// Controller write-path latency, µs: firmware work on a write command (buffer
    /// allocation, moving the data to the buffer, the mapping update) before it is
    /// acknowledged; pipelined across commands, so it adds latency, not a rate limit.
    #[serde(default)]
    pub write_latency_us: f64,
    /// Large commands stream: a write's data enters the write buffer 4 KiB by 4 KiB as it
    /// arrives, and a read's link transfer starts with its first page (false: after all
    /// of the command's data has arrived / been read).
    #[serde(default = "d_true")]
    pub stream_commands: bool,
    /// Controller write buffer that acknowledges writes and drains at NAND speed.
    pub write_buffer_kib: u32,
    /// Host-write throughput of the controller's write path, MB/s (firmware and
    /// data-path work on incoming data; 0 = bounded only by the link and the NAND).
    #[serde(default)]
    pub write_mbps: f64,
    /// Throughput of the controller's read path for data read from flash, MB/s (ECC
    /// decoding and the DMA to the host buffer, one engine for all channels; unmapped
    /// blocks do not pass through it; 0 = bounded only by the NAND and the link).
    #[serde(default)]
    pub read_mbps: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeTiming {
    /// Page read (array to register) time.
    pub read_us: f64,
    /// One program operation (all planes, `prog_pages` pages per plane).
    pub prog_us: f64,
    /// Pages per plane written by one program operation (3 for one-shot TLC).
    #[serde(default = "d_one")]
    pub prog_pages: u32,
    /// Read reference voltages sensed to read each page type of a word line (lower,
    /// middle, upper, top page), e.g. [2, 3, 2] for TLC in 2-3-2 Gray code: a page's read
    /// time is `read_us` x its count / the mean count, so `read_us` stays the mean and the
    /// page types spread around it (empty: every page takes `read_us`; native mode only).
    #[serde(default)]
    pub read_levels: Vec<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nand {
    /// Native cell mode: "slc", "mlc", "tlc" or "qlc".
    pub cell: String,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes: u32,
    pub blocks_per_plane: u32,
    /// Pages per block in native mode (a block run as SLC holds pages/bits).
    pub pages_per_block: u32,
    pub page_kib: u32,
    /// Channel (NAND bus) transfer rate, MB/s.
    pub channel_mbps: f64,
    pub erase_us: f64,
    /// Program/erase suspend for host reads: a host read on a die that is programming
    /// or erasing waits `suspend_us`, not the whole operation (false: it waits).
    #[serde(default = "d_true")]
    pub read_suspend: bool,
    /// Time to suspend a running program or erase (to the end of its current
    /// program-verify or erase-verify step), µs.
    #[serde(default = "d_suspend")]
    pub suspend_us: f64,
    /// A host read moves only the 4 KiB codewords it asks for over the channel (ONFI
    /// change read column), not the whole page (false: the whole page).
    #[serde(default = "d_true")]
    pub partial_transfer: bool,
    /// Throughput of the controller's native-mode program pipeline, MB/s of data
    /// programmed in the native cell mode (host, GC and fold programs alike): the ECC
    /// encoder and the program scheduler of multi-pass TLC/QLC programs, one pipeline for
    /// all dies. Native write speed grows with the die count until it reaches this (0 =
    /// no limit; SLC-mode programs do not pass through it).
    #[serde(default)]
    pub native_write_mbps: f64,
    /// Share of native-mode page reads, in percent, whose data the ECC cannot correct at
    /// the default read voltages: the controller reads the page again with the next
    /// read-retry entry (one more tR), and each retry fails again with the same share (0 =
    /// every read decodes at once). Grows with wear and retention on real NAND.
    #[serde(default)]
    pub read_retry_pct: f64,
    /// Timing when a block runs in SLC mode.
    pub slc: ModeTiming,
    /// Timing in the native mode (ignored when cell = "slc").
    pub native: ModeTiming,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ftl {
    /// Free blocks per die at or below which paced foreground GC runs alongside host writes.
    pub gc_threshold_blocks: u32,
    /// Firmware GC aggressiveness: multiplier on the paced rate (victim slots moved per
    /// host slot = gc_pace x v / (slots - v)). Below 1 GC falls behind and the die runs
    /// down to its last free block, where GC stops host writes for a whole victim (dips).
    pub gc_pace: f64,
    /// GC speeds up as a die's free space runs short, so the victim is done before host
    /// writes use it up (false: GC keeps its pace and, at the last free block, stops host
    /// writes to the die until a whole victim is collected).
    pub gc_urgency: bool,
    /// Background GC in idle time, up to this share of each die's blocks free.
    pub idle_gc: bool,
    pub idle_gc_target_pct: f64,
    /// Idle GC collects only blocks at most this share valid (moving more costs wear).
    pub idle_gc_max_valid_pct: f64,
    /// Time without host writes after which idle GC starts, ms: it then also runs while
    /// the host reads, in the die time the reads leave.
    pub idle_gc_delay_ms: f64,
    /// Sequential read-ahead window, KiB (0 = none): once reads run sequentially the
    /// firmware fetches this much beyond the current command into its buffer.
    pub read_ahead_kib: u32,
    /// Host write placement over dies: "static" stripes page by page in die order;
    /// "dynamic" gives each page to the die that is free first (firmware that steers
    /// writes away from dies busy collecting).
    pub striping: String,
    /// Dies that may collect (GC or fold) at the same time, the firmware's GC engines
    /// (0 = every die at once).
    pub gc_engines: u32,
    /// GC program units the controller can have in flight at once over all dies, each
    /// holding a staging buffer from its reads until its program completes (0 = no limit).
    pub gc_buffers: u32,
    /// A block whose data has all been overwritten or trimmed goes back to the free pool
    /// at once and is erased in the background (false: it waits until GC picks it, and
    /// counts as SLC cache until then).
    pub release_dead: bool,
    /// Controller firmware time per 4 KiB slot that GC relocates while the host writes,
    /// µs (mapping lookups and updates, buffer and ECC set-up of the copy), on the core
    /// that also handles commands (`host.command_overhead_us`): caps foreground GC at
    /// 1e6 / gc_move_us slots/s, so full-drive random writes can be controller-bound
    /// while sequential writes run at NAND speed (0 = GC bound by the NAND only).
    pub gc_move_us: f64,
}
impl Default for Ftl {
    fn default() -> Self {
        Ftl {
            gc_threshold_blocks: 2,
            gc_pace: 1.0,
            gc_urgency: true,
            idle_gc: true,
            idle_gc_target_pct: 10.0,
            idle_gc_max_valid_pct: 90.0,
            idle_gc_delay_ms: 100.0,
            read_ahead_kib: 0,
            striping: "dynamic".into(),
            gc_engines: 0,
            gc_buffers: 0,
            release_dead: true,
            gc_move_us: 0.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Slc {
    /// Dedicated SLC-mode blocks, GB of SLC data (taken from raw NAND).
    pub static_gb: f64,
    /// Upper bound of the dynamic part, GB of SLC data.
    pub dynamic_max_gb: f64,
    /// Share of the free user space (in native terms, divided by bits per cell) the
    /// dynamic part may borrow: it shrinks as the drive fills.
    pub dynamic_share: f64,
    /// When the cache is full: "direct" (write native) or "fold" (write native while
    /// the die folds its oldest SLC block alongside, `fold_pace` SLC slots per host slot;
    /// once that block is erased the next writes go to SLC again).
    pub when_full: String,
    pub fold_pace: f64,
    /// Fold cached data to native mode in idle time.
    pub idle_fold: bool,
    /// While a die collects in the foreground (free blocks at the GC threshold), host
    /// writes to it go native instead of into SLC blocks that would be folded again.
    pub direct_during_gc: bool,
    /// While writing direct-to-native, every this many GB the firmware reclaims cache
    /// by folding `reclaim_gb` of it (0 = never).
    pub reclaim_interval_gb: f64,
    pub reclaim_gb: f64,
    /// 0: the reclaim stops host writes until it is done. Above 0: it folds alongside the
    /// direct host writes, this many SLC slots per host slot written on the die, and the
    /// host writes SLC again only once the whole `reclaim_gb` is folded.
    pub reclaim_pace: f64,
}
impl Default for Slc {
    fn default() -> Self {
        Slc {
            static_gb: 0.0,
            dynamic_max_gb: 0.0,
            dynamic_share: 1.0,
            when_full: "direct".into(),
            fold_pace: 1.0,
            idle_fold: true,
            direct_during_gc: true,
            reclaim_interval_gb: 0.0,
            reclaim_gb: 0.0,
            reclaim_pace: 0.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mapping {
    /// "dram" (whole table cached), "sram" (small on-controller cache) or "hmb".
    pub kind: String,
    /// Mapping cache size for sram/hmb, MiB.
    pub cache_mib: f64,
    /// Extra latency of a mapping lookup served from host memory (HMB), µs.
    pub hmb_access_us: f64,
    /// A "dram" table is written whole to NAND after every `checkpoint_gb` of remapped
    /// blocks, host writes and GC moves (its change journal is full), GB; 0 = never
    /// (ftl/checkpoint.rs).
    pub checkpoint_gb: f64,
}
impl Default for Mapping {
    fn default() -> Self {
        Mapping {
            kind: "dram".into(),
            cache_mib: 0.0,
            hmb_access_us: 1.0,
            checkpoint_gb: 0.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Power {
    pub read_uj: f64,
    pub program_uj: f64,
    pub erase_uj: f64,
    pub transfer_nj_per_kib: f64,
    pub controller_active_w: f64,
    pub idle_w: f64,
}
impl Default for Power {
    fn default() -> Self {
        Power {
            read_uj: 2.0,
            program_uj: 20.0,
            erase_uj: 60.0,
            transfer_nj_per_kib: 40.0,
            controller_active_w: 1.5,
            idle_w: 0.05,
        }
    }
}

fn d_gen() -> u32 {
    3
}
fn d_lanes() -> u32 {
    4
}
fn d_eff() -> f64 {
    0.87
}
fn d_host_lat() -> f64 {
    10.0
}
fn d_one() -> u32 {
    1
}
fn d_true() -> bool {
    true
}
fn d_suspend() -> f64 {
    20.0
}

pub fn bits_per_cell(cell: &str) -> Option<u32> {
    match cell {
        "slc" => Some(1),
        "mlc" => Some(2),
        "tlc" => Some(3),
        "qlc" => Some(4),
        _ => None,
    }
}

/// Parse TOML text, apply `key=value` overrides (dotted paths), deserialize and validate.
pub fn load(text: &str, overrides: &[(String, String)]) -> Result<Profile, ProfileError> {
    let mut value: toml::Value = toml::from_str(text).map_err(|e| {
        ProfileError(format!(
            "profile is not valid TOML: {}",
            one_line(&e.to_string())
        ))
    })?;
    for (k, v) in overrides {
        apply_override(&mut value, k, v)?;
    }
    from_value(value)
}

pub fn from_value(value: toml::Value) -> Result<Profile, ProfileError> {
    let p: Profile = value.try_into().map_err(|e: toml::de::Error| {
        ProfileError(format!("profile: {}", one_line(&e.to_string())))
    })?;
    p.validate()?;
    Ok(p)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Set `a.b.c = value` in a TOML tree. The key must already exist in the profile schema;
/// unknown keys are caught by deserialization (deny_unknown_fields) with the path named.
pub fn apply_override(root: &mut toml::Value, key: &str, raw: &str) -> Result<(), ProfileError> {
    if key.is_empty() || key.split('.').any(|p| p.is_empty()) {
        return err(format!(
            "override '{key}={raw}': key must be a dotted path like nand.channels"
        ));
    }
    let parsed = parse_value(raw);
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = root;
    for (i, part) in parts.iter().enumerate() {
        let table = match cur {
            toml::Value::Table(t) => t,
            _ => {
                return err(format!(
                    "override '{key}': '{}' is not a section",
                    parts[..i].join(".")
                ))
            }
        };
        if i + 1 == parts.len() {
            table.insert((*part).to_string(), parsed);
            return Ok(());
        }
        cur = table
            .entry((*part).to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()));
    }
    Ok(())
}

fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&doc) {
        // more than `v` (a newline and another key or table in the value): not one value
        Ok(mut t) if t.len() == 1 => t.remove("v").unwrap_or(toml::Value::String(raw.into())),
        _ => toml::Value::String(raw.to_string()),
    }
}

/// Bounds of times (µs) and sizes (GB) in a profile (docs/profile-format.md): far beyond
/// any drive, and small enough that virtual time and byte counts stay in range.
pub const MAX_US: f64 = 1e7;
/// Shortest time of an operation, µs: virtual time counts whole nanoseconds.
pub const MIN_US: f64 = 1e-3;
pub const MAX_GB: f64 = 1e5;

/// A float for an error message: 1e300 as 1e300, not 301 digits.
fn num(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e9).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

macro_rules! check {
    ($cond:expr, $field:expr, $val:expr, $allowed:expr) => {
        // Negated on purpose: a NaN value fails every range check.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if !($cond) {
            return err(format!("{} = {}: must be {}", $field, $val, $allowed));
        }
    };
}

impl Profile {
    pub fn bits(&self) -> u32 {
        bits_per_cell(&self.nand.cell).unwrap_or(1)
    }

    /// Bytes the simulator's tables take for this profile (about 8 B per 4 KiB of raw
    /// NAND, docs/performance.md): L2P and P2L (4 B per slot), the valid bitmap, the
    /// per-block lists and counters, GC buckets and the mapping cache's page table.
    pub fn table_bytes(&self) -> u64 {
        let g = crate::nand::Geometry::from_profile(self);
        let user_slots = (self.user_capacity_gb * 1e9) as u64 / crate::nand::SLOT_BYTES;
        let (slots, blocks) = (g.total_slots(), g.total_blocks() as u64);
        let map_pages = if self.mapping.kind == "dram" {
            0
        } else {
            user_slots.div_ceil(self.nand.page_kib as u64 * 256)
        };
        4 * user_slots
            + 4 * slots
            + slots.div_ceil(64) * 8
            + 20 * blocks
            + 4 * g.dies as u64 * (g.slots_per_block as u64 + 1)
            + 4 * map_pages
    }

    pub fn validate(&self) -> Result<(), ProfileError> {
        let n = &self.nand;
        let h = &self.host;
        check!(!self.id.is_empty(), "id", "\"\"", "a non-empty string");
        check!(
            self.user_capacity_gb > 0.0 && self.user_capacity_gb <= MAX_GB,
            "user_capacity_gb",
            num(self.user_capacity_gb),
            "in (0, 1e5] (GB)"
        );
        check!(
            h.interface == "sata" || h.interface == "pcie",
            "host.interface",
            format!("\"{}\"", h.interface),
            "\"sata\" or \"pcie\""
        );
        check!(
            (1..=6).contains(&h.pcie_gen),
            "host.pcie_gen",
            h.pcie_gen,
            "1..6"
        );
        check!(
            [1, 2, 4, 8, 16].contains(&h.lanes),
            "host.lanes",
            h.lanes,
            "1, 2, 4, 8 or 16"
        );
        check!(
            h.protocol_efficiency > 0.0 && h.protocol_efficiency <= 1.0,
            "host.protocol_efficiency",
            h.protocol_efficiency,
            "in (0, 1]"
        );
        check!(
            (MIN_US..=MAX_US).contains(&h.command_overhead_us),
            "host.command_overhead_us",
            num(h.command_overhead_us),
            "in [0.001, 1e7] (µs)"
        );
        check!(
            (0.0..=MAX_US).contains(&h.host_latency_us),
            "host.host_latency_us",
            num(h.host_latency_us),
            "in [0, 1e7] (µs)"
        );
        check!(
            (0.0..=10_000.0).contains(&h.write_latency_us),
            "host.write_latency_us",
            h.write_latency_us,
            "0..10000 (µs)"
        );
        check!(
            (0.0..=10_000.0).contains(&h.read_op_us),
            "host.read_op_us",
            h.read_op_us,
            "0..10000 (µs)"
        );
        check!(
            (1..=65536).contains(&h.max_queue_depth),
            "host.max_queue_depth",
            h.max_queue_depth,
            "1..65536"
        );
        check!(
            h.write_buffer_kib > 0,
            "host.write_buffer_kib",
            h.write_buffer_kib,
            "> 0"
        );
        check!(
            h.write_mbps == 0.0 || (1.0..=100_000.0).contains(&h.write_mbps),
            "host.write_mbps",
            h.write_mbps,
            "0 (no limit) or 1..100000 (MB/s)"
        );
        check!(
            h.read_mbps == 0.0 || (1.0..=100_000.0).contains(&h.read_mbps),
            "host.read_mbps",
            h.read_mbps,
            "0 (no limit) or 1..100000 (MB/s)"
        );
        check!(
            bits_per_cell(&n.cell).is_some(),
            "nand.cell",
            format!("\"{}\"", n.cell),
            "one of \"slc\", \"mlc\", \"tlc\", \"qlc\""
        );
        check!(
            (1..=64).contains(&n.channels),
            "nand.channels",
            n.channels,
            "1..64"
        );
        check!(
            (1..=64).contains(&n.dies_per_channel),
            "nand.dies_per_channel",
            n.dies_per_channel,
            "1..64"
        );
        check!((1..=8).contains(&n.planes), "nand.planes", n.planes, "1..8");
        check!(
            n.blocks_per_plane >= 8,
            "nand.blocks_per_plane",
            n.blocks_per_plane,
            ">= 8"
        );
        check!(
            [4, 8, 16, 32].contains(&n.page_kib),
            "nand.page_kib",
            n.page_kib,
            "4, 8, 16 or 32"
        );
        let bits = self.bits();
        check!(
            n.pages_per_block >= 4 && n.pages_per_block.is_multiple_of(bits),
            "nand.pages_per_block",
            n.pages_per_block,
            format!(">= 4 and a multiple of {bits} (bits per cell)")
        );
        check!((1.0..=1e6).contains(&n.channel_mbps), "nand.channel_mbps", num(n.channel_mbps), "in [1, 1e6] (MB/s)");
        check!((MIN_US..=MAX_US).contains(&n.erase_us), "nand.erase_us", num(n.erase_us), "in [0.001, 1e7] (µs)");
        check!((0.0..=1000.0).contains(&n.suspend_us), "nand.suspend_us", n.suspend_us, "0..1000 (µs)");
        check!(
            n.native_write_mbps == 0.0 || (1.0..=100_000.0).contains(&n.native_write_mbps),
            "nand.native_write_mbps",
            n.native_write_mbps,
            "0 (no limit) or 1..100000 (MB/s)"
        );
        check!((0.0..=50.0).contains(&n.read_retry_pct), "nand.read_retry_pct", n.read_retry_pct, "0..50 (%)");
        let levels = &n.native.read_levels;
        check!(
            levels.is_empty() || (levels.len() == bits as usize && levels.iter().all(|&l| (1..=15).contains(&l))),
            "nand.native.read_levels",
            format!("{levels:?}"),
            format!("empty, or {bits} counts (one per page type of a word line) of 1..15")
        );
        check!(n.slc.read_levels.is_empty(), "nand.slc.read_levels", format!("{:?}", n.slc.read_levels), "empty (an SLC page has one read level)");
        for (name, t) in [("nand.slc", &n.slc), ("nand.native", &n.native)] {
            check!(
                (MIN_US..=MAX_US).contains(&t.read_us),
                format!("{name}.read_us"),
                num(t.read_us),
                "in [0.001, 1e7] (µs)"
            );
            check!(
                (MIN_US..=MAX_US).contains(&t.prog_us),
                format!("{name}.prog_us"),
                num(t.prog_us),
                "in [0.001, 1e7] (µs)"
            );
            check!(
                t.prog_pages >= 1 && n.pages_per_block.is_multiple_of(t.prog_pages),
                format!("{name}.prog_pages"),
                t.prog_pages,
                "a divisor of nand.pages_per_block"
            );
        }
        check!(
            (n.pages_per_block / bits).is_multiple_of(n.slc.prog_pages),
            "nand.slc.prog_pages",
            n.slc.prog_pages,
            "a divisor of the SLC-mode pages per block"
        );
        let f = &self.ftl;
        check!(
            (2..=64).contains(&f.gc_threshold_blocks),
            "ftl.gc_threshold_blocks",
            f.gc_threshold_blocks,
            "2..64"
        );
        check!(
            (0.05..=4.0).contains(&f.gc_pace),
            "ftl.gc_pace",
            f.gc_pace,
            "0.05..4"
        );
        check!(
            (0.0..=10_000.0).contains(&f.gc_move_us),
            "ftl.gc_move_us",
            f.gc_move_us,
            "0..10000 (µs)"
        );
        check!(
            (0.0..100.0).contains(&f.idle_gc_max_valid_pct),
            "ftl.idle_gc_max_valid_pct",
            f.idle_gc_max_valid_pct,
            "0..100 (below 100)"
        );
        check!(
            (0.0..=50.0).contains(&f.idle_gc_target_pct),
            "ftl.idle_gc_target_pct",
            f.idle_gc_target_pct,
            "0..50"
        );
        check!(
            (0.0..=3.6e6).contains(&f.idle_gc_delay_ms),
            "ftl.idle_gc_delay_ms",
            f.idle_gc_delay_ms,
            "0..3600000 (ms)"
        );
        check!(
            f.read_ahead_kib.is_multiple_of(4) && f.read_ahead_kib <= 65536,
            "ftl.read_ahead_kib",
            f.read_ahead_kib,
            "a multiple of 4 up to 65536 (0 = no read-ahead)"
        );
        check!(
            f.gc_engines <= 4096,
            "ftl.gc_engines",
            f.gc_engines,
            "0 (one per die) or 1..4096"
        );
        check!(
            f.gc_buffers <= 4096,
            "ftl.gc_buffers",
            f.gc_buffers,
            "0 (no limit) or 1..4096"
        );
        check!(
            f.striping == "static" || f.striping == "dynamic",
            "ftl.striping",
            format!("\"{}\"", f.striping),
            "\"static\" or \"dynamic\""
        );
        let s = &self.slc;
        check!(
            (0.0..=MAX_GB).contains(&s.static_gb),
            "slc.static_gb",
            num(s.static_gb),
            "in [0, 1e5] (GB)"
        );
        check!(
            (0.0..=MAX_GB).contains(&s.dynamic_max_gb),
            "slc.dynamic_max_gb",
            num(s.dynamic_max_gb),
            "in [0, 1e5] (GB)"
        );
        check!(
            (0.0..=1.0).contains(&s.dynamic_share),
            "slc.dynamic_share",
            s.dynamic_share,
            "0..1"
        );
        check!(
            s.when_full == "direct" || s.when_full == "fold",
            "slc.when_full",
            format!("\"{}\"", s.when_full),
            "\"direct\" or \"fold\""
        );
        check!(
            (0.05..=8.0).contains(&s.fold_pace),
            "slc.fold_pace",
            s.fold_pace,
            "0.05..8"
        );
        check!(
            (0.0..=MAX_GB).contains(&s.reclaim_interval_gb),
            "slc.reclaim_interval_gb",
            num(s.reclaim_interval_gb),
            "in [0, 1e5] (GB)"
        );
        check!(
            (0.0..=MAX_GB).contains(&s.reclaim_gb),
            "slc.reclaim_gb",
            num(s.reclaim_gb),
            "in [0, 1e5] (GB)"
        );
        check!(
            s.reclaim_pace == 0.0 || (0.05..=8.0).contains(&s.reclaim_pace),
            "slc.reclaim_pace",
            s.reclaim_pace,
            "0 (blocking) or 0.05..8"
        );
        check!(
            bits > 1 || (s.static_gb == 0.0 && s.dynamic_max_gb == 0.0),
            "slc.static_gb/dynamic_max_gb",
            s.static_gb + s.dynamic_max_gb,
            "0 when nand.cell = \"slc\" (no SLC cache on SLC NAND)"
        );
        let m = &self.mapping;
        check!(
            ["dram", "sram", "hmb"].contains(&m.kind.as_str()),
            "mapping.kind",
            format!("\"{}\"", m.kind),
            "\"dram\", \"sram\" or \"hmb\""
        );
        check!(
            (m.kind == "dram" || m.cache_mib > 0.0) && (0.0..=1e6).contains(&m.cache_mib),
            "mapping.cache_mib",
            num(m.cache_mib),
            "in [0, 1e6] (MiB), and > 0 for a sram or hmb mapping cache"
        );
        check!(
            (0.0..=MAX_US).contains(&m.hmb_access_us),
            "mapping.hmb_access_us",
            num(m.hmb_access_us),
            "in [0, 1e7] (µs)"
        );
        check!(
            m.checkpoint_gb == 0.0 || (m.kind == "dram" && (0.01..=1e5).contains(&m.checkpoint_gb)),
            "mapping.checkpoint_gb",
            num(m.checkpoint_gb),
            "0 (never), or 0.01..1e5 (GB) with mapping.kind = \"dram\" (a cached table writes back its own pages)"
        );
        let p = &self.power;
        for (k, v) in [
            ("power.read_uj", p.read_uj),
            ("power.program_uj", p.program_uj),
            ("power.erase_uj", p.erase_uj),
            ("power.transfer_nj_per_kib", p.transfer_nj_per_kib),
            ("power.controller_active_w", p.controller_active_w),
            ("power.idle_w", p.idle_w),
        ] {
            check!((0.0..=1e6).contains(&v), k, num(v), "in [0, 1e6]");
        }
        let g = crate::nand::Geometry::from_profile(self);
        check!(
            g.total_slots() < u32::MAX as u64 - 1,
            "nand geometry",
            format!("{} GiB raw", g.raw_bytes() >> 30),
            "below 16 TiB raw (32-bit physical addresses)"
        );
        let user_bytes = (self.user_capacity_gb * 1e9) as u64;
        let static_blocks = g.static_slc_blocks_per_die(self) as u64;
        check!(
            static_blocks + f.gc_threshold_blocks as u64 + 8 < g.blocks_per_die as u64,
            "slc.static_gb",
            s.static_gb,
            "small enough to leave native blocks on every die"
        );
        let native_blocks = g.blocks_per_die as u64 - static_blocks;
        // GC needs room for its threshold plus open blocks (host, SLC, GC) on every die.
        let reserve = f.gc_threshold_blocks as u64 + 4;
        let usable = (native_blocks.saturating_sub(reserve)) * g.dies as u64 * g.block_bytes();
        check!(
            user_bytes <= usable,
            "user_capacity_gb",
            self.user_capacity_gb,
            format!(
                "<= {:.3} (raw NAND {:.3} GB less static SLC and GC reserve blocks)",
                usable as f64 / 1e9,
                g.raw_bytes() as f64 / 1e9
            )
        );
        Ok(())
    }
}
