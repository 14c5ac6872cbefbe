"""The dicts that cross the boundary to the compiled simulator (`ssdlab._sim`, built from
crates/ssdsim-py), key by key as the Rust side reads or builds them: `_sim.pyi` types every
call with these, and tests/sim/test_boundary.py checks real calls against them. Inputs are
read-only (the simulator only reads them, so a dict with more keys, a resolved Phase, fits);
a key the simulator reads with a default is NotRequired, and so is one it sets only at times.
No `from __future__ import annotations` here: TypedDict reads NotRequired and ReadOnly from
the evaluated annotations (`__required_keys__`, `__readonly_keys__`)."""

from typing import Literal, cast

import numpy as np
import numpy.typing as npt
from typing_extensions import NotRequired, ReadOnly, TypedDict

F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]

# -- inputs ---------------------------------------------------------------------------------

# `--set` overrides: "key=value" strings, or key -> value (a str is the value's text, parsed
# as TOML; other values are written as TOML first)
Overrides = list[str] | dict[str, str | bool | int | float]


class PhaseSpec(TypedDict):
    """`Drive.run`'s phase (lib.rs `parse_phase`). Every key but `kind` has the simulator's
    default and None stands for the default too; other keys are ignored."""

    kind: ReadOnly[str]  # purge, io, trim or idle (others: ValueError)
    read_pct: NotRequired[ReadOnly[int | None]]
    pattern: NotRequired[ReadOnly[Literal["seq", "rand"] | None]]
    block_size: NotRequired[ReadOnly[int | None]]
    queue_depth: NotRequired[ReadOnly[int | None]]
    jobs: NotRequired[ReadOnly[int | None]]
    offset: NotRequired[ReadOnly[int | None]]
    length: NotRequired[ReadOnly[int | None]]
    stop_bytes: NotRequired[ReadOnly[int | None]]
    stop_seconds: NotRequired[ReadOnly[float | None]]
    seconds: NotRequired[ReadOnly[float | None]]
    until_quiet: NotRequired[ReadOnly[bool | None]]
    sample_interval_s: NotRequired[ReadOnly[float | None]]
    segment_bytes: NotRequired[ReadOnly[int | None]]


