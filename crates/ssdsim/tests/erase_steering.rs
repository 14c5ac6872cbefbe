//! A released block taken before idle time erased it is erased inline, on its die only:
//! with dynamic striping the host's pages go to the dies free first meanwhile, so the
//! controller's small write buffer does not hold the whole drive behind one die's erase. After random writes
//! the dies' blocks fill unevenly (GC steers the host around busy dies), so after a TRIM
//! the dies open their next block, and erase it, at different times.

use crate::common;

use common::{io, run, total, whole_drive_fill};
use ssdsim::{Drive, PhaseKind, PhaseSpec};

const BG4: &str = include_str!("../../../python/ssdlab/profiles/bg4-128.toml");

/// MB/s of the SLC-cached first part of a sequential pass (a tenth of the drive) over
/// the bg4-128 scaled down to a twentieth (its dies, block size and cache share kept),
/// right after a fill, random writes (deep in GC) and a TRIM of everything: every block
/// the pass opens must be erased first.
fn after_trim_mbps(erase_us: &str) -> f64 {
    let set = |k: &str, v: &str| (k.to_string(), v.to_string());
    let p = ssdsim::load_profile(
        BG4,
        &[
            set("user_capacity_gb", "6.4"),
            set("nand.blocks_per_plane", "70"),
            set("slc.dynamic_max_gb", "0.77"),
            set("nand.erase_us", erase_us),
        ],
    )
    .unwrap();
    let mut d = Drive::new(p, 5);
    let user = d.user_bytes();
    run(&mut d, &whole_drive_fill(user));
    let mut churn = io(true, 0, 4096, 32);
    churn.stop_bytes = Some(user / 4 / 4096 * 4096);
    let r = run(&mut d, &churn);
    assert!(total(&r, "gc_moves") > 0.0, "the random writes collect");
    run(&mut d, &PhaseSpec::new(PhaseKind::Trim));
    let mut pass = whole_drive_fill(user);
    pass.stop_bytes = Some(user / 10 / (128 * 1024) * (128 * 1024));
    let r = run(&mut d, &pass);
    let cached = total(&r, "nand_slc_write_bytes") / total(&r, "host_write_bytes");
    assert!(cached > 0.99, "the pass stays in the SLC cache ({cached:.3} of it)");
    assert!(total(&r, "erases") > 0.0, "the pass erases the trimmed blocks inline");
    total(&r, "mbps")
}

#[test]
fn an_inline_erase_holds_up_only_its_own_die() {
    // An SLC block of the BG4 takes 256 programs of 175 us (44.8 ms) on its die; its
    // 5 ms erase costs that die 10 % and no other die anything: the pass runs at
    // 44.8 / 49.8 of its speed with erases that take no time. With the host's pages
    // going to the dies in a fixed order, its 512 KiB buffer fills behind the erasing
    // die and every die waits for the erase (here 0.81 of that speed; the full-size
    // drive's TRIM test: 576 MB/s, against 749 clean).
    let (slow, fast) = (after_trim_mbps("5000"), after_trim_mbps("0.001"));
    let bound = fast * 44.8 / 49.8;
    eprintln!("after the TRIM: {slow:.1} MB/s (erases take no time: {fast:.1}; the die time of the erases alone: {bound:.1})");
    assert!(slow > 0.97 * bound, "the host writes to the dies not erasing: {slow:.1} vs {bound:.1} MB/s");
}
