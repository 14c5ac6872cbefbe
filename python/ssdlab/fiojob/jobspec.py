"""A compiled fio job: one JobSpec per job and per `numjobs` clone (compile.py builds them),
and the whole file's Compiled jobs, notes and log settings, as the simulator takes them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import cast

from ..fioformat.fields import DIRS, measures_slat
from ..fioformat.logs import log_files
from ..sim_types import FioJobSpec


@dataclass
class JobSpec:
    name: str
    clone: int  # numjobs index
    wave: int  # stonewall / wait_for order: a wave starts when the one before has finished
    group: int  # reporting group (new_group / stonewall start one)
    exitall: bool  # fio's exitall (any job's sets it for all): an ending job stops others
    exit_what: str  # which, when this job ends: group, stonewall or all
    read: bool
    write: bool
    trim: bool
    random: bool
    trimwrite: bool
    rwmixread: int
    seq_skip: int  # rw=...:N (sequential: bytes skipped after each I/O; random: I/Os per offset)
    bs: list  # per direction: [[bytes, weight], ...]
    offset: int
    size: int
    io_size: int
    number_ios: int
    iodepth: int
    time_based: bool
    runtime_ns: int
    ramp_ns: int
    startdelay_ns: int
    rate_bps: list
    rate_iops: list
    rate_poisson: bool
    thinktime_ns: int
    thinktime_blocks: int
    dist: str  # random, zipf, pareto, normal, zoned, zoned_abs
    dist_param: float
    zones: list  # [[access %, offset bytes from the region start, length bytes], ...]
    sequence: list  # random_distribution=sequence: the block indices in order
    sequence_stride: bool  # random_sequence_stride: each cycle one sequence length further on
    seed: int
    randommap: bool
    ba: int
    zone_size: int  # zonemode=strided: I/O on zone_range bytes then skip
    zone_range: int
    zone_skip: int
    fill_device: bool
    ss: str  # "" or iops|iops_slope|bw|bw_slope|lat|lat_slope
    ss_limit: float
    ss_pct: bool
    ss_dur_ns: int
    ss_interval_ns: int  # steadystate_check_interval
    ss_ramp_ns: int
    ss_group: bool  # group_reporting: the rule judges the reporting group's summed figures
    lat_target_ns: int  # latency_target (0: none), the depth searched for within iodepth
    lat_window_ns: int
    lat_pct: float
    lat_run: bool
    options: dict = field(default_factory=dict)  # the job's options as written (for the JSON)
    bs_range: list = field(default_factory=lambda: [(0, 0)] * 3)  # bsrange per direction (min, max)
    loops: int = 1  # fio's loops: passes over the region at least
    randrepeat: bool = True  # each pass repeats the first one's draws (fio re-seeds per loop)
    bw_ns: int = 500_000_000  # bandwidth / IOPS sample intervals (bwavgtime, iopsavgtime)
    iops_ns: int = 500_000_000
    keep_log: bool = False  # the job writes fio's logs
    hist_ms: int = 0  # write_hist_log's interval (log_hist_msec; 0: none)
    log_ms: int = 500  # the latency log's window (log_avg_msec; 0: an entry per I/O, as fio's)
    log_offset: bool = False  # the logs' offset column (fio's log_offset)
    log_prio: bool = False  # the priority column in hex (fio's log_prio)
    unit_avg: list = field(default_factory=list)  # (0 bw / 1 iops, ms): per-I/O samples, logged per window
    verify: list | None = None  # [after, backlog, batch, only] when the job verifies what it writes
    group_reporting: bool = False  # fio's group_reporting, the job's own
    unified: str = "none"  # unified_rw_reporting: none, mixed or both
    settings: dict = field(default_factory=dict)  # [global]'s and the job's options merged: its logs, percentiles
    seq_identical: bool = False  # rw_sequencer=identical: rw=rand...:N repeats the offset
    perc_rand: list = field(default_factory=lambda: [100, 100, 100])  # percentage_random per direction
    write_mode: list = field(default_factory=lambda: [100, 0, 0, 0])  # % per options.WRITE_MODES
    flow: int = 0  # fio's flow control: weight in the flow (0: none), its id, the held wait
    flow_id: int = 0
    flow_sleep_ns: int = 0
    md_bytes: int = 0  # extended-LBA format: metadata bytes per 4096-byte block (fio's bs counts them)
    # zonemode=zbd (0: off): zone size and capacity, the open-zone limits (0: none), reads
    # past the write pointer, the reset threshold and frequency, and whether fio verifies
    zbd_zone_size: int = 0
    zbd_zone_cap: int = 0
    zbd_max_open: int = 0
    zbd_job_max_open: int = 0
    zbd_read_beyond_wp: bool = False
    zbd_reset_threshold: float = 0.0
    zbd_reset_frequency: float = 0.0
    zbd_verify: bool = False
    # fio's reaping once the queue is full, and its minimum rates (0: none) per direction,
    # checked every rate_cycle
    iodepth_low: int = 0
    iodepth_batch_complete_min: int = 1
    iodepth_batch_complete_max: int = 0
    rate_min_bps: list = field(default_factory=lambda: [0, 0, 0])
    rate_min_iops: list = field(default_factory=lambda: [0, 0, 0])
    rate_cycle_ns: int = 0
    trim_issue: str = "queued"  # how the engine issues a trim: queued, in_call or drained (engines.py)
    sync_issue: str = "queued"  # and a sync (fsync=N, fdatasync=N: every sync_blocks writes; 0: none)
    sync_blocks: int = 0
    sync_kind: str = ""  # fsync or fdatasync
    range_blocks: int = 0  # sync_file_range=FLAGS:N (0: none); a flush with range_flush, else nothing
    range_flush: bool = False
    end_sync: bool = False  # end_fsync or fsync_on_close: a flush at each pass's end
    close_sync: bool = False  # fsync_on_close: and as fio closes the files
    override_sync: bool = False  # the engine sets fio's override_sync (sg): those flushes for any job
    close_fails: bool = False  # fsync_on_close's fsync(2) fails (sg character device): no flush
    null_batch: int = 0  # the null engine's batch above iodepth 1 (0: another engine)
    sync_io: bool = False  # each I/O completed in the issuing call (fio's FIO_SYNCIO engines)
    commit_hook: bool = False  # the engine counts submissions and reaps in its commit (null)
    external: bool = False  # built as an external engine (cpp_null): its commit counts no submission


@dataclass
class Compiled:
    jobs: list[JobSpec]
    notes: list[str]
    group_reporting: bool
    logs: dict  # write_bw_log / write_iops_log / write_lat_log / log_avg_msec (first job's)
    global_options: dict | None = None  # the [global] sections' options with a value (None: no option)
    text: str = ""  # the job file's own text as it was read and compiled (what a run stores)

    def spec(self) -> list[FioJobSpec]:
        """The jobs as the simulator takes them (ssdlab._sim.Drive.run_fiojob), with the
        job's own fields besides (the JSON's): FioJobSpec's keys are checked against these
        by tests/sim/test_boundary.py."""
        raw = []
        for j in self.jobs:
            d = asdict(j)
            d["bs"] = [[(int(b), float(w)) for b, w in per] for per in j.bs]
            d["zones"] = [(float(a), int(s), int(n)) for a, s, n in j.zones]
            d["dist_param"] = float(j.dist_param)
            d["ss_limit"] = float(j.ss_limit)
            d["bs_range"] = [(int(a), int(b)) for a, b in j.bs_range]
            d["log_ns"] = int(j.log_ms * 1_000_000)
            raw.append(d)
        for n, files in unit_logs(raw).items():
            raw[n]["unit_logs"] = files
        return [cast(FioJobSpec, d) for d in raw]

    @property
    def log_ms(self) -> int:
        v = self.logs.get("log_avg_msec", "")
        return int(v) if str(v).strip().isdigit() and int(v) > 0 else 500


def unit_logs(specs: list) -> dict[int, list[tuple[int, str, int]]]:
    """The logs of an entry per I/O (a job's log_avg_msec=0, fio's default), per job index:
    (kind: 0 bw, 1 iops, 2 lat, 3 clat, 4 slat; file name; the directions logged, a bit
    each: no slat where fio records none). The simulator writes them as the run goes."""
    out: dict[int, list[tuple[int, str, int]]] = {}
    for n, name, _kind, file in log_files(specs):
        s = specs[n]
        if name not in UNIT_KINDS or s["log_ns"] != 0:
            continue
        opts = s.get("settings") or s.get("options", {})
        dirs = sum(1 << d for d, x in enumerate(DIRS) if name != "slat" or measures_slat(opts, x))
        out.setdefault(n, []).append((UNIT_KINDS.index(name), file, dirs))
    return out


UNIT_KINDS = ("bw", "iops", "lat", "clat", "slat")  # unit_logs' kinds, as the simulator numbers them

__all__ = ["Compiled", "JobSpec", "unit_logs"]
