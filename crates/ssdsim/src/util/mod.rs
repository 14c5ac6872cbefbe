//! Simulator plumbing, apart from the hardware it models: division by run-time constants,
//! the memory this process may still take, paging tables in ahead of a pass, and a phase's
//! recorded series.

pub mod fastdiv;
pub mod memory;
pub mod prefault;
pub mod stats;
