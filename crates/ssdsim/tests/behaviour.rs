//! Behaviour of the whole drive: determinism, steady state on a full drive, measured
//! WAF against the analytic model of greedy GC, TRIM and unmapped reads.

use crate::common;

use common::{io, run, total, whole_drive_fill};
use ssdsim::{Drive, PhaseKind, PhaseSpec};

#[test]
fn same_profile_and_seed_give_identical_results() {
    let go = |seed| {
        let mut d = Drive::new(common::tiny(0.0001, 0.0006, "direct", "sram", 0.0002), seed);
        let mut s = io(true, 30, 8192, 8);
        s.stop_bytes = Some(20_000_000);
        s.sample_interval_s = 0.01;
        let r = run(&mut d, &s);
        (
            r.rows
                .iter()
                .flat_map(|r| r.iter().map(|x| x.to_bits()))
                .collect::<Vec<_>>(),
            r.hist.buckets(),
        )
    };
    assert_eq!(go(7), go(7));
    assert_ne!(
        go(7).0,
        go(8).0,
        "a different seed must give a different run"
    );
}

/// The analytic WAF of greedy GC under uniform random writes for large blocks
/// (Xiang & Kurkoski 2012): WA = a / (a + W0(-a e^-a)), a = physical / logical.
fn analytic_waf(alpha: f64) -> f64 {
    let x = -alpha * (-alpha).exp();
    // Lambert W0 by Newton iteration from w = -0.5 (x is in (-1/e, 0)).
    let mut w = -0.5f64;
    for _ in 0..100 {
        let ew = w.exp();
        w -= (w * ew - x) / (ew * (w + 1.0));
    }
    alpha / (alpha + w)
}

fn steady_waf(spare: f64) -> (f64, f64, f64) {
    let dies = 4;
    let blocks = 512;
    let raw = dies as f64 * blocks as f64 * 256.0 * 4096.0;
    let user_gb = (raw / (1.0 + spare) / 1e9 * 1e6).floor() / 1e6;
    let p = common::gc_drive(dies, blocks, user_gb, "mlc");
    let mut d = Drive::new(p, 1);
    let user = d.user_bytes();
    let fill = whole_drive_fill(user);
    run(&mut d, &fill);
    let mut rw = io(true, 0, 4096, 32);
    rw.stop_bytes = Some(4 * user);
    run(&mut d, &rw);
    rw.stop_bytes = Some(4 * user);
    let r = run(&mut d, &rw);
    // Blocks GC cannot use for spare: the free threshold and the open blocks per die.
    let reserved = dies as f64 * 4.0 * 256.0 * 4096.0;
    let alpha = (raw - reserved) / user as f64;
    (total(&r, "waf"), analytic_waf(alpha), alpha)
}

#[test]
fn steady_state_waf_matches_greedy_model_with_gib_vs_gb_spare() {
    let (waf, model, alpha) = steady_waf(0.0737);
    eprintln!("spare 7.37 %: alpha {alpha:.4} measured WAF {waf:.3}, model {model:.3}");
    assert!(
        (waf / model - 1.0).abs() < 0.12,
        "measured {waf} vs model {model}"
    );
}

#[test]
fn steady_state_waf_matches_greedy_model_with_extra_spare() {
    for spare in [0.15, 0.28, 0.5] {
        let (waf, model, alpha) = steady_waf(spare);
        eprintln!("spare {spare}: alpha {alpha:.4} measured WAF {waf:.3}, model {model:.3}");
        assert!(
            (waf / model - 1.0).abs() < 0.12,
            "spare {spare}: measured {waf} vs model {model}"
        );
    }
}

