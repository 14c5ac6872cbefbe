//! fio's end_fsync and fsync_on_close (backend.c do_io's end, filesetup.c put_file), as fio
//! 3.33 issues them. Once a pass's I/Os are in (its offsets or bytes done, or the job
//! stopped: its runtime, exitall, steady state), a job that writes (any job on an engine
//! that sets fio's override_sync: sg; fio's should_fsync) and whose last I/O taken
//! was not a sync flushes the drive (fio's fio_io_sync), in the pass's time and in none of
//! fio's sync figures (it runs TD_FSYNCING); a verify_only job, which does no I/O pass, does
//! not. With fsync_on_close, fio also flushes as it closes the job's files: before each
//! further pass (in that pass's time) and before the verify (in neither's time), having
//! reset its last_was_sync, and at the job's end when the last I/O taken was not a sync
//! (after a verify). Each flush holds the job until it returns. Before all these, fsync=N's
//! sync due as the pass's offsets end: fio decides on a sync before it looks for an offset.

use crate::engine::Drive;
use crate::fiojob::live::{Live, Phase};
use crate::fiojob::sync_kind::SyncKind;
use crate::fiojob::sync_ops;
use crate::fiojob::wave_state::WaveState;
use crate::fiojob::{JobOut, JobSpec};
use crate::SimError;

/// The sync due now for job `l` of `s`, whose I/Os are all in: fsync=N's when its offsets
/// ended, else a flush at its pass's end (the pass draining, or the job done), or at its
/// end (fsync_on_close); none for a job that failed its rate_min (fio flushes only a job
/// without an error).
fn due(s: &JobSpec, l: &Live, o: &JobOut) -> Option<SyncKind> {
    let c = &s.calls;
    if !syncs(s) || l.outstanding > 0 || l.holds != 0 || l.ended || o.rate_min_failed.is_some() {
        return None;
    }
    let pass_end = l.phase == Phase::Drain || (l.done && l.phase == Phase::Io);
    if l.phase == Phase::Drain && l.files_done && !l.done && !l.nullq.on() {
        // fio decides on a sync before it looks for an offset: one due as the pass's
        // offsets end is issued before the pass ends (the null engine's batches: not kept)
        if let Some(kind) = sync_ops::sync_due(s, l) {
            return Some(kind);
        }
    }
    if c.end_sync && pass_end && !l.flushed && !l.last_was_sync && !l.dry {
        return Some(SyncKind::End);
    }
    let close = c.close_sync && l.done && !l.last_was_sync && !l.closed;
    close.then_some(SyncKind::Close { restart: false })
}

/// fio's should_fsync but for its last_was_sync: the job writes, or its engine sets
/// override_sync (sg's SYNCHRONIZE CACHE after reads or trims too).
fn syncs(s: &JobSpec) -> bool {
    s.write || s.calls.override_sync
}

impl Drive {
    /// Job `k` (`l` of `s`) at `t`, its I/Os in: the flush fio's end_fsync or
    /// fsync_on_close issues now, if one is due. Whether it issued one (the job waits).
    pub(super) fn end_sync(
        &mut self,
        s: &JobSpec,
        t: u64,
        k: usize,
        w: &mut WaveState,
    ) -> Result<bool, SimError> {
        let Some(kind) = due(s, w.l, w.o) else {
            return Ok(false);
        };
        match kind {
            SyncKind::End => w.l.flushed = true,
            SyncKind::Close { .. } => w.l.closed = true,
            SyncKind::Sync | SyncKind::Range => {}
        }
        self.issue_sync(s, t, k, w, kind)?;
        Ok(true)
    }

    /// Job `k` (`l` of `s`) goes on at `t` to another pass or to its verify (pass.rs): fio
    /// closes its files first, its last_was_sync reset; with fsync_on_close, a flush.
    pub(super) fn between_passes(
        &mut self,
        s: &JobSpec,
        t: u64,
        k: usize,
        w: &mut WaveState,
    ) -> Result<(), SimError> {
        if w.l.done {
            return Ok(()); // fio's thread ends: end_sync's flush at its end, if any
        }
        w.l.last_was_sync = false;
        if !s.calls.close_sync || !syncs(s) {
            return Ok(());
        }
        let restart = w.l.phase == Phase::Verify;
        self.issue_sync(s, t, k, w, SyncKind::Close { restart })
    }
}
