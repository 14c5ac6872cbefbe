"""A job file -> the simulator's workload: one JobSpec per job and per `numjobs` clone, each
its own I/O stream with its own queue depth, in fio's meaning (sizes, offsets, mixes, block
sizes, rates, think time, distributions, time limits). Checked whole before anything runs."""

from __future__ import annotations

import re
from pathlib import Path

from ..fioformat import jobfile
from . import FioJobError
from . import blocksizes as B
from . import engines as E
from . import fio_values as V
from . import limits as L
from . import options as O
from .jobspec import Compiled, JobSpec
from .reporting import SETTINGS, reporting
from . import zbd as Z

MAX_CLONES = 1024
RW = {  # fio's rw kinds: (read, write, trim, random)
    "read": (1, 0, 0, 0), "write": (0, 1, 0, 0), "trim": (0, 0, 1, 0),
    "randread": (1, 0, 0, 1), "randwrite": (0, 1, 0, 1), "randtrim": (0, 0, 1, 1),
    "rw": (1, 1, 0, 0), "readwrite": (1, 1, 0, 0), "randrw": (1, 1, 0, 1),
    "trimwrite": (0, 1, 1, 0), "randtrimwrite": (0, 1, 1, 1),
}
DIRS = ("read", "write", "trim")


def _zones(value: str, where: str, absolute: bool, base: int) -> list:
    zones, acc = [], 0.0
    for it in value.partition(":")[2].split(",")[0].split(":"):
        a, _, r = it.partition("/")
        try:
            access = float(a)
        except ValueError:
            raise FioJobError(f"{where}: random_distribution={value}: '{it}' is ACCESS%/RANGE") from None
        r = r.strip()
        if not r:  # the last zone's range left blank: the rest of the region
            zones.append([access, None])
            acc += access
            continue
        rng = O.size(r, "random_distribution", where, base) if absolute else float(r)
        zones.append([access, rng])
        acc += access
    if abs(acc - 100) > 0.01:
        raise FioJobError(f"{where}: random_distribution={value}: the access shares add up to "
                          f"{acc:g} %, not 100")
    return zones


def _rate(value: str, key: str, where: str, base: int, iops: bool) -> list:
    parts = [p.strip() for p in value.split(",")]
    out = []
    for i in range(3):
        p = parts[i] if i < len(parts) else (parts[0] if len(parts) == 1 else "")
        out.append(0 if not p else (O.integer(p, key, where, 0, 10**12) if iops else O.size(p, key, where, base)))
    return out


def _ss(value: str, where: str) -> tuple[str, float, bool]:
    m = re.fullmatch(r"(iops|iops_slope|bw|bw_slope|lat|lat_slope):(\d+(?:\.\d+)?)(%?)",
                     value.split("#")[0].strip().lower())
    if not m:
        raise FioJobError(f"{where}: ss={value}: write iops|iops_slope|bw|bw_slope|lat|lat_slope:LIMIT[%]")
    return m.group(1), float(m.group(2)), bool(m.group(3))


def _pct(o: dict, key: str) -> float:
    v, where = o.get(key, ("100", ""))
    try:
        p = float(v.split(":")[0].strip())
    except ValueError:
        raise FioJobError(f"{where}: {key}={v}: not a number") from None
    if not 0 <= p <= 100:
        raise FioJobError(f"{where}: {key}={v}: must be 0 to 100")
    return p


TIME_BASED_NOTE = ("time_based without runtime: fio says \"time_based requires a runtime\" and runs "
                   "the job bounded by its size; so does ssdlab")
def _sequencer(o: dict) -> bool:
    """rw_sequencer: sequential (rw=rand...:N runs on) or identical (the offset again)."""
    v, where = o.get("rw_sequencer", ("sequential", ""))
    if v.strip().lower() not in ("sequential", "identical"):
        raise FioJobError(f"{where}: rw_sequencer={v[:40]}: write sequential or identical")
    return v.strip().lower() == "identical"


