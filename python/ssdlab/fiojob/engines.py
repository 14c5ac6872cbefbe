"""How the job's engine issues a trim and a sync, as fio 3.33 issues them (the simulator's
`trim_issue` and `sync_issue`, crates/ssdsim/src/fiojob/sync_ops.rs): libaio and io_uring do
a trim in the call that issues it (FIO_ASYNCIO_SYNC_TRIM), alongside the job's I/Os in
flight, and the job issues nothing until it returns; posixaio does the same once the job's
I/Os in flight have completed; every other engine queues it as any I/O.
A sync (fsync=N, fdatasync=N: a flush on a block device; sync_file_range=FLAGS:N) libaio, sg
and the synchronous engines do in the call (libaio has no asynchronous fsync, sg waits for
its SYNCHRONIZE CACHE's reply), and the null engine at iodepth 1 (a synchronous engine
there); io_uring, posixaio and null above iodepth 1 queue it. io_uring_cmd's trims and
syncs are queued as the fio that issues them does (fio 3.33's cannot: noted). fio's
end_fsync and fsync_on_close (end_sync.rs) and the null engine's batches above iodepth 1
(null_queue.rs) are the simulator's too, and so is what an engine that completes each I/O
in the call changes (`sync_io`: a pass ends on its offsets, not its bytes)."""

from __future__ import annotations

import re

from ..fioformat.fields import SYNC_ENGINES, TRIM_DRAINED, TRIM_IN_CALL, flag_on, sg_in_call
from . import FioJobError
from . import options as O

NULL_ENGINES = frozenset({"null", "cpp_null"})  # engines/null.c (cpp_null: the same, built as C++)
# engines whose sync_file_range is a flush of the drive: posixaio's aio_fsync(O_SYNC), sg's
# SYNCHRONIZE CACHE, libzbc's zbc_flush; the others call sync_file_range(2) (io_uring its
# opcode), which writes back the page cache's dirty pages (the simulated host has none) and
# sends the drive no flush
RANGE_FLUSH_ENGINES = frozenset({"posixaio", "sg", "libzbc"})
RANGE_FLAGS = ("wait_before", "write", "wait_after")
# asynchronous engines that do a sync in the call: libaio (no asynchronous fsync); sg, whose
# SYNCHRONIZE CACHE is always do_sync (the command written, replies read back until its own,
# each I/O whose reply comes first completed there: in_call_taking)
SYNC_IN_CALL = frozenset({"libaio"})
SYNC_TAKING = frozenset({"sg"})
# fio 3.33's io_uring_cmd preps an NVMe read or write only (engines/nvme.c: ENOTSUP for any
# other direction; get_io_u then gives no I/O, no error, and do_io's loop ends): a job ends
# silently at its first trim or sync. fio 3.36 sends a trim as a Dataset Management command
# and 3.38 a sync as a Flush, both queued as any I/O: ssdlab does as they do, with a note
NEWER_FIO_ENGINES = frozenset({"io_uring_cmd"})
# engines that set fio's override_sync (engines/sg.c fio_sgio_init): should_fsync then holds
# for a job that does not write, and end_fsync and fsync_on_close flush after its reads or
# trims too (fsync=N counts writes: none)
OVERRIDE_SYNC_ENGINES = frozenset({"sg"})


def engine(o: dict) -> str:
    """The job's ioengine (fio's default psync when none is given), without its options."""
    return str(o.get("ioengine", ("psync", ""))[0]).strip().split(":")[0].lower()


def flat(o: dict) -> dict[str, str]:
    """The job's merged options as fio's text: name -> value (without where each was given)."""
    return {k: v[0] for k, v in o.items()}


def sg_chardev(o: dict) -> bool:
    """Whether the job runs sg on an sg character device (/dev/sgN, /dev/bsg/..., or no
    filename), which has no fsync(2); else an sd block device."""
    return engine(o) == "sg" and not sg_in_call(dict(flat(o), direct="0", sync="0"))


