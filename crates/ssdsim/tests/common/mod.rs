//! Small drive profiles and phase helpers for the tests.
#![allow(dead_code)]

use ssdsim::profile::Profile;
use ssdsim::{Drive, PhaseKind, PhaseSpec};

/// A tiny TLC drive (2 dies, 4 KiB pages, 12-page blocks) whose knobs the tests vary.
pub fn tiny(
    static_gb: f64,
    dynamic_gb: f64,
    when_full: &str,
    mapping: &str,
    reclaim: f64,
) -> Profile {
    let cache = if mapping == "dram" { 0.0 } else { 0.02 };
    let text = format!(
        r#"
id = "tiny"
name = "tiny test drive"
user_capacity_gb = 0.002
[host]
interface = "pcie"
command_overhead_us = 2.0
max_queue_depth = 64
write_buffer_kib = 64
[nand]
cell = "tlc"
channels = 2
dies_per_channel = 1
planes = 1
blocks_per_plane = 32
pages_per_block = 12
page_kib = 4
channel_mbps = 400.0
erase_us = 3000.0
[nand.slc]
read_us = 30.0
prog_us = 150.0
[nand.native]
read_us = 60.0
prog_us = 1500.0
prog_pages = 3
[slc]
static_gb = {static_gb}
dynamic_max_gb = {dynamic_gb}
dynamic_share = 1.0
when_full = "{when_full}"
idle_fold = true
reclaim_interval_gb = {reclaim}
reclaim_gb = {reclaim}
[mapping]
kind = "{mapping}"
cache_mib = {cache}
hmb_access_us = 1.0
"#
    );
    ssdsim::load_profile(&text, &[]).expect("tiny profile is valid")
}

/// A drive with many blocks and no SLC cache, for steady-state GC statistics:
/// `dies` dies of 1 plane, 256 x 4 KiB pages per block, `blocks` blocks per die.
pub fn gc_drive(dies: u32, blocks: u32, user_gb: f64, cell: &str) -> Profile {
    let text = format!(
        r#"
id = "gc"
name = "GC test drive"
user_capacity_gb = {user_gb}
[host]
interface = "pcie"
command_overhead_us = 1.0
max_queue_depth = 1024
write_buffer_kib = 256        # like a real drive: well under one block per die
[nand]
cell = "{cell}"
channels = {dies}
dies_per_channel = 1
planes = 1
blocks_per_plane = {blocks}
pages_per_block = 256
page_kib = 4
channel_mbps = 800.0
erase_us = 3000.0
[nand.slc]
read_us = 30.0
prog_us = 200.0
[nand.native]
read_us = 50.0
prog_us = 900.0
[ftl]
gc_threshold_blocks = 2
"#
    );
    ssdsim::load_profile(&text, &[]).expect("gc profile is valid")
}

pub fn io(random: bool, read_pct: u32, bs: u64, qd: u32) -> PhaseSpec {
    let mut s = PhaseSpec::new(PhaseKind::Io);
    s.random = random;
    s.read_pct = read_pct;
    s.block_size = bs;
    s.queue_depth = qd;
    s
}

/// One sequential 128 KiB QD32 pass over every whole 128 KiB of a drive of `user` bytes.
pub fn whole_drive_fill(user: u64) -> PhaseSpec {
    let mut fill = io(false, 0, 128 * 1024, 32);
    fill.stop_bytes = Some(user - user % (128 * 1024));
    fill
}

pub fn run(d: &mut Drive, s: &PhaseSpec) -> ssdsim::PhaseResult {
    d.run(s, &mut |_| true).unwrap()
}

pub fn total(r: &ssdsim::PhaseResult, k: &str) -> f64 {
    r.totals.iter().find(|(n, _)| *n == k).unwrap().1
}
