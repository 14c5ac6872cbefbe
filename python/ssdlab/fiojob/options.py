"""Which fio options a simulated drive runs, and how their values read. An allow-list:
I/O-pattern options are compiled (COMPILED); options that change nothing on a simulated drive
are accepted with one note naming them (NOTED, block-I/O engines); everything else is refused
with the reason (REFUSED, or an option ssdlab does not know). Nothing refused ever runs."""

from __future__ import annotations

import math
import re

import difflib

from . import FioJobError
from .fio_names import FIO_OPTIONS

ALIASES = {"readwrite": "rw", "blocksize": "bs", "blocksize_range": "bsrange", "blockalign": "ba",
           "io_limit": "io_size", "timeout": "runtime", "iodepth_batch": "iodepth_batch_submit",
           "iodepth_batch_complete": "iodepth_batch_complete_min", "random_distribution":
           "random_distribution", "ioscheduler": "ioscheduler", "iomem": "mem",
           "steadystate": "ss", "steadystate_duration": "ss_dur", "steadystate_ramp_time": "ss_ramp",
           "percentage_sequential": "percentage_sequential", "blocksize_unaligned": "bs_unaligned",
           "ratemin": "rate_min", "ratecycle": "rate_cycle", "wait_for_previous": "stonewall",
           "fileoffset": "offset", "threads": "thread", "disable_bw": "disable_bw_measurement",
           "ss_interval": "steadystate_check_interval", "nr_files": "nrfiles",
           "allrandrepeat": "allrandrepeat", "fill_fs": "fill_device",
           "bs_is_seq_rand": "bs_is_seq_rand", "per_job_logs": "per_job_logs"}

# the options the simulator gives fio's meaning to (compile.py)
COMPILED = frozenset("""
name description rw rw_sequencer rwmixread rwmixwrite bs bsrange bssplit ba bs_unaligned
size io_size offset offset_increment offset_align number_ios loops numjobs iodepth
time_based runtime ramp_time startdelay rate rate_iops rate_min rate_iops_min rate_process
rate_cycle rate_ignore_thinktime thinktime thinktime_blocks thinktime_spin thinktime_blocks_type
random_distribution random_sequence_stride randseed randrepeat norandommap random_generator percentage_random
percentage_sequential
ss ss_dur ss_ramp steadystate_check_interval exitall exit_what latency_target
latency_window latency_percentile latency_run zonemode zonesize zonerange zoneskip fill_device fill_fs
stonewall wait_for new_group group_reporting write_mode write_bw_log write_iops_log write_lat_log
log_avg_msec log_compression log_offset log_prio per_job_logs unified_rw_reporting kb_base unit_base filesize nrfiles
flow flow_id flow_sleep
zonecapacity max_open_zones job_max_open_zones read_beyond_wp zone_reset_threshold
zone_reset_frequency ignore_zone_limits
iodepth_low iodepth_batch_complete_min iodepth_batch_complete_max
verify do_verify verify_backlog verify_backlog_batch verify_only
percentile_list lat_percentiles clat_percentiles slat_percentiles bwavgtime iopsavgtime
write_hist_log log_hist_msec log_hist_coarseness fsync fdatasync sync_file_range end_fsync
fsync_on_close iodepth_batch_submit
""".split())

# accepted with a note: nothing a simulated drive (which keeps no data and has no host
# page cache, CPU or engine) would do differently
NOTED = frozenset("""
direct buffered ioengine filename directory filename_format openfiles file_service_type
cmdprio cmdprio_percentage cmdprio_class cmdprio_bssplit cmdprio_hint hipri fixedbufs
registerfiles sqthread_poll sqthread_poll_cpu nonvectored uncached force_async userspace_reap
atomic sync odirect_align ioscheduler thread invalidate fadvise_hint
verify_interval verify_offset verify_pattern verify_fatal verify_dump
verify_async verify_header_seed verify_write_sequence verify_pattern_interval disk_util
refill_buffers scramble_buffers zero_buffers buffer_pattern buffer_compress_percentage
buffer_compress_chunk dedupe_percentage dedupe_mode dedupe_working_set_percentage
cpus_allowed cpus_allowed_policy cpumask cpuload nice prio prioclass numa_cpu_nodes
numa_mem_policy gtod_reduce gtod_cpu disable_lat disable_clat disable_slat
disable_bw_measurement
clocksource eta eta_newline eta_interval significant_figures lockmem mem create_serialize
create_fsync create_on_open create_only allow_file_create allow_mounted_write unlink
unlink_each_loop overwrite fallocate pre_read file_append
write_barrier continue_on_error ignore_error
error_dump exitall_on_error max_latency log_max_value
log_unix_epoch log_alternate_epoch
flow_watermark
stats ramp_size experimental_verify
sqthread_poll_cpu trim_percentage trim_verify_zero trim_backlog trim_backlog_batch
serialize_overlap io_submit_mode unique_filename group_reporting_ignore
allrandrepeat dedupe_global cmd_type md_per_io_size
sg_write_mode hugepage_size writefua readfua num_range
""".split())