class FioJobSpec(TypedDict):
    """One job of `Drive.run_fiojob` / `fiojob_stream` / `fiojob_check` (fiojob.rs
    `fiojob_spec`), as `ssdlab.fiojob.compile.Compiled.spec` builds it; lists per direction
    are (read, write, trim). The `ss_*` keys are read only when `ss` is not ""."""

    name: ReadOnly[str]
    wave: ReadOnly[int]
    group: ReadOnly[int]
    exitall: ReadOnly[bool]
    exit_what: ReadOnly[Literal["group", "stonewall", "all"]]
    read: ReadOnly[bool]
    write: ReadOnly[bool]
    trim: ReadOnly[bool]
    random: ReadOnly[bool]
    trimwrite: ReadOnly[bool]
    rwmixread: ReadOnly[int]
    seq_skip: ReadOnly[int]
    bs: ReadOnly[list[list[tuple[int, float]]]]  # per direction: (bytes, weight)
    offset: ReadOnly[int]
    size: ReadOnly[int]
    io_size: ReadOnly[int]
    number_ios: ReadOnly[int]
    iodepth: ReadOnly[int]
    time_based: ReadOnly[bool]
    runtime_ns: ReadOnly[int]
    ramp_ns: ReadOnly[int]
    startdelay_ns: ReadOnly[int]
    rate_bps: ReadOnly[list[int]]
    rate_iops: ReadOnly[list[int]]
    rate_poisson: ReadOnly[bool]
    thinktime_ns: ReadOnly[int]
    thinktime_blocks: ReadOnly[int]
    dist: ReadOnly[Literal["random", "zipf", "pareto", "normal", "zoned", "zoned_abs", "sequence"]]
    dist_param: ReadOnly[float]
    zones: ReadOnly[list[tuple[float, int, int]]]  # (access %, offset, length)
    sequence: ReadOnly[list[int]]
    sequence_stride: ReadOnly[bool]
    seed: ReadOnly[int]
    randommap: ReadOnly[bool]
    ba: ReadOnly[int]
    zone_size: ReadOnly[int]
    zone_skip: ReadOnly[int]
    ss: ReadOnly[Literal["", "iops", "iops_slope", "bw", "bw_slope", "lat", "lat_slope"]]
    ss_limit: ReadOnly[float]
    ss_pct: ReadOnly[bool]
    ss_dur_ns: ReadOnly[int]
    ss_interval_ns: ReadOnly[int]
    ss_ramp_ns: ReadOnly[int]
    ss_group: ReadOnly[bool]
    lat_target_ns: ReadOnly[int]
    lat_window_ns: ReadOnly[int]
    lat_pct: ReadOnly[float]
    lat_run: ReadOnly[bool]
    log_ns: ReadOnly[int]
    seq_identical: NotRequired[ReadOnly[bool | None]]
    perc_rand: NotRequired[ReadOnly[list[int] | None]]
    bs_range: NotRequired[ReadOnly[list[tuple[int, int]] | None]]
    loops: NotRequired[ReadOnly[int | None]]
    randrepeat: NotRequired[ReadOnly[bool | None]]
    bw_ns: NotRequired[ReadOnly[int | None]]
    iops_ns: NotRequired[ReadOnly[int | None]]
    keep_log: NotRequired[ReadOnly[bool | None]]
    hist_ms: NotRequired[ReadOnly[int | None]]
    # the logs of an entry per I/O (log_avg_msec=0): (kind 0 bw, 1 iops, 2 lat, 3 clat,
    # 4 slat; file name; directions, a bit each), and their offset and priority columns
    unit_logs: NotRequired[ReadOnly[list[tuple[int, str, int]] | None]]
    # (kind 0 bw, 1 iops; ms): a log whose samples are per I/O, its entries each window's
    # mean (log_compression with log_avg_msec)
    unit_avg: NotRequired[ReadOnly[list[tuple[int, int]] | None]]
    log_offset: NotRequired[ReadOnly[bool | None]]
    log_prio: NotRequired[ReadOnly[bool | None]]
    verify: NotRequired[ReadOnly[list[int] | None]]  # [after, backlog, batch, only]
    write_mode: NotRequired[ReadOnly[list[int] | None]]
    flow: NotRequired[ReadOnly[int | None]]
    flow_id: NotRequired[ReadOnly[int | None]]
    flow_sleep_ns: NotRequired[ReadOnly[int | None]]
    zbd_zone_size: NotRequired[ReadOnly[int | None]]
    zbd_zone_cap: NotRequired[ReadOnly[int | None]]
    zbd_max_open: NotRequired[ReadOnly[int | None]]
    zbd_job_max_open: NotRequired[ReadOnly[int | None]]
    zbd_read_beyond_wp: NotRequired[ReadOnly[bool | None]]
    zbd_reset_threshold: NotRequired[ReadOnly[float | None]]
    zbd_reset_frequency: NotRequired[ReadOnly[float | None]]
    zbd_verify: NotRequired[ReadOnly[bool | None]]
    iodepth_low: NotRequired[ReadOnly[int | None]]
    iodepth_batch_complete_min: NotRequired[ReadOnly[int | None]]
    iodepth_batch_complete_max: NotRequired[ReadOnly[int | None]]
    rate_min_bps: NotRequired[ReadOnly[list[int] | None]]
    rate_min_iops: NotRequired[ReadOnly[list[int] | None]]
    rate_cycle_ns: NotRequired[ReadOnly[int | None]]
    trim_issue: NotRequired[ReadOnly[str | None]]
    sync_issue: NotRequired[ReadOnly[str | None]]
    sync_blocks: NotRequired[ReadOnly[int | None]]
    sync_kind: NotRequired[ReadOnly[str | None]]
    range_blocks: NotRequired[ReadOnly[int | None]]
    range_flush: NotRequired[ReadOnly[bool | None]]
    end_sync: NotRequired[ReadOnly[bool | None]]
    close_sync: NotRequired[ReadOnly[bool | None]]
    override_sync: NotRequired[ReadOnly[bool | None]]
    close_fails: NotRequired[ReadOnly[bool | None]]
    null_batch: NotRequired[ReadOnly[int | None]]
    sync_io: NotRequired[ReadOnly[bool | None]]
    commit_hook: NotRequired[ReadOnly[bool | None]]
    external: NotRequired[ReadOnly[bool | None]]


# -- the resolved profile (`Drive.profile()`: every field of ssdsim::Profile, serde) ---------
# A dict profile given to Drive/Session is typed as this whole profile (what `profile()`
# returns); the simulator would also fill in the fields that have defaults.

class ProfileHost(TypedDict):
    interface: str
    pcie_gen: int
    lanes: int
    protocol_efficiency: float
    command_overhead_us: float
    host_latency_us: float
    max_queue_depth: int
    read_op_us: float
    write_latency_us: float
    map_update_us: float
    stream_commands: bool
    write_buffer_kib: int
    write_mbps: float
    read_mbps: float


class ModeTiming(TypedDict):
    read_us: float
    prog_us: float
    prog_pages: int
    read_levels: list[int]


class RetryModel(TypedDict):
    enabled: bool
    steps_fresh: float
    steps_rated: float
    rated_pe: int
    onset_s: float
    start_pe: int


