//! Idle-time GC yields to the host: it moves a block a program unit at a time, so a
//! write that ends an idle period waits for one program, not for the rest of a block,
//! and a block it left half moved is a GC candidate again while the die has free blocks
//! to spare (the next idle time takes the greedy victim again).

use crate::common;

use common::{io, run, whole_drive_fill};
use ssdsim::{Drive, PhaseKind, PhaseSpec};

#[test]
fn a_write_after_an_idle_period_waits_for_a_program_not_a_block() {
    // 2 dies of 1 MiB MLC blocks (256 pages of 4 KiB, 900 us a program): moving a whole
    // block's valid pages takes about 100 ms (the writes waited up to 108 ms for it).
    let mut p = common::gc_drive(2, 256, 0.4, "mlc");
    p.ftl.idle_gc = true;
    p.ftl.idle_gc_target_pct = 40.0;
    p.ftl.idle_gc_max_valid_pct = 95.0;
    let mut d = Drive::new(p, 3);
    let fill = whole_drive_fill(d.user_bytes());
    run(&mut d, &fill);
    let mut scatter = io(true, 0, 4096, 32);
    scatter.stop_bytes = Some(d.user_bytes() / 2);
    run(&mut d, &scatter);
    let mut worst = 0.0f64;
    for ms in [150.0, 310.0, 470.0] {
        // idle GC is mid-block when each idle period ends
        let mut idle = PhaseSpec::new(PhaseKind::Idle);
        idle.seconds = Some(ms / 1e3);
        run(&mut d, &idle);
        let mut w = io(true, 0, 4096, 1);
        w.stop_bytes = Some(1024 * 4096); // past the 256 KiB write buffer
        let r = run(&mut d, &w);
        worst = worst.max(r.hist.quantile(1.0) / 1e6);
    }
    eprintln!("slowest QD1 write right after idle GC: {worst:.2} ms");
    assert!(worst < 5.0, "a write after idle time waits at most a program or two");
}
