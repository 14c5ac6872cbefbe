//! NAND timing mechanisms seen from the host: the controller's native program pipeline
//! caps write speed as dies are added, and page types and read retries spread read
//! latencies; a plane's page register serves a page just sensed.

use crate::common;

use common::{io, run, total, whole_drive_fill};
use ssdsim::nand::Nand;
use ssdsim::{Drive, PhaseKind, PhaseSpec};

/// Sequential 128 KiB QD32 write MB/s over half the GC test drive (native programs only,
/// no SLC cache) with `dies` dies and the native program pipeline at `native_mbps`.
fn native_write(dies: u32, native_mbps: f64) -> f64 {
    let mut p = common::gc_drive(dies, 256, 0.2 * dies as f64, "mlc");
    p.nand.native_write_mbps = native_mbps;
    let mut d = Drive::new(p, 2);
    let half = d.user_bytes() / 2;
    let mut w = io(false, 0, 128 * 1024, 32);
    w.stop_bytes = Some(half - half % (128 * 1024));
    total(&run(&mut d, &w), "mbps")
}

#[test]
fn native_write_speed_stops_growing_with_dies_at_the_pipeline_rate() {
    // 4 KiB pages programmed in 900 us: 4.55 MB/s per die. A 25 MB/s pipeline lets 2 and 4
    // dies write at their NAND rate and holds 8 and 16 dies at 25 MB/s.
    let free: Vec<f64> = [2, 4, 8, 16].iter().map(|&n| native_write(n, 0.0)).collect();
    let capped: Vec<f64> = [2, 4, 8, 16].iter().map(|&n| native_write(n, 25.0)).collect();
    eprintln!("dies 2/4/8/16: no limit {free:.1?}, 25 MB/s pipeline {capped:.1?} MB/s");
    for i in 0..3 {
        assert!(free[i + 1] > 1.8 * free[i], "without the pipeline, speed doubles with the dies");
    }
    assert!((capped[0] / free[0] - 1.0).abs() < 0.03 && (capped[1] / free[1] - 1.0).abs() < 0.03,
        "below the pipeline's rate the dies set the speed");
    assert!((capped[2] / 25.0 - 1.0).abs() < 0.05 && (capped[3] / 25.0 - 1.0).abs() < 0.05,
        "past it, more dies no longer help");
}

#[test]
fn slc_mode_writes_do_not_pass_the_native_pipeline() {
    let go = |native_mbps: f64| {
        let mut p = common::tiny(0.0, 0.0002, "direct", "dram", 0.0);
        p.nand.native_write_mbps = native_mbps;
        let mut d = Drive::new(p, 3);
        let mut w = io(false, 0, 16 * 1024, 8);
        w.stop_bytes = Some(128 * 1024); // inside the SLC cache
        total(&run(&mut d, &w), "mbps")
    };
    let (free, capped) = (go(0.0), go(1.0));
    eprintln!("SLC-cached write: {free:.1} MB/s, with a 1 MB/s native pipeline {capped:.1} MB/s");
    assert!(free > 5.0 && (capped / free - 1.0).abs() < 0.01, "the cache writes at SLC speed");
}

/// (p50, p99.99, p99.99 / p50, mean) of QD1 4 KiB random reads over a sequentially
/// written TLC drive (native blocks only), `idle_s` seconds after the fill, with the page
/// types' read levels and the drive's read-retry settings set by `retry`.
fn read_spread_with(levels: &[u32], idle_s: f64, retry: impl Fn(&mut ssdsim::profile::Nand)) -> (f64, f64, f64, f64) {
    let mut p = common::tiny(0.0, 0.0, "direct", "dram", 0.0);
    p.nand.native.read_levels = levels.to_vec();
    retry(&mut p.nand);
    let mut d = Drive::new(p, 5);
    let user = d.user_bytes();
    run(&mut d, &whole_drive_fill(user));
    // the fill's last programs end first: reads that suspend them would measure that
    let mut idle = PhaseSpec::new(PhaseKind::Idle);
    idle.seconds = Some(idle_s);
    run(&mut d, &idle);
    let mut r = io(true, 100, 4096, 1);
    r.stop_bytes = Some(40_000 * 4096);
    let res = run(&mut d, &r);
    let (p50, p9999) = (res.hist.quantile(0.5), res.hist.quantile(0.9999));
    (p50 / 1e3, p9999 / 1e3, p9999 / p50, res.hist.mean() / 1e3)
}

fn read_spread(levels: &[u32], retry_pct: f64) -> (f64, f64, f64, f64) {
    read_spread_with(levels, 1.0, |n| n.read_retry_pct = retry_pct)
}