NOTED_PREFIXES = ("cmdprio", "verify_", "sqthread", "sg_", "pi_", "xnvme_", "fdp", "apptag",
                  "libblkio_")  # engine options
MEM_KINDS = ("malloc", "shm", "shmhuge")

# libblkio: a library of block-I/O drivers (io_uring, NVMe, virtio-blk) for a local device
BLOCK_ENGINES = frozenset("""libaio io_uring io_uring_cmd psync sync vsync pvsync pvsync2
posixaio sg null cpp_null windowsaio solarisaio xnvme libblkio libzbc""".split())
FS_ENGINES = frozenset("""mmap splice ftruncate filecreate filestat filedelete dircreate dirstat
dirdelete falloc e4defrag gfapi gfapi_async mtd pmemblk dev-dax libpmem libcufile""".split())
NET_ENGINES = frozenset("""net netsplice nbd rdma rados rbd http nfs libhdfs libiscsi""".split())

EXEC_ENGINES = frozenset({"exec", "external"})
WHY_EXEC = "runs a program or loads a library; ssdlab never executes anything from a job file"
WHY_NET = "a network engine; a simulated drive is a local block device (use a block engine, e.g. libaio)"
WHY_FS = "a filesystem engine; a simulated drive has no filesystem (use a block engine, e.g. libaio)"
WHY_CPUIO = "burns CPU and does no I/O"
WHY_MMAP = "maps a file or device for the I/O buffers; a simulated drive needs none (remove it or use mem=malloc)"
WRITE_MODES = ("write", "zeroes", "uncor", "verify")  # the simulator's order (fiojob/mod.rs)
WHY_UNKNOWN = "not an I/O-pattern option ssdlab simulates (docs/cli.md lists the accepted ones)"

REFUSED = {
    "exec_prerun": "runs a shell command; ssdlab never executes anything from a job file",
    "exec_postrun": "runs a shell command; ssdlab never executes anything from a job file",
    "write_iolog": "writes a file; on a simulated drive the run is stored in the results store",
    "read_iolog": "replays an I/O log: replay it with `ssdlab run trace --trace FILE`",
    "replay_redirect": "belongs to read_iolog: replay the log with `ssdlab run trace`",
    "output": "writes a file: use --json (fio's JSON) or the text output",
    "trigger": "runs a command", "trigger_cmd": "runs a command",
    "trigger_file": "reads a trigger file", "trigger_timeout": "runs a command",
    "verify_state_save": "writes a state file", "verify_state_load": "reads a state file",
    "ioengine_opts": "passes raw options to an engine",
    "cgroup": "creates a cgroup", "cgroup_weight": "creates a cgroup",
    "cgroup_nodelete": "creates a cgroup",
    "uid": "changes the user fio runs as", "gid": "changes the group fio runs as",
    "opendir": "reads a directory of files (a filesystem job)",
}

_BOOL = {"": True, "1": True, "true": True, "yes": True, "on": True,
         "0": False, "false": False, "no": False, "off": False}


def canonical(key: str) -> str:
    return ALIASES.get(key, key)


