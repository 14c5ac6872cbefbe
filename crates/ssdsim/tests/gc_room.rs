//! Foreground GC is for room: once a TRIM gives a die free blocks again, the victim it
//! was collecting waits (for idle time, or for the die to need the room) instead of
//! being paced by the host's writes, so the writes after a TRIM run at the speed of a
//! drive with that much room, on every die.

use crate::common;

use common::{io, run, total, whole_drive_fill};
use ssdsim::{Drive, PhaseKind, PhaseSpec};

#[test]
fn writes_after_a_trim_do_not_wait_for_the_gc_it_made_needless() {
    // 4 dies of 1 MiB MLC blocks: random writes over the first half keep every die at
    // its GC threshold, collecting; the TRIM of the second half (sequential fill data,
    // whole blocks) then frees about half of each die's blocks at once
    let mut d = Drive::new(common::gc_drive(4, 256, 0.9, "mlc"), 5);
    let user = d.user_bytes();
    run(&mut d, &whole_drive_fill(user));
    let half = user / 2 / 4096 * 4096;
    let mut churn = io(true, 0, 4096, 32);
    churn.length = half;
    churn.stop_bytes = Some(2 * half);
    let steady = run(&mut d, &churn);
    assert!(total(&steady, "gc_moves") > 0.0, "the first half's random writes collect");
    let mut trim = PhaseSpec::new(PhaseKind::Trim);
    trim.offset = half;
    trim.length = user - half;
    run(&mut d, &trim);
    // a tenth of the drive: far less than the room the TRIM gave back
    let mut after = churn.clone();
    after.stop_bytes = Some(user / 10);
    let r = run(&mut d, &after);
    let (moves, iops, steady_iops) = (total(&r, "gc_moves"), total(&r, "iops"), total(&steady, "iops"));
    eprintln!("after the TRIM: {moves} GC moves, {iops:.0} IOPS (at the GC threshold: {steady_iops:.0})");
    assert_eq!(moves, 0.0, "no die collects while it has room");
    assert!(iops > 1.5 * steady_iops, "the writes run at the speed of a drive with room");
}
