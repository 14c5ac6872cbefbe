//! Energy: the NAND arrays' reads, programs and erases and the bytes moved on the channels,
//! plus controller power (active while I/O runs, idle otherwise).

use crate::nand::Nand;
use crate::profile::Power;

/// The NAND side's energy so far. NAND datasheets give one typical supply current for a read,
/// a program and an erase (15 mA each on SK hynix's H27UCG8V MLC, 10 mA on Numonyx's NAND01G
/// at 3 V), so an operation's energy follows its time (Vcc x Icc x t): `read_uj` and
/// `program_uj` are those of a native page read (of the mean native read time) and of a
/// native program, and an SLC-mode program (a tenth of the time or less) or a read retried
/// twice takes its share by its time. Every erase takes `erase_uj` (one erase time).
pub fn ops_energy_j(nand: &Nand, p: &Power) -> f64 {
    let ops = &nand.ops;
    (ops.read_ns as f64 / nand.native.read as f64 * p.read_uj
        + ops.program_ns as f64 / nand.native.prog as f64 * p.program_uj
        + ops.erases as f64 * p.erase_uj)
        * 1e-6
        + ops.transfer_bytes as f64 / 1024.0 * p.transfer_nj_per_kib * 1e-9
}
