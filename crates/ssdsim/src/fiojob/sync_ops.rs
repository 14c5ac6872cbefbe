//! What an engine does in the call that issues it, as fio 3.33 does: a trim on libaio,
//! io_uring, io_uring_cmd and posixaio (FIO_ASYNCIO_SYNC_TRIM), a sync (fsync=N,
//! fdatasync=N: a flush of the drive; sync_file_range=FLAGS:N) on libaio, sg and the
//! synchronous engines. The job issues nothing while it runs, and takes what completed
//! meanwhile once it returns (sg as it comes in: it reads replies until its own is back).
//! posixaio's trim first waits for the job's I/Os in flight (its queue counts them);
//! libaio's and io_uring's wait only for I/Os queued but not yet submitted (none: fio submits
//! each I/O as it queues it), so they join the job's I/Os in flight. fio's end_fsync and
//! fsync_on_close flushes are end_sync.rs's; the null engine's batches null_queue.rs's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::{Command, Drive};
use crate::fiojob::live::{Event, Live, SYNC};
use crate::fiojob::sync_kind::NO_DRIVE;
pub use crate::fiojob::sync_kind::{SyncKind, SYNC_DIR};
use crate::fiojob::report::{batch_bucket, depth_bucket};
use crate::fiojob::wave_state::WaveState;
use crate::fiojob::{JobOut, JobSpec, TRIM, WRITE};
use crate::SimError;

/// How the job's engine issues a trim or a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Issue {
    /// Queued as any I/O (the null engine; io_uring's syncs; fio's io_uring trims from
    /// 3.38, io_uring_cmd's from 3.36).
    #[default]
    Queued,
    /// In the issuing call, alongside the job's I/Os in flight.
    InCall,
    /// In the issuing call, the job's I/Os in flight that complete meanwhile taken as they
    /// do, none of them a reap (sg: it reads replies until its own is back, each through
    /// fio's io_u_sync_complete); fio counts the sync's depth as it returns.
    InCallTaking,
    /// In the issuing call, once the job's I/Os in flight have completed.
    Drained,
}

/// How the job's engine issues a trim and a sync, and the writes between two syncs (fio's
/// fsync=N or fdatasync=N; 0: none) and between two sync_file_ranges (sync_file_range=
/// FLAGS:N; 0: none; `range_flush`: the engine makes it an fsync, a flush of the drive, as
/// posixaio's aio_fsync does; else it reaches no drive: the simulated host has no page cache
/// to write back, and Linux's sync_file_range sends the drive no flush). `end_sync`: fio's
/// end_fsync or fsync_on_close (a flush once a pass's I/Os are in), `close_sync`:
/// fsync_on_close (a flush as fio closes the files); `override_sync`: the engine sets fio's
/// override_sync (sg), so a job that does not write flushes for these too; `close_fails`:
/// fsync_on_close's fsync(2) fails (an sg character device has none: no flush), an error
/// only when the file is closed with I/Os in flight (a pass's offsets ended); `null_batch`: the null engine's batch
/// above iodepth 1 (null_queue.rs; 0: another engine). `sync_io`: the engine completes each
/// I/O in the call that issues it (fio's FIO_SYNCIO: the synchronous engines, null at iodepth
/// 1), and fio counts only queued I/Os towards a pass's bytes (do_io's bytes_issued): the
/// pass ends on its offsets, after a sync then due. `commit_hook`: the engine counts its
/// submissions and reaps in its commit hook (the null engine), which with `sync_io` no I/O
/// reaches: none counted (the synchronous engines have none: fio counts one of each per I/O).
/// `external`: the engine is built as an external one (cpp_null), whose commit counts no
/// submission: none counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Calls {
    pub trim: Issue,
    pub sync: Issue,
    pub sync_blocks: u64,
    pub range_blocks: u64,
    pub range_flush: bool,
    pub end_sync: bool,
    pub close_sync: bool,
    pub override_sync: bool,
    pub close_fails: bool,
    pub null_batch: u32,
    pub sync_io: bool,
    pub commit_hook: bool,
    pub external: bool,
}

