//! The NAND side's energy follows each operation's time: a program in SLC mode costs its
//! share of a native program's energy by its time, not a whole native program's.

use crate::common;

use ssdsim::{Drive, PhaseKind, PhaseSpec};

#[test]
fn a_program_costs_its_time_share_of_a_native_programs_energy() {
    // 0.1 MB of static SLC cache and up to 0.2 MB more on a 2 MB drive (4 KiB pages: an SLC
    // program is one page in 150 us, a native one three pages in 1500 us); only the programs
    // draw energy here
    let mut p = common::tiny(0.0001, 0.0002, "direct", "dram", 0.0);
    p.power.read_uj = 0.0;
    p.power.erase_uj = 0.0;
    p.power.transfer_nj_per_kib = 0.0;
    p.power.controller_active_w = 0.0;
    p.power.idle_w = 0.0;
    p.power.program_uj = 30.0;
    let mut d = Drive::new(p, 7);
    let mut w = PhaseSpec::new(PhaseKind::Io);
    w.block_size = 64 * 1024;
    w.queue_depth = 4;
    w.stop_bytes = Some(1024 * 1024); // past the cache: both kinds of program
    let r = d.run(&w, &mut |_| true).unwrap();
    let slc = common::total(&r, "nand_slc_write_bytes");
    let native = common::total(&r, "nand_native_write_bytes");
    assert!(slc >= 96.0 * 1024.0 && native >= 256.0 * 1024.0, "slc {slc} native {native}");
    let uj = slc / 4096.0 * 30.0 * 150.0 / 1500.0 + native / 12288.0 * 30.0;
    let e = common::total(&r, "energy_j") * 1e6;
    assert!((e - uj).abs() <= 0.01 * uj, "energy {e} uJ, by the programs' times {uj} uJ");
}