class ProfileNand(TypedDict):
    cell: str
    channels: int
    dies_per_channel: int
    planes: int
    blocks_per_plane: int
    pages_per_block: int
    page_kib: int
    channel_mbps: float
    erase_us: float
    read_suspend: bool
    suspend_us: float
    partial_transfer: bool
    native_write_mbps: float
    read_retry_pct: float
    retry: RetryModel
    slc: ModeTiming
    native: ModeTiming


class ProfileFtl(TypedDict):
    gc_threshold_blocks: int
    gc_pace: float
    gc_urgency: bool
    idle_gc: bool
    idle_gc_target_pct: float
    idle_gc_max_valid_pct: float
    idle_gc_delay_ms: float
    read_ahead_kib: int
    striping: str
    gc_engines: int
    gc_buffers: int
    release_dead: bool
    erase_at_open: bool
    gc_move_us: float


class ProfileSlc(TypedDict):
    static_gb: float
    dynamic_max_gb: float
    dynamic_share: float
    dynamic_mapped_max_pct: float
    when_full: str
    fold_pace: float
    idle_fold: bool
    direct_during_gc: bool
    reclaim_interval_gb: float
    reclaim_gb: float
    reclaim_pace: float
    reclaim_min_free_pct: float


class ProfileMapping(TypedDict):
    kind: str
    cache_mib: float
    hmb_access_us: float
    checkpoint_gb: float


class ProfilePower(TypedDict):
    read_uj: float
    program_uj: float
    erase_uj: float
    transfer_nj_per_kib: float
    controller_active_w: float
    idle_w: float


class Profile(TypedDict):
    id: str
    name: str
    user_capacity_gb: float
    host: ProfileHost
    nand: ProfileNand
    ftl: ProfileFtl
    slc: ProfileSlc
    mapping: ProfileMapping
    power: ProfilePower


# -- outputs --------------------------------------------------------------------------------

class DriveInfo(TypedDict):
    """`Drive.info()`, `Drive.describe(...)`, `Session.info()` (lib.rs `profile_info`)."""

    id: str
    name: str
    user_bytes: int
    raw_bytes: int
    spare_pct: float
    interface: str  # "SATA 6Gb/s" or "PCIe 4.0 x4"
    link_mbps: float
    cell: str  # upper case: TLC
    channels: int
    dies: int
    planes: int
    page_kib: int
    block_mib: float
    mapping: str
    slc_static_bytes: int
    slc_dynamic_max_bytes: int


class Series(TypedDict):
    """A result's `series`: one column per sample interval (util/stats.rs SERIES, in row
    order); each sample handed to `on_sample` is one row of these, as floats."""

    t_s: F64
    iops: F64
    mbps: F64
    read_mbps: F64
    write_mbps: F64
    lat_mean_us: F64
    lat_max_us: F64
    host_write_bytes: F64
    nand_write_bytes: F64
    nand_slc_write_bytes: F64
    nand_native_write_bytes: F64
    waf: F64
    erases: F64
    gc_moves: F64
    free_blocks: F64
    slc_used_bytes: F64
    slc_capacity_bytes: F64
    cmt_hit_rate: F64
    power_w: F64
    ios: F64


class Segments(TypedDict):
    """A result's `segments`: one entry per `segment_bytes` written (HD Tach-style), and a
    last, shorter one for the bytes after the last whole segment (a write that is not a whole
    number of segments, or one stopped early)."""

    gb: F64
    mbps: F64
    t_s: F64


class LatencyFigures(TypedDict):
    """I/Os and their latency: least, mean, greatest and the percentiles every latency dict
    gives (lib.rs PERCENTILES), µs."""

    ios: int
    min_us: float
    mean_us: float
    max_us: float
    p50_us: float
    p90_us: float
    p99_us: float
    p99_9_us: float
    p99_99_us: float


class Latency(LatencyFigures):
    """A latency histogram (lib.rs `hist_dict`): the figures, and the non-empty buckets'
    upper edges with their counts."""

    edges_us: F64
    counts: U64


class DriveCounters(TypedDict):
    """Counters since a phase began (util/stats.rs `Snapshot::since`): in every result's
    totals and in `Session.counters()`. NaN where undefined (no host writes, no lookups)."""

    host_write_bytes: float
    nand_write_bytes: float
    nand_slc_write_bytes: float
    nand_native_write_bytes: float
    waf: float
    erases: float
    gc_moves: float
    gc_stalls: float
    slc_fold_bytes: float
    free_blocks: float
    slc_used_bytes: float
    cmt_hit_rate: float


