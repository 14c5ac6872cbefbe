"""Phase -> fio job file, and the fio command line. Pure text generation (plus a one-time
probe of which I/O engine the kernel allows), so it is tested without running fio."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache

from ...fioformat import jobfile, json_read
from ...phase import ResolvedPhase
from .. import child

INSTALL_HINT = "install it with `apt-get install fio` (Debian/Ubuntu; `dnf install fio` on Fedora)"
HIST_MSEC = 100  # the finer log: per-window completions -> bytes -> per-GB series
# fio keeps every histogram window (1856 counters, 15 KB) of each job and direction until
# the job ends: an hour of 100 ms windows is 520 MB, a day 13 GB. A phase that may run
# longer (`longest_s`) gets fewer, longer windows (no longer than a sample interval), and
# its per-GB series comes from a bandwidth log averaged over HIST_MSEC instead (`fine_bw_ms`:
# 64 bytes an entry, not 15 KB); a phase of an hour or less keeps 100 ms
MAX_HIST_WINDOWS = 36_000
# the slowest a phase that stops after its bytes is taken to move them, to bound how long it
# runs: the slowest whole-drive fills on record fall "well below 100 MB/s" late in the fill
# (DRAM-less QLC, methodology.md), and small random writes on a full drive run at a few
# thousand IOPS; a drive slower still runs longer than the bound
SLOWEST_BPS = 50 * 10**6
SLOWEST_IOPS = 1000
HIST_COARSENESS = 3  # 1856 -> 232 latency bins per window (12 % resolution for the max)
PERCENTILE_LIST = ":".join(f"{p:g}" for _, p in json_read.PERCENTILES)  # the ones the report is read for


class FioMissing(ValueError):
    """fio is not installed (a ValueError so the CLI reports it like a bad --drive)."""
    pass


# fio 3.0 (2017) reports latencies in ns (lat_ns, clat_ns): an older fio's JSON has none, and
# its latencies would read 0
MIN_VERSION = (3, 0)


def fio_binary() -> str:
    """Path of fio, or FioMissing with the install command."""
    named = os.environ.get("SSDLAB_FIO")
    if named:
        if not shutil.which(named):
            raise FioMissing(f"SSDLAB_FIO={named}: no such program; give fio's path, or unset SSDLAB_FIO "
                             "to use the fio on PATH")
        return named
    p = shutil.which("fio")
    if not p:
        raise FioMissing(f"fio is not installed (ssdlab drives real disks through it): {INSTALL_HINT}")
    return p


def check_version(fio: str) -> None:
    """FioMissing when `fio --version` names a fio older than MIN_VERSION (a version it does
    not print in fio's own form is left to the run)."""
    m = re.match(r"fio-(\d+)\.(\d+)", fio_version(fio))
    if m and (int(m[1]), int(m[2])) < MIN_VERSION:
        raise FioMissing(f"{fio} is {m[0]}, older than fio-{MIN_VERSION[0]}.{MIN_VERSION[1]}, whose JSON and "
                         f"logs ssdlab reads; install a newer fio: {INSTALL_HINT}")


def fio_version(fio: str | None = None) -> str:
    """`fio --version`, asked once per binary as it is on disk (a process that runs several
    tests asks once; a fio replaced meanwhile is asked again)."""
    path = fio or fio_binary()
    try:
        st = os.stat(shutil.which(path) or path)
    except OSError:  # no such fio: it could not run either
        return ""
    return _version(path, st.st_ino, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=4)
def _version(fio: str, _ino: int, _mtime_ns: int, _size: int) -> str:
    try:
        out = subprocess.run([fio, "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def pick_engine(fio: str | None = None) -> str:
    """io_uring when fio has it and the kernel allows it (containers often forbid it),
    else libaio, else psync. `SSDLAB_FIO_ENGINE` forces one."""
    return forced_engine() or _probe_engine(fio or fio_binary())


_ENGINE_NAME = re.compile(r"[a-z0-9_]{1,32}")


def forced_engine() -> str | None:
    """SSDLAB_FIO_ENGINE (None when unset), checked: it goes into the job file as
    ioengine=, where a newline would add any job option (exec_prerun runs a command)."""
    forced = os.environ.get("SSDLAB_FIO_ENGINE")
    if not forced:
        return None
    if not _ENGINE_NAME.fullmatch(forced):
        raise ValueError(f"SSDLAB_FIO_ENGINE={forced!r}: not the name of an fio I/O engine (io_uring, libaio, "
                         "psync, ...); unset it or name one")
    return forced


@lru_cache(maxsize=4)
def _probe_engine(fio: str) -> str:
    with tempfile.TemporaryDirectory(prefix="ssdlab-probe-") as d:
        f = os.path.join(d, "probe")
        for engine in ("io_uring", "libaio"):
            try:
                r = subprocess.run(
                    [fio, "--name=probe", f"--filename={f}", f"--ioengine={engine}", "--size=64k",
                     "--bs=4k", "--rw=write", "--iodepth=4", "--output-format=terse"],
                    capture_output=True, text=True, timeout=30,
                    preexec_fn=child.die_with_parent())  # no fio left behind if ssdlab is killed
            except (OSError, subprocess.TimeoutExpired):
                continue
            if r.returncode == 0:
                return engine
    return "psync"


def rw_mode(read_pct: int, pattern: str) -> str:
    r = "rand" if pattern == "rand" else ""
    if read_pct >= 100:
        return f"{r}read"
    if read_pct <= 0:
        return f"{r}write"
    return f"{r}rw" if r else "rw"


Options = list[tuple[str, object]]


def slowest_bps(block_size: int) -> float:
    """The slowest rate a phase of `block_size` blocks is taken to move its bytes."""
    return float(min(SLOWEST_BPS, SLOWEST_IOPS * block_size))


def longest_s(stop_bytes: int | None, stop_seconds: float | None, block_size: int) -> float | None:
    """The longest an io phase runs: its stop_seconds (sure, whatever the drive's speed),
    else its stop_bytes at `slowest_bps` (None: neither)."""
    if stop_seconds:
        return float(stop_seconds)
    return stop_bytes / slowest_bps(block_size) if stop_bytes else None


def sample_ms(spec: ResolvedPhase) -> int:
    """The phase's sample interval in ms: fio's log_avg_msec."""
    return max(1, int(round(float(spec.get("sample_interval_s", 1.0)) * 1000)))


def phase_hist_ms(spec: ResolvedPhase) -> int:
    """The histogram window of an io phase's job (`hist_window_ms` over `longest_s`)."""
    return hist_window_ms(sample_ms(spec), longest_s(spec.get("stop_bytes"), spec.get("stop_seconds"),
                                                     int(spec.get("block_size", 4096))))


def fine_bw_ms(hist_ms: int) -> int | None:
    """The bandwidth log's averaging window for a phase of `hist_ms` histogram windows:
    HIST_MSEC when they are longer (its per-GB series is read from that log then), else
    None (averaged over the sample interval, as the IOPS and latency logs are)."""
    return HIST_MSEC if hist_ms > HIST_MSEC else None


def hist_window_ms(sample_ms: int, seconds: float | None) -> int:
    """fio's histogram window (log_hist_msec) for a phase sampled every `sample_ms` that
    runs at most `seconds` (None: unbounded): HIST_MSEC, or for a phase of more than
    MAX_HIST_WINDOWS of them that many windows, but not longer than half a
    sample interval (so that each interval holds a whole window: the windows tell a
    stalled interval from a late log timer); never longer than a sample interval."""
    window = HIST_MSEC
    longer = math.ceil(float(seconds) * 1000 / MAX_HIST_WINDOWS) if seconds else 0
    if longer > window:
        window = min(longer, max(window, sample_ms // 2))
    return min(window, sample_ms)


def job_text(spec: ResolvedPhase, filename: str, *, engine: str = "io_uring", log_prefix: str | None = None,
             is_file: bool = False) -> str:
    """The fio job file for one resolved io phase (`Phase.resolve(capacity)`)."""
    g, j = job_options(spec, filename, engine=engine, log_prefix=log_prefix, is_file=is_file)
    return jobfile.render("generated by ssdlab for phase " + repr(spec.get("name", "")), g,
                          spec.get("name", ""), j)


def batch_text(steps: list[tuple[ResolvedPhase, str]], filename: str, *, engine: str = "io_uring",
               is_file: bool = False) -> str:
    """One job file running io phases one after the other: (resolved phase, log prefix)
    each, one job per phase behind a stonewall, so each is its own reporting group (fio's
    groupid = its place in `steps`) and writes its own logs. What all of them share is in
    `[global]`, the rest in each job."""
    opts = [job_options(spec, filename, engine=engine, log_prefix=prefix, is_file=is_file)
            for spec, prefix in steps]
    shared = [kv for kv in opts[0][0] if all(kv in g for g, _ in opts)]
    names = [repr(spec.get("name", "")) for spec, _ in steps]
    lines = [f"; generated by ssdlab for the {len(names)} phases {names[0]} ... {names[-1]}, a job each",
             "[global]"]
    lines += [f"{k}={v}" for k, v in shared]
    for (spec, _), (g, j) in zip(steps, opts):
        lines += ["", f"[{jobfile.section_name(spec.get('name', ''))}]", "stonewall"]
        lines += [f"{k}={v}" for k, v in g + j if (k, v) not in shared]
    return "\n".join(lines) + "\n"


def job_options(spec: ResolvedPhase, filename: str, *, engine: str = "io_uring", log_prefix: str | None = None,
                is_file: bool = False) -> tuple[Options, Options]:
    """The global and the job options of one resolved io phase."""
    if spec.get("kind") != "io":
        raise ValueError(f"fio runs io phases only, not '{spec.get('kind')}'")
    bs = int(spec["block_size"])
    jobs = int(spec.get("jobs", 1))
    off = int(spec["offset"])
    length = int(spec["length"])
    g: Options = [
        # jobs as threads of the one fio process: when ssdlab is killed, the SIGTERM fio
        # gets (PR_SET_PDEATHSIG) ends them all; forked job processes outlived their parent
        ("thread", 1),
        ("ioengine", engine),
        ("direct", 1),
        # the nbd engine (targets/fio/nbd.py) names the export by URI, not a file
        ("uri", filename) if engine == "nbd" else ("filename", jobfile.fio_filename(filename)),
        ("randrepeat", 0),
        ("norandommap", 1),
        ("random_generator", "tausworthe64"),
        ("group_reporting", 1),
        ("lat_percentiles", 1),
        ("percentile_list", PERCENTILE_LIST),
    ]
    if is_file:
        # never create, extend or lay out anything: the file exists at its full size
        g += [("allow_file_create", 0), ("fallocate", "none"), ("file_append", 0)]
    data = spec.get("data", "incompressible")
    if data == "zeros":
        g.append(("zero_buffers", 1))
    elif data == "compressible":
        g += [("refill_buffers", 1), ("buffer_compress_percentage", int(spec.get("compress_pct", 0))),
              ("buffer_compress_chunk", 4096)]
    else:
        g += [("refill_buffers", 1)]
    if log_prefix:
        hist_ms = phase_hist_ms(spec)
        g += [
            ("write_iops_log", log_prefix),
            ("write_bw_log", log_prefix),
            ("write_lat_log", log_prefix),
            ("log_avg_msec", sample_ms(spec)),
            ("write_hist_log", log_prefix),
            ("log_hist_msec", hist_ms),
            ("log_hist_coarseness", HIST_COARSENESS),
        ]
        fine = fine_bw_ms(hist_ms)
        if fine:  # the bandwidth log alone finer (fio: min(log_avg_msec, bwavgtime))
            g.append(("bwavgtime", fine))
    j: Options = [
        ("rw", rw_mode(int(spec.get("read_pct", 0)), spec.get("pattern", "seq"))),
    ]
    rp = int(spec.get("read_pct", 0))
    if 0 < rp < 100:
        j.append(("rwmixread", rp))
    j += [("bs", bs), ("iodepth", int(spec.get("queue_depth", 1))), ("numjobs", jobs)]
    if spec.get("pattern") == "seq" and jobs > 1:
        # sequential jobs split the range instead of all writing the same blocks
        part = (length // jobs) // bs * bs
        if part <= 0:
            raise ValueError(f"range of {length} bytes too small for {jobs} sequential jobs of {bs} bytes")
        j += [("offset", off), ("size", part), ("offset_increment", part)]
    else:
        j += [("offset", off), ("size", length)]
    stop_bytes = spec.get("stop_bytes")
    stop_s = spec.get("stop_seconds")
    if stop_bytes:
        per_job = -(-int(stop_bytes) // jobs)
        per_job = -(-per_job // bs) * bs
        j.append(("io_size", per_job))
    if stop_s:
        j.append(("runtime", f"{max(1, int(round(float(stop_s) * 1000)))}ms"))
        if not stop_bytes:
            j.append(("time_based", 1))
    return g, j


def command(job_path: str, fio: str = "fio", status_interval: int = 1) -> list[str]:
    return [fio, "--output-format=json+", f"--status-interval={status_interval}", "--eta=never",
            job_path]