#[test]
fn trim_gives_speed_back_and_unmapped_reads_skip_flash() {
    let p = common::gc_drive(2, 256, 0.5, "mlc");
    let mut d = Drive::new(p, 3);
    let user = d.user_bytes();
    let mut read = io(false, 100, 128 * 1024, 32);
    read.stop_bytes = Some(user / 4);
    let clean_read = total(&run(&mut d, &read), "mbps");
    let fill = whole_drive_fill(user);
    let clean_fill = total(&run(&mut d, &fill), "mbps");
    let mapped_read = total(&run(&mut d, &read), "mbps");
    assert!(
        clean_read > 1.5 * mapped_read,
        "unmapped reads {clean_read} MB/s vs mapped {mapped_read} MB/s"
    );
    let mut rw = io(true, 0, 4096, 32);
    rw.stop_bytes = Some(2 * user);
    run(&mut d, &rw);
    let dirty_fill = total(&run(&mut d, &fill), "mbps");
    run(&mut d, &rw);
    run(&mut d, &PhaseSpec::new(PhaseKind::Trim));
    let trimmed_fill = total(&run(&mut d, &fill), "mbps");
    eprintln!("clean {clean_fill:.3} dirty {dirty_fill:.3} after TRIM {trimmed_fill:.3} MB/s");
    assert!(
        dirty_fill < 0.8 * clean_fill,
        "a fragmented drive must write slower"
    );
    assert!(
        trimmed_fill > 0.9 * clean_fill,
        "TRIM must give the speed back"
    );
    assert_eq!(d.ftl.map.mapped, fill.stop_bytes.unwrap() / 4096);
    d.ftl.check_invariants().unwrap();
}

/// Per-second IOPS of uniform random writes on a full drive in steady state.
fn steady_band(gc_pace: f64, urgency: bool) -> (f64, f64) {
    let mut p = common::gc_drive(4, 256, 0.9, "mlc");
    p.ftl.gc_pace = gc_pace;
    p.ftl.gc_urgency = urgency;
    p.ftl.striping = "static".into();
    let mut d = Drive::new(p, 5);
    let user = d.user_bytes();
    let fill = whole_drive_fill(user);
    run(&mut d, &fill);
    let mut rw = io(true, 0, 4096, 32);
    rw.stop_bytes = Some(3 * user);
    run(&mut d, &rw);
    rw.stop_bytes = None;
    rw.stop_seconds = Some(200.0);
    rw.sample_interval_s = 0.05; // a whole-victim stop lasts ~0.2 s on this small-block drive
    let r = run(&mut d, &rw);
    let iops: Vec<f64> = r.rows.iter().map(|row| row[1]).collect();
    let mean = iops.iter().sum::<f64>() / iops.len() as f64;
    let min = iops.iter().cloned().fold(f64::INFINITY, f64::min);
    (mean, min)
}

#[test]
fn gc_that_falls_behind_stops_host_writes_in_dips() {
    let (mean1, min1) = steady_band(1.0, false);
    let (mean_lazy, min_lazy) = steady_band(0.5, false);
    let (mean_urgent, min_urgent) = steady_band(0.5, true);
    eprintln!(
        "paced: mean {mean1:.0} min {min1:.0}; lazy: mean {mean_lazy:.0} min {min_lazy:.0}; \
         lazy with catch-up: mean {mean_urgent:.0} min {min_urgent:.0}"
    );
    assert!(min1 > 0.4 * mean1, "paced GC must keep a band");
    assert!(
        min_lazy < 0.25 * mean_lazy,
        "GC falling behind must show deep dips"
    );
    assert!(
        min_urgent > 0.3 * mean_urgent,
        "catch-up GC (ftl.gc_urgency) must not stop host writes"
    );
}

/// Sequential QD1 reads of a written range (MB/s) and the free blocks after them.
fn seq_read_after_random(read_ahead_kib: u32, idle_gc_delay_ms: f64) -> (f64, f64, u64, u64) {
    let mut p = common::gc_drive(4, 256, 0.9, "mlc");
    p.ftl.read_ahead_kib = read_ahead_kib;
    p.ftl.idle_gc_target_pct = 5.0;
    p.ftl.idle_gc_max_valid_pct = 95.0;
    p.ftl.idle_gc_delay_ms = idle_gc_delay_ms;
    let mut d = Drive::new(p, 9);
    let user = d.user_bytes();
    let fill = whole_drive_fill(user);
    run(&mut d, &fill);
    let mut rw = io(true, 0, 4096, 32);
    rw.stop_bytes = Some(user / 2);
    run(&mut d, &rw);
    let free_before = d.ftl.free_blocks();
    let mut seq = io(false, 100, 128 * 1024, 1);
    seq.stop_bytes = fill.stop_bytes;
    let seq_mbps = total(&run(&mut d, &seq), "mbps");
    let mut rnd = io(true, 100, 4096, 1);
    rnd.stop_seconds = Some(1.0);
    let rnd_iops = total(&run(&mut d, &rnd), "iops");
    d.ftl.check_invariants().unwrap();
    (seq_mbps, rnd_iops, free_before, d.ftl.free_blocks())
}

