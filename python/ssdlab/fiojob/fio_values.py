"""Values fio runs a job with although they look out of range, read as fio reads them, each
with a note saying what fio makes of it (a user would not guess): `size=0` (the default: the
whole drive from the offset), `loops=0` (one pass), a negative `rwmixread`/`rwmixwrite`,
`number_ios`, `runtime`, `loops` or `log_avg_msec`, a zipf theta of 0 or below, and an
`iodepth` above 1 on a synchronous engine (psync, fio's default), which fio caps at 1.

fio 3.33 splits an option's value at a '-' (a range's separator), so `rwmixread=-1` sets
the mix from -1 and then from 1: the mix is 1 %; past 100 the second value is out of range
(fio says so and runs), so the first stays, stored unsigned: `rwmixread=-150` or
`rwmixwrite=-150` leaves a read share over 100: every I/O a read. An option without a
callback keeps the first value, stored unsigned: `number_ios=-5` is 2^64-5 I/Os (no bound),
`runtime=-1` some 584 000 years, `loops=-1` 2^32-1 passes, `log_avg_msec=-1` 2^32-1 ms
(49.7 days)."""

from __future__ import annotations

import re

from ..fioformat.fields import SYNC_ENGINES, sg_in_call
from . import FioJobError
from . import engines as E
from . import options as O

LOG_AVG_MAX = 2**32 - 1  # fio's log_avg_msec is an unsigned int
LOOPS_MAX = 2**32 - 1  # and its loops
_NEG = re.compile(r"\s*-\s*(\d+)\s*")


def _neg(o: dict, key: str) -> int | None:
    """N when the option is written as -N (a whole number), else None."""
    m = _NEG.fullmatch(o[key][0]) if key in o else None
    return int(m.group(1)) if m and len(m.group(1)) <= 20 else None


def _note(notes: list[str], text: str) -> None:
    if text not in notes:
        notes.append(text)


def normalize(o: dict, notes: list[str], base: int) -> None:
    """Rewrite the job's merged options `o` (canonical key -> (value, where)) to the values
    fio runs it with, noting each; refuse (FioJobError) what fio would run without end."""
    if "size" in o and re.fullmatch(r"\s*(0x)?0+\s*[kmgtp]?i?b?\s*", o["size"][0], re.I):
        del o["size"]
        _note(notes, "size=0: fio's default, the whole drive from the job's offset (fio takes "
                     "the device's size); so does ssdlab")
    for key in ("rwmixread", "rwmixwrite"):
        n = _neg(o, key)
        if n is not None and n <= 100:
            v, where = o[key]
            o[key] = (str(n), where)
            _note(notes, f"{key}={v.strip()}: fio reads the '-' as a range separator and takes "
                         f"{key}={n}; so does ssdlab")
        elif n is not None and n <= 2**32 - 101:  # fio's read share, unsigned: 100 or more
            v, where = o.pop(key)
            o["rwmixread"] = ("100", where)
            _note(notes, f"{key}={v.strip()}: fio says \"max value out of range: {n} (100 max)\" "
                         f"and keeps {key}=-{n}, stored unsigned: a read share over 100 %, every "
                         "I/O a read; so does ssdlab")
    n = _neg(o, "number_ios")
    if n is not None:
        v = o.pop("number_ios")[0]
        _note(notes, f"number_ios={v.strip()}: fio stores it unsigned (2^64-{n} I/Os): no bound, "
                     "the job ends by its size; so does ssdlab")
    if "runtime" in o and o["runtime"][0].strip().startswith("-"):
        v, where = o["runtime"]
        O.time_ns(v.strip()[1:], "runtime", where)  # a time, or refused as one
        tb = "time_based" in o and O.boolean(o["time_based"][0], "time_based", o["time_based"][1])
        if tb:
            raise FioJobError(f"{where}: runtime={v.strip()} with time_based: fio stores a negative "
                              "runtime unsigned (some 584 000 years) and runs without end: give a "
                              "runtime such as runtime=60")
        del o["runtime"]
        _note(notes, f"runtime={v.strip()}: fio stores it unsigned (some 584 000 years): no time "
                     "limit, the job ends by its size; so does ssdlab")
    _loops(o, notes)
    n = _neg(o, "log_avg_msec")
    if n is not None:
        v, where = o["log_avg_msec"]
        if n > LOG_AVG_MAX:
            raise FioJobError(f"{where}: log_avg_msec={v.strip()[:40]}: must be 0 to {LOG_AVG_MAX}")
        ms = (2**32 - n) % 2**32
        o["log_avg_msec"] = (str(ms), where)
        if ms:
            _note(notes, f"log_avg_msec={v.strip()}: fio stores it unsigned ({ms} ms, "
                         f"{ms / 86_400_000:.1f} days): one window for the whole job: the latency "
                         "logs get one entry, at its end, the bandwidth and IOPS logs none; so does ssdlab")


