//! ssdsim: a fast virtual-time SSD simulator. A `Drive` is built from a `Profile`
//! (physical parameters) and runs phases (purge, I/O, TRIM, idle); every behaviour comes
//! from the modelled mechanisms: NAND timing and parallelism, host interface, write
//! buffer, page-mapping FTL with greedy GC, SLC cache, mapping-table cache.

// Layers, lowest first (tests/architecture.rs checks them): plumbing; the profile; the
// hardware; the FTL and the workload; the engine (the drive in virtual time); fio's
// workload on the drive.
pub mod util;

pub mod profile;

pub mod channel;
pub mod host;
pub mod nand;
pub mod power;
pub mod retry;

pub mod ftl;
pub mod workload;

pub mod engine;

pub mod fiojob;

pub use engine::session::{Op, Session};
pub use engine::{Drive, PhaseResult};
pub use profile::{Profile, ProfileError};
pub use workload::{PhaseKind, PhaseSpec};

/// A profile from TOML text with `key=value` overrides (dotted paths), every value checked:
/// each field's range (the profile), then the room its geometry leaves (the NAND model).
pub fn load_profile(text: &str, overrides: &[(String, String)]) -> Result<Profile, ProfileError> {
    let p = profile::load(text, overrides)?;
    nand::check_room(&p)?;
    Ok(p)
}

/// `load_profile` of a TOML tree with its overrides already applied.
pub fn profile_from_value(value: toml::Value) -> Result<Profile, ProfileError> {
    let p = profile::from_value(value)?;
    nand::check_room(&p)?;
    Ok(p)
}

/// A simulation error (a broken invariant or an impossible request), as one line.
#[derive(Debug, Clone, PartialEq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SimError {}