#[test]
fn read_ahead_speeds_up_sequential_reads_only() {
    let never = 3.6e6; // no background GC: reads alone decide
    let (seq0, rnd0, _, _) = seq_read_after_random(0, never);
    let (seq_ra, rnd_ra, _, _) = seq_read_after_random(128, never);
    eprintln!("QD1 128 KiB: {seq0:.0} -> {seq_ra:.0} MB/s; QD1 4 KiB random: {rnd0:.0} -> {rnd_ra:.0} IOPS");
    assert!(
        seq_ra > 1.2 * seq0,
        "read-ahead must hide flash reads of a sequential stream"
    );
    assert!(
        (rnd_ra / rnd0 - 1.0).abs() < 0.02,
        "random reads get nothing from read-ahead"
    );
}

#[test]
fn idle_gc_runs_while_the_host_only_reads() {
    let (_, _, before, after) = seq_read_after_random(0, 100.0);
    let (_, _, before_off, after_off) = seq_read_after_random(0, 3.6e6);
    eprintln!("free blocks over a read pass: {before} -> {after} (delay 100 ms), {before_off} -> {after_off} (never)");
    assert!(
        after > before + 4,
        "write-idle GC must restore free blocks during reads"
    );
    assert_eq!(
        after_off, before_off,
        "with the delay never reached nothing may move"
    );
}

/// The HD Tach full-write case: a drive filled, overwritten once with random 4 KiB
/// writes, left idle long enough for idle GC to restore a small reserve, then rewritten
/// sequentially (128 KiB, QD1) under `striping`: (MB/s of the rewrite, clean-fill totals).
fn rewrite_after_torture(striping: &str) -> (f64, Vec<u64>) {
    // 16 dies with 12 % spare area; idle GC may take the ~90 % valid blocks the torture leaves.
    let mut p = common::gc_drive(16, 64, 0.95, "mlc");
    p.ftl.striping = striping.into();
    p.ftl.idle_gc_target_pct = 3.0;
    p.ftl.idle_gc_max_valid_pct = 95.0;
    let mut d = Drive::new(p, 11);
    let user = d.user_bytes();
    let fill = whole_drive_fill(user);
    // Bits, so that NaN totals (no mapping-cache lookups) compare equal.
    let clean = run(&mut d, &fill)
        .totals
        .iter()
        .map(|(_, v)| v.to_bits())
        .collect();
    let mut rw = io(true, 0, 4096, 32);
    rw.stop_bytes = Some(user);
    run(&mut d, &rw);
    let mut idle = PhaseSpec::new(PhaseKind::Idle);
    idle.seconds = Some(60.0);
    run(&mut d, &idle);
    let mut seq = io(false, 0, 128 * 1024, 1);
    seq.stop_bytes = fill.stop_bytes;
    let mbps = total(&run(&mut d, &seq), "mbps");
    d.ftl.check_invariants().unwrap();
    (mbps, clean)
}

#[test]
fn dynamic_striping_steers_writes_away_from_collecting_dies() {
    let (fixed, clean_fixed) = rewrite_after_torture("static");
    let (dynamic, clean_dynamic) = rewrite_after_torture("dynamic");
    eprintln!("rewrite after torture: static {fixed:.1} MB/s, dynamic {dynamic:.1} MB/s");
    assert_eq!(
        clean_fixed, clean_dynamic,
        "equally free dies are taken in order: a clean fill is unchanged"
    );
    assert!(
        dynamic > 1.1 * fixed,
        "the other dies must take the writes of a die busy collecting"
    );
}

