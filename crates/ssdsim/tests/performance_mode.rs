//! OCZ's performance mode (`slc.dynamic_mapped_max_pct`): 1-bit writes while at most half
//! of the LBAs are mapped, then a conversion of the cached data alongside the host writes.

mod common;

use common::{io, run, total, whole_drive_fill};
use ssdsim::{Drive, PhaseKind, PhaseSpec};

/// MB/s of the twentieths of a sequential pass after fill, random-write torture and TRIM
/// of the GC test drive, with performance mode up to `mapped_max_pct` % (0: off).
fn pass_after_trim(mapped_max_pct: f64) -> Vec<f64> {
    let mut p = common::gc_drive(4, 256, 0.9, "mlc");
    p.nand.native.prog_us = 250.0; // MLC about as fast as 1-bit writes here, as on SATA
    p.slc.dynamic_max_gb = 0.6;
    p.slc.dynamic_mapped_max_pct = mapped_max_pct;
    p.slc.reclaim_interval_gb = 0.001;
    p.slc.reclaim_gb = 0.6;
    p.slc.reclaim_pace = 3.0;
    let mut d = Drive::new(p, 8);
    let user = d.user_bytes();
    run(&mut d, &whole_drive_fill(user));
    let mut rw = io(true, 0, 4096, 32);
    rw.stop_bytes = Some(user);
    run(&mut d, &rw);
    run(&mut d, &PhaseSpec::new(PhaseKind::Trim));
    let piece = user / 20 / (128 * 1024) * (128 * 1024);
    (0..20)
        .map(|i| {
            let mut w = io(false, 0, 128 * 1024, 32);
            w.offset = i * piece;
            w.length = piece;
            w.stop_bytes = Some(piece);
            let mbps = total(&run(&mut d, &w), "mbps");
            d.ftl.check_invariants().unwrap();
            mbps
        })
        .collect()
}

#[test]
fn performance_mode_drops_at_half_the_lbas_and_recovers_once_converted() {
    let on = pass_after_trim(50.0);
    let off = pass_after_trim(0.0);
    let show = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    eprintln!("performance mode: {}\noff: {}", show(&on), show(&off));
    let fast = on[..9].iter().sum::<f64>() / 9.0;
    assert!(
        on[..10].iter().all(|&x| x > 0.9 * fast),
        "1-bit writes up to half the LBAs"
    );
    assert!(
        on[10] < 0.5 * fast,
        "the conversion slows the writes right past half"
    );
    assert!(
        on[19] > 0.8 * fast,
        "the speed recovers once the data is converted"
    );
    // The free-space rule (dynamic_share) closes the cache at a third of the LBAs (the
    // free space halves as 1-bit data fills it), and nothing converts it before GC must.
    assert!(
        off[7] < 0.5 * fast,
        "without the mode the cache closes earlier"
    );
}
