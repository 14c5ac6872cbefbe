//! Which phases page a drive's tables in ahead (util/prefault.rs): a sequential write pass
//! over the whole drive, which writes all of them anyway, and nothing else (a quick test on
//! a 4 TB drive must not take 8 GB).

use ssdsim::{PhaseKind, PhaseSpec};

const USER: u64 = 100 << 30;

fn pass(length: u64) -> PhaseSpec {
    let mut s = PhaseSpec::new(PhaseKind::Io);
    s.length = length;
    s.stop_bytes = Some(length);
    s
}

#[test]
fn a_whole_drive_sequential_write_pages_the_tables_in_ahead() {
    assert!(pass(USER).writes_whole_drive(USER));
    assert!(pass(USER / 10 * 9).writes_whole_drive(USER)); // the fill with 10 % spare
}

#[test]
fn reads_random_writes_short_or_timed_passes_and_other_phases_do_not() {
    let mut read = pass(USER);
    read.read_pct = 100;
    let mut mixed = pass(USER);
    mixed.read_pct = 30;
    let mut random = pass(USER);
    random.random = true;
    let mut timed = pass(USER);
    timed.stop_seconds = Some(30.0);
    let mut stopped = pass(USER);
    stopped.stop_bytes = Some(USER / 2);
    let mut idle = pass(USER);
    idle.kind = PhaseKind::Idle;
    for s in [read, mixed, random, timed, stopped, pass(USER / 2), idle] {
        assert!(!s.writes_whole_drive(USER), "{s:?}");
    }
}
