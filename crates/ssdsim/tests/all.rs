//! The simulator's integration tests as one test binary: one compile and one link for
//! them all instead of one of each per file (each file stays a module of its name).

mod common;

#[path = "architecture.rs"]
mod architecture;
#[path = "behaviour.rs"]
mod behaviour;
#[path = "drive_state.rs"]
mod drive_state;
#[path = "energy.rs"]
mod energy;
#[path = "erase_steering.rs"]
mod erase_steering;
#[path = "gc_room.rs"]
mod gc_room;
#[path = "idle_yield.rs"]
mod idle_yield;
#[path = "invariants.rs"]
mod invariants;
#[path = "nand_timing.rs"]
mod nand_timing;
#[path = "performance_mode.rs"]
mod performance_mode;
#[path = "prefault.rs"]
mod prefault;
#[path = "profile_limits.rs"]
mod profile_limits;
#[path = "quiet.rs"]
mod quiet;
#[path = "replay.rs"]
mod replay;
#[path = "session.rs"]
mod session;
#[path = "transient.rs"]
mod transient;
#[path = "write_path.rs"]
mod write_path;
// compares write runs with slot-by-slot writes through the FTL's write sequence stamps
#[cfg(feature = "verify")]
#[path = "write_runs.rs"]
mod write_runs;
// the same comparison on the built-in drives' sequential passes
#[cfg(feature = "verify")]
#[path = "profile_runs.rs"]
mod profile_runs;
// compares GC steps that move runs with GC moving slot by slot
#[cfg(feature = "verify")]
#[path = "gc_batches.rs"]
mod gc_batches;
