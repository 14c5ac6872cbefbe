//! Trace replay feeds the phases' own I/O path: the same I/Os at the same depth give the
//! same figures as a generated io phase; open loop follows the trace's times.

use crate::common;

use ssdsim::engine::replay::{ReplaySpec, TraceIos};
use ssdsim::{Drive, PhaseKind, PhaseSpec};

fn drive() -> Drive {
    Drive::new(common::tiny(0.0001, 0.0006, "direct", "sram", 0.0002), 7)
}

#[test]
fn sequential_trace_equals_the_io_phase() {
    let (n, bs) = (2000u64, 65536u64);
    let mut a = drive();
    let mut s = PhaseSpec::new(PhaseKind::Io);
    s.block_size = bs;
    s.queue_depth = 8;
    s.stop_bytes = Some(n * bs);
    let ph = a.run(&s, &mut |_| true).unwrap();
    let mut b = drive();
    let t = vec![0u64; n as usize];
    let op = vec![1u8; n as usize];
    let blocks = b.user_bytes() / bs; // the io phase's sequential job wraps there
    let off: Vec<u64> = (0..n).map(|i| i % blocks * bs).collect();
    let len = vec![bs; n as usize];
    let ios = TraceIos {
        time_ns: &t,
        op: &op,
        offset: &off,
        length: &len,
    };
    let spec = ReplaySpec {
        queue_depth: 8,
        sample_interval_s: 1.0,
        segment_bytes: 1_000_000_000,
    };
    let r = b.replay(&ios, &spec, &mut |_| true).unwrap();
    for k in [
        "ios",
        "write_bytes",
        "duration_s",
        "nand_write_bytes",
        "energy_j",
        "waf",
    ] {
        assert_eq!(common::total(&r.phase, k), common::total(&ph, k), "{k}");
    }
    assert_eq!(r.phase.hist.buckets(), ph.hist.buckets());
    assert_eq!(r.write_hist.total, n);
    assert_eq!(r.read_hist.total, 0);
}

#[test]
fn open_loop_issues_at_the_trace_times() {
    let mut d = drive();
    let n = 500u64;
    let t: Vec<u64> = (0..n).map(|i| i * 2_000_000).collect(); // one I/O every 2 ms
    let op: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    let slots = d.user_bytes() / 4096;
    let off: Vec<u64> = (0..n).map(|i| (i * 37 % slots) * 4096).collect();
    let len = vec![4096u64; n as usize];
    let ios = TraceIos {
        time_ns: &t,
        op: &op,
        offset: &off,
        length: &len,
    };
    let spec = ReplaySpec {
        queue_depth: 0,
        sample_interval_s: 0.1,
        segment_bytes: 1_000_000_000,
    };
    let r = d.replay(&ios, &spec, &mut |_| true).unwrap();
    let dur = common::total(&r.phase, "duration_s");
    assert!((dur - 0.998).abs() < 0.001, "duration {dur}");
    assert_eq!(r.read_hist.total + r.write_hist.total, n);
    // every I/O finds an idle drive: no latency is more than a few I/O times
    assert!(r.phase.hist.max < 2_000_000);
    assert!(common::total(&r.phase, "busy_s") < 0.2 * dur);
}
