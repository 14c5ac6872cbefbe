//! Energy: per NAND operation and per byte moved on the channels, plus controller power
//! (active while I/O runs, idle otherwise).

use crate::nand::OpCounts;
use crate::profile::Power;

pub fn ops_energy_j(ops: &OpCounts, p: &Power) -> f64 {
    (ops.reads as f64 * p.read_uj
        + ops.programs as f64 * p.program_uj
        + ops.erases as f64 * p.erase_uj)
        * 1e-6
        + ops.transfer_bytes as f64 / 1024.0 * p.transfer_nj_per_kib * 1e-9
}
