//! fio's null engine above iodepth 1 (engines/null.c; at iodepth 1 it completes each I/O in
//! the call that issues it, as a synchronous engine does). It keeps the I/Os the job queues
//! until the job commits them, every iodepth_batch_submit I/Os (fio's default 1; 0 or more
//! than iodepth: iodepth), reports that whole batch complete at the job's next reap, and
//! refuses anything more (FIO_Q_BUSY) until then. A job below its iodepth has then already
//! taken its next I/O, and so decided whether it is a sync (fio's get_rw_ddir, before the
//! batch's syncs are in: a sync due is issued once more after the first); it issues it once
//! the batch is in. A job at its iodepth reaps the batch first (its queue is full).
//!
//! On the simulated drive a batch's I/Os reach the drive together and the job takes them
//! all when the last completes, in the order it queued them (the last one taken decides
//! fio's last_was_sync). fio counts the depth as it commits a batch (td_io_commit: each of
//! its I/Os at the batch's size), one submission per commit and one reap per batch; a batch
//! still open when the job stops issuing is committed then (by the engine alone, no depth
//! counted, when the pass is over or the job done).

use crate::fiojob::live::{Decided, Live, Phase, FULL};
use crate::fiojob::report::{batch_bucket, depth_bucket};
use crate::fiojob::sync_kind::SyncKind;
use crate::fiojob::sync_ops::sync_due;
use crate::fiojob::{JobOut, JobSpec};

/// What the job does next.
pub(crate) enum Next {
    /// It waits for its batch to be reaped.
    Wait,
    Sync(SyncKind),
    Io,
}

/// The job's next I/O: a sync due (sync_ops::sync_due), the I/O, or (the null engine's
/// batch out) a wait, the next I/O decided first (below the job's iodepth: its queue is
/// not full).
#[inline]
pub(crate) fn next(s: &JobSpec, l: &mut Live) -> Next {
    if l.nullq.busy {
        if l.nullq.decided == Decided::No {
            l.nullq.decided = sync_due(s, l).map_or(Decided::Io, Decided::Sync);
        }
        wait_whole(l);
        return Next::Wait;
    }
    let due = match std::mem::take(&mut l.nullq.decided) {
        Decided::No => sync_due(s, l),
        Decided::Io => None,
        Decided::Sync(k) => Some(k),
    };
    due.map_or(Next::Io, Next::Sync)
}

/// The job's next read back waits: its batch is out (the job takes it whole first).
#[inline]
pub(crate) fn waits(l: &mut Live) -> bool {
    if l.nullq.busy {
        wait_whole(l);
    }
    l.nullq.busy
}

/// The job's batch is out, or its next I/O was decided while it was: that I/O goes first
/// (the verify backlog's reads after it).
#[inline]
pub(crate) fn pending(l: &Live) -> bool {
    l.nullq.busy || l.nullq.decided != Decided::No
}

/// The job queued an I/O (a sync when `sync`) at `t`: into its open batch, committed once
/// the batch is whole.
#[inline]
pub(crate) fn queued(l: &mut Live, o: &mut JobOut, sync: bool, t: u64) {
    if !l.nullq.on() {
        return;
    }
    l.nullq.open += 1;
    l.nullq.last_sync = sync;
    if l.nullq.open >= l.nullq.batch {
        commit(l, o, t, true);
    }
}

/// The job stops issuing at `t` (a wait, a hold, its pass over, its end): a batch still
/// open is committed (its depth counted but for a pass over or a job done: fio's engine
/// commits it alone then), and the job takes the batch whole.
pub(crate) fn stopped(l: &mut Live, o: &mut JobOut, t: u64) {
    if l.nullq.open > 0 {
        let marks = l.phase != Phase::Drain && !l.done;
        commit(l, o, t, marks);
    }
    if l.nullq.busy && l.outstanding > 0 && !l.held(FULL) {
        wait_whole(l);
    }
}

fn commit(l: &mut Live, o: &mut JobOut, t: u64, marks: bool) {
    let n = std::mem::take(&mut l.nullq.open);
    l.nullq.busy = l.outstanding > 0;
    if t >= l.stats_from {
        if marks {
            o.depths.level[depth_bucket(n)] += n as u64;
        }
        o.depths.submit[batch_bucket(n)] += 1;
    }
}

/// The job takes its batch's completions together, when the last is in.
fn wait_whole(l: &mut Live) {
    l.hold(FULL, true);
    l.min_evts = l.outstanding;
}
