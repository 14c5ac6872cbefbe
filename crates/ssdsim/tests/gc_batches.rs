//! Property test: GC steps that batch a victim page's valid slots into runs (`gc_runs`,
//! placed together by the open GC block's fast path, `gc_edge_run` at its edges) give
//! exactly what moving each slot alone gives (`Ftl::gc_step_slots`: its page read if not
//! the last read, one `alloc_run`, one `relocate`): the same phase results (totals, series,
//! segments, latency histogram), counters, tables, write stamps, block orders and NAND
//! timelines (`write_runs::observe`), on small drives with pages of 2 and 4 slots and on
//! shrunk built-in drives, through random writes, the sequential passes after them that GC
//! paces, idle GC and folds. A shortcut in GC relocation must keep this passing.

use crate::profile_runs::shrunk;
use crate::write_runs::{knobs, paced_phases, paced_profile, same_as_without};
use proptest::prelude::*;
use ssdsim::{Drive, PhaseKind, PhaseSpec};

/// The drive that moves GC's slots one by one.
fn slot_by_slot(d: &mut Drive) {
    d.ftl.gc_batches = false;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn batched_steps_match_slot_by_slot(
        knobs in knobs(prop_oneof![Just(0.0), Just(0.0), Just(0.0004)]),
        pace in prop_oneof![Just(1.0), Just(0.7), Just(1.6), Just(2.5)],
        urgency in any::<bool>(),
        gc_move in prop_oneof![Just(0.0), Just(0.0), Just(2.0)],
        threshold in prop_oneof![1u32..4, 4u32..12],
        engines in prop_oneof![Just(0u32), Just(0), Just(1)],
        dies in 1u32..3,
        seed in 0u64..1000,
        (rand_ms, bs, qd, passes) in (5u32..60, 1u32..64, prop_oneof![Just(1u32), Just(1), Just(4), Just(32)], 1u32..4),
    ) {
        let mut p = paced_profile(&knobs, pace, urgency, gc_move, threshold, dies);
        p.ftl.gc_engines = engines;
        same_as_without(p, seed, |user| paced_phases(rand_ms as f64 / 1000.0, bs, qd, passes, user), slot_by_slot)?;
    }
}

/// The idle test's phases in small: purge, a sequential fill, random writes, a
/// sequential pass, random writes, an idle period, another pass.
fn idle_phases(user: u64) -> Vec<PhaseSpec> {
    let n = user / (1 << 20) * (1 << 20);
    let pass = || {
        let mut s = PhaseSpec::new(PhaseKind::Io);
        s.queue_depth = 1;
        s.length = n;
        s.stop_bytes = Some(n);
        s.sample_interval_s = 0.05;
        s
    };
    let torture = || {
        let mut s = PhaseSpec::new(PhaseKind::Io);
        s.random = true;
        s.block_size = 4096;
        s.length = n;
        s.stop_bytes = Some(n);
        s.sample_interval_s = 0.05;
        s
    };
    let mut idle = PhaseSpec::new(PhaseKind::Idle);
    idle.seconds = Some(5.0);
    vec![PhaseSpec::new(PhaseKind::Purge), pass(), torture(), pass(), torture(), idle, pass()]
}

/// The comparison on a shrunk built-in drive, which must relocate a good share of what
/// the host writes (the property compares something).
fn check(id: &str) {
    let p = shrunk(id, &[]);
    let mut d = Drive::new(p.clone(), 3);
    for s in idle_phases(d.user_bytes()) {
        d.run(&s, &mut |_| true).unwrap();
    }
    let (moves, host) = (d.ftl.counters.gc_moves, d.ftl.counters.host_write_slots);
    assert!(moves > host / 4, "{id}: {moves} relocations for {host} host slots");
    if let Err(e) = same_as_without(p, 3, idle_phases, slot_by_slot) {
        panic!("{id}: {e}");
    }
}

#[test]
fn dram_tlc() {
    check("tlc-256");
}

#[test]
fn dramless_hmb_tlc() {
    check("sn520-128");
}

#[test]
fn qlc_slc_cache() {
    check("qlc-pcie4-hmb-1000");
}