/// SLC and fold bytes of a sequential fill of half the tiny drive, whose dynamic SLC
/// cache holds a fraction of that, under `when_full`.
fn half_fill_slc(when_full: &str) -> (f64, f64, f64) {
    let mut p = common::tiny(0.0, 0.0002, when_full, "dram", 0.0);
    p.slc.dynamic_share = 1.0;
    let mut d = Drive::new(p, 3);
    let half = d.user_bytes() / 2;
    let mut fill = io(false, 0, 16 * 1024, 8);
    fill.stop_bytes = Some(half - half % (16 * 1024));
    let r = run(&mut d, &fill);
    d.ftl.check_invariants().unwrap();
    (
        total(&r, "nand_slc_write_bytes"),
        total(&r, "slc_fold_bytes"),
        total(&r, "host_write_bytes"),
    )
}

#[test]
fn a_full_cache_is_folded_alongside_host_writes() {
    let (slc_direct, fold_direct, host) = half_fill_slc("direct");
    let (slc_fold, fold_fold, _) = half_fill_slc("fold");
    eprintln!("host {host:.0}: direct slc {slc_direct:.0} fold {fold_direct:.0}; fold slc {slc_fold:.0} fold {fold_fold:.0}");
    assert_eq!(fold_direct, 0.0, "writing direct leaves the cache alone");
    assert!(
        slc_direct < 0.5 * host,
        "the cache is a fraction of the write"
    );
    assert!(
        fold_fold > 0.5 * slc_direct,
        "a full cache is folded while writing"
    );
    assert!(
        slc_fold > slc_direct + 0.5 * fold_fold,
        "folded blocks take host writes at SLC speed again"
    );
}

/// (sequential write MB/s, sequential read MB/s) at 128 KiB and `qd` over half the GC test
/// drive, with the controller write path limited to `write_mbps` (0 = no limit) and a host
/// round trip of `host_latency_us` per command.
fn seq_write_read(write_mbps: f64, qd: u32, host_latency_us: f64) -> (f64, f64) {
    let mut p = common::gc_drive(4, 256, 0.9, "mlc");
    (p.host.write_mbps, p.host.host_latency_us) = (write_mbps, host_latency_us);
    let mut d = Drive::new(p, 2);
    let half = d.user_bytes() / 2;
    let mut w = io(false, 0, 128 * 1024, qd);
    w.stop_bytes = Some(half - half % (128 * 1024));
    let write = total(&run(&mut d, &w), "mbps");
    let mut r = io(false, 100, 128 * 1024, qd);
    r.stop_bytes = w.stop_bytes;
    (write, total(&run(&mut d, &r), "mbps"))
}

#[test]
fn the_controller_write_path_caps_host_writes_only() {
    let (w_free, r_free) = seq_write_read(0.0, 32, 0.0);
    let (w_cap, r_cap) = seq_write_read(10.0, 32, 0.0);
    eprintln!("write {w_free:.1} -> {w_cap:.1} MB/s, read {r_free:.1} -> {r_cap:.1} MB/s");
    assert!(
        w_free > 15.0,
        "without the limit the NAND sets the write speed"
    );
    assert!(
        (w_cap / 10.0 - 1.0).abs() < 0.03,
        "writes run at the write path's rate"
    );
    assert!(
        (r_cap / r_free - 1.0).abs() < 0.02,
        "reads do not pass through the write path"
    );
}

#[test]
fn the_write_path_works_behind_the_buffer_so_qd1_hides_the_round_trip() {
    // A 128 KiB command takes 13.1 ms through a 10 MB/s path; a 6.5 ms host round trip
    // per command would cut QD1 to 6.7 MB/s if the path sat before the acknowledgement.
    // Behind the buffer, the path works through the round trip: QD1 writes as fast as QD32.
    let (qd1, _) = seq_write_read(10.0, 1, 6500.0);
    let (qd32, _) = seq_write_read(10.0, 32, 6500.0);
    eprintln!("write path 10 MB/s, 6.5 ms round trip: QD1 {qd1:.2}, QD32 {qd32:.2} MB/s");
    assert!(
        (qd1 / 10.0 - 1.0).abs() < 0.03,
        "QD1 writes run at the write path's rate"
    );
    assert!(
        (qd1 / qd32 - 1.0).abs() < 0.03,
        "queue depth does not matter once the path limits"
    );
}

