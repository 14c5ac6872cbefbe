//! A profile's values checked against what a drive can be: each field's range (the room
//! its geometry leaves for the user capacity is nand's check, `nand::check_room`).

use super::{bits_per_cell, Profile, ProfileError};

/// Bounds of times (µs) and sizes (GB) in a profile (docs/profile-format.md): far beyond
/// any drive, and small enough that virtual time and byte counts stay in range.
pub const MAX_US: f64 = 1e7;
/// Shortest time of an operation, µs: virtual time counts whole nanoseconds.
pub const MIN_US: f64 = 1e-3;
pub const MAX_GB: f64 = 1e5;

/// A float for an error message: 1e300 as 1e300, not 301 digits.
pub(crate) fn num(x: f64) -> String {
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
            return Err($crate::profile::ProfileError(format!(
                "{} = {}: must be {}",
                $field, $val, $allowed
            )));
        }
    };
}
pub(crate) use check;

impl Profile {
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
            (0.0..=10_000.0).contains(&h.map_update_us),
            "host.map_update_us",
            h.map_update_us,
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
        let r = &n.retry;
        check!((0.0..=20.0).contains(&r.steps_fresh), "nand.retry.steps_fresh", num(r.steps_fresh), "0..20 (mean retry steps)");
        check!((0.0..=20.0).contains(&r.steps_rated), "nand.retry.steps_rated", num(r.steps_rated), "0..20 (mean retry steps)");
        check!((1..=1_000_000).contains(&r.rated_pe), "nand.retry.rated_pe", r.rated_pe, "1..1000000 (P/E cycles)");
        check!((1e-3..=1e8).contains(&r.onset_s), "nand.retry.onset_s", num(r.onset_s), "in [0.001, 1e8] (s)");
        check!(r.start_pe <= 1_000_000, "nand.retry.start_pe", r.start_pe, "0..1000000 (P/E cycles)");
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
            (0.0..=100.0).contains(&s.dynamic_mapped_max_pct),
            "slc.dynamic_mapped_max_pct",
            s.dynamic_mapped_max_pct,
            "0..100 (% of the user LBAs)"
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
            (0.0..100.0).contains(&s.reclaim_min_free_pct),
            "slc.reclaim_min_free_pct",
            s.reclaim_min_free_pct,
            "in [0, 100) (% of the user capacity)"
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
        Ok(())
    }
}
