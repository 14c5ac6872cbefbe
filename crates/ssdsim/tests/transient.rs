//! The transient of random writes on a freshly filled drive: how GC's pace follows the
//! victims' valid counts as they fall from nearly full to the steady state.

use crate::common;

use common::{io, run, whole_drive_fill};
use ssdsim::Drive;

const TLC: &str = include_str!("../../../python/ssdlab/profiles/tlc-256.toml");

/// Per-interval (IOPS, WAF) of 4 KiB QD32 random writes over a freshly filled tlc-256
/// scaled down to an eighth (its dies, blocks and cache share kept), `times` x its user
/// bytes, sampled every `interval_s`.
fn transient(times: f64, interval_s: f64) -> Vec<(f64, f64)> {
    let set = |k: &str, v: &str| (k.to_string(), v.to_string());
    let p = ssdsim::load_profile(
        TLC,
        &[
            set("user_capacity_gb", "32"),
            set("nand.blocks_per_plane", "171"),
            set("slc.dynamic_max_gb", "3"),
        ],
    )
    .unwrap();
    let mut d = Drive::new(p, 6);
    let user = d.user_bytes();
    run(&mut d, &whole_drive_fill(user));
    let mut rw = io(true, 0, 4096, 32);
    rw.stop_bytes = Some((user as f64 * times) as u64 / 4096 * 4096);
    rw.sample_interval_s = interval_s;
    run(&mut d, &rw)
        .rows
        .iter()
        .map(|r| (r[1], r[11]))
        .collect()
}

/// GC's pace per victim is the fraction of its valid slots that keeps up with the host
/// (carried over between host slots), so as the victims' valid counts fall after the fill
/// the WAF falls smoothly. A whole-number pace (every die moving 13, then 12, 11 ... slots
/// per host slot) put the WAF of half the intervals on a whole number, for up to ten
/// intervals in a row, and the IOPS climbed in flat stairs.
#[test]
fn the_waf_falls_smoothly_after_the_fill() {
    let waf: Vec<f64> = transient(0.3, 0.5)
        .iter()
        .map(|r| r.1)
        .filter(|w| *w > 1.5) // intervals with GC
        .collect();
    let whole = |w: f64| (w - w.round()).abs() < 0.03;
    let share = waf.iter().filter(|w| whole(**w)).count() as f64 / waf.len() as f64;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let peak = waf.windows(10).map(mean).fold(0.0, f64::max);
    let last = mean(&waf[waf.len() - 40..]);
    eprintln!(
        "{} intervals with GC: {:.1} % at a whole-number WAF; WAF {peak:.2} at its peak after \
         the fill, {last:.2} at the end",
        waf.len(),
        100.0 * share
    );
    assert!(waf.len() > 100, "the test must reach GC");
    assert!(peak > last + 4.0, "the first victims are nearly full");
    // The fraction parts of a smooth curve spread evenly: ~6 % land within 0.03.
    assert!(
        share < 0.15,
        "the WAF sits on whole numbers: {:.0} %",
        100.0 * share
    );
}
