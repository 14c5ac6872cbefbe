//! Property tests: random sequences of writes, reads, TRIMs, purges and idle time on
//! tiny drives keep every FTL invariant, and every read finds the version last written.

use crate::common;

use proptest::prelude::*;
use ssdsim::ftl::Ftl;
use ssdsim::host::WriteBuffer;
use ssdsim::{Drive, PhaseKind, PhaseSpec};
use std::collections::HashMap;

#[derive(Debug, Clone)]
enum Op {
    Write(u32, u32),
    Read(u32, u32),
    Trim(u32, u32),
    Idle(u32),
    Purge,
}

/// The version the FTL gave the last write: its write sequence, kept only with the
/// `verify` feature (without it, the test checks what is mapped, not which version).
fn version(ftl: &Ftl) -> u64 {
    #[cfg(feature = "verify")]
    return ftl.write_seq;
    #[cfg(not(feature = "verify"))]
    {
        let _ = ftl;
        0
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (0u32..488, 1u32..48).prop_map(|(l, n)| Op::Write(l, n)),
        3 => (0u32..488, 1u32..32).prop_map(|(l, n)| Op::Read(l, n)),
        2 => (0u32..488, 1u32..200).prop_map(|(l, n)| Op::Trim(l, n)),
        2 => (1u32..3000).prop_map(Op::Idle),
        1 => Just(Op::Purge),
    ]
}

type Knobs = (
    f64,
    f64,
    &'static str,
    &'static str,
    f64,
    &'static str,
    u32,
    f64,
    bool,
    u32,
    f64,
);

fn drive_knobs() -> impl Strategy<Value = Knobs> {
    (
        prop_oneof![Just(0.0), Just(0.0001)],
        prop_oneof![Just(0.0), Just(0.0006), Just(0.002)],
        prop_oneof![Just("direct"), Just("fold")],
        prop_oneof![Just("dram"), Just("sram"), Just("hmb")],
        prop_oneof![Just(0.0), Just(0.0002)],
        prop_oneof![Just("static"), Just("dynamic")],
        prop_oneof![Just(0u32), Just(1)],
        prop_oneof![Just(0.0), Just(0.2)],
        any::<bool>(),
        prop_oneof![Just(0u32), Just(1)],
        prop_oneof![Just(0.0), Just(50.0)],
    )
}

/// The tiny test drive with the knobs set.
fn knobbed(k: &Knobs) -> ssdsim::Profile {
    let mut p = common::tiny(k.0, k.1, k.2, k.3, k.4);
    p.ftl.striping = k.5.into();
    p.ftl.gc_engines = k.6;
    p.slc.reclaim_pace = k.7;
    p.ftl.release_dead = k.8;
    p.ftl.gc_buffers = k.9;
    p.slc.reclaim_min_free_pct = k.10;
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn ftl_keeps_invariants(knobs in drive_knobs(), ops in prop::collection::vec(op(), 1..160)) {
        let p = knobbed(&knobs);
        let mut ftl = Ftl::new(&p, WriteBuffer::new(1 << 20));
        let user = ftl.user_slots as u32;
        let mut model: HashMap<u32, u64> = HashMap::new();
        let mut t = 0u64;
        for op in ops {
            t += 10_000;
            match op {
                Op::Write(l, n) => {
                    for lba in l..(l + n).min(user) {
                        let at = ftl.buffer.admit(t);
                        ftl.write_slot(lba, at).unwrap();
                        model.insert(lba, version(&ftl));
                    }
                }
                Op::Read(l, n) => {
                    let n = n.min(user - l);
                    let done = ftl.read_slots(l, n, t).1;
                    prop_assert!(done >= t);
                    if (l..l + n).all(|x| !model.contains_key(&x)) {
                        prop_assert_eq!(done, t, "unmapped reads must not touch flash");
                    }
                }
                Op::Trim(l, n) => {
                    let n = n.min(user - l);
                    ftl.trim(l, n);
                    for lba in l..l + n { model.remove(&lba); }
                }
                Op::Idle(ms) => {
                    ftl.idle(t, t + ms as u64 * 1_000_000, 64).unwrap();
                    t += ms as u64 * 1_000_000;
                }
                Op::Purge => {
                    t = ftl.purge(t);
                    model.clear();
                }
            }
            if let Err(e) = ftl.check_invariants() {
                prop_assert!(false, "{}", e);
            }
        }
        for lba in 0..user {
            match (model.get(&lba), ftl.lookup(lba)) {
                #[cfg(feature = "verify")]
                (Some(&seq), Some(s)) => prop_assert_eq!(ftl.stamps[s as usize], seq, "LBA {} reads a stale version", lba),
                #[cfg(not(feature = "verify"))]
                (Some(_), Some(_)) => {}
                (None, None) => {}
                (m, s) => prop_assert!(false, "LBA {}: model {:?} but drive maps {:?}", lba, m, s),
            }
        }
    }

    #[test]
    fn phases_keep_invariants(knobs in drive_knobs(), seed in 0u64..1000, background in any::<bool>(),
                              read_ahead in prop_oneof![Just(0u32), Just(16), Just(64)],
                              phases in prop::collection::vec((0u8..4, 0u32..=100, any::<bool>(), 1u32..9, 1u32..33), 1..12)) {
        let mut p = knobbed(&knobs);
        // Write-idle GC at once (and on fuller victims) so read phases run it; read-ahead.
        if background {
            p.ftl.idle_gc_delay_ms = 0.0;
            p.ftl.idle_gc_max_valid_pct = 95.0;
        }
        p.ftl.read_ahead_kib = read_ahead;
        let mut d = Drive::new(p, seed);
        for (kind, read_pct, random, bs, qd) in phases {
            let mut s = PhaseSpec::new([PhaseKind::Io, PhaseKind::Trim, PhaseKind::Idle, PhaseKind::Purge][kind as usize % 4]);
            s.read_pct = read_pct;
            s.random = random;
            s.block_size = bs as u64 * 4096;
            s.queue_depth = qd;
            s.stop_bytes = Some(1_500_000);
            s.seconds = Some(0.5);
            s.sample_interval_s = 0.01;
            if kind == 1 { s.offset = 4096 * 100; s.length = 4096 * 200; }
            let r = d.run(&s, &mut |_| true).unwrap();
            prop_assert!(!r.rows.is_empty());
            if let Err(e) = d.ftl.check_invariants() {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
