//! Memory a new drive's tables take: they are allocated in one go (GBs for TB drives), so
//! a profile that needs more than the process can get is refused with one line before
//! anything is allocated, instead of an abort or the OOM killer picking a process.

use crate::nand::{Geometry, SLOT_BYTES};
use crate::profile::{Profile, ProfileError};
use crate::util::memory::available;

/// Refuse a profile whose tables need more memory than is available (one line: size,
/// limit and what to change).
pub fn check(p: &Profile) -> Result<(), ProfileError> {
    match available() {
        Some((have, what)) => check_against(p, have, &what),
        None => Ok(()),
    }
}

/// `check` with a given limit of `have` bytes, named `what`.
pub fn check_against(p: &Profile, have: u64, what: &str) -> Result<(), ProfileError> {
    let need = table_bytes(p);
    if need <= have {
        return Ok(());
    }
    Err(ProfileError(format!(
        "profile '{}' needs about {:.2} GB of memory for the simulator's tables (about 8 B per 4 KiB \
         of raw NAND) and {:.2} GB is available ({what}); simulate a smaller drive \
         (user_capacity_gb, nand.blocks_per_plane) or free memory",
        p.id,
        need as f64 / 1e9,
        have as f64 / 1e9
    )))
}

/// Bytes the simulator's tables take for this profile (about 8 B per 4 KiB of raw
/// NAND, docs/performance-memory.md): L2P and P2L (4 B per slot), the valid bitmap, the
/// per-block lists and counters, GC buckets and the mapping cache's page table.
pub fn table_bytes(p: &Profile) -> u64 {
    let g = Geometry::from_profile(p);
    let user_slots = (p.user_capacity_gb * 1e9) as u64 / SLOT_BYTES;
    let (slots, blocks) = (g.total_slots(), g.total_blocks() as u64);
    let map_pages = if p.mapping.kind == "dram" {
        0
    } else {
        user_slots.div_ceil(p.nand.page_kib as u64 * 256)
    };
    4 * user_slots
        + 4 * slots
        + slots.div_ceil(64) * 8
        + 20 * blocks
        + 4 * g.dies as u64 * (g.slots_per_block as u64 + 1)
        + 4 * map_pages
}
