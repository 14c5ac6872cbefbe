//! A job's passes over its region, as fio's thread loop runs them (backend.c thread_main,
//! keep_running, do_io): `loops` passes at least; each issues until its offsets end, or
//! its bytes reach the pass's total (the region, more for random overwrites and the
//! verify backlog), or the job's bytes (io_size x loops) or I/Os (number_ios x loops,
//! counted after the ramp) are issued; its I/Os in flight complete; then (verify) what it
//! wrote is read back; then another pass runs while fewer bytes than io_size are done.
//! A time_based job passes until its runtime, its offsets wrapping.

use super::live::{Live, Phase};
use super::stream::Req;
use super::{JobOut, JobSpec, READ, TRIM, WRITE};

/// The pass issues no more.
#[inline]
pub(crate) fn pass_over(l: &Live) -> bool {
    let [own, bytes, ios] = l.bounds;
    l.pass_bytes >= own || l.issue_counted >= bytes || l.done_ios_all + l.outstanding as u64 >= ios
}

/// The pass's I/Os are in at `t`: its time counts to the directions it moved, and the
/// verify follows when it wrote anything; else the next pass or the job's end.
pub(crate) fn io_done(s: &JobSpec, l: &mut Live, runtime: &mut [u64; 3], moved: [u64; 3], t: u64) {
    let dur = t.saturating_sub(l.pass_start.max(l.stats_from));
    let dirs = [
        s.read || (s.write && s.verify.is_some_and(|v| v.backlog > 0)),
        s.write || s.trimwrite,
        s.trim || s.trimwrite,
    ];
    for d in [READ, WRITE, TRIM] {
        if dirs[d] && moved[d] > 0 {
            runtime[d] += dur;
        }
    }
    l.accounted = true;
    if l.close_failed {
        l.done = true; // fio's thread loop stops on the job's error: no verify, no pass
        return;
    }
    if l.pass_bytes == 0 && l.pieces.as_ref().is_none_or(|p| p.len == 0) {
        l.done = true; // a pass that did nothing: fio ends the job
        return;
    }
    if s.verify.is_some_and(|v| v.after) && l.pieces.as_ref().is_some_and(|p| p.len > 0) {
        l.phase = Phase::Verify;
        l.pass_start = t;
        l.accounted = false;
        return;
    }
    next(s, l, t);
}

/// The verify's reads are in at `t`: its time counts to the reads.
pub(crate) fn verify_done(s: &JobSpec, l: &mut Live, runtime: &mut [u64; 3], t: u64) {
    runtime[READ] += t.saturating_sub(l.pass_start.max(l.stats_from));
    l.accounted = true;
    next(s, l, t);
}

/// fio's keep_running at `t`: another pass, or the job's end.
fn next(s: &JobSpec, l: &mut Live, t: u64) {
    let again = if s.time_based {
        t < l.deadline
    } else if l.loops_left > 0 {
        l.loops_left -= 1;
        true
    } else if s.number_ios > 0 && l.done_ios_all >= s.number_ios.saturating_mul(s.loops.max(1)) {
        false
    } else {
        let limit = s.io_size;
        limit > 0
            && l.done_bytes_all < limit
            && limit - l.done_bytes_all >= s.max_bs()
            && !(l.files_done && s.io_size <= s.size)
    };
    if !again {
        l.done = true;
        return;
    }
    l.stream.new_pass(s.randrepeat);
    l.phase = Phase::Io;
    l.pass_start = t;
    l.pass_bytes = 0;
    l.files_done = false;
    l.accounted = false;
    l.next = None;
    l.verify_batch = 0;
    if let Some(p) = l.pieces.as_mut() {
        p.restart(&l.stream); // fio prunes what the last pass left unverified
    }
    l.pieces_done = 0;
    l.pieces_taken = 0;
    l.flushed = false; // end_fsync's flush: one per pass
    l.nullq.decided = Default::default();
}

/// fio's check_get_verify with verify_backlog: after every `backlog` logged writes, a
/// batch of read backs, each of a piece whose write is in. The piece to read, if one is due.
#[inline]
pub(crate) fn backlog_piece(s: &JobSpec, l: &mut Live) -> Option<(u64, u64)> {
    let p = l.pieces.as_mut()?;
    let v = s.verify?;
    if v.backlog == 0 || p.len == 0 {
        return None;
    }
    if l.verify_batch == 0 {
        if p.len % v.backlog != 0 || !l.last_write {
            return None;
        }
        l.verify_batch = if v.batch > 0 { v.batch } else { v.backlog };
    }
    if l.pieces_done <= l.pieces_taken {
        return None; // the oldest write is still in flight
    }
    let piece = p.take()?;
    l.pieces_taken += 1;
    l.verify_batch -= 1;
    Some(piece)
}

/// The job's figures once its wave is over: its start and end (a time_based job's end is its
/// runtime's, or later when end_fsync's flush returned later), its zone resets, and the
/// time of a pass cut short (runtime, exitall, steady state) in its runtimes.
pub(crate) fn job_end(spec: &JobSpec, l: &Live, o: &mut JobOut) {
    o.start_ns = l.stats_from;
    if l.nullq.uncounted {
        // the null engine at iodepth 1 counts submissions and reaps in a commit hook no I/O
        // reaches (sync_ops::Calls): none
        o.depths.submit = [0; 7];
        o.depths.complete = [0; 7];
    } else if spec.calls.external {
        o.depths.submit = [0; 7]; // cpp_null's commit marks none (sync_ops::Calls)
    }
    o.zone_resets = l.zones.as_ref().map_or(0, |z| z.resets);
    o.close_failed = l.close_failed;
    o.end_ns = if l.terminated {
        l.last_done.max(l.term_at).max(l.stats_from)
    } else if spec.time_based && !o.ss_attained && !l.lat_done && o.rate_min_failed.is_none() {
        l.deadline.max(l.flush_done)
    } else {
        l.last_done.max(l.stats_from)
    };
    let tail = o.end_ns.saturating_sub(l.pass_start.max(l.stats_from));
    if !l.accounted && tail > 0 {
        let dirs = [
            spec.read || l.phase == Phase::Verify,
            (spec.write || spec.trimwrite) && l.phase != Phase::Verify,
            (spec.trim || spec.trimwrite) && l.phase != Phase::Verify,
        ];
        for (on, d) in dirs.iter().zip(o.dirs.iter_mut()) {
            if *on && d.bytes > 0 {
                d.runtime_ns += tail;
            }
        }
    }
}

/// verify_only: the pass's I/O `req` at `t` is logged, not issued (fio's dry run); fio
/// counts it as done in no time.
pub(crate) fn dry_issue(l: &mut Live, o: &mut JobOut, req: Req, t: u64) {
    l.next = None;
    l.pass_bytes += req.len;
    l.done_bytes_all += req.len;
    l.done_ios_all += 1;
    if l.counted[req.dir] {
        l.issue_counted += req.len;
    }
    if let (WRITE, Some(p)) = (req.dir, l.pieces.as_mut()) {
        p.log(req.offset, req.len);
        l.pieces_done += 1;
    }
    if t >= l.stats_from {
        let d = &mut o.dirs[req.dir];
        d.ios += 1;
        d.bytes += req.len;
        d.lat.record(0);
        o.lat_buckets[0] += 1;
        o.depths.level[0] += 1;
    }
}