/// (read of written data, read of unmapped data, write) MB/s at 128 KiB QD32 over a quarter
/// of a 2-plane GC test drive, with `planes`, `host.read_op_us` and `host.read_mbps`.
fn reads_with(planes: u32, read_op_us: f64, read_mbps: f64) -> (f64, f64, f64) {
    let mut p = common::gc_drive(4, 256, 0.9, "mlc");
    (p.nand.planes, p.host.read_op_us, p.host.read_mbps) = (planes, read_op_us, read_mbps);
    let mut d = Drive::new(p, 2);
    let quarter = d.user_bytes() / 4 / (128 * 1024) * (128 * 1024);
    let mut w = io(false, 0, 128 * 1024, 32);
    w.stop_bytes = Some(quarter);
    let write = total(&run(&mut d, &w), "mbps");
    let mut r = io(false, 100, 128 * 1024, 32);
    r.stop_bytes = Some(quarter);
    let read = total(&run(&mut d, &r), "mbps");
    let mut u = io(false, 100, 128 * 1024, 32);
    (u.offset, u.stop_bytes) = (2 * quarter, Some(quarter));
    (read, total(&run(&mut d, &u), "mbps"), write)
}

#[test]
fn sequential_reads_issue_multi_plane_reads() {
    // 100 us of controller time per issued flash read binds: a 4 KiB page per read on one
    // plane, both planes' pages of a word line per read on two.
    let (one, _, _) = reads_with(1, 100.0, 0.0);
    let (two, _, _) = reads_with(2, 100.0, 0.0);
    eprintln!("read-op bound reads: 1 plane {one:.1}, 2 planes {two:.1} MB/s");
    assert!((one / 40.96 - 1.0).abs() < 0.05, "one page per issued read");
    assert!(
        (two / one - 2.0).abs() < 0.1,
        "one issued read per word line of two planes"
    );
}

#[test]
fn the_controller_read_path_caps_flash_reads_only() {
    let (r_free, u_free, w_free) = reads_with(2, 0.0, 0.0);
    let (r_cap, u_cap, w_cap) = reads_with(2, 0.0, 20.0);
    eprintln!("read {r_free:.1} -> {r_cap:.1}, unmapped {u_free:.1} -> {u_cap:.1}, write {w_free:.1} -> {w_cap:.1} MB/s");
    assert!(
        r_free > 40.0,
        "without the limit the NAND and link set the read speed"
    );
    assert!(
        (r_cap / 20.0 - 1.0).abs() < 0.03,
        "reads of flash data run at the read path's rate"
    );
    assert!(
        (u_cap / u_free - 1.0).abs() < 0.02,
        "unmapped reads do not pass through it"
    );
    assert!(
        (w_cap / w_free - 1.0).abs() < 0.02,
        "writes do not pass through it"
    );
}

/// MB/s of the middle and the last tenth of a whole-drive fill whose SLC cache does not
/// fit in the spare area, so it is folded near the end, with `engines` GC engines.
fn fill_tenths(engines: u32, buffers: u32) -> (f64, f64) {
    let mut p = common::gc_drive(4, 256, 0.95, "mlc");
    p.slc.dynamic_max_gb = 0.15;
    p.slc.dynamic_share = 1.0;
    p.ftl.gc_engines = engines;
    p.ftl.gc_buffers = buffers;
    let mut d = Drive::new(p, 5);
    let tenth = d.user_bytes() / 10 / (128 * 1024) * (128 * 1024);
    let mbps = fill_pieces(&mut d, tenth, 10);
    (mbps[5], mbps[9])
}

/// MB/s of `n` successive `piece`-byte parts of a sequential 128 KiB QD32 fill from LBA 0,
/// each one phase, the invariants checked after each.
fn fill_pieces(d: &mut Drive, piece: u64, n: u64) -> Vec<f64> {
    let mut mbps = Vec::new();
    for i in 0..n {
        let mut w = io(false, 0, 128 * 1024, 32);
        w.offset = i * piece;
        w.length = piece;
        w.stop_bytes = Some(piece);
        mbps.push(total(&run(d, &w), "mbps"));
        d.ftl.check_invariants().unwrap();
    }
    mbps
}