#[test]
fn page_types_and_read_retries_spread_the_latency_histogram() {
    let flat = read_spread(&[], 0.0);
    let types = read_spread(&[2, 3, 2], 0.0);
    let retry = read_spread(&[2, 3, 2], 1.0);
    eprintln!("QD1 4K reads p50 / p99.99 us (ratio): uniform {flat:.1?}, 2-3-2 pages {types:.1?}, + 1 % retries {retry:.1?}");
    assert!(flat.2 < 1.3, "one read time for every page: a single spike");
    // 2-3-2 read levels: the middle page takes 3/2 of the others' sensing time; alone they
    // stay under the 1.5 the retention and wear of the data add to (next test)
    assert!(types.2 > 1.25 && types.2 < 1.5, "the middle page reads slower: p99.99 / p50 = {:.2}", types.2);
    assert!(retry.1 > 1.3 * types.1, "retried reads lengthen the tail");
}

/// The retry model of 3D TLC (`nand.retry`, docs/profile-format.md): 0.01 mean steps at a
/// year on fresh NAND, 3 at the rated 3000 P/E cycles, logarithmic retention loss from 1 s.
fn tlc_retry(start_pe: u32, enabled: bool) -> impl Fn(&mut ssdsim::profile::Nand) {
    move |n| {
        n.retry.enabled = enabled;
        n.retry.steps_fresh = 0.01;
        n.retry.steps_rated = 3.0;
        n.retry.rated_pe = 3000;
        n.retry.onset_s = 1.0;
        n.retry.start_pe = start_pe;
    }
}

#[test]
fn read_retries_grow_with_the_age_of_the_data_and_the_wear_of_the_nand() {
    const DAY: f64 = 86400.0;
    let off = read_spread_with(&[2, 3, 2], 1.0, tlc_retry(0, false));
    let fresh = read_spread_with(&[2, 3, 2], 1.0, tlc_retry(0, true));
    let day = read_spread_with(&[2, 3, 2], DAY, tlc_retry(0, true));
    let worn = read_spread_with(&[2, 3, 2], DAY, tlc_retry(1500, true));
    eprintln!("QD1 4K reads (p50, p99.99 us, p99.99/p50, mean us): switched off {off:.2?}, new NAND \
               1 s after the fill {fresh:.2?}, a day after {day:.2?}, at 1500 P/E a day after {worn:.2?}");
    assert!(off.2 < 1.5, "page types alone: p99.99 / p50 = {:.2}", off.2);
    // Even on new NAND, data seconds old needs a retry now and then (the retention loss
    // grows with the log of its age): the tail holds reads read twice.
    assert!(fresh.2 > 1.5, "p99.99 / p50 = {:.2} on new NAND", fresh.2);
    assert!(fresh.0 == off.0 && (fresh.3 / off.3 - 1.0).abs() < 0.01, "the median and the mean barely move");
    assert!(day.3 > fresh.3 && day.1 >= fresh.1, "older data retries more");
    // Half the rated endurance: about 1.5 steps at a year, ~0.9 a day after writing.
    assert!(worn.3 > 1.5 * day.3 && worn.0 > day.0, "worn NAND retries on most reads");
}

/// Worst latency (ms) of a 95/5 4 KiB random mix at QD32 right after `read_s` seconds of
/// QD32 random reads over a freshly filled drive of 2-plane dies (the fill's last
/// programs still pending when the reads start).
fn mix_after_reads(read_s: f64) -> f64 {
    let mut p = common::gc_drive(2, 64, 0.05, "mlc");
    p.nand.planes = 2;
    let mut d = Drive::new(p, 7);
    let user = d.user_bytes();
    run(&mut d, &whole_drive_fill(user));
    let mut reads = io(true, 100, 4096, 32);
    reads.stop_seconds = Some(read_s);
    run(&mut d, &reads);
    let mut mix = io(true, 95, 4096, 32);
    mix.stop_seconds = Some(2.0);
    run(&mut d, &mix).hist.quantile(1.0) / 1e6
}

/// Host reads suspend programs and erases, but never hold them back for good: reads on
/// both planes of a die at once hold its work once, and a resumed program runs a
/// program-verify step before the next suspension. (Each read used to push the die's
/// pending work by its own time: two planes of reads pushed it away faster than time
/// passed, and the first writes after a read phase waited 0.6 s per second of reads.)
#[test]
fn reads_at_high_queue_depth_never_starve_programs() {
    let (short, long) = (mix_after_reads(1.0), mix_after_reads(20.0));
    eprintln!("95/5 mix worst latency after 1 s / 20 s of reads: {short:.1} / {long:.1} ms");
    assert!(long < 100.0 && long < 2.0 * short + 10.0, "the read phase's length must not matter");
}

