//! Quiet stretches (no I/O, no background work) cost the same however long they are: an
//! idle phase and a trace's gap are stored as their first and last intervals, and the
//! totals (duration, energy) still cover every interval.

use crate::common;

use ssdsim::engine::replay::{ReplaySpec, TraceIos};
use ssdsim::{Drive, PhaseKind, PhaseSpec};

fn drive() -> Drive {
    Drive::new(common::tiny(0.0001, 0.0006, "direct", "sram", 0.0002), 7)
}

fn idle(d: &mut Drive, seconds: f64) -> (ssdsim::PhaseResult, usize) {
    let mut s = PhaseSpec::new(PhaseKind::Idle);
    s.seconds = Some(seconds);
    let mut streamed = 0;
    let r = d.run(&s, &mut |_| {
        streamed += 1;
        true
    })
    .unwrap();
    (r, streamed)
}

#[test]
fn a_long_idle_phase_is_a_few_rows_with_every_second_in_its_totals() {
    let mut d = drive();
    let mut w = PhaseSpec::new(PhaseKind::Io);
    w.random = true;
    w.block_size = 4096;
    w.queue_depth = 8;
    w.stop_seconds = Some(2.0);
    d.run(&w, &mut |_| true).unwrap();
    let (r, streamed) = idle(&mut d, 1e7);
    assert!(r.rows.len() < 100, "{} rows", r.rows.len());
    assert_eq!(streamed, r.rows.len(), "the rows streamed are the rows stored");
    assert_eq!(r.rows.last().unwrap()[0], 1e7);
    assert_eq!(common::total(&r, "duration_s"), 1e7);
    // the skipped intervals are the same as the last row but for their time
    let (a, b) = (&r.rows[r.rows.len() - 2], &r.rows[r.rows.len() - 1]);
    for i in 1..a.len() {
        assert!(a[i] == b[i] || (a[i].is_nan() && b[i].is_nan()) || (a[i] - b[i]).abs() < 1e-9 * b[i].abs(), "column {i}");
    }
    // energy: idle power over every second (after the background work)
    let idle_w = d.profile.power.idle_w;
    assert!((common::total(&r, "energy_j") - idle_w * 1e7).abs() < 1e-3 * idle_w * 1e7);
}

#[test]
fn a_short_idle_phase_keeps_every_interval() {
    let mut d = drive();
    let (r, _) = idle(&mut d, 2.0);
    assert_eq!(r.rows.len(), 2);
}

#[test]
fn a_week_long_gap_in_a_trace_is_two_rows() {
    let mut d = drive();
    let week = 7 * 86_400 * 1_000_000_000u64;
    let t = [0, 1_000_000, week];
    let op = [1u8, 1, 1];
    let off = [0u64, 4096, 8192];
    let len = [4096u64; 3];
    let ios = TraceIos { time_ns: &t, op: &op, offset: &off, length: &len };
    let spec = ReplaySpec { queue_depth: 0, sample_interval_s: 1.0, segment_bytes: 1_000_000_000 };
    let r = d.replay(&ios, &spec, &mut |_| true).unwrap();
    let rows = &r.phase.rows;
    assert!(rows.len() <= 3, "{} rows", rows.len());
    assert_eq!(rows[0][19], 2.0, "both early writes in the first interval");
    assert_eq!(rows.last().unwrap()[0], 604_800.0);
    assert_eq!(common::total(&r.phase, "write_ios"), 3.0);
    assert!(common::total(&r.phase, "duration_s") >= 604_800.0);
}

#[test]
fn a_replay_past_1e7_seconds_is_refused() {
    let mut d = drive();
    let t = [0u64, 10_000_001 * 1_000_000_000];
    let ios = TraceIos { time_ns: &t, op: &[1, 1], offset: &[0, 4096], length: &[4096, 4096] };
    let spec = ReplaySpec { queue_depth: 0, sample_interval_s: 1.0, segment_bytes: 1_000_000_000 };
    let e = d.replay(&ios, &spec, &mut |_| true).err().unwrap();
    assert!(e.0.contains("after 1e7 s"), "{}", e.0);
}
