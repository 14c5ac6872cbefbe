"""How the job's engine issues a trim and a sync, as fio 3.33 issues them (the simulator's
`trim_issue` and `sync_issue`, crates/ssdsim/src/fiojob/sync_ops.rs): libaio, io_uring and
io_uring_cmd do a trim in the call that issues it (FIO_ASYNCIO_SYNC_TRIM), alongside the
job's I/Os in flight, and the job issues nothing until it returns; posixaio does the same
once the job's I/Os in flight have completed; every other engine queues it as any I/O.
A sync (fsync=N, fdatasync=N: a flush on a block device) libaio and the synchronous engines
do in the call (libaio has no asynchronous fsync); io_uring, posixaio and null queue it."""

from __future__ import annotations

from ..fioformat.fields import SYNC_ENGINES, TRIM_DRAINED, TRIM_IN_CALL
from . import FioJobError
from . import options as O


def engine(o: dict) -> str:
    """The job's ioengine (fio's default psync when none is given), without its options."""
    return str(o.get("ioengine", ("psync", ""))[0]).strip().split(":")[0].lower()


def trim_issue(o: dict) -> str:
    """queued, in_call or drained, for the job's merged options `o`."""
    e = engine(o)
    return "in_call" if e in TRIM_IN_CALL else "drained" if e in TRIM_DRAINED else "queued"


def sync_issue(o: dict) -> str:
    """queued or in_call: how the job's engine issues fio's syncs."""
    return "in_call" if engine(o) in SYNC_ENGINES | {"libaio"} else "queued"


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
