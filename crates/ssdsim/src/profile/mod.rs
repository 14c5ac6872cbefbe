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
    /// Controller firmware time per mapping page a write command changes, µs (updating
    /// the L2P entries that page holds and logging the change), on the core that parses
    /// commands: after the write is placed, later commands wait for it. Scattered small
    /// writes pay it once per command, a large sequential write once per mapping page it
    /// spans (0 = none).
    #[serde(default)]
    pub map_update_us: f64,
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
    /// Read retries as retention and wear move the cells' threshold voltages (see
    /// `retry.rs`).
    #[serde(default)]
    pub retry: RetryModel,
    /// Timing when a block runs in SLC mode.
    pub slc: ModeTiming,
    /// Timing in the native mode (ignored when cell = "slc").
    pub native: ModeTiming,
}

/// Mean read-retry steps of a native-mode read as a function of the data's retention age
/// and its block's P/E cycles (`retry.rs`; all zero: no retries beyond
/// `nand.read_retry_pct`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryModel {
    /// The mechanism is on (false: reads retry only at `nand.read_retry_pct`).
    pub enabled: bool,
    /// Mean retry steps of a read of data one year after programming, on fresh NAND (0 P/E).
    pub steps_fresh: f64,
    /// The same at the NAND's rated endurance (`rated_pe` cycles).
    pub steps_rated: f64,
    /// Rated endurance, P/E cycles.
    pub rated_pe: u32,
    /// Onset of the logarithmic retention loss, s: the shift grows as ln(1 + age / onset).
    pub onset_s: f64,
    /// P/E cycles every block has when the run starts (a used drive; 0 = new).
    pub start_pe: u32,
}
impl Default for RetryModel {
    fn default() -> Self {
        RetryModel { enabled: true, steps_fresh: 0.0, steps_rated: 0.0, rated_pe: 3000, onset_s: 1.0, start_pe: 0 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ftl {
    /// Free blocks per die at or below which paced foreground GC runs alongside host writes.
    pub gc_threshold_blocks: u32,
    /// Firmware GC aggressiveness: multiplier on the paced rate (victim slots moved per
    /// host slot = gc_pace x max(v / (slots - v), 1)). Below 1 GC falls behind and the die runs
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
    /// A freed block is erased just before it is opened for writes, not when it is freed
    /// (firmware that keeps the erase-to-program interval short): the die's next programs,
    /// and the writes the buffer cannot hold meanwhile, wait for the erase.
    pub erase_at_open: bool,
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
            erase_at_open: false,
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
    /// Performance mode (OCZ Barefoot 3 / Everest 2): above 0, the dynamic part takes
    /// host writes, up to `dynamic_max_gb`, while at most this share (%) of the user LBAs
    /// is mapped, and none past it (the share rule is then unused); with a paced reclaim
    /// the firmware then converts the cached data alongside the host writes.
    pub dynamic_mapped_max_pct: f64,
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
    /// Above 0: the firmware reclaims only while the free user space is above this share
    /// (%) of the user capacity, and each batch shrinks with it: `reclaim_gb` on an empty
    /// drive, linearly down to none at this share (the bursts fade as the drive fills,
    /// while the cache's own size stays `dynamic_max_gb`). 0: always `reclaim_gb`.
    pub reclaim_min_free_pct: f64,
}
impl Default for Slc {
    fn default() -> Self {
        Slc {
            static_gb: 0.0,
            dynamic_max_gb: 0.0,
            dynamic_share: 1.0,
            dynamic_mapped_max_pct: 0.0,
            when_full: "direct".into(),
            fold_pace: 1.0,
            idle_fold: true,
            direct_during_gc: true,
            reclaim_interval_gb: 0.0,
            reclaim_gb: 0.0,
            reclaim_pace: 0.0,
            reclaim_min_free_pct: 0.0,
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

/// Parse TOML text, apply `key=value` overrides (dotted paths), deserialize and check each
/// field (`crate::load_profile` adds the geometry's room, which needs the NAND model).
pub(crate) fn load(text: &str, overrides: &[(String, String)]) -> Result<Profile, ProfileError> {
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

pub(crate) fn from_value(value: toml::Value) -> Result<Profile, ProfileError> {
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

impl Profile {
    pub fn bits(&self) -> u32 {
        bits_per_cell(&self.nand.cell).unwrap_or(1)
    }
}

pub(crate) mod check;
pub use check::{MAX_GB, MAX_US, MIN_US};