def _loops(o: dict, notes: list[str]) -> None:
    """loops=0 is one pass; loops=-N: fio stores it unsigned (2^32-N passes): a job its
    runtime bounds runs until then; one with no runtime would run its passes for ever:
    refused."""
    n = _neg(o, "loops")
    if n is None or n % 2**32 == 0:
        if "loops" in o and O.integer(o["loops"][0].strip().lstrip("-"), "loops", o["loops"][1], 0, 1 << 30) == 0:
            o["loops"] = ("1", o["loops"][1])
            _note(notes, "loops=0: fio runs the job once, as loops=1; so does ssdlab")
        return
    v, where = o["loops"]
    passes = -n % 2**32
    if passes > 1 << 30 and not ("runtime" in o and O.time_ns(o["runtime"][0], "runtime", o["runtime"][1])):
        raise FioJobError(f"{where}: loops={v.strip()[:40]} without a runtime: fio stores it unsigned "
                          f"({passes} passes) and runs without end: give loops=N or a runtime such "
                          "as runtime=60")
    o["loops"] = (str(passes), where)
    until = "the job runs until its runtime" if passes > 1 << 30 else f"{passes} passes"
    _note(notes, f"loops={v.strip()}: fio stores it unsigned ({passes} passes): {until}; so does ssdlab")


def sync_depth(o: dict, notes: list[str]) -> None:
    """A synchronous engine (psync, fio's default, sync, vsync, pvsync, pvsync2; sg on a block
    device or with sync=1) completes each I/O in the call that issues it: fio caps the job's queue depth at 1 and says so
    (unless io_submit_mode=offload, whose submit threads each hold one)."""
    if "iodepth" not in o:
        return
    given, engine = "ioengine" in o, E.engine(o)
    offload = o.get("io_submit_mode", ("inline", ""))[0].strip().lower() == "offload"
    v, where = o["iodepth"]
    in_call = engine in SYNC_ENGINES or sg_in_call(E.flat(o))
    if not in_call or offload or O.integer(v, "iodepth", where, 1, 65536) <= 1:
        return
    o["iodepth"] = ("1", where)
    which = f"ioengine={engine}" if given else "ioengine=psync (fio's default: none was given)"
    if engine == "sg":
        which += " on a block device or with sync=1 (each I/O done in the call)"
    _note(notes, f"iodepth={v.strip()} with {which}: a synchronous engine; fio caps the queue depth "
                 "at 1 (\"queue depth will be capped at 1\"); so does ssdlab: give ioengine=libaio or "
                 "io_uring for a queue")


def trim_verify(o: dict, writes: bool) -> None:
    """fio's trim verify (verify, trim_percentage and trim_backlog all set on a job that
    writes): fio trims that share of the written blocks before reading them back (fio 3.33
    aborts the job at its first such trim); ssdlab does not issue these trims: refused."""
    def on(key: str) -> bool:
        return key in o and o[key][0].strip() not in ("", "0", "0%")

    verify = "verify" in o and o["verify"][0].strip().lower() not in ("0", "none", "")
    if writes and verify and on("trim_percentage") and on("trim_backlog"):
        where = o["trim_percentage"][1]
        raise FioJobError(f"{where}: trim_percentage with verify and trim_backlog: fio trims that share "
                          "of the written blocks before verifying them (fio 3.33 aborts such a job), "
                          "which ssdlab does not simulate: remove trim_percentage, or trim with "
                          "rw=trimwrite")


def zipf_theta(value: str, where: str, theta: float, notes: list[str]) -> None:
    """fio's zipf takes any theta but 1 (its formula divides by 1 - theta): 0 draws every
    block alike, below 0 favours the last ranks."""
    if theta == 1:
        raise FioJobError(f"{where}: random_distribution={value}: zipf's theta must not be 1 "
                          "(fio refuses it): give e.g. zipf:1.2")
    if theta == 0:
        _note(notes, f"random_distribution={value.strip()}: a zipf theta of 0 has no skew: fio "
                     "draws every block alike (without the random map); so does ssdlab")
    elif theta < 0:
        _note(notes, f"random_distribution={value.strip()}: a zipf theta below 0 favours the last "
                     "ranks, not the first; fio runs it so; so does ssdlab")
