//! Property test: host writes placed as runs (`Ftl::write_run`) give exactly what writing
//! every slot through `Ftl::write_slot` gives, and host reads that gather a page's blocks
//! in one loop (`Ftl::read_slots`) what reading them one by one gives: the same phase
//! results (totals, series, latency histogram: completion times), counters, tables and
//! NAND timelines, on small drives whose pages hold several slots, under random phases.

use crate::common;

use proptest::prelude::*;
use ssdsim::{Drive, PhaseKind, PhaseSpec};

/// The tiny test drive with multi-slot pages; `k` sets the knobs that decide when a run
/// must fall back to slot by slot (mapping cache, checkpoints, SLC cache, striping, the
/// write path and buffer, streaming, background GC).
pub(crate) fn profile(k: &Knobs) -> ssdsim::Profile {
    let (
        page_kib,
        planes,
        mapping,
        checkpoint_gb,
        dynamic_gb,
        striping,
        release,
        write_mbps,
        buffer_kib,
        stream,
        background,
    ) = *k;
    let mut p = common::tiny(0.0, dynamic_gb, "direct", mapping, 0.0);
    p.nand.page_kib = page_kib;
    p.nand.planes = planes;
    p.nand.blocks_per_plane = 40;
    // 85 % of the raw capacity: GC runs soon, during sequential writes too
    p.user_capacity_gb = 0.85 * (2 * planes * 40 * 12 * page_kib * 1024) as f64 / 1e9;
    p.host.write_buffer_kib = buffer_kib;
    p.host.write_mbps = write_mbps;
    p.host.stream_commands = stream;
    p.host.map_update_us = 0.5;
    p.ftl.striping = striping.into();
    p.ftl.release_dead = release;
    p.validate().expect("write-run profile is valid");
    // A journal far smaller than the profile check allows: checkpoints every few hundred
    // slots, inside the runs' reach.
    if mapping == "dram" {
        p.mapping.checkpoint_gb = checkpoint_gb;
    }
    // Background GC as soon as the host pauses, on fuller victims: a die may still be
    // collecting when the next write comes, with free blocks above the GC threshold.
    if background {
        p.ftl.idle_gc_delay_ms = 0.0;
        p.ftl.idle_gc_max_valid_pct = 95.0;
        p.ftl.idle_gc_target_pct = 30.0;
    }
    p
}

/// Everything observable of a drive after a phase: the phase's figures and the state.
pub(crate) fn observe(d: &Drive, r: &ssdsim::PhaseResult) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    out.extend(r.totals.iter().map(|(_, v)| v.to_bits()));
    out.extend(
        r.rows
            .iter()
            .flat_map(|row| row.iter().map(|v| v.to_bits())),
    );
    out.extend(
        r.segments
            .iter()
            .flat_map(|s| s.iter().map(|v| v.to_bits())),
    );
    out.extend(r.hist.buckets().into_iter().flat_map(|(a, b)| [a, b]));
    out.extend([r.hist.total, r.hist.min, r.hist.max]);
    let f = &d.ftl;
    let c = &f.counters;
    out.extend([
        c.host_write_slots,
        c.nand_slc_slots,
        c.nand_native_slots,
        c.map_write_bytes,
        c.gc_moves,
        c.slc_fold_slots,
        c.gc_stalls,
        f.free_blocks(),
        f.map.mapped,
        f.write_seq,
    ]);
    out.extend(f.map.valid.iter().map(|&v| v as u64));
    out.extend(f.map.written.iter().map(|&v| v as u64));
    for lba in 0..f.user_slots as u32 {
        // where each block lives, and which write it holds
        out.push(
            f.lookup(lba)
                .map_or(u64::MAX, |s| s as u64 * 1_000_003 + f.stamps[s as usize]),
        );
    }
    // the order GC and allocation will take blocks in
    out.extend(f.map.bucket_order().into_iter().map(u64::from));
    out.extend(f.alloc.pool_order().into_iter().map(u64::from));
    out.extend((0..f.nand.geo.dies).map(|die| f.nand.die_free(die)));
    out.push(format!("{:?}", f.nand.ops).len() as u64);
    out.extend(format!("{:?}", f.nand.ops).bytes().map(u64::from));
    out
}