def sg_direct(o: dict) -> None:
    """Refuse direct=1 on sg's character device, as fio 3.33 does ("destination does not
    support O_DIRECT"); on a block device fio opens it with O_DIRECT."""
    f = flat(o)
    if sg_chardev(o) and flag_on(f, "direct"):
        raise FioJobError(f"{o['direct'][1]}: direct=1 with ioengine=sg on an sg character device: fio "
                          "refuses it (\"destination does not support O_DIRECT\"); remove direct (sync=1 "
                          "does each I/O in the call)")


def trim_issue(o: dict) -> str:
    """queued, in_call or drained, for the job's merged options `o`."""
    e = engine(o)
    return "in_call" if e in TRIM_IN_CALL else "drained" if e in TRIM_DRAINED else "queued"


def sync_issue(o: dict, iodepth: int = 1) -> str:
    """queued, in_call or in_call_taking: how the job's engine issues fio's syncs (the null
    engine at iodepth 1 completes each I/O in the call, as a synchronous engine; sg takes
    the completions that come in while it waits for its own)."""
    e = engine(o)
    if e in SYNC_TAKING:
        return "in_call" if sg_in_call(flat(o)) else "in_call_taking"
    return "in_call" if e in SYNC_ENGINES | SYNC_IN_CALL or (e in NULL_ENGINES and iodepth <= 1) else "queued"


def syncs(o: dict) -> tuple[str, int]:
    """fio's fsync=N or fdatasync=N: ("fsync" or "fdatasync", N), a sync before the I/O after
    every Nth write; ("", 0): none. On a block device both are a flush of the drive (fio's
    JSON counts only fsyncs in sync.total_ios, the latencies of both)."""
    given = [(k, O.integer(o[k][0], k, o[k][1], 0, 2**32 - 1)) for k in ("fsync", "fdatasync") if k in o]
    given = [(k, n) for k, n in given if n]
    if len(given) > 1:
        raise FioJobError(f"{o['fdatasync'][1]}: fsync and fdatasync both given: give one of them "
                          "(on a block device both flush the drive)")
    return given[0] if given else ("", 0)


def sync_file_range(o: dict) -> int:
    """fio's sync_file_range=FLAGS[:N]: a sync_file_range before the I/O after every Nth
    write (N as fio's atoi reads it, an unsigned int: 1 without `:N`, 0 (none) for a value
    that is no number); FLAGS one or more of wait_before, write, wait_after, as fio takes them."""
    if "sync_file_range" not in o:
        return 0
    v, where = o["sync_file_range"]
    flags, colon, nr = v.strip().partition(":")
    if not flags.strip() or any(f.strip() not in RANGE_FLAGS for f in flags.split(",")):
        raise FioJobError(f"{where}: sync_file_range={v[:40]}: write FLAGS[:N], FLAGS one or more of "
                          f"{', '.join(RANGE_FLAGS)} (comma-separated; N: the writes between two)")
    if not colon:
        return 1
    m = re.match(r"\s*([+-]?\d{1,20})", nr)
    return int(m.group(1)) % 2**32 if m else 0


def null_batch(o: dict, iodepth: int, notes: list[str]) -> int:
    """The null engine's batch above iodepth 1 (null_queue.rs): iodepth_batch_submit I/Os
    (fio's default 1; 0 or more than iodepth: iodepth), with a note; 0 for another engine
    (for which iodepth_batch_submit changes nothing: noted)."""
    given = "iodepth_batch_submit" in o
    b = 1
    if given:
        v, where = o["iodepth_batch_submit"]
        b = O.integer(v, "iodepth_batch_submit", where, 0, 65536)
    e = engine(o)
    if e not in NULL_ENGINES or iodepth <= 1:
        if given and e not in NULL_ENGINES:
            _note(notes, "iodepth_batch_submit: no effect but on the null engine: ssdlab submits each I/O "
                         "as the job issues it (batching changes nothing a drive sees without host CPU time)")
        return 0
    b = iodepth if b == 0 or b > iodepth else b
    them = "them" if b > 1 else "it"
    _note(notes, f"ioengine={e} at iodepth={iodepth}: fio's null engine takes {b} I/O{'s' if b > 1 else ''} at a "
                 f"time (iodepth_batch_submit) and nothing more until the job has reaped {them}; so does "
                 f"ssdlab: the drive sees at most {b} at once (give ioengine=libaio or io_uring for a queue "
                 f"of {iodepth})")
    return b


