//! What an engine does in the call that issues it, as fio 3.33 does: a trim on libaio,
//! io_uring, io_uring_cmd and posixaio (FIO_ASYNCIO_SYNC_TRIM), a sync (fsync=N,
//! fdatasync=N: a flush of the drive) on libaio and the synchronous engines. The job issues
//! nothing while it runs, and takes what completed meanwhile once it returns. posixaio's
//! trim first waits for the job's I/Os in flight (its queue counts them); libaio's and
//! io_uring's wait only for I/Os queued but not yet submitted (none: fio submits each I/O as
//! it queues it), so they join the job's I/Os in flight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::{Command, Drive};
use crate::fiojob::live::{Event, Live, SYNC};
use crate::fiojob::report::depth_bucket;
use crate::fiojob::{JobOut, JobSpec, TRIM, WRITE};
use crate::SimError;

/// A sync's direction in a completion event (after READ, WRITE, TRIM).
pub const SYNC_DIR: usize = 3;

/// How the job's engine issues a trim or a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Issue {
    /// Queued as any I/O (the null engine; io_uring's syncs; fio's io_uring trims from
    /// 3.38, io_uring_cmd's from 3.36).
    #[default]
    Queued,
    /// In the issuing call, alongside the job's I/Os in flight.
    InCall,
    /// In the issuing call, once the job's I/Os in flight have completed.
    Drained,
}

/// How the job's engine issues a trim and a sync, and the writes between two syncs (fio's
/// fsync=N or fdatasync=N; 0: none).
#[derive(Debug, Clone, Copy, Default)]
pub struct Calls {
    pub trim: Issue,
    pub sync: Issue,
    pub sync_blocks: u64,
}

impl Issue {
    pub fn parse(s: &str) -> Option<Issue> {
        match s {
            "queued" => Some(Issue::Queued),
            "in_call" => Some(Issue::InCall),
            "drained" => Some(Issue::Drained),
            _ => None,
        }
    }
}

/// Whether the job's next I/O, of direction `dir`, waits for its I/Os in flight first.
#[inline]
pub(crate) fn must_drain(s: &JobSpec, l: &Live, dir: usize) -> bool {
    dir == TRIM && s.calls.trim == Issue::Drained && l.outstanding > 0
}

/// The job issued an I/O of direction `dir` that completes at `done`: a synchronous trim
/// holds the job until then; a write counts towards the next sync. fio takes what completed
/// during a sync at its next reap, after this I/O: the last I/O taken is no sync then.
#[inline]
pub(crate) fn issued(s: &JobSpec, l: &mut Live, dir: usize, done: u64) {
    if std::mem::take(&mut l.deferred) {
        l.last_was_sync = false;
    }
    if dir == TRIM && s.calls.trim != Issue::Queued {
        hold(l, done);
    } else if dir == WRITE {
        l.writes_issued += 1;
    }
}

fn hold(l: &mut Live, until: u64) {
    l.hold(SYNC, true);
    l.sync_until = until;
}

/// A completion `ev` of job `l` at `t`: while the job's synchronous trim or sync runs, it
/// is taken when that returns (the event moved there; its latency runs on). Whether it moved.
#[inline]
pub(crate) fn defer(
    l: &Live,
    t: u64,
    ev: (u64, u64, u32, u32),
    heap: &mut BinaryHeap<Event>,
) -> bool {
    if !l.held(SYNC) || t >= l.sync_until {
        return false;
    }
    heap.push(Reverse((l.sync_until, ev.1, ev.2, ev.3)));
    true
}

/// A completion of a read, write or trim at `t`: a synchronous trim returned, the job
/// issues again; the last I/O taken is no sync (fio's last_was_sync), but for those taken
/// as a synchronous trim or sync returns (fio takes them at its next reap: `deferred`).
#[inline]
pub(crate) fn completed(l: &mut Live, dir: usize, t: u64) {
    let returns = dir == TRIM && t >= l.sync_until;
    if l.held(SYNC) && !returns {
        l.deferred = true;
    } else {
        l.last_was_sync = false;
    }
    if returns {
        l.hold(SYNC, false);
    }
}

/// fio's get_rw_ddir: a sync is due before the job's next I/O once it has issued a
/// multiple of `sync_blocks` writes, unless the last I/O it took was a sync (a trimwrite
/// job none: fio makes each of its I/Os a trim or a write).
#[inline]
pub(crate) fn sync_due(s: &JobSpec, l: &Live) -> bool {
    s.calls.sync_blocks > 0
        && s.write
        && !s.trimwrite
        && !l.last_was_sync
        && !l.dry
        && l.writes_issued > 0
        && l.writes_issued.is_multiple_of(s.calls.sync_blocks)
}

impl Drive {
    /// Issue a sync of job `k` at `t`: a flush of the drive (its write buffer drained),
    /// counted in fio's depths; in the issuing call (it holds the job) or queued.
    #[allow(clippy::too_many_arguments)] // the wave's state the one sync touches
    pub(super) fn issue_sync(
        &mut self,
        s: &JobSpec,
        t: u64,
        k: usize,
        l: &mut Live,
        o: &mut JobOut,
        total_out: &mut usize,
        heap: &mut BinaryHeap<Event>,
    ) -> Result<(), SimError> {
        l.outstanding += 1;
        *total_out += 1;
        if t >= l.stats_from {
            o.depths.level[depth_bucket(l.outstanding)] += 1;
        }
        let done = self.submit_command(Command::TrimOrFlush(None), t, *total_out)?;
        heap.push(Reverse((done, t, k as u32, (SYNC_DIR as u32) << 30)));
        if s.calls.sync != Issue::Queued {
            hold(l, done);
        }
        Ok(())
    }
}

/// A completion event of job `l` (at `t`, issued at `at`, its `info`): when it is a
/// sync's, taken here (its latency in fio's sync figures; the job issues again), reaped as
/// the job reaps (`low_max`: its iodepth_low and complete_max). Whether it was one.
pub(crate) fn sync_done(
    l: &mut Live,
    o: &mut JobOut,
    (t, at, info): (u64, u64, u32),
    total_out: &mut usize,
    low_max: (u32, u32),
) -> bool {
    if (info >> 30) as usize != SYNC_DIR {
        return false;
    }
    *total_out -= 1;
    l.reapable += 1;
    l.reap(low_max.0, low_max.1);
    l.hold(SYNC, false);
    l.last_was_sync = true;
    if at >= l.stats_from {
        o.sync.record(t - at);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_names_parse() {
        assert_eq!(Issue::parse("queued"), Some(Issue::Queued));
        assert_eq!(Issue::parse("in_call"), Some(Issue::InCall));
        assert_eq!(Issue::parse("drained"), Some(Issue::Drained));
        assert_eq!(Issue::parse("sync"), None);
    }
}
