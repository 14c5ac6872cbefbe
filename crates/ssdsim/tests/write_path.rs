//! The controller's work on a write after the NAND: the mapping updates of
//! `host.map_update_us` take the command core once per mapping page a write changes.

use crate::common;

use common::{io, run, total};
use ssdsim::Drive;

/// MB/s of 64 MiB of writes of `bs` bytes at queue depth `qd` (random or sequential) on a
/// clean 8-die MLC drive (NAND: ~36 MB/s) whose firmware takes `map_us` per mapping page.
fn write_mbps(random: bool, bs: u64, qd: u32, map_us: f64) -> f64 {
    let mut p = common::gc_drive(8, 256, 1.6, "mlc");
    p.host.map_update_us = map_us;
    let mut d = Drive::new(p, 4);
    let mut w = io(random, 0, bs, qd);
    w.stop_bytes = Some(64 << 20);
    total(&run(&mut d, &w), "mbps")
}

#[test]
fn mapping_updates_cap_scattered_small_writes_and_spare_sequential_ones() {
    let rand = (write_mbps(true, 4096, 3, 0.0), write_mbps(true, 4096, 3, 500.0));
    let seq = (write_mbps(false, 128 * 1024, 32, 0.0), write_mbps(false, 128 * 1024, 32, 500.0));
    eprintln!("4 KiB QD3 random / 128 KiB QD32 sequential MB/s without, with 500 us per mapping page: {rand:.1?} / {seq:.1?}");
    // 4 KiB writes change one mapping page each: 1 us of command overhead + 500 us a write
    let cap = 1e6 / 501.0 * 4096.0 / 1e6;
    assert!(rand.0 > 2.0 * cap, "without the updates the NAND sets the speed");
    assert!((rand.1 / cap - 1.0).abs() < 0.05, "the updates cap random writes at {cap:.2} MB/s: {:.2}", rand.1);
    // a 128 KiB write changes 32 entries of one mapping page (1024 per 4 KiB page)
    assert!((seq.1 / seq.0 - 1.0).abs() < 0.03, "sequential writes barely pay it");
}