type Phase = (u8, u32, bool, u32, u32, u32);

/// Phase `ph` on a drive of `user` bytes: `off` in 1/1000 of the drive, a length of 40 %.
pub(crate) type Knobs = (u32, u32, &'static str, f64, f64, &'static str, bool, f64, u32, bool, bool);

/// The knobs of `profile`, drawn; `checkpoint_gb` how often a mapping checkpoint falls in.
pub(crate) fn knobs(checkpoint_gb: impl Strategy<Value = f64>) -> impl Strategy<Value = Knobs> {
    (
        prop_oneof![Just(8u32), Just(16)],
        1u32..3,
        prop_oneof![Just("dram"), Just("dram"), Just("sram")],
        checkpoint_gb,
        prop_oneof![Just(0.0), Just(0.001)],
        prop_oneof![Just("static"), Just("dynamic")],
        any::<bool>(),
        prop_oneof![Just(0.0), Just(900.0)],
        prop_oneof![Just(64u32), Just(256)],
        any::<bool>(),
        any::<bool>(),
    )
}

/// Runs the phases (given the drive's user bytes) on a drive placing runs and on one
/// writing slot by slot: every phase's results and both drives' states must agree, and the
/// run-placing drive must keep its invariants.
pub(crate) fn same_both_ways(p: ssdsim::Profile, seed: u64, phases: impl Fn(u64) -> Vec<PhaseSpec>) -> Result<(), TestCaseError> {
    same_as_without(p, seed, phases, |d| d.ftl.runs = false)
}

/// `same_both_ways` against a drive that `off` set to take the slow path of some shortcut.
pub(crate) fn same_as_without(
    p: ssdsim::Profile,
    seed: u64,
    phases: impl Fn(u64) -> Vec<PhaseSpec>,
    off: impl Fn(&mut Drive),
) -> Result<(), TestCaseError> {
    let mut runs = Drive::new(p.clone(), seed);
    let mut slots = Drive::new(p, seed);
    off(&mut slots);
    for s in phases(runs.user_bytes()) {
        let a = runs.run(&s, &mut |_| true);
        let b = slots.run(&s, &mut |_| true);
        match (a, b) {
            (Ok(a), Ok(b)) => prop_assert!(observe(&runs, &a) == observe(&slots, &b), "phase {:?} differs", s),
            (Err(a), Err(b)) => {
                prop_assert_eq!(a.0, b.0);
                break;
            }
            (a, b) => prop_assert!(false, "one path failed: {:?} / {:?}", a.err().map(|e| e.0), b.err().map(|e| e.0)),
        }
        if let Err(e) = runs.ftl.check_invariants() {
            prop_assert!(false, "{}", e);
        }
    }
    Ok(())
}

fn phase_spec(&(kind, read_pct, random, bs, qd, off): &Phase, user: u64) -> PhaseSpec {
    let mut s = PhaseSpec::new(
        [
            PhaseKind::Io,
            PhaseKind::Io,
            PhaseKind::Trim,
            PhaseKind::Idle,
            PhaseKind::Purge,
        ][kind as usize % 5],
    );
    s.read_pct = read_pct;
    s.random = random;
    s.block_size = bs as u64 * 4096;
    s.queue_depth = qd;
    let slots = user / 4096;
    s.offset = slots * off as u64 / 1000 * 4096;
    s.length = slots * 2 / 5 * 4096;
    s.stop_bytes = Some(user * 3 / 5);
    s.seconds = Some(0.3);
    s.sample_interval_s = 0.01;
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn runs_match_slot_by_slot(
        knobs in knobs(prop_oneof![Just(0.0), Just(0.0004)]),
        seed in 0u64..1000,
        phases in prop::collection::vec(
            (0u8..5, prop_oneof![Just(0u32), Just(0), Just(30)], any::<bool>(), 1u32..40, 1u32..9, 0u32..600),
            1..12,
        ),
    ) {
        same_both_ways(profile(&knobs), seed, |user| phases.iter().map(|ph| phase_spec(ph, user)).collect())?;
    }
}