def classify(key: str, value: str, where: str) -> str | None:
    """None if compiled; a note word if accepted without effect; raises if refused."""
    if key in REFUSED:
        raise FioJobError(f"{where}: {key}: refused: {REFUSED[key]}")
    if key == "ioengine":
        eng = value.strip().split(":")[0].lower()
        if eng in BLOCK_ENGINES:
            return f"ioengine={eng}"
        if eng in EXEC_ENGINES or value.strip().startswith("external"):
            raise FioJobError(f"{where}: ioengine={value}: refused: {WHY_EXEC}")
        if eng in NET_ENGINES:
            raise FioJobError(f"{where}: ioengine={value}: refused: {WHY_NET}")
        if eng in FS_ENGINES:
            raise FioJobError(f"{where}: ioengine={value}: refused: {WHY_FS}")
        if eng == "cpuio":
            raise FioJobError(f"{where}: ioengine=cpuio: refused: {WHY_CPUIO}")
        raise FioJobError(f"{where}: ioengine={value}: refused: not a block-I/O engine ssdlab "
                          f"knows (accepted: {', '.join(sorted(BLOCK_ENGINES))})")
    if key == "mem":
        kind = value.strip().split(":")[0].lower()
        if kind.startswith("mmap") or ":" in value:
            raise FioJobError(f"{where}: mem={value}: refused: {WHY_MMAP}")
        if kind not in (*MEM_KINDS, ""):
            raise FioJobError(f"{where}: mem={value}: refused: not a buffer type ssdlab knows "
                              f"({', '.join(MEM_KINDS)})")
        return key
    if key == "filename" and value.strip().lower().startswith(("net", "tcp", "udp")) and "," in value:
        raise FioJobError(f"{where}: filename={value}: refused: a network address")
    if key in NOTED:
        return key
    if key == "write_mode":
        write_mode(value, where)  # checked here; compiled per job (compile.py)
        return None
    if key == "zonemode" and value.strip().lower() not in ("none", "strided", "zbd"):
        raise FioJobError(f"{where}: zonemode={value}: write none, strided or zbd")
    if key in COMPILED:
        return None
    if key.startswith(NOTED_PREFIXES):
        return key  # options of block-I/O engines
    if key not in FIO_OPTIONS:
        near = difflib.get_close_matches(key, FIO_OPTIONS, n=1, cutoff=0.75)
        hint = f": did you mean {near[0]}?" if near else " (fio's HOWTO lists its options)"
        raise FioJobError(f"{where}: {key}: fio has no such option{hint}")
    raise FioJobError(f"{where}: {key}: refused: {WHY_UNKNOWN}")


def write_mode(value: str, where: str) -> list[int]:
    """fio's io_uring_cmd write_mode: one mode, or MODE/PCT:MODE/PCT:... (at least two; blank
    shares split what is left evenly, in whole %, as fio does) -> % of writes per mode, in
    WRITE_MODES order (what whole-% splitting leaves over goes to plain writes). Zone append
    (zonemode=zbd only, compile.py checks) counts as a write: the drive puts the data at the
    zone's write pointer, where zonemode=zbd puts a write."""
    v = value.strip().lower()
    out = [0, 0, 0, 0]
    entries = [v + "/100"] if ":" not in v else v.split(":")
    if len(entries) < 2 and ":" in v:
        raise FioJobError(f"{where}: write_mode={value}: a split needs at least two MODE/PCT entries")
    blank = []
    for e in entries:
        mode, slash, pct = e.partition("/")
        if mode == "zone_append":
            mode = "write"
        if mode not in WRITE_MODES or not slash:
            raise FioJobError(f"{where}: write_mode={value}: write one of {', '.join(WRITE_MODES)}, "
                              "or MODE/PCT:MODE/PCT:...")
        if not pct.strip():
            blank.append(mode)
            continue
        out[WRITE_MODES.index(mode)] += integer(pct, "write_mode", where, 0, 100)
    total = sum(out)
    if total > 100 or (not blank and total != 100):
        raise FioJobError(f"{where}: write_mode={value}: the shares add up to {total} %, not 100")
    for mode in blank:
        out[WRITE_MODES.index(mode)] += (100 - total) // len(blank)
    if sum(out) != 100:
        raise FioJobError(f"{where}: write_mode={value}: the blank shares split to whole % add up "
                          f"to {sum(out)} %; fio fails the writes drawn past that: give every share")
    return out


def boolean(value: str, key: str, where: str) -> bool:
    v = value.strip().lower()
    if v not in _BOOL:
        raise FioJobError(f"{where}: {key}={value}: not a boolean (0/1, true/false, yes/no, on/off)")
    return _BOOL[v]


_SIZE = re.compile(r"(0x[0-9a-f]+|\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)", re.I)
_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
MAX_SIZE = 1 << 62  # bytes: past any drive, and still a whole number in the simulator's u64/i64
MAX_SECONDS = 1e7  # a job's times: the bound of `--seconds` (methodology/common.py), 116 days
_DIGITS = 40  # a number written with more digits than this is no size or time


def _number(text: str, key: str, value: str, where: str) -> float | int:
    """A number as written (decimal, 0x hex or with a fraction), refused before it is
    converted when it is too long to be one (a 400-digit value)."""
    if len(text) > _DIGITS:
        raise FioJobError(f"{where}: {key}: a {len(text)}-digit number: too large for any size or time")
    return int(text, 16) if text.lower().startswith("0x") else float(text)