impl Issue {
    pub fn parse(s: &str) -> Option<Issue> {
        match s {
            "queued" => Some(Issue::Queued),
            "in_call" => Some(Issue::InCall),
            "in_call_taking" => Some(Issue::InCallTaking),
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

/// A completion `ev` of job `l` of `s` at `t`: while the job's synchronous trim or sync
/// runs, it is taken when that returns (the event moved there; its latency runs on), but
/// where the engine takes it in the call (`taken_in_call`). Whether it moved.
#[inline]
pub(crate) fn defer(
    s: &JobSpec,
    l: &Live,
    t: u64,
    ev: (u64, u64, u32, u32, u64),
    heap: &mut BinaryHeap<Event>,
) -> bool {
    if !l.held(SYNC) || t >= l.sync_until || s.calls.sync == Issue::InCallTaking {
        return false;
    }
    heap.push(Reverse((l.sync_until, ev.1, ev.2, ev.3, ev.4)));
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

/// A completion of a read, write or trim of job `l` of `s` at `t` while its sync runs on
/// an engine that takes completions in the call (Issue::InCallTaking): taken now, at its
/// own time and as no reap; the last I/O taken is no sync until the sync's own. Whether it
/// was.
#[inline]
pub(crate) fn taken_in_call(s: &JobSpec, l: &mut Live, t: u64) -> bool {
    if s.calls.sync != Issue::InCallTaking || !l.held(SYNC) || t >= l.sync_until {
        return false;
    }
    l.outstanding -= 1;
    l.last_was_sync = false;
    true
}

/// fio's get_rw_ddir: a sync is due before the job's next I/O once it has issued a
/// multiple of `sync_blocks` writes (an fsync or fdatasync), else of `range_blocks` (a
/// sync_file_range), unless the last I/O it took was a sync (a trimwrite job none: fio makes
/// each of its I/Os a trim or a write).
#[inline]
pub(crate) fn sync_due(s: &JobSpec, l: &Live) -> Option<SyncKind> {
    let c = &s.calls;
    if (c.sync_blocks == 0 && c.range_blocks == 0)
        || !s.write
        || s.trimwrite
        || l.last_was_sync
        || l.dry
        || l.writes_issued == 0
    {
        return None;
    }
    let every = |n: u64| n > 0 && l.writes_issued.is_multiple_of(n);
    if every(c.sync_blocks) {
        Some(SyncKind::Sync)
    } else if every(c.range_blocks) {
        Some(SyncKind::Range)
    } else {
        None
    }
}

/// Whether fio counts job `s`'s syncs in its depths as they return, after the completions
/// taken in the call (td_io_queue's io_u_mark_depth, on td->cur_depth then).
fn depth_at_return(s: &JobSpec) -> bool {
    s.calls.sync == Issue::InCallTaking
}

/// Whether job `s` queues its syncs (fio counts a queued one's submission and its reap).
fn queues_syncs(s: &JobSpec) -> bool {
    s.calls.sync == Issue::Queued
}

impl Drive {
    /// Issue a sync of `kind` of job `k` at `t`: a flush of the drive (its write buffer
    /// drained), or nothing on the drive (a sync_file_range but posixaio's); in the issuing
    /// call (it holds the job) or queued. fio counts a sync in its depths as it counts an
    /// I/O (the null engine's, as it commits the batch: null_queue.rs); end_fsync's as a
    /// queued I/O only where the engine queues syncs; fsync_on_close's at close nowhere.
    /// Syncs of end_fsync and fsync_on_close hold the job until they return.
    pub(super) fn issue_sync(
        &mut self,
        s: &JobSpec,
        t: u64,
        k: usize,
        w: &mut WaveState,
        kind: SyncKind,
    ) -> Result<(), SimError> {
        let l = &mut *w.l;
        l.outstanding += 1;
        if t >= l.stats_from {
            let level = depth_bucket(l.outstanding);
            let batched = l.nullq.on(); // counted as the batch is committed
            let depths = &mut w.o.depths;
            match kind {
                SyncKind::Sync | SyncKind::Range if !batched && !depth_at_return(s) => {
                    depths.level[level] += 1;
                    depths.submit[1] += queues_syncs(s) as u64;
                }
                SyncKind::End if queues_syncs(s) => {
                    depths.level[level] += 1; // fio's td_io_commit counts it
                    depths.submit[1] += 1;
                }
                _ => {}
            }
        }
        let drive = kind != SyncKind::Range || s.calls.range_flush;
        let done = if drive {
            *w.total_out += 1;
            self.submit_command(Command::TrimOrFlush(None), t, *w.total_out)?
        } else {
            t
        };
        let info = ((SYNC_DIR as u32) << 30) | kind.code() | if drive { 0 } else { NO_DRIVE };
        w.heap.push(Reverse((done, t, k as u32, info, 0)));
        if s.calls.sync != Issue::Queued || !kind.counted() {
            hold(l, done);
        }
        Ok(())
    }
}

/// A completion event of job `l` of `s` (at `t`, issued at `at`, its `info`): when it is a
/// sync's, taken here (a counted one's latency in fio's sync figures; the job issues
/// again), reaped as the job reaps (a queued one's reap counted as fio counts it). Whether
/// it was one.
pub(crate) fn sync_done(
    s: &JobSpec,
    l: &mut Live,
    o: &mut JobOut,
    (t, at, info): (u64, u64, u32),
    total_out: &mut usize,
) -> bool {
    if (info >> 30) as usize != SYNC_DIR {
        return false;
    }
    if info & NO_DRIVE == 0 {
        *total_out -= 1;
    }
    let kind = SyncKind::of(info);
    let counted = at >= l.stats_from;
    if counted && kind.counted() && depth_at_return(s) {
        o.depths.level[depth_bucket(l.outstanding)] += 1; // the sync still among them
    }
    match kind {
        SyncKind::Sync | SyncKind::Range => {
            l.last_was_sync = true;
            if counted {
                o.sync.record(t - at);
                o.sync_ranges += (kind == SyncKind::Range) as u64;
            }
        }
        SyncKind::End => {
            l.last_was_sync = true;
            l.last_done = l.last_done.max(t); // in the pass's time
            l.flush_done = t;
        }
        SyncKind::Close { restart } => {
            if restart {
                l.pass_start = t; // fio starts the verify's clock after closing the files
            }
        }
    }
    l.reapable += 1;
    let taken = l.reap(s.depth_low(), s.complete_max);
    l.hold(SYNC, false);
    if taken > 0 && counted && queues_syncs(s) && !matches!(kind, SyncKind::Close { .. }) {
        o.depths.complete[batch_bucket(taken)] += 1;
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
        assert_eq!(Issue::parse("in_call_taking"), Some(Issue::InCallTaking));
        assert_eq!(Issue::parse("drained"), Some(Issue::Drained));
        assert_eq!(Issue::parse("sync"), None);
    }
}