#[test]
fn fewer_gc_engines_or_buffers_deepen_the_drop_at_the_end_of_a_fill() {
    let (mid_all, last_all) = fill_tenths(0, 0);
    let (mid_one, last_one) = fill_tenths(1, 0);
    let (mid_buf, last_buf) = fill_tenths(0, 1);
    eprintln!(
        "no limit {mid_all:.1} -> {last_all:.1} MB/s; one engine {mid_one:.1} -> {last_one:.1}; \
         one staging buffer {mid_buf:.1} -> {last_buf:.1}"
    );
    assert_eq!(
        mid_all, mid_one,
        "nothing collects while the drive has free blocks"
    );
    assert_eq!(
        mid_all, mid_buf,
        "nothing collects while the drive has free blocks"
    );
    assert!(
        last_all < 0.85 * mid_all,
        "folding the cache near the end slows the fill"
    );
    // A die out of free blocks collects at once, whoever holds the engines: engines no
    // longer slow the fill (they made dies wait seconds for another die's victim).
    assert!(
        last_one > 0.9 * last_all && last_one < 1.1 * last_all,
        "engines do not stall a die out of blocks"
    );
    assert!(
        last_buf < 0.75 * last_all,
        "with one staging buffer one GC program runs at a time"
    );
}

/// MB/s of successive 8 MB pieces of a sequential fill of half the GC test drive after its
/// 0.1 GB cache ran out; with a firmware reclaim of 20 MB after every 20 MB of direct
/// writes (`pace` 0: blocking), or with none (`reclaim` false); the batches fade out as the
/// free space falls to `min_free_pct` of the capacity (0: never).
fn pieces_after_the_cache(reclaim: bool, pace: f64) -> Vec<f64> {
    pieces_after_the_cache_fading(reclaim, pace, 0.0)
}

fn pieces_after_the_cache_fading(reclaim: bool, pace: f64, min_free_pct: f64) -> Vec<f64> {
    let mut p = common::gc_drive(4, 256, 0.9, "mlc");
    p.slc.dynamic_max_gb = 0.1;
    p.slc.dynamic_share = 1.0;
    if reclaim {
        p.slc.reclaim_interval_gb = 0.02;
        p.slc.reclaim_gb = 0.02;
        p.slc.reclaim_pace = pace;
        p.slc.reclaim_min_free_pct = min_free_pct;
    }
    let mut d = Drive::new(p, 4);
    let piece = 8 << 20;
    let n = d.user_bytes() / 2 / piece;
    fill_pieces(&mut d, piece, n).split_off(16) // the first 128 MB: the cache and its edge
}

#[test]
fn a_paced_reclaim_gives_bursts_without_stopping_host_writes() {
    let lo = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let direct = pieces_after_the_cache(false, 0.0);
    let blocking = pieces_after_the_cache(true, 0.0);
    let paced = pieces_after_the_cache(true, 0.2);
    let base = lo(&direct);
    eprintln!(
        "direct {base:.1}-{:.1} MB/s; blocking {:.1}-{:.1}; paced {:.1}-{:.1}",
        hi(&direct),
        lo(&blocking),
        hi(&blocking),
        lo(&paced),
        hi(&paced)
    );
    assert!(
        hi(&direct) < 1.05 * base,
        "direct writes alone run at one speed"
    );
    assert!(
        lo(&blocking) < 0.6 * base,
        "a blocking reclaim stops host writes while it folds"
    );
    assert!(lo(&paced) > 0.75 * base, "a paced reclaim only slows them");
    assert!(
        hi(&paced) > 1.3 * base,
        "the cache it frees takes writes at SLC speed"
    );
}

#[test]
fn reclaim_batches_fade_with_the_free_space() {
    let hi = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let direct = pieces_after_the_cache(false, 0.0);
    let base = direct.iter().cloned().fold(f64::INFINITY, f64::min);
    let always = pieces_after_the_cache(true, 0.2);
    let fading = pieces_after_the_cache_fading(true, 0.2, 70.0);
    let half = fading.len() / 2;
    eprintln!(
        "direct {base:.1} MB/s; always: fastest {:.1} / {:.1} (first / second half); fading: {:.1} / {:.1}",
        hi(&always[..half]),
        hi(&always[half..]),
        hi(&fading[..half]),
        hi(&fading[half..])
    );
    assert!(
        hi(&fading[..half]) > 1.3 * base,
        "bursts while the drive is mostly empty"
    );
    assert!(
        hi(&fading[half..]) < 1.05 * base,
        "none once the free space is below the share"
    );
    assert!(
        hi(&always[half..]) > 1.3 * base,
        "without the share they go on"
    );
}

