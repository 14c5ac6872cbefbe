"""Phase -> fio job file, and the fio command line. Pure text generation (plus a one-time
probe of which I/O engine the kernel allows), so it is tested without running fio."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import lru_cache

from ...fioformat import jobfile, json_read
from ...phase import ResolvedPhase

INSTALL_HINT = "install it with `apt-get install fio` (Debian/Ubuntu; `dnf install fio` on Fedora)"
HIST_MSEC = 100  # the finer log: per-window completions -> bytes -> per-GB series
HIST_COARSENESS = 3  # 1856 -> 232 latency bins per window (12 % resolution for the max)
PERCENTILE_LIST = ":".join(f"{p:g}" for _, p in json_read.PERCENTILES)  # the ones the report is read for


class FioMissing(ValueError):
    """fio is not installed (a ValueError so the CLI reports it like a bad --drive)."""
    pass


def fio_binary() -> str:
    """Path of fio, or FioMissing with the install command."""
    p = os.environ.get("SSDLAB_FIO") or shutil.which("fio")
    if not p:
        raise FioMissing(f"fio is not installed (ssdlab drives real disks through it): {INSTALL_HINT}")
    return p


def fio_version(fio: str | None = None) -> str:
    try:
        out = subprocess.run([fio or fio_binary(), "--version"], capture_output=True, text=True,
                             timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def pick_engine(fio: str | None = None) -> str:
    """io_uring when fio has it and the kernel allows it (containers often forbid it),
    else libaio, else psync. `SSDLAB_FIO_ENGINE` forces one."""
    forced = os.environ.get("SSDLAB_FIO_ENGINE")
    if forced:
        return forced
    return _probe_engine(fio or fio_binary())


@lru_cache(maxsize=4)
def _probe_engine(fio: str) -> str:
    with tempfile.TemporaryDirectory(prefix="ssdlab-probe-") as d:
        f = os.path.join(d, "probe")
        for engine in ("io_uring", "libaio"):
            try:
                r = subprocess.run(
                    [fio, "--name=probe", f"--filename={f}", f"--ioengine={engine}", "--size=64k",
                     "--bs=4k", "--rw=write", "--iodepth=4", "--output-format=terse"],
                    capture_output=True, text=True, timeout=30)
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


def job_text(spec: ResolvedPhase, filename: str, *, engine: str = "io_uring", log_prefix: str | None = None,
             is_file: bool = False, hist_msec: int = HIST_MSEC) -> str:
    """The fio job file for one resolved io phase (`Phase.resolve(capacity)`)."""
    if spec.get("kind") != "io":
        raise ValueError(f"fio runs io phases only, not '{spec.get('kind')}'")
    bs = int(spec["block_size"])
    jobs = int(spec.get("jobs", 1))
    off = int(spec["offset"])
    length = int(spec["length"])
    g: list[tuple[str, object]] = [
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
        avg = max(1, int(round(float(spec.get("sample_interval_s", 1.0)) * 1000)))
        g += [
            ("write_iops_log", log_prefix),
            ("write_bw_log", log_prefix),
            ("write_lat_log", log_prefix),
            ("log_avg_msec", avg),
            ("write_hist_log", log_prefix),
            ("log_hist_msec", min(hist_msec, avg)),
            ("log_hist_coarseness", HIST_COARSENESS),
        ]
    j: list[tuple[str, object]] = [
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
    return jobfile.render("generated by ssdlab for phase " + repr(spec.get("name", "")), g,
                          spec.get("name", ""), j)


def command(job_path: str, fio: str = "fio", status_interval: int = 1) -> list[str]:
    return [fio, "--output-format=json+", f"--status-interval={status_interval}", "--eta=never",
            job_path]
