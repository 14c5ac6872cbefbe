//! A cloned drive (a shared drive state) runs on exactly as the drive it was cloned from:
//! the same rows, totals and latency histogram, bit for bit, in every kind of phase, with
//! the SLC cache, GC, a mapping-table cache and idle work all in play.

use crate::common;

use common::{io, run, whole_drive_fill};
use ssdsim::{Drive, PhaseKind, PhaseResult, PhaseSpec};

/// A phase's rows, totals, segments and latency histogram, as bits.
type Bits = (Vec<u64>, Vec<(String, u64)>, Vec<u64>, Vec<(u64, u64)>);

/// Everything a phase reports.
fn fingerprint(r: &PhaseResult) -> Bits {
    (
        r.rows
            .iter()
            .flat_map(|row| row.iter().map(|x| x.to_bits()))
            .collect(),
        r.totals
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_bits()))
            .collect(),
        r.segments
            .iter()
            .flat_map(|s| s.iter().map(|x| x.to_bits()))
            .collect(),
        r.hist.buckets(),
    )
}

/// Phases after the shared state: random writes with GC, an idle stretch (fold, GC), a
/// TRIM, mixed random I/O and a sequential pass.
fn after(user: u64) -> Vec<PhaseSpec> {
    let mut rw = io(true, 0, 4096, 16);
    rw.stop_bytes = Some(user);
    rw.sample_interval_s = 0.01;
    let mut idle = PhaseSpec::new(PhaseKind::Idle);
    idle.seconds = Some(2.0);
    let mut trim = PhaseSpec::new(PhaseKind::Trim);
    trim.length = user / 2 / 4096 * 4096;
    let mut mixed = io(true, 30, 8192, 8);
    mixed.stop_bytes = Some(user / 2);
    mixed.sample_interval_s = 0.01;
    let mut seq = whole_drive_fill(user);
    seq.segment_bytes = 100_000;
    vec![rw, idle, trim, mixed, seq]
}

#[test]
fn a_cloned_drive_runs_on_as_the_original() {
    for (when_full, mapping) in [("direct", "dram"), ("fold", "sram")] {
        let p = common::tiny(0.0001, 0.0006, when_full, mapping, 0.0002);
        let mut a = Drive::new(p, 7);
        let user = a.user_bytes();
        run(&mut a, &PhaseSpec::new(PhaseKind::Purge));
        run(&mut a, &whole_drive_fill(user));
        let mut b = a.clone();
        for s in after(user) {
            let (ra, rb) = (run(&mut a, &s), run(&mut b, &s));
            assert_eq!(fingerprint(&ra), fingerprint(&rb), "{when_full}/{mapping}: {:?}", s.kind);
        }
    }
}

#[test]
fn a_clone_is_independent_of_its_original() {
    let p = common::tiny(0.0001, 0.0006, "direct", "dram", 0.0);
    let mut a = Drive::new(p, 3);
    let user = a.user_bytes();
    run(&mut a, &whole_drive_fill(user));
    let state = a.clone();
    // the original goes on with other work; a clone of the state still starts from it
    let mut rw = io(true, 0, 4096, 16);
    rw.stop_bytes = Some(user);
    run(&mut a, &rw);
    let (mut b, mut c) = (state.clone(), state.clone());
    let mut rd = io(true, 100, 4096, 4);
    rd.stop_bytes = Some(user / 4);
    assert_eq!(fingerprint(&run(&mut b, &rd)), fingerprint(&run(&mut c, &rd)));
    assert_ne!(
        fingerprint(&run(&mut a, &rd)),
        fingerprint(&run(&mut state.clone(), &rd)),
        "the original's later writes must not reach the state"
    );
}