def _perc_rand(o: dict) -> list[int]:
    """percentage_random=R[,W,T] (or percentage_sequential, its complement) per direction."""
    for key, flip in (("percentage_random", False), ("percentage_sequential", True)):
        if key in o:
            v, where = o[key]
            parts = [p.strip() for p in v.split(",")]
            vals = [O.integer(parts[min(i, len(parts) - 1)] or "100", key, where, 0, 100) for i in range(3)]
            return [100 - x for x in vals] if flip else vals
    return [100, 100, 100]


def _verify(o: dict, flag, num, writes: bool) -> list | None:
    """fio's verify of a job that writes: [read back after each pass (do_verify), the
    backlog, its batch, verify_only]; None when nothing is read back (no verify, or a job
    that only reads: its reads are checked as they come)."""
    v = O.verify_kind(*o["verify"]) if "verify" in o else "0"
    if v == "0" or not writes:
        return None
    return [int(flag("do_verify", True)), num("verify_backlog", 0, 0, 2**40),
            num("verify_backlog_batch", 0, 0, 2**40), int(flag("verify_only"))]


def _merge(sections: list[jobfile.Section]) -> list[tuple[jobfile.Section, list]]:
    glob: list = []
    jobs = []
    for s in sections:
        if s.name == "global":
            glob = glob + s.options
        else:
            jobs.append((s, glob + s.options))
    return jobs


