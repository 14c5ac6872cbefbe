//! Sessions (one request at a time, the NBD export) against phases: the same I/Os at the
//! same times must give the same drive, to the nanosecond and the counter.

use crate::common;

use ssdsim::workload::Workload;
use ssdsim::{Drive, Op, PhaseKind, PhaseSpec, Session};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const SEED: u64 = 42;

fn io(random: bool, read_pct: u32, bs: u64, qd: u32, bytes: u64) -> PhaseSpec {
    let mut s = PhaseSpec::new(PhaseKind::Io);
    s.random = random;
    s.read_pct = read_pct;
    s.block_size = bs;
    s.queue_depth = qd;
    s.stop_bytes = Some(bytes);
    s
}

/// The engine's closed loop, driven through a session: `qd` I/Os at the start, then one
/// more at each completion, with the I/O stream the engine would draw for phase `n`.
fn closed_loop(s: &mut Session, spec: &PhaseSpec, n: u64) {
    let spec = spec.clone().validated(s.drive.user_bytes()).unwrap();
    let mut wl = Workload::new(&spec, SEED ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let count = spec.stop_bytes.unwrap() / spec.block_size;
    let t0 = s.drive.now();
    let mut heap = BinaryHeap::new();
    let mut issued = 0;
    let mut go =
        |s: &mut Session, t: u64, heap: &mut BinaryHeap<Reverse<(u64, u64, u32, bool)>>| {
            let x = wl.next(0);
            let op = if x.read { Op::Read } else { Op::Write };
            let done = s
                .submit(op, x.lba as u64 * 4096, x.slots as u64 * 4096, t)
                .unwrap();
            heap.push(Reverse((done, t, x.slots, x.read)));
        };
    while issued < count.min(spec.queue_depth as u64) {
        go(s, t0, &mut heap);
        issued += 1;
    }
    while let Some(Reverse((done, ..))) = heap.pop() {
        if issued < count {
            go(s, done, &mut heap);
            issued += 1;
        }
    }
}

/// The drive's own counters (not the session's request counts).
const DRIVE: [&str; 12] = [
    "host_write_bytes",
    "nand_write_bytes",
    "nand_slc_write_bytes",
    "nand_native_write_bytes",
    "erases",
    "gc_moves",
    "gc_stalls",
    "slc_fold_bytes",
    "free_blocks",
    "slc_used_bytes",
    "slc_capacity_bytes",
    "mapped_bytes",
];

fn drive_counters(s: &Session) -> Vec<(&'static str, f64)> {
    s.counters()
        .into_iter()
        .filter(|(k, _)| DRIVE.contains(k))
        .collect()
}

#[test]
fn a_session_replays_phases_exactly() {
    let profile = || common::tiny(0.0001, 0.0006, "direct", "sram", 0.0002);
    let user = Drive::new(profile(), SEED).user_bytes();
    let phases = [
        io(false, 0, 128 * 1024, 4, user - user % (128 * 1024)),
        io(true, 30, 4096, 8, 3 * user),
        io(true, 100, 16384, 1, 4 << 20),
    ];
    // The reference runs phases on a drive a session wraps (so both count from zero).
    let mut engine = Session::new(Drive::new(profile(), SEED));
    let mut session = Session::new(Drive::new(profile(), SEED));
    for (i, p) in phases.iter().enumerate() {
        engine.drive.run(p, &mut |_| true).unwrap();
        closed_loop(&mut session, p, i as u64 + 1);
        assert_eq!(
            session.drive.now(),
            engine.drive.now(),
            "phase {i}: completion of the last I/O"
        );
        assert_eq!(
            drive_counters(&session),
            drive_counters(&engine),
            "phase {i}"
        );
    }
    let c = drive_counters(&session);
    let get = |k: &str| c.iter().find(|(n, _)| *n == k).unwrap().1;
    assert!(
        get("gc_moves") > 0.0 && get("slc_fold_bytes") > 0.0,
        "the replay must reach GC and folding: {c:?}"
    );
}

#[test]
fn counters_follow_writes_trims_and_idle() {
    let p = common::tiny(0.0001, 0.0006, "direct", "sram", 0.0002);
    let mut s = Session::new(Drive::new(p, SEED));
    let user = s.user_bytes();
    let mut t = 0;
    for off in (0..user).step_by(65536) {
        let len = 65536.min(user - off);
        t = s.submit(Op::Write, off, len, t).unwrap();
    }
    let c = |s: &Session, k: &str| s.counters().iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!(c(&s, "mapped_bytes"), user as f64);
    assert_eq!(c(&s, "host_write_bytes"), user as f64);
    assert!(c(&s, "waf") >= 1.0);
    let flushed = s.submit(Op::Flush, 0, 0, t).unwrap();
    assert!(flushed > t);
    // A trim unmaps whole slots only: the partial slot at each end keeps its data.
    s.submit(Op::Trim, 2048, 1 << 20, flushed).unwrap();
    assert_eq!(c(&s, "mapped_bytes"), (user - (1 << 20) + 4096) as f64);
    assert_eq!(c(&s, "trims"), 1.0);
    assert_eq!(c(&s, "trim_bytes"), ((1 << 20) - 4096) as f64);
    // Idle time lets background work run: erases and free blocks only grow.
    let (erases, free) = (c(&s, "erases"), c(&s, "free_blocks"));
    s.advance(flushed + 30_000_000_000).unwrap();
    assert!(c(&s, "erases") >= erases && c(&s, "free_blocks") >= free);
    assert!(
        c(&s, "erases") > erases || c(&s, "slc_used_bytes") == 0.0,
        "idle did nothing"
    );
    // A read of trimmed data needs no flash: it is as fast as the host path allows.
    let now = s.now();
    assert!(s.submit(Op::Read, 4096, 4096, now).unwrap() > now);
}

#[test]
fn reads_back_to_back_keep_the_drive_from_idling() {
    // Folding needs idle time: nothing in flight for the idle delay (100 ms), as between
    // a phase's commands. A stream of reads with microsecond gaps is not idle, however long.
    let p = common::tiny(0.0001, 0.0006, "direct", "sram", 0.0);
    let mut s = Session::new(Drive::new(p, SEED));
    let c = |s: &Session, k: &str| s.counters().iter().find(|(n, _)| *n == k).unwrap().1;
    let mut t = 0;
    for off in (0..256 << 10).step_by(16384) {
        t = s.submit(Op::Write, off, 16384, t).unwrap();
    }
    let cached = c(&s, "slc_used_bytes");
    assert!(cached > 0.0);
    // the reads start once the writes are programmed (~5 ms), well inside the idle delay
    t += 10_000_000;
    let (mut lat, mut off) = (Vec::new(), 0);
    while t < 1_000_000_000 {
        let at = t + 1_000;
        t = s.submit(Op::Read, off, 4096, at).unwrap();
        lat.push(t - at);
        off = (off + 4096) % (256 << 10);
    }
    assert_eq!(c(&s, "slc_fold_bytes"), 0.0, "folded while the host kept reading");
    assert_eq!(c(&s, "slc_used_bytes"), cached);
    assert_eq!(lat.iter().min(), lat.iter().max(), "a read waited for background work");
    // The same drive left alone for a second folds its cache.
    s.advance(t + 1_000_000_000).unwrap();
    assert!(c(&s, "slc_fold_bytes") > 0.0 && c(&s, "slc_used_bytes") < cached);
}

#[test]
fn bad_requests_are_one_line_errors() {
    let p = common::tiny(0.0001, 0.0006, "direct", "sram", 0.0002);
    let mut s = Session::new(Drive::new(p, SEED));
    let user = s.user_bytes();
    for (op, off, len, what) in [
        (Op::Write, user - 4096, 8192, "past the end"),
        (Op::Read, 0, 0, "must be > 0"),
        (Op::Trim, u64::MAX - 1, 4096, "past the end"),
    ] {
        let e = s.submit(op, off, len, 0).unwrap_err().0;
        assert!(e.contains(what) && !e.contains('\n'), "{e}");
    }
}