def size(value: str, key: str, where: str, base: int = 1024) -> int:
    """fio's size syntax: bytes, or a number with k/m/g/t/p (binary unless kb_base=1000;
    KiB/MiB are always binary), as fio reads them."""
    m = _SIZE.fullmatch(value.strip())
    if not m:
        raise FioJobError(f"{where}: {key}={value}: not a size (bytes or a number with k, m, g, t)")
    num = _number(m.group(1), key, value, where)
    unit = m.group(2).lower()
    mult = _MULT[unit]
    if base == 1000 and unit and not m.group(3):
        mult = 1000 ** " kmgtp".index(unit)
    if num * mult > MAX_SIZE:
        raise FioJobError(f"{where}: {key}={value[:40]}: too large (over 2^62 bytes, past any drive)")
    return int(num * mult)


def size_or_pct(value: str, key: str, where: str, capacity: int, base: int = 1024) -> int:
    v = value.strip()
    if v.endswith("%"):
        whole = re.fullmatch(r"\s*(\d*)\.\d*\s*", v[:-1])
        if whole and any(c.isdigit() for c in v[:-1]):
            n = int(whole.group(1) or 0)  # fio's number stops at the point: bytes, no percentage
            raise FioJobError(f"{where}: {key}={value}: fio takes a percentage as a whole number and "
                              f"reads this one as {n} byte{'' if n == 1 else 's'}: write a whole "
                              f"percentage, e.g. {key}={max(n, 1)}%")
        try:
            pct = float(v[:-1])
        except ValueError:
            raise FioJobError(f"{where}: {key}={value}: not a percentage") from None
        if not 0 <= pct <= 100:
            raise FioJobError(f"{where}: {key}={value}: a percentage is 0 to 100")
        return int(capacity * pct / 100)
    return size(v, key, where, base)


_TIME = re.compile(r"(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|m|min|h|d)?", re.I)
_TUNIT = {"us": 1e3, "usec": 1e3, "ms": 1e6, "msec": 1e6, "s": 1e9, "sec": 1e9, "m": 60e9,
          "min": 60e9, "h": 3600e9, "d": 86400e9}


def time_ns(value: str, key: str, where: str, default_unit: str = "s") -> int:
    """fio's time syntax, at most MAX_SECONDS: a simulated job's time is virtual, and a
    run is bounded as `--seconds` is."""
    m = _TIME.fullmatch(value.strip())
    if not m:
        raise FioJobError(f"{where}: {key}={value[:40]}: not a time (a number with us, ms, s, m, h)")
    ns = _number(m.group(1), key, value, where) * _TUNIT[(m.group(2) or default_unit).lower()]
    if ns > MAX_SECONDS * 1e9:
        raise FioJobError(f"{where}: {key}={value[:40]}: over {MAX_SECONDS:g} s (116 days), the longest "
                          "virtual time ssdlab runs (as --seconds): give a shorter time")
    return int(ns)


def integer(value: str, key: str, where: str, lo: int, hi: int) -> int:
    v = value.strip()
    if len(v) > _DIGITS:
        raise FioJobError(f"{where}: {key}: a {len(v)}-digit number: must be {lo} to {hi}")
    try:
        n = int(v, 0)
    except ValueError:
        raise FioJobError(f"{where}: {key}={v}: not a whole number") from None
    if not lo <= n <= hi:
        raise FioJobError(f"{where}: {key}={v}: must be {lo} to {hi}")
    return n


# fio's verify= values (options.c): anything else fio refuses ("failed parsing verify=")
VERIFY_KINDS = ("0", "md5", "crc64", "crc32", "crc32c-intel", "crc32c", "crc16", "crc7", "sha1", "sha256",
                "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "xxhash", "meta", "pattern", "null")


def verify_kind(value: str, where: str) -> str:
    """verify=KIND as fio takes it: one of its names, as written ("0": no verify)."""
    v = value.strip()
    if v not in VERIFY_KINDS:
        raise FioJobError(f"{where}: verify={value[:40]}: not a fio verify kind (fio refuses it); "
                          f"write one of {', '.join(VERIFY_KINDS)}")
    return v


def percentile_list(value: str, where: str) -> list[float]:
    """percentile_list=P:P:... as fio takes it: numbers from 0 to 100 (fio reports up to 20)."""
    out = []
    for p in value.split(":"):
        try:
            f = float(p)
        except ValueError:
            f = math.nan
        if not 0 <= f <= 100:
            raise FioJobError(f"{where}: percentile_list={value[:60]}: {p.strip()[:20] or 'a blank'} is not "
                              "a percentile from 0 to 100; write them as 50:99:99.9")
        out.append(f)
    return out

