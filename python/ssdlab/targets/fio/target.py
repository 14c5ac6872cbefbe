"""Real drive (block device) or file, driven by fio.

`FioTarget("/dev/nvme0n1")` or `FioTarget("file:/mnt/ssd/test.bin:8G")` runs the same
phases as the simulator and returns results of the same shape (docs/sim-api.md):
- io phases: a generated fio job (fio/jobs.py); live samples from fio's status stream,
  the stored series from its 1 s logs, per-segment series from the finer histogram log,
  totals and latency from its final JSON report (fioformat/json_read.py);
- idle phases sleep; trim phases discard the range (blkdiscard; files: punch a hole);
- purge uses the strongest method available (guard/purge.py) and records which;
- nothing is written before guard/safety.py allows it; one run at a time per device.
`plan=True` prints what would be executed and executes nothing.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from typing import Any, Iterable, Sequence

import numpy as np

from ...phase import Batch, Identity, Interrupted, OnSample, Phase, PhaseResult, ResolvedPhase, flat
from .. import child
from ...fioformat import json_read, logs
from . import batch, jobs, memory, replay, transport, write_cache
from ..guard import locks, safety
from .transport import Transport
from ..spec import DriveSpec
from .nbd import NbdExport
from ..base import BaseTarget, Capabilities, StepEnd, StepStart
from .failure import FioFailed, shortfall
from .invocation import Invocation
from .identity import TempSampler, before_after, write_counters_delta
from .identity import attach_column, attach_temps as _attach_temps
from .cpu_wait import CpuWaitSampler
from ..hostid import platform_info

def _empty(phase: Phase, totals: dict[str, float] | None = None) -> PhaseResult:
    z = np.zeros(0)
    return PhaseResult(phase=phase,
                       series={k: z.copy() for k in logs.SERIES_KEYS},
                       segments={"gb": z.copy(), "mbps": z.copy(), "t_s": z.copy()},
                       latency={"min_us": math.nan, "mean_us": math.nan, "max_us": math.nan,
                                **{k: math.nan for k, _ in json_read.PERCENTILES},
                                "edges_us": z.copy(), "counts": z.copy()},
                       totals=dict(totals or {}))


def planned(target: Any, phase: Phase) -> PhaseResult:
    """--plan: print what running the phase would do; its result says it only was planned."""
    text = target.plan([phase])
    print(text)
    r = _empty(phase, {"planned": 1.0})
    r.plan = text  # type: ignore[attr-defined]
    return r


def writes(phase: Phase) -> bool:
    """Does this phase write to the drive? (Read-only phases need no destruction flag.)"""
    if phase.kind in ("purge", "trim", "write_cache"):
        return True  # write_cache: the drive's settings change (put back on close)
    if phase.kind == "io":
        return phase.read_pct < 100
    if phase.kind == "replay":
        return True  # a trace's writes and trims (checked like any writing phase)
    return False


class FioTarget(BaseTarget):
    """A block device or a file, driven by fio (targets/fio/jobs.py writes its jobs)."""

    capabilities = Capabilities(simulated=False)

    def __init__(self, spec: DriveSpec, destroy_data: str | None = None, plan: bool = False):
        self.spec = spec.text
        self.destroy_data = destroy_data
        self.plan_mode = plan
        self.name = spec.text
        self.fio = shutil.which("fio") or "fio"
        if not plan:
            self.fio = fio_binary_checked()
        self._lock: locks.DeviceLock | None = None
        self._write_ok = False
        self._fio_version: str | None = None
        self._workdir: str | None = None
        self._nphase = 0
        self.purges: list[str] = []
        self._cache_found: bool | None = None  # the write cache's state before a phase switched it
        self.where: Transport = (NbdExport(spec, self.fio) if spec.kind == "nbd"
                                 else transport.local(spec, plan))
        self._engine: str | None = self.where.engine
        jobs.forced_engine()  # a bad SSDLAB_FIO_ENGINE is refused before anything runs
        if not plan:
            self._lock = self.where.lock().acquire()

    # what the transport knows, under the names callers use
    kind = property(lambda self: self.where.kind)
    path = property(lambda self: self.where.path)
    dev = property(lambda self: self.where.dev)
    capacity = property(lambda self: self.where.capacity)
    info = property(lambda self: self.where.info)
    telemetry = property(lambda self: self.where.telemetry)

    # ------------------------------------------------------------------ protocol
    def identify(self) -> Identity:
        extra: dict[str, Any] = dict(self.info)
        extra.update(fio=self.fio_version,
                     engine=self._engine or "", telemetry=self.telemetry.tool,
                     purges=list(self.purges), platform=platform_info())
        return self.where.identity(extra)

    def run(self, phase: Phase, on_sample: OnSample | None = None) -> PhaseResult:
        spec = phase.resolve(self.capacity)
        if self.plan_mode:
            return planned(self, phase)
        if writes(phase):
            self.allow_writes()
        else:
            self.where.prepare_read(self.destroy_data)
        self._nphase += 1
        if phase.kind == "idle":
            return self._run_idle(phase, spec, on_sample)
        if phase.kind == "trim":
            return self._run_trim(phase, spec)
        if phase.kind == "purge":
            return self._run_purge(phase)
        if phase.kind == "write_cache":
            return self._run_write_cache(phase)
        if phase.kind == "replay":
            return self._run_replay(phase, on_sample)
        try:
            return self._run_io(phase, spec, on_sample)
        except FioFailed as e:
            if e.no_report and self._engine == "io_uring":
                # io_uring allowed for a probe file but not here: once more with libaio
                self._engine = "libaio"
                return self._run_io(phase, spec, on_sample)
            raise

    def run_phases(self, phases: Sequence[Phase], on_start: StepStart | None = None,
                   on_end: StepEnd | None = None) -> list[PhaseResult]:
        """Consecutive io phases as one fio process (fio/batch.py); the others, a lone io
        phase, --plan, and transports that measure each phase on their own, one by one."""
        if self.plan_mode or not self.where.batches:
            return super().run_phases(phases, on_start, on_end)
        out: list[PhaseResult] = []
        for part in batch.runs(phases):
            i = len(out)

            def start(k: int, p: Phase, i: int = i) -> OnSample | None:
                return on_start(i + k, p) if on_start else None

            def end(k: int, r: PhaseResult, i: int = i) -> None:
                if on_end:
                    on_end(i + k, r)

            if len(part) == 1:
                out += super().run_phases(part, start, end)
                continue
            for p in part:  # as run() does for each phase
                if writes(p):
                    self.allow_writes()
                else:
                    self.where.prepare_read(self.destroy_data)
            out += batch.run(self, part, start, end)
        return out

    # ------------------------------------------------------------------ safety
    def check_writes(self) -> None:
        """Raise safety.UnsafeTarget when this target may not be written (nothing held)."""
        self.where.check_writes(self.destroy_data)

    def preflight(self, phases: Iterable[Phase]) -> None:
        """Call before a run starts (before anything is stored): raises safety.UnsafeTarget
        when any of `phases` writes and the device may not be written; otherwise takes the
        exclusive claim right away. Read-only phase lists need no consent; a file target
        they read is made here if it is not there yet (or refused, as a file that cannot be
        made), not once the run is stored. A phase whose fio would take more memory than this
        machine has (fio/memory.py) is refused first, with nothing written."""
        if self.plan_mode:
            return
        phases = list(phases)
        memory.check(phases, f"drive {self.spec}")  # fio's logs of a long phase: refused before any write
        if any(writes(p) for p in phases):
            self.allow_writes()
        else:
            self.where.prepare_read(self.destroy_data)

    def allow_writes(self) -> None:
        if not self._write_ok:
            self.where.claim_writes(self.destroy_data)
            self._write_ok = True

    def close(self) -> None:
        if self._cache_found is not None:  # the drive's write cache as this target found it
            found, self._cache_found = self._cache_found, None
            write_cache.switch(self._cache_route(), found)
        self.where.close()
        if self._lock:
            self._lock.release()
            self._lock = None
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    @property
    def fio_version(self) -> str:
        if self._fio_version is None:
            self._fio_version = "" if self.plan_mode else jobs.fio_version(self.fio)
        return self._fio_version

    @property
    def engine_version(self) -> str:
        """What drove the I/O, for the run record: e.g. 'fio-3.33 io_uring'."""
        engine = self._engine if self.plan_mode else self.engine
        return " ".join(x for x in (self.fio_version or "fio", engine or "") if x)

    # ------------------------------------------------------------------ plan
    @property
    def engine(self) -> str:
        if self._engine is None:
            self._engine = jobs.pick_engine(self.fio)
        return self._engine

    def plan(self, phases: Iterable[Phase | Batch]) -> str:
        """The jobs and commands a run of `phases` would execute (executes nothing but
        read-only probes of the device); a Batch's io phases as the one fio process they
        run as."""
        items = list(phases)
        flat_phases = flat(items)
        lines = [f"# ssdlab plan for {self.spec} ({self.capacity} bytes)"]
        lines += self.where.plan_header()
        if shutil.which("fio") is None:
            lines.append("# NOTE: fio is not installed: " + jobs.INSTALL_HINT)
        if any(writes(p) for p in flat_phases):
            try:
                self.check_writes()
                lines.append("# safety: writing is allowed")
            except safety.UnsafeTarget as e:
                lines.append(f"# safety: a run would be REFUSED: {e}")
        else:
            lines.append("# safety: read-only phases, no destruction flag needed")
        mem = memory.plan_line(flat_phases, f"drive {self.spec}")  # what preflight would check
        if mem:
            lines.append(mem)
        engine = self._engine or jobs.forced_engine() or "io_uring"
        i = 1
        for item in items:
            parts = (batch.runs(item) if isinstance(item, Batch) and self.where.batches
                     else [[p] for p in flat([item])])
            for part in parts:
                lines.append("")
                lines += (self._plan_phase(i, part[0], engine) if len(part) == 1
                          else self._plan_batch(i, part, engine))
                i += len(part)
        return "\n".join(lines) + "\n"

    def _plan_batch(self, i: int, part: list[Phase], engine: str) -> list[str]:
        last = i + len(part) - 1
        steps = [(p.resolve(self.capacity), f"$WORKDIR/p{k}") for k, p in enumerate(part, i)]
        job = jobs.batch_text(steps, self.where.filename(), engine=engine, is_file=self.where.is_file)
        return [f"# phases {i}-{last}: {part[0].name} ... {part[-1].name} (io), one after the "
                "other as one fio process (a job each)",
                f"$ {' '.join(jobs.command(f'$WORKDIR/p{i}.fio', 'fio'))}",
                f"# $WORKDIR/p{i}.fio (ioengine falls back to libaio where io_uring is not allowed):",
                *["    " + x for x in job.rstrip().splitlines()]]

    def _plan_phase(self, i: int, p: Phase, engine: str) -> list[str]:
        spec = p.resolve(self.capacity)
        lines = [f"# phase {i}: {p.name or p.kind} ({p.kind})"]
        if p.kind == "idle":
            lines.append(f"sleep {spec['seconds']:g}")
        elif p.kind == "trim":
            lines.append("$ " + " ".join(self.where.trim_command(spec["offset"], spec["length"])))
        elif p.kind == "write_cache":
            r = self._cache_route()
            lines.append(f"$ {' '.join(r.set_cmd(bool(p.write_cache)))}  # put back as found when the run ends"
                         if r.tool else f"# write cache: left as it is ({r.why})")
        elif p.kind == "purge":
            pp = self.where.purge_plan()
            lines.append(f"# purge method: {pp.method} ({pp.why})")
            lines += ["$ " + " ".join(c) for c in pp.commands]
        elif p.kind == "replay":
            lines += replay.plan_lines(self, p, i, engine)
        else:
            job = jobs.job_text(spec, self.where.filename(), engine=engine,
                                log_prefix=f"$WORKDIR/p{i}", is_file=self.where.is_file)
            lines.append(f"$ {' '.join(jobs.command(f'$WORKDIR/p{i}.fio', 'fio'))}")
            lines.append(f"# $WORKDIR/p{i}.fio (ioengine falls back to libaio where io_uring is not allowed):")
            lines += ["    " + x for x in job.rstrip().splitlines()]
        return lines

    # ------------------------------------------------------------------ phases
    def _wd(self) -> str:
        if not self._workdir:
            child.clean_workdirs()
            self._workdir = tempfile.mkdtemp(prefix=f"{child.WORKDIR_PREFIX}{os.getpid()}-")
        return self._workdir

    def _run_idle(self, phase: Phase, spec: ResolvedPhase, on_sample: OnSample | None) -> PhaseResult:
        assert spec["seconds"] is not None  # Phase's validator: an idle phase has seconds
        total = float(spec["seconds"])
        step = float(spec.get("sample_interval_s", 1.0))
        temps = TempSampler(self.telemetry).start()
        t0 = time.monotonic()
        rows: list[dict[str, float]] = []

        def result() -> PhaseResult:
            r = _empty(phase, {"duration_s": time.monotonic() - t0, "ios": 0.0, "iops": 0.0,
                               "mbps": 0.0, "read_bytes": 0.0, "write_bytes": 0.0})
            if rows:
                r.series = {k: np.array([x[k] for x in rows]) for k in logs.SERIES_KEYS}
            _attach_temps(r.series, temps.stop())
            return r

        try:
            k = 0
            while True:
                k += 1
                target = min(total, k * step)
                left = target - (time.monotonic() - t0)
                if left > 0:
                    time.sleep(left)
                row = {"t_s": target, "iops": 0.0, "mbps": 0.0, "read_mbps": 0.0, "write_mbps": 0.0,
                       "lat_mean_us": math.nan, "lat_max_us": math.nan}
                rows.append(row)
                if on_sample:
                    on_sample(dict(row))
                if target >= total:
                    break
        except KeyboardInterrupt as e:
            raise Interrupted(result()) from e
        return result()

    def _run_trim(self, phase: Phase, spec: ResolvedPhase) -> PhaseResult:
        off, length = int(spec["offset"]), int(spec["length"])
        if not self.where.can_trim():
            r = _empty(phase, {"duration_s": 0.0, "trim_bytes": 0.0, "trim_supported": 0.0})
            return r
        t0 = time.monotonic()
        res, interrupted = child.run_to_completion(self.where.trim_command(off, length))
        dur = time.monotonic() - t0
        if res.returncode != 0:
            raise RuntimeError(f"trim failed: `{' '.join(res.args)}`: {res.stderr.strip()}")
        r = _empty(phase, {"duration_s": dur, "trim_bytes": float(length), "trim_supported": 1.0,
                           "mbps": length / dur / 1e6 if dur > 0 else 0.0})
        if interrupted:
            raise Interrupted(r)
        return r

    def _run_purge(self, phase: Phase) -> PhaseResult:
        pp = self.where.purge_plan()
        before = self.telemetry.read() if self.telemetry.available else {}
        t0 = time.monotonic()
        interrupted = False
        for cmd in pp.commands:
            res, intr = child.run_to_completion(cmd)
            interrupted |= intr
            if res.returncode != 0:
                msg = (res.stderr or res.stdout).strip().splitlines()
                raise RuntimeError(f"purge ({pp.method}) failed: `{' '.join(cmd)}`: "
                                   f"{msg[-1] if msg else f'exit {res.returncode}'}")
        self.purges.append(pp.method)
        tel = before_after(before, self.telemetry.read()) if before else {}
        r = _empty(phase, {"duration_s": time.monotonic() - t0,
                           "purge_method_code": float(pp.code), **tel})
        r.purge_method = pp.method  # type: ignore[attr-defined]
        if interrupted:
            raise Interrupted(r)
        return r

    def _cache_route(self) -> write_cache.Route:
        return write_cache.route(self.where.dev, str(self.where.info.get("kind", "")))

    def _run_write_cache(self, phase: Phase) -> PhaseResult:
        """The drive's volatile write cache set as the phase asks and read back (totals
        write_cache_on: 1/0, NaN when unreadable; write_cache_set: 1 when switched)."""
        r = self._cache_route()
        want = bool(phase.write_cache)
        if self._cache_found is None:
            self._cache_found = write_cache.read(r)  # None where nothing can be switched
        now, why = write_cache.switch(r, want)
        res = _empty(phase, {"write_cache_on": math.nan if now is None else float(now),
                             "write_cache_set": float(now == want and r.tool != "")})
        res.write_cache_note = why  # type: ignore[attr-defined]
        return res

    def _run_replay(self, phase: Phase, on_sample: OnSample | None) -> PhaseResult:
        """A trace through fio's iolog replay (fio/replay.py)."""
        return replay.run(self, phase, on_sample)

    def _prefix(self) -> str:
        """The work-directory prefix of the running phase's job and logs (none left over)."""
        wd = self._wd()
        for f in os.listdir(wd):
            if f.startswith(f"p{self._nphase}_"):
                os.unlink(os.path.join(wd, f))
        return os.path.join(wd, f"p{self._nphase}")

    def _run_io(self, phase: Phase, spec: ResolvedPhase, on_sample: OnSample | None,
                job: Any = None) -> PhaseResult:
        """`job(prefix)`: the job text to run instead of the io phase's (trace replay)."""
        prefix = self._prefix()
        job = job(prefix) if job is not None else jobs.job_text(
            spec, self.where.filename(), engine=self.engine, log_prefix=prefix, is_file=self.where.is_file)
        job_path = prefix + ".fio"
        with open(job_path, "w") as fh:
            fh.write(job)
        before = self.telemetry.read() if self.telemetry.available else {}
        temps = TempSampler(self.telemetry).start()
        token = self.where.io_started()
        tracker = json_read.StatusTracker(time.time() * 1000.0)
        fio = Invocation(self._fio_command(job_path), self._as_reports)
        waits = CpuWaitSampler(fio.proc.pid, temps.t0).start()
        reps: list[dict] = []  # only the latest report is kept (each holds a histogram)

        def live(rep: dict) -> None:
            reps[:] = [rep]
            row = tracker.update(rep)
            if row is not None and on_sample:
                if temps.samples:
                    row["temp_c"] = temps.samples[-1][1]
                if waits.samples:
                    row["cpu_wait_pct"] = waits.samples[-1][1]
                on_sample(row)

        def keep(rep: dict) -> None:
            reps[:] = [rep]

        def finish() -> PhaseResult:
            fio.drain(keep)
            return self._io_result(phase, spec, prefix, reps, tracker, temps.stop(), before, waits.stop())

        try:
            fio.pump(live)
        except KeyboardInterrupt as e:
            fio.stop()
            raise Interrupted(finish()) from e
        except BaseException:
            temps.stop()
            waits.stop()
            fio.stop(timeout=5)
            raise
        fio.close()
        result = finish()
        failed = fio.failure(self.spec)
        if failed is not None:
            raise failed
        errs = json_read.report_errors(reps[-1])
        if errs:
            raise RuntimeError(f"fio reported errors on {self.spec}: {'; '.join(errs)}")
        short = shortfall(spec, result.totals)
        if short:
            raise FioFailed(f"fio on {self.spec} exited without an error but {short}")
        result.fio_report = reps[-1]  # type: ignore[attr-defined]  # per-direction figures
        self.where.io_done(result, token)
        return result

    def _fio_command(self, job_path: str) -> list[str]:
        return jobs.command(job_path, self.fio)

    def _as_reports(self, obj: dict) -> list[dict]:
        """The fio reports in one JSON object fio printed (remote/target.py: its client's shape)."""
        return [obj] if isinstance(obj.get("jobs"), list) else []

    def _io_result(self, phase: Phase, spec: ResolvedPhase, prefix: str, reps: list[dict],
                   tracker: json_read.StatusTracker, temps: list, before: dict,
                   waits: list | None = None) -> PhaseResult:
        """`temps`, `waits`: (t, value) samples of the drive's temperature and of fio's wait
        for a CPU (cpu_wait.py) on the phase's clock."""
        interval_ms = float(spec.get("sample_interval_s", 1.0)) * 1000.0
        rep = reps[-1] if reps else None
        if rep is not None:
            totals = json_read.totals_from_report(rep)
            latency = json_read.latency_from_report(rep)
        else:
            r0 = _empty(phase)
            latency = r0.latency
            rows = tracker.rows
            dur = rows[-1]["t_s"] if rows else 0.0
            wb = sum(r["host_write_bytes"] for r in rows)
            rb = sum(r["read_bytes"] for r in rows)
            totals = {"duration_s": dur, "read_bytes": rb, "write_bytes": wb, "host_write_bytes": wb,
                      "mbps": (rb + wb) / dur / 1e6 if dur else 0.0}
        # a long phase's bandwidth log is the fine one (jobs.fine_bw_ms): its per-interval
        # bandwidth is then the IOPS log's times the block size
        fine = jobs.fine_bw_ms(jobs.phase_hist_ms(spec)) if spec.get("kind") == "io" else None
        series = logs.series_from_logs(prefix, interval_ms, totals if rep is not None else None,
                                       block_size=int(spec["block_size"]) if fine else None)
        if not len(series["t_s"]) and tracker.rows:
            series = tracker.series()
        mx = latency.get("max_us", math.nan)
        if len(series["lat_max_us"]) and not math.isnan(mx):
            # histogram buckets are ~12 % wide: never report more than the true maximum
            series["lat_max_us"] = np.fmin(series["lat_max_us"], mx)
        _attach_temps(series, temps)
        # every io phase has the column and the totals: NaN where no second was sampled
        # (a phase under a second long, a kernel without schedstat)
        series["cpu_wait_pct"] = np.full(len(series["t_s"]), math.nan)
        attach_column(series, "cpu_wait_pct", waits or [])
        moved = totals.get("read_bytes", 0.0) + totals.get("write_bytes", 0.0)
        if fine:
            segments = logs.segments_from_bw(prefix, int(spec["segment_bytes"]), fine, total_bytes=moved,
                                             runtime_s=totals.get("duration_s"))
        else:
            segments = logs.segments_from_hist(prefix, int(spec["segment_bytes"]), total_bytes=moved,
                                               runtime_s=totals.get("duration_s"),
                                               block_size=int(spec["block_size"]))
        if before:
            after = self.telemetry.read()
            totals.update(write_counters_delta(before, after))
            totals.update(before_after(before, after))
        if temps:
            tv = [t for _, t in temps]
            totals["temp_max_c"] = float(max(tv))
            totals["temp_mean_c"] = float(sum(tv) / len(tv))
        wv = [w for _, w in waits or []]
        totals["cpu_wait_max_pct"] = float(max(wv)) if wv else math.nan
        totals["cpu_wait_mean_pct"] = float(sum(wv) / len(wv)) if wv else math.nan
        return PhaseResult(phase=phase, series=series, segments=segments, latency=latency,
                           totals=totals)


def fio_binary_checked() -> str:
    fio = jobs.fio_binary()
    jobs.check_version(fio)
    return fio


__all__ = ["FioTarget", "writes"]
