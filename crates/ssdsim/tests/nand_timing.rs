//! NAND timing mechanisms seen from the host: the controller's native program pipeline
//! caps write speed as dies are added, and page types and read retries spread read
//! latencies.

mod common;

use common::{io, run, total, whole_drive_fill};
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

/// p99.99 / p50 of QD1 4 KiB random reads over a sequentially written TLC drive (native
/// blocks only), with the page types' read levels and a read-retry share.
fn read_spread(levels: &[u32], retry_pct: f64) -> (f64, f64, f64) {
    let mut p = common::tiny(0.0, 0.0, "direct", "dram", 0.0);
    p.nand.native.read_levels = levels.to_vec();
    p.nand.read_retry_pct = retry_pct;
    let mut d = Drive::new(p, 5);
    let user = d.user_bytes();
    run(&mut d, &whole_drive_fill(user));
    // the fill's last programs end first: reads that suspend them would measure that
    let mut idle = PhaseSpec::new(PhaseKind::Idle);
    idle.seconds = Some(1.0);
    run(&mut d, &idle);
    let mut r = io(true, 100, 4096, 1);
    r.stop_bytes = Some(40_000 * 4096);
    let res = run(&mut d, &r);
    let (p50, p9999) = (res.hist.quantile(0.5), res.hist.quantile(0.9999));
    (p50 / 1e3, p9999 / 1e3, p9999 / p50)
}

#[test]
fn page_types_and_read_retries_spread_the_latency_histogram() {
    let flat = read_spread(&[], 0.0);
    let types = read_spread(&[2, 3, 2], 0.0);
    let retry = read_spread(&[2, 3, 2], 1.0);
    eprintln!("QD1 4K reads p50 / p99.99 us (ratio): uniform {flat:.1?}, 2-3-2 pages {types:.1?}, + 1 % retries {retry:.1?}");
    assert!(flat.2 < 1.3, "one read time for every page: a single spike");
    // 2-3-2 read levels: the middle page takes 3/2 of the others' sensing time
    assert!(types.2 > 1.25, "the middle page reads slower: p99.99 / p50 = {:.2}", types.2);
    assert!(retry.1 > 1.3 * types.1, "retried reads lengthen the tail");
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