def compile_job(path: Path, capacity: int, seed: int = 0, zone_bytes: int = 0,
                env: dict[str, str] | None = None) -> Compiled:
    """Read, check and compile `path` for a drive of `capacity` bytes whose own zones (for
    zonemode=zbd without zonesize) are `zone_bytes`; `${NAME}` from `env` only. Raises
    FioJobError (one line naming the option and why) for anything ssdlab will not run."""
    texts: list[str] = []
    sections = jobfile.read(path, env, texts)
    noted: list[str] = []
    # the allow-list first, over every option of every section (global included), the
    # engines before the rest: an engine's own options (nfs_url) are refused for it
    every = [o for s in sections for o in s.options]
    for k, v, where in every:
        if O.canonical(k) == "ioengine":
            O.classify("ioengine", v, where)
    for k, v, where in every:
        note = O.classify(O.canonical(k), v, where)
        if note and note not in noted:
            noted.append(note)
    jobs_opts = _merge(sections)
    if not jobs_opts:
        raise FioJobError(f"{path}: no job: add a job section, e.g. [job1] with rw=randread")
    L.count_jobs(path, jobs_opts, MAX_CLONES)  # before anything is built for them
    jobs: list[JobSpec] = []
    notes: list[str] = []
    logs: dict = {}
    group_reporting = False
    wave, group = 0, 0
    exitall = False
    names: dict[str, int] = {}
    wave_of: dict[str, int] = {}
    for n, (sec, opts) in enumerate(jobs_opts):
        o: dict[str, tuple[str, str]] = {}
        for k, v, where in opts:
            o[O.canonical(k)] = (v, where)
        base = 1000 if o.get("kb_base", ("1024",))[0].strip() == "1000" else 1024
        V.normalize(o, notes, base)  # values fio runs although they look out of range
        V.sync_depth(o, notes)

        def has(k):
            return k in o

        def flag(k, default=False):
            return O.boolean(o[k][0], k, o[k][1]) if k in o else default

        def sz(k, default=0):
            if k not in o:
                return default
            nz = re.fullmatch(r"\s*(\d+)\s*z\s*", o[k][0], re.I)
            if nz:  # fio's size in zones
                if not zone_sz:
                    raise FioJobError(f"{o[k][1]}: {k}={o[k][0]}: a size in zones needs the zone "
                                      "size: give zonesize=")
                return int(nz.group(1)) * zone_sz
            v = O.size_or_pct(o[k][0], k, o[k][1], ext_capacity, base)
            return v // (4096 + md) * 4096 if md else v  # extended LBA: whole blocks of data

        def num(k, default, lo, hi):
            return O.integer(o[k][0], k, o[k][1], lo, hi) if k in o else default

        def tm(k, default=0, unit="s"):
            return O.time_ns(o[k][0], k, o[k][1], unit) if k in o else default

        # stonewall: after every job before; wait_for=NAME: after that job (jobs that wait
        # for the same job run together)
        waited = o.get("wait_for", ("",))[0].strip()
        if n > 0 and flag("stonewall"):
            wave += 1
            job_wave = wave
        elif n > 0 and waited:
            job_wave = wave_of[waited] + 1 if waited in wave_of else wave + 1
            wave = max(wave, job_wave)
        else:
            job_wave = wave
        if n > 0 and (flag("stonewall") or flag("new_group")):
            group += 1
        if flag("group_reporting"):
            group_reporting = True
        md = 0
        ext_capacity = capacity
        zbd = o.get("zonemode", ("none",))[0].strip().lower() == "zbd"
        zone_sz = O.size(o["zonesize"][0], "zonesize", o["zonesize"][1], base) if "zonesize" in o else 0
        if zbd and not zone_sz:
            if not zone_bytes:
                raise FioJobError(f"{sec.where}: zonemode=zbd: the drive has no zones of its own: "
                                  "give zonesize= (fio's rule for a device that is not zoned)")
            zone_sz = zone_bytes
        if zbd and zone_sz < 512:
            raise FioJobError(f"{o['zonesize'][1]}: zonesize={o['zonesize'][0]}: a zone is at "
                              "least 512 bytes")
        rwv, rww = o.get("rw", ("read", sec.where))
        kind, _, skip = rwv.strip().lower().partition(":")
        if kind not in RW:
            raise FioJobError(f"{rww}: rw={rwv}: not a fio rw kind ({', '.join(RW)})")
        r, w, t, rnd = RW[kind]
        V.trim_verify(o, bool(w))
        bs, bs_range = B.job_sizes(o, base, notes)
        md = B.extended_lba(bs, sec.where)
        ext_capacity = capacity // 4096 * (4096 + md)  # the namespace in extended-LBA bytes
        if md:  # the drive's own blocks: 4096 data bytes each; the metadata is not stored
            bs = [[[b // (4096 + md) * 4096, w] for b, w in d] for d in bs]
            bs_range = [(a // (4096 + md) * 4096, b // (4096 + md) * 4096) for a, b in bs_range]
        zbd_trim = o.get("zonemode", ("none",))[0].strip().lower() == "zbd" and t
        for i, d in enumerate(bs):
            for b, _ in d:
                if zbd_trim and (i == 2 or not (r, w)[i]) and 0 < b <= 1 << 38 and not b % 512:
                    continue  # a zbd trim is a zone reset: a zone long (checked below)
                if b <= 0 or b % 512 or b > 64 << 20:
                    raise FioJobError(f"{sec.where}: block size {b}: must be a multiple of 512 "
                                      "bytes up to 64 MiB")
        back = skip.strip().startswith("-")
        seq_skip = O.size(skip.strip().lstrip("-"), "rw", rww, base) * (-1 if back else 1) if skip else 0
        if skip and rnd:
            seq_skip = O.integer(skip, "rw", rww, 1, 1 << 30)
        mixr = 50
        if "rwmixread" in o:
            mixr = num("rwmixread", 50, 0, 100)
        elif "rwmixwrite" in o:
            mixr = 100 - num("rwmixwrite", 50, 0, 100)
        if not (r and w):
            mixr = 100 if r else 0
        # fio's get_start_offset: a percentage offset or offset_increment puts each clone at
        # offset + k x offset_increment aligned up to offset_align, else the smallest block size
        pct = {k for k in ("offset", "offset_increment", "io_size") if has(k) and o[k][0].strip().endswith("%")}
        align = (sz("offset_align") or min(b for d in bs for b, _ in d)) if pct & {"offset", "offset_increment"} else 1
        raw_offset = sz("offset")
        offset = -(-raw_offset // align) * align
        if offset >= capacity:
            raise FioJobError(f"{o['offset'][1]}: offset={o['offset'][0]}: at or past the end of the "
                              f"drive ({capacity} bytes)")
        # the region: filesize (x nrfiles, fio's file sizes) or size, else the drive from
        # the job's offset on; size beyond the files is clamped to them (as fio does)
        files = sz("filesize") * num("nrfiles", 1, 1, 1 << 20) if has("filesize") else 0
        size = files - offset if files else sz("size", capacity - offset)
        size_io = min(sz("size"), size) if files and has("size") else size
        sized = bool(files) or has("size")
        if size <= 0:
            raise FioJobError(f"{sec.where}: size: must be more than 0 bytes")
        dist, dparam, zones, sequence = "random", 0.0, [], []
        if "random_distribution" in o:
            dv, dw = o["random_distribution"]
            dk, _, dp = dv.strip().lower().partition(":")
            if dk in ("zoned", "zoned_abs"):
                zones = _zones(dv, dw, dk == "zoned_abs", base)
            elif dk in ("zipf", "pareto", "normal", "gauss"):
                try:
                    dparam = float(dp.split(":")[0]) if dp else {"zipf": 1.1, "pareto": 0.2}.get(dk, 0.0)
                except ValueError:
                    raise FioJobError(f"{dw}: random_distribution={dv}: the parameter is a number") from None
                if dk == "zipf":
                    V.zipf_theta(dv, dw, dparam, notes)
                if dk == "pareto" and not 0 < dparam < 1:
                    raise FioJobError(f"{dw}: random_distribution={dv}: pareto needs 0 < H < 1")
                dk = "normal" if dk == "gauss" else dk
            elif dk == "sequence":
                try:
                    sequence = [int(x, 0) for x in dp.split(",")]
                except ValueError:
                    raise FioJobError(f"{dw}: random_distribution={dv}: write sequence:B1,B2,... "
                                      "(block indices)") from None
                if not 1 <= len(sequence) <= 64 or min(sequence) < 0:
                    raise FioJobError(f"{dw}: random_distribution={dv}: 1 to 64 block indices, "
                                      "each 0 or more")
            elif dk != "random":
                raise FioJobError(f"{dw}: random_distribution={dv}: not one of random, zipf, "
                                  "pareto, normal, gauss, zoned, zoned_abs, sequence")
            dist, dparam = dk, dparam
        ss, ss_limit, ss_pct = ("", 0.0, False)
        if "ss" in o:
            ss, ss_limit, ss_pct = _ss(*o["ss"])
            ss = ss if tm("ss_dur") else ""  # fio judges steady state only with ss_dur
        exit_what = o.get("exit_what", ("group",))[0].strip().lower()
        if exit_what not in ("group", "stonewall", "all"):
            raise FioJobError(f"{o['exit_what'][1]}: exit_what={exit_what}: write group, stonewall or all")
        if zones:
            start, conv = 0, []
            for access, rng in zones:
                if rng is None:
                    n = size - start
                else:
                    n = int(rng) if dist == "zoned_abs" else int(size * rng / 100)
                conv.append([access / 100, start, max(n, 0)])
                start += n
            if start > size:
                raise FioJobError(f"{o['random_distribution'][1]}: random_distribution: the zones "
                                  f"cover {start} bytes, more than the job's size {size}")
            zones = conv
        if flag("fill_device") or flag("fill_fs"):
            size = capacity - offset
        zbd_fields: dict = {}
        if zbd:
            cap_z = sz("zonecapacity", zone_sz) or zone_sz
            if cap_z > zone_sz:
                raise FioJobError(f"{o['zonecapacity'][1]}: zonecapacity={o['zonecapacity'][0]}: "
                                  f"larger than the zone size {zone_sz}")
            verify = o.get("verify", ("none",))[0].strip().lower() not in ("none", "0", "")
            zbd_fields = dict(
                zbd_zone_size=zone_sz, zbd_zone_cap=cap_z,
                zbd_max_open=num("max_open_zones", 0, 0, 4096),
                zbd_job_max_open=num("job_max_open_zones", 0, 0, 4096),
                zbd_read_beyond_wp=flag("read_beyond_wp"),
                zbd_reset_threshold=Z.fraction(o, "zone_reset_threshold"),
                zbd_reset_frequency=Z.fraction(o, "zone_reset_frequency"),
                zbd_verify=verify)
            if zbd_fields["zbd_job_max_open"] and not zbd_fields["zbd_max_open"]:
                raise FioJobError(f"{o['job_max_open_zones'][1]}: job_max_open_zones: needs "
                                  "max_open_zones (fio tracks open zones only under a global limit)")
            if t and any(b != zone_sz for b, _ in bs[2]):
                raise FioJobError(f"{sec.where}: zonemode=zbd: the trim block size must be the zone "
                                  f"size {zone_sz} (a trim resets a zone)")
            if w and any(b > cap_z for b, _ in bs[1]):
                raise FioJobError(f"{sec.where}: zonemode=zbd: a write block size is larger than "
                                  f"a zone ({cap_z} bytes)")
        elif "write_mode" in o and "zone_append" in o["write_mode"][0].lower():
            raise FioJobError(f"{o['write_mode'][1]}: write_mode=zone_append: zone append is zoned "
                              "block device I/O: give zonemode=zbd (as fio requires)")
        numjobs = num("numjobs", 1, 1, MAX_CLONES)
        rep = reporting(o, flag, num)
        if flag("time_based") and not tm("runtime"):
            rep["time_based"] = False  # fio: "time_based requires a runtime", and drops it
            if TIME_BASED_NOTE not in notes:
                notes.append(TIME_BASED_NOTE)
        inc = sz("offset_increment")
        depth = num("iodepth", 1, 1, 65536)
        engine_calls = E.calls(o, depth, notes, bool(w), kind.endswith("trimwrite"), bool(t))
        randrepeat = flag("randrepeat", True)
        jseed = num("randseed", 0x89 if randrepeat else seed, 0, 2**64 - 1)
        own = [v for k, v, _ in sec.options if k == "name"]
        name = own[-1] if own and own[-1] else sec.name  # name= in [global] names no job
        wave_of[name] = job_wave
        # fio's order (init.c add_job): the job, then its clones numjobs-1 down to 1
        for c in (0, *range(numjobs - 1, 0, -1)):
            names[name] = names.get(name, 0) + 1
            c_off = -(-(raw_offset + c * inc) // align) * align
            if c_off >= capacity:
                raise FioJobError(f"{sec.where}: job {name} clone {c}: offset {c_off} bytes is past "
                                  f"the end of the drive ({capacity} bytes; offset_increment)")
            c_size = size if sized else capacity - c_off  # no size: the device from the offset on
            c_size_io = size_io if sized else c_size
            if zbd:
                c_off, c_size = Z.region(c_off, c_size, zone_sz, bool(r and not (w or t)), sec.where)
                c_size_io = min(c_size_io, c_size)
            # io_size=N%: N % of the job's region (fio's setup_files), not of the drive
            io_size = sz("io_size", c_size_io)  # checked as written (a whole percentage)
            if "io_size" in pct and int(o["io_size"][0].strip()[:-1]):
                io_size = c_size * int(o["io_size"][0].strip()[:-1]) // 100
            if o.get("log_avg_msec") is not None:
                O.integer(o["log_avg_msec"][0], "log_avg_msec", o["log_avg_msec"][1], 0, V.LOG_AVG_MAX)
            loops = num("loops", 1, 1, V.LOOPS_MAX if tm("runtime") else 1 << 30)  # runtime bounds it
            rmin_b = ([r * 4096 // (4096 + md) for r in _rate(o["rate_min"][0], "rate_min", o["rate_min"][1], base, False)]
                      if "rate_min" in o else [0, 0, 0])
            rmin_i = (_rate(o["rate_iops_min"][0], "rate_iops_min", o["rate_iops_min"][1], base, True)
                      if "rate_iops_min" in o else [0, 0, 0])
            jobs.append(JobSpec(
                name=name, clone=c, wave=job_wave, group=group, exitall=False, exit_what=exit_what,
                read=bool(r), write=bool(w),
                trim=bool(t), random=bool(rnd), trimwrite=kind.endswith("trimwrite"),
                rwmixread=mixr, seq_skip=seq_skip, bs=bs,
                offset=c_off, size=c_size, io_size=io_size,
                number_ios=num("number_ios", 0, 0, 2**62), iodepth=depth,
                time_based=rep.pop("time_based", flag("time_based")), runtime_ns=tm("runtime"),
                ramp_ns=tm("ramp_time"), startdelay_ns=tm("startdelay"),
                rate_bps=[r * 4096 // (4096 + md) for r in _rate(o["rate"][0], "rate", o["rate"][1], base, False)] if "rate" in o else [0, 0, 0],
                rate_iops=_rate(o["rate_iops"][0], "rate_iops", o["rate_iops"][1], base, True) if "rate_iops" in o else [0, 0, 0],
                rate_poisson=o.get("rate_process", ("linear",))[0].strip().lower() == "poisson",
                thinktime_ns=tm("thinktime", 0, "us"), thinktime_blocks=num("thinktime_blocks", 1, 1, 1 << 30),
                dist=dist, dist_param=dparam, zones=zones, sequence=sequence,
                sequence_stride=flag("random_sequence_stride"),
                seed=(jseed + c * 0x9E3779B97F4A7C15) % 2**64,
                randommap=not flag("norandommap") and dist == "random",
                ba=sz("ba", 0),
                zone_size=sz("zonesize") if o.get("zonemode", ("none",))[0] == "strided" else 0,
                zone_range=sz("zonerange"), zone_skip=sz("zoneskip"),
                fill_device=flag("fill_device") or flag("fill_fs"),
                ss=ss, ss_limit=ss_limit, ss_pct=ss_pct, ss_dur_ns=tm("ss_dur"),
                ss_interval_ns=tm("steadystate_check_interval", 10**9),
                ss_ramp_ns=tm("ss_ramp"), ss_group=flag("group_reporting"),
                lat_target_ns=tm("latency_target", 0, "us"), lat_window_ns=tm("latency_window", 0, "us"),
                lat_pct=_pct(o, "latency_percentile"), lat_run=flag("latency_run"),
                options={O.canonical(k): v for k, v, _ in sec.options if k != "name" and k not in sec.bare},
                settings={k: v for k, (v, _) in o.items() if k in SETTINGS},
                write_mode=O.write_mode(*o["write_mode"]) if "write_mode" in o else [100, 0, 0, 0],
                flow=num("flow", 0, 0, 1000), flow_id=num("flow_id", 0, 0, 2**31 - 1),
                flow_sleep_ns=num("flow_sleep", 0, 0, 2**32 - 1) * 1000,
                md_bytes=md, **zbd_fields,
                iodepth_low=num("iodepth_low", 0, 0, 65536),
                iodepth_batch_complete_min=num("iodepth_batch_complete_min", 1, 0, 65536),
                iodepth_batch_complete_max=num("iodepth_batch_complete_max", 0, 0, 65536),
                rate_min_bps=rmin_b, rate_min_iops=rmin_i,
                rate_cycle_ns=num("rate_cycle", 1000, 1, 10**9) * 10**6 if any(rmin_b + rmin_i) else 0,
                bs_range=bs_range, loops=loops, randrepeat=randrepeat,
                verify=_verify(o, flag, num, bool(w or kind.endswith("trimwrite"))),
                seq_identical=_sequencer(o), perc_rand=_perc_rand(o), **engine_calls, **rep))
        exitall = exitall or flag("exitall")
        for k in ("write_bw_log", "write_iops_log", "write_lat_log", "log_avg_msec", "per_job_logs"):
            if k in o and k not in logs:
                logs[k] = o[k][0]
    zoned = [j for j in jobs if j.zbd_zone_size]
    if zoned and len({(j.zbd_zone_size, j.zbd_zone_cap, j.zbd_max_open) for j in zoned}) > 1:
        raise FioJobError(f"{path}: zonemode=zbd: the jobs give different zone sizes, capacities "
                          "or max_open_zones for the one drive (fio refuses them too)")
    zbd_note = ""
    if zoned:
        z = zoned[0]
        zbd_note = (f"zonemode=zbd: the drive's LBAs as zones of {z.zbd_zone_size} bytes "
                     f"({z.zbd_zone_cap} writable), kept by ssdlab as fio keeps the zones of a "
                     "device that is not zoned; a zone reset is a trim of the zone's LBAs; a zone append "
                    "is a write at the zone's write pointer")
    for j in jobs:
        j.exitall = exitall  # fio's exitall is the whole run's once any job sets it
        if j.size > capacity - j.offset:
            raise FioJobError(f"{path}: job {j.name}: offset + size = {j.offset + j.size} bytes, "
                              f"past the end of the drive ({capacity} bytes)")
        if not j.time_based and j.runtime_ns == 0 and j.io_size == 0 and not j.number_ios:
            raise FioJobError(f"{path}: job {j.name}: nothing bounds it (size, io_size, number_ios or runtime)")
        if any(b > j.size for d in j.bs for b, w in d if w > 0) or any(a > j.size for a, _ in j.bs_range):
            raise FioJobError(f"{path}: job {j.name}: a block size is larger than the job's size "
                              f"({j.size} bytes): give a larger size or smaller blocks")
    L.check(path, jobs)
    batched = {f"ioengine={e}" for e in E.NULL_ENGINES} if any(j.null_batch for j in jobs) else set()
    noted = [n for n in noted if n not in batched]  # noted with its batches instead (engines.py)
    if noted:
        notes.append("accepted with no effect on a simulated drive: " + ", ".join(noted))
    if zbd_note:
        notes.append(zbd_note)
    md = max((j.md_bytes for j in jobs), default=0)
    if md:
        notes.append(f"extended-LBA blocks (4096 + {md} bytes): the 4096 data bytes of each block "
                     f"are written to and read from NAND; the {md} metadata bytes are counted in "
                     "fio's bytes but neither stored nor timed on the link; protection "
                     "information (pi_act, pi_chk) is not checked: a drive that keeps no data "
                     "checks nothing")
    if any(j.write_mode[0] < 100 for j in jobs):
        notes.append("write_mode: Write Zeroes and Write Uncorrectable deallocate the 4 KiB "
                     "blocks they cover (the trim path: no NAND program, no data on the link; "
                     "reads of them count as unwritten, where a drive would return zeroes or an "
                     "error); Verify reads the range from NAND inside the drive, no data on the "
                     "link; all counted as writes, as fio counts them")
    # fio's JSON: "global options" only when [global] sets any, each with its value (a bare flag has none)
    given = [(k, v) for sec in sections if sec.name == "global" for k, v, _ in sec.options if k not in sec.bare]
    glob = ({O.canonical(k): v for k, v in given}
            if any(sec.options for sec in sections if sec.name == "global") else None)
    compiled = Compiled(jobs, notes, group_reporting, logs, glob, texts[0] if texts else "")
    _simulator_checks(path, compiled, capacity)
    return compiled


def _simulator_checks(path: Path, c: Compiled, capacity: int) -> None:
    """The simulator's own checks of each job (JobSpec::check), now: a job it would refuse
    is refused before anything runs or is stored."""
    from .. import _sim

    seen = set()
    for spec in c.spec():
        err = _sim.fiojob_check(spec, capacity)
        if err and err not in seen:
            raise FioJobError(f"{path}: {err}")
        seen.add(err)