/// 1 MiB of QD1 4 KiB reads, sequential or random, over a filled drive of 16 KiB pages
/// (four 4 KiB blocks a page; no read-ahead): the tiny test drive with `mapping`, then
/// `set` applied.
fn qd1_small_reads(random: bool, mapping: &str, set: impl Fn(&mut ssdsim::Profile)) -> ssdsim::PhaseResult {
    let mut p = common::tiny(0.0, 0.0, "direct", mapping, 0.0);
    p.nand.page_kib = 16;
    set(&mut p);
    let mut d = Drive::new(p, 7);
    let fill = whole_drive_fill(d.user_bytes());
    run(&mut d, &fill);
    let mut r = io(random, 100, 4096, 1);
    r.stop_bytes = Some(1 << 20);
    run(&mut d, &r)
}

#[test]
fn small_sequential_reads_sense_each_page_once() {
    // The three reads after a page's first find it in the plane's register: a transfer
    // each, where random reads sense a page every time.
    let iops = |random| total(&qd1_small_reads(random, "dram", |_| {}), "iops");
    let (seq, rnd) = (iops(false), iops(true));
    eprintln!("QD1 4 KiB reads of 16 KiB pages: sequential {seq:.0} IOPS, random {rnd:.0} IOPS");
    // (host and transfer time per command stay: about 1.7x here, none without it)
    assert!(seq > 1.5 * rnd, "sequential 4 KiB reads share each page's sensing");
}

/// Mean latency (us) of QD1 4 KiB random reads over a filled 200 MB drive of 4-plane dies
/// (13 mapping pages) with the given mapping table (`dram`: all of it in DRAM; `hmb`: one
/// mapping page of it cached).
fn qd1_random_read_us(mapping: &str) -> f64 {
    let r = qd1_small_reads(true, mapping, |p| {
        p.user_capacity_gb = 0.2;
        (p.nand.planes, p.nand.blocks_per_plane) = (4, 175);
        p.mapping.cache_mib = 0.016;
    });
    r.hist.mean() / 1e3
}

#[test]
fn a_mapping_cache_miss_reads_the_mapping_page_from_flash() {
    // Each miss senses its mapping page (30 us in SLC, most reads miss here); mapping pages
    // are pages of their own, not taken for the data page last read on their plane.
    let (dram, cached) = (qd1_random_read_us("dram"), qd1_random_read_us("hmb"));
    eprintln!("QD1 4 KiB random reads: mapping in DRAM {dram:.1} us, mostly missing its cache {cached:.1} us");
    assert!(cached > dram + 20.0, "a miss adds a mapping page's read");
}

    /// One channel, one die of two planes, 16 KiB pages, no read suspend.
fn die() -> Nand {
    let mut p = common::tiny(0.0, 0.0, "direct", "dram", 0.0);
    (p.nand.channels, p.nand.planes, p.nand.page_kib) = (1, 2, 16);
    p.nand.read_suspend = false;
    Nand::new(&p)
}

#[test]
    fn a_page_still_in_its_plane_register_is_moved_out_without_sensing_it_again() {
        let mut n = die();
        let (tr, slot) = (n.native.read, 4096);
        let first = n.host_read(0, 0, 0, 5, 3, false, slot);
        assert!(first >= tr, "the first read senses the page");
        let again = n.host_read(first, 0, 0, 5, 3, false, slot);
        assert!(again - first < tr / 4, "the same page again: only its transfer");
        let other = n.host_read(again, 0, 0, 5, 4, false, slot);
        assert!(other - again >= tr, "another page of the plane takes the register");
        let back = n.host_read(other, 0, 0, 5, 3, false, slot);
        assert!(back - other >= tr, "so the first page is sensed anew");
        let done = n.program(back, 0, false, 2 * 16384);
        let after = n.host_read(done, 0, 0, 5, 3, false, slot);
        assert!(after - done >= tr, "a program on the die overwrites the registers");
        let moved = n.host_read(after + 1_000_000, 0, 1, 5, 3, false, slot);
        let idle = n.host_read(moved, 0, 1, 5, 3, false, slot);
        assert!(idle - moved < tr / 4, "each plane holds its own page");
        n.advance_to(idle + 1_000_000);
        let later = n.host_read(idle + 1_000_000, 0, 1, 5, 3, false, slot);
        assert!(later - idle - 1_000_000 >= tr, "an idle gap is not assumed to keep it");
    }