class PhaseTotals(DriveCounters):
    """A result's `totals` (engine `Drive::finish`), every value a float."""

    duration_s: float
    ios: float
    read_ios: float
    write_ios: float
    read_bytes: float
    write_bytes: float
    iops: float
    mbps: float
    energy_j: float
    avg_power_w: float
    mbps_per_watt: float  # NaN without energy


class ReplayTotals(PhaseTotals):
    """A replay's totals (engine/replay.rs): trims and flushes besides reads and writes."""

    busy_s: float
    trim_ios: float
    trim_bytes: float
    flush_ios: float
    trim_lat_mean_us: float  # NaN without trims
    flush_lat_mean_us: float  # NaN without flushes


class FioTotals(PhaseTotals):
    """A fio job run's totals (fiojob/run.rs)."""

    trim_ios: float
    trim_bytes: float
    unwritten_read_ios: float


class SessionCounters(DriveCounters):
    """`Session.counters()` (engine/session.rs): the served drive's state now, every value a
    float; the counters count since the session began."""

    now_s: float
    busy_until_s: float
    reads: float
    writes: float
    trims: float
    flushes: float
    read_bytes: float
    write_bytes: float
    trim_bytes: float
    slc_capacity_bytes: float
    mapped_bytes: float


class _ResultBase(TypedDict):
    series: Series
    segments: Segments
    latency: Latency
    interrupted: bool


class RunResult(_ResultBase):
    """`Drive.run`'s result (lib.rs `result_dict`); an interrupted run raises
    KeyboardInterrupt carrying this as its `partial`."""

    totals: PhaseTotals


class ReplayResult(_ResultBase):
    """`Drive.replay`'s result: reads' and writes' histograms apart."""

    totals: ReplayTotals
    read_latency: Latency
    write_latency: Latency


class FioStat(TypedDict):
    """fio's running statistics of interval samples (bw KiB/s or IOPS; fiojob.rs `stat_dict`)."""

    min: int
    max: int
    samples: int
    mean: float
    s: float  # Welford's sum of squared deviations


class FioLat(LatencyFigures):
    """Completion latencies in fio's bins (fiojob.rs `plat_dict`): the figures (in µs as
    `Latency` gives them, and in ns as fio reports them), the indices of the bins that hold
    I/Os and their counts."""

    min_ns: int
    max_ns: int
    mean_ns: float
    stddev_ns: float
    bins: npt.NDArray[np.uint32]
    counts: U64


class FioDir(TypedDict):
    """One direction (read, write, trim) of a job."""

    ios: int
    bytes: int
    unwritten_ios: int
    runtime_ns: int
    bs: list[tuple[int, int]]  # (block size, I/Os), by size
    lat: FioLat
    bw_stat: FioStat
    iops_stat: FioStat


class FioDepths(TypedDict):
    """fio's io_u_map, io_u_submit, io_u_complete (7 buckets each)."""

    level: list[int]
    submit: list[int]
    complete: list[int]


class FioLog(TypedDict):
    """A job's log entries as columns (fiojob/logs.rs)."""

    t_ms: U64
    dir: U64
    kind: U64
    value: U64


class FioJobOut(TypedDict):
    """One job's figures in `run_fiojob`'s `jobs` (fiojob.rs `job_dict`)."""

    read: FioDir
    write: FioDir
    trim: FioDir
    start_s: float
    end_s: float
    ss_attained: bool
    issued: int
    zone_resets: int
    rate_min_failed: NotRequired[tuple[int, int, bool]]  # (direction, rate, is IOPS): rate_min not met
    close_failed: NotRequired[bool]  # fsync_on_close's fsync failed as the file closed (EINVAL)
    lat_buckets: list[int]
    sync: FioLat  # fio's syncs (fsync=N, fdatasync=N, sync_file_range=FLAGS:N): their latencies
    sync_ranges: int  # how many of them were sync_file_ranges
    depths: FioDepths
    log: FioLog
    hist_log: list[tuple[int, int, int, list[int], list[int]]]  # (t ms, dir, bs, bin indices, counts)
    log_truncated: bool


class FioRunResult(_ResultBase):
    """`Drive.run_fiojob`'s result: a phase result plus each job's figures."""

    totals: FioTotals
    jobs: list[FioJobOut]


# -- the plain dicts phase.PhaseResult keeps ---------------------------------------------

def columns(d: Series | Segments) -> dict[str, F64]:
    """Series or segments as the plain dict of columns `PhaseResult` keeps (the same dict:
    every value is a float64 array)."""
    return cast("dict[str, F64]", d)


def floats(d: PhaseTotals) -> dict[str, float]:
    """Totals (a replay's and a fio run's too) as the plain dict `PhaseResult` keeps (the
    same dict: every value is a float)."""
    return cast("dict[str, float]", d)