/// The property above compares something: on this drive a sequential write does take
/// the run path (and the slot-by-slot drive does not).
#[test]
fn sequential_writes_take_runs() {
    let p = profile(&(
        16, 2, "dram", 0.0, 0.0, "static", true, 0.0, 256, true, false,
    ));
    let mut d = Drive::new(p, 1);
    assert!(d.ftl.runs);
    let s = phase_spec(&(0, 0, false, 32, 1, 0), d.user_bytes());
    d.run(&s, &mut |_| true).unwrap();
    assert!(
        d.ftl.run_slots > d.ftl.counters.host_write_slots / 2,
        "{} of {} slots in runs",
        d.ftl.run_slots,
        d.ftl.counters.host_write_slots
    );
}

/// Purge, a sequential fill, random writes (GC collecting on every die), then sequential
/// overwrites: runs between GC steps, on dies that collect and dies that do not, against
/// slot by slot.
/// `profile(k)` with GC's pace, urgency, firmware time a move and threshold set, on `dies`
/// dies (one a channel), its capacity in proportion.
pub(crate) fn paced_profile(k: &Knobs, pace: f64, urgency: bool, gc_move: f64, threshold: u32, dies: u32) -> ssdsim::Profile {
    let mut p = profile(k);
    p.ftl.gc_pace = pace;
    p.ftl.gc_urgency = urgency;
    p.ftl.gc_move_us = gc_move;
    p.ftl.gc_threshold_blocks = threshold;
    p.nand.channels = dies;
    p.user_capacity_gb *= dies as f64 / 2.0;
    p
}

pub(crate) fn paced_phases(rand_s: f64, bs: u32, qd: u32, passes: u32, user: u64) -> Vec<PhaseSpec> {
    let mut v = vec![PhaseSpec::new(PhaseKind::Purge)];
    let mut fill = PhaseSpec::new(PhaseKind::Io);
    fill.queue_depth = 1;
    fill.stop_bytes = Some(user / 4096 * 4096);
    fill.sample_interval_s = 0.01;
    v.push(fill);
    let mut rand = PhaseSpec::new(PhaseKind::Io);
    rand.random = true;
    rand.block_size = 4096;
    rand.stop_seconds = Some(rand_s);
    rand.sample_interval_s = 0.01;
    v.push(rand);
    for i in 0..passes {
        let mut pass = PhaseSpec::new(PhaseKind::Io);
        pass.block_size = bs as u64 * 4096;
        pass.queue_depth = qd;
        let slots = user / 4096;
        pass.offset = slots * (i as u64 * 97 % 300) / 1000 * 4096;
        pass.length = slots * 3 / 5 * 4096;
        pass.stop_bytes = Some(pass.length);
        pass.sample_interval_s = 0.01;
        v.push(pass);
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn passes_after_random_writes_match_slot_by_slot(
        knobs in knobs(prop_oneof![Just(0.0), Just(0.0), Just(0.0004)]),
        pace in prop_oneof![Just(1.0), Just(0.7), Just(1.6)],
        urgency in any::<bool>(),
        gc_move in prop_oneof![Just(0.0), Just(0.0), Just(2.0)],
        threshold in prop_oneof![1u32..4, 4u32..12],
        dies in 1u32..3,
        seed in 0u64..1000,
        (rand_ms, bs, qd, passes) in (5u32..60, 2u32..64, prop_oneof![Just(1u32), Just(1), Just(4)], 1u32..4),
    ) {
        // A high GC threshold on one die: GC collects through whole sequential passes,
        // its victim the block the pass is overwriting.
        let p = paced_profile(&knobs, pace, urgency, gc_move, threshold, dies);
        same_both_ways(p, seed, |user| paced_phases(rand_ms as f64 / 1000.0, bs, qd, passes, user))?;
    }
}
