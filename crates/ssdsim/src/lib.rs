//! ssdsim: a fast virtual-time SSD simulator. A `Drive` is built from a `Profile`
//! (physical parameters) and runs phases (purge, I/O, TRIM, idle); every behaviour comes
//! from the modelled mechanisms: NAND timing and parallelism, host interface, write
//! buffer, page-mapping FTL with greedy GC, SLC cache, mapping-table cache.

pub mod channel;
pub mod engine;
pub mod fastdiv;
pub mod fiojob;
pub mod ftl;
pub mod host;
pub mod memory;
pub mod nand;
pub mod power;
pub mod profile;
pub mod retry;
pub mod stats;
pub mod workload;

pub use engine::session::{Op, Session};
pub use engine::{Drive, PhaseResult};
pub use profile::{Profile, ProfileError};
pub use workload::{PhaseKind, PhaseSpec};

/// A simulation error (a broken invariant or an impossible request), as one line.
#[derive(Debug, Clone, PartialEq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SimError {}
