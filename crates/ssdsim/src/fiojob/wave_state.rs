//! The wave's state one issue of a job touches: the job's live state and figures, the
//! wave's count of commands at the drive and its event queue. Borrowed once where the job
//! issues and handed down the issuing calls (an I/O, a sync, a flush between passes).

use std::collections::BinaryHeap;

use crate::fiojob::live::{Event, Live};
use crate::fiojob::JobOut;

pub(crate) struct WaveState<'a> {
    pub l: &'a mut Live,
    pub o: &'a mut JobOut,
    /// The wave's commands at the drive (its queue depth as the drive sees it).
    pub total_out: &'a mut usize,
    pub heap: &'a mut BinaryHeap<Event>,
}

impl<'a> WaveState<'a> {
    #[inline(always)]
    pub fn new(
        l: &'a mut Live,
        o: &'a mut JobOut,
        total_out: &'a mut usize,
        heap: &'a mut BinaryHeap<Event>,
    ) -> Self {
        WaveState {
            l,
            o,
            total_out,
            heap,
        }
    }
}
