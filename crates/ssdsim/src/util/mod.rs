//! Simulator plumbing, apart from the hardware it models: division by run-time constants,
//! the memory this process may still take, and a phase's recorded series.

pub mod fastdiv;
pub mod memory;
pub mod stats;