def sync_io(o: dict, iodepth: int) -> bool:
    """Whether the engine completes each I/O in the call that issues it (fio's FIO_SYNCIO: the
    synchronous engines, the null engine at iodepth 1): fio then counts none of them towards
    a pass's bytes (do_io's bytes_issued counts queued I/Os), and the pass ends on its offsets."""
    e = engine(o)
    return e in SYNC_ENGINES or (e in NULL_ENGINES and iodepth <= 1) or sg_in_call(flat(o))


def newer_fio(o: dict, notes: list[str], trims: bool, syncs: bool) -> None:
    """Note where the job's trims or syncs are issued as a fio newer than 3.33 issues them
    (NEWER_FIO_ENGINES): `trims`, `syncs`, whether the job issues any."""
    e = engine(o)
    if e not in NEWER_FIO_ENGINES:
        return
    what = [w for w, on in (("trims (fio 3.36 and later: Dataset Management)", trims),
                            ("syncs (fio 3.38 and later: Flush)", syncs)) if on]
    if what:
        _note(notes, f"ioengine={e}: its {' and '.join(what)} queued as any I/O, as fio issues them; fio "
                     "3.33's sends NVMe reads and writes only and ends the job, with no error, where the "
                     "first other command is due")


def calls(o: dict, iodepth: int, notes: list[str], writes: bool = True, trimwrite: bool = False,
          trims: bool = False) -> dict:
    """The job's compiled fields for how its engine issues trims and syncs (compile.JobSpec):
    trim_issue, sync_issue, sync_kind, sync_blocks, range_blocks, range_flush, end_sync,
    close_sync, null_batch, sync_io, commit_hook, external. `writes`, `trimwrite`, `trims`:
    the job's rw."""
    sg_direct(o)
    kind, n = syncs(o)

    def on(key: str) -> bool:
        return O.boolean(o[key][0], key, o[key][1]) if key in o else False

    given: dict[str, int | bool] = {kind: n, "sync_file_range": sync_file_range(o),
                                    "end_fsync": on("end_fsync"), "fsync_on_close": on("fsync_on_close")}
    given.pop("", None)  # neither fsync nor fdatasync
    # a job that does not write issues no sync (fio's should_fsync), nor a trimwrite job one
    # every N writes (each I/O a trim or a write)
    syncing = writes and any(n and (k in ("end_fsync", "fsync_on_close") or not trimwrite) for k, n in given.items())
    newer_fio(o, notes, trims, bool(syncing))

    return {"trim_issue": trim_issue(o), "sync_issue": sync_issue(o, iodepth), "sync_kind": kind, "sync_blocks": n,
            "range_blocks": sync_file_range(o), "range_flush": engine(o) in RANGE_FLUSH_ENGINES,
            "end_sync": on("end_fsync") or on("fsync_on_close"),
            # fio's fsync(2) as it closes the files: none on an sg character device (EINVAL, which
            # fio's close_files ignores: no flush, no error)
            "close_sync": on("fsync_on_close") and not sg_chardev(o),
            "override_sync": engine(o) in OVERRIDE_SYNC_ENGINES,
            # that failure is the job's error where the file closes with I/Os in flight
            "close_fails": on("fsync_on_close") and sg_chardev(o),
            "null_batch": null_batch(o, iodepth, notes), "sync_io": sync_io(o, iodepth),
            # the null engine counts submissions and reaps in its commit hook (none at iodepth
            # 1, where no I/O reaches it); the synchronous engines have none: one per I/O
            "commit_hook": engine(o) in NULL_ENGINES,
            # fio builds cpp_null as an external engine: null.c's commit marks no submission
            # there (#ifndef FIO_EXTERNAL_ENGINE), and no other part of fio does for it
            "external": engine(o) == "cpp_null"}


def _note(notes: list[str], text: str) -> None:
    if text not in notes:
        notes.append(text)