/// (seconds, NAND bytes written) of a 0.5 GB sequential write on the GC test drive, with a
/// mapping checkpoint every `checkpoint_gb` (0 = none).
fn write_with_checkpoints(checkpoint_gb: f64) -> (f64, f64) {
    let mut p = common::gc_drive(4, 256, 0.9, "mlc");
    p.mapping.checkpoint_gb = checkpoint_gb;
    let mut d = Drive::new(p, 3);
    let mut w = io(false, 0, 128 * 1024, 32);
    w.stop_bytes = Some(500_000_000 - 500_000_000 % (128 * 1024));
    let r = run(&mut d, &w);
    (total(&r, "duration_s"), total(&r, "nand_write_bytes"))
}

#[test]
fn a_mapping_checkpoint_holds_host_writes_for_the_table_write() {
    let (t0, nand0) = write_with_checkpoints(0.0);
    let (t1, nand1) = write_with_checkpoints(0.1);
    // 4 checkpoints (after 0.1 .. 0.4 GB); the table is 4 B per 4 KiB of 0.9 GB = 879 KB:
    // 215 units of 4 KiB over 4 dies, 54 programs of 900 us each on every die.
    let table = (0.9e9_f64 / 4096.0).ceil() * 4.0;
    let units = (table / 4096.0).ceil();
    let stall = (units / 4.0).ceil() * 900e-6;
    eprintln!(
        "0.5 GB: {t0:.3} s -> {t1:.3} s with checkpoints (4 x {stall:.3} s); NAND +{:.0} B",
        nand1 - nand0
    );
    assert_eq!(
        nand1 - nand0,
        4.0 * units * 4096.0,
        "the whole table, four times"
    );
    let extra = t1 - t0;
    assert!(
        extra > 0.8 * 4.0 * stall && extra < 1.2 * 4.0 * stall,
        "host writes wait for each table write: {extra:.3} s"
    );
}

/// (erases, largest write latency in µs) of a 40 MB QD1 burst after an idle second, on a
/// full GC test drive whose first half was just overwritten (its old blocks freed, unerased).
fn burst_after_idle(erase_at_open: bool) -> (f64, f64) {
    let mut p = common::gc_drive(4, 64, 0.2, "mlc");
    p.ftl.erase_at_open = erase_at_open;
    let user = (0.2e9 as u64) / 4096 * 4096;
    let mut d = Drive::new(p, 3);
    run(&mut d, &whole_drive_fill(user));
    let mut half = whole_drive_fill(user / 2);
    half.queue_depth = 32;
    run(&mut d, &half);
    let mut idle = PhaseSpec::new(PhaseKind::Idle);
    idle.seconds = Some(1.0);
    run(&mut d, &idle);
    let mut burst = io(false, 0, 128 * 1024, 1);
    burst.offset = user / 2;
    burst.stop_bytes = Some(40 * 128 * 1024 * 8);
    let r = run(&mut d, &burst);
    d.ftl.check_invariants().unwrap();
    (total(&r, "erases"), r.hist.quantile(1.0) / 1e3)
}

#[test]
fn erase_at_open_leaves_freed_blocks_for_the_writes_that_open_them_to_erase() {
    let (erases, max_us) = burst_after_idle(false);
    let (erases_open, max_open_us) = burst_after_idle(true);
    eprintln!("burst: {erases} erases, max {max_us:.0} us; erased at open: {erases_open}, max {max_open_us:.0} us");
    // idle time erased the freed blocks: the burst opens erased ones
    assert_eq!(erases, 0.0);
    // erased at open: every block the burst opens (40 MB over 1 MiB blocks)
    assert!(erases_open >= 30.0, "{erases_open}");
    // the buffer (256 KiB) holds less than a 3 ms erase of these writes
    assert!(max_open_us > max_us + 1000.0, "{max_open_us} vs {max_us}");
}
