//! OCZ's performance mode (`slc.dynamic_mapped_max_pct`): 1-bit writes while at most half
//! of the LBAs are mapped, then a conversion of the cached data alongside the host writes.

use crate::common;

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

const VERTEX: &str = include_str!("../../../python/ssdlab/profiles/vertex460-240.toml");

/// The trim test (fill, 4 KiB random-write torture, TRIM, fill again) on the Vertex 460
/// with an eighth of its blocks and the settings `sets`: in performance mode the
/// conversion runs on some dies while host pages are steered to the others, so the dies
/// fill unevenly. Every valid value must leave each die room for its writes.
fn trim_test(sets: &[(&str, &str)]) -> Result<(), String> {
    let o: Vec<(String, String)> = [
        ("nand.blocks_per_plane", "128"),
        ("user_capacity_gb", "30"),
        ("slc.dynamic_max_gb", "17.1"),
    ]
    .iter()
    .chain(sets)
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let p = ssdsim::load_profile(VERTEX, &o).map_err(|e| e.0)?;
    let mut d = Drive::new(p, 42);
    let fill = whole_drive_fill(d.user_bytes());
    let mut torture = io(true, 0, 4096, 32);
    torture.stop_seconds = Some(300.0);
    for s in [&fill, &torture, &PhaseSpec::new(PhaseKind::Trim), &fill] {
        d.run(s, &mut |_| true).map_err(|e| e.0)?;
        d.ftl.check_invariants()?;
    }
    Ok(())
}

#[test]
fn no_reclaim_pace_runs_a_die_out_of_room() {
    // one thread a pace: four independent drives, the longest of the Rust tests otherwise
    std::thread::scope(|s| {
        let runs: Vec<_> = ["0.05", "1", "4", "8"]
            .map(|pace| (pace, s.spawn(move || trim_test(&[("slc.reclaim_pace", pace)]))))
            .into_iter()
            .collect();
        for (pace, run) in runs {
            if let Err(e) = run.join().unwrap() {
                panic!("slc.reclaim_pace = {pace}: {e}");
            }
        }
    });
}
