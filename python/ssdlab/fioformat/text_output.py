"""fio's normal (text) output for a fio JSON document (json_write.py): per job its directions
(IOPS, bandwidth, slat/clat/lat, percentiles, bw and IOPS samples), its syncs, its depths
(IO depths, submit, complete, issued rwts), then per group the run status lines, in fio's
layout."""

from __future__ import annotations

from .fields import DIRS as _DIRS, MIXED
from .json_write import EINVAL, EIO, TEXT_SYNC

DIRS = (*_DIRS, MIXED)
# fio 3.33's td_verror text for a job's error: where it was set, the function, the message
ERROR_FUNCS = {EIO: "file:backend.c:1131, func=check_min_rate, error=Input/output error",
               EINVAL: "file:io_u.c:821, func=file close, error=Invalid argument"}


def num2str(num: float, pow2: bool, unit: str = "", maxlen: int = 4) -> str:
    """fio's lib/num2str.c at its 4 significant figures: divided by 1024 (pow2: Ki, Mi, ...)
    or 1000 (k, M, ...) until the whole part has at most 4 digits, then as many decimals of
    the remainder as the 4 leave room for past the point (none for a one-decimal room: the
    whole part rounded), as fio prints IOPS, bandwidth and sizes."""
    prefixes = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei") if pow2 else ("", "k", "M", "G", "T", "P", "E")
    k = 1024 if pow2 else 1000
    n, post, modulo, carry = int(num), 0, -1, False
    while post < len(prefixes) and len(str(n)) > maxlen:
        modulo = n % k
        n //= k
        carry = modulo >= k // 2
        post += 1
    post = 0 if post >= len(prefixes) else post
    if modulo < 0:
        return f"{n}{prefixes[post]}{unit}"
    room = maxlen - len(str(n))
    if room <= 1:
        return f"{n + carry}{prefixes[post]}{unit}"
    frac = "%.*f" % (room - 1, modulo / k)
    return f"{n + (frac[0] == '1')}.{frac[2:]}{prefixes[post]}{unit}"


def _bw(bps: float) -> str:
    """A bandwidth as fio's stat.c prints it: binary, then decimal in brackets."""
    return f"{num2str(bps, True, 'B/s')} ({num2str(bps, False, 'B/s')})"


def _scale(lo: float, hi: float, dev: float | None = None) -> tuple[str, int]:
    """fio's unit for a range of nanosecond values (stat.h nsec_to_msec/nsec_to_usec, stat.c
    show_clat_percentiles), with its divisor: msec where the low end is over 2 ms and the
    high over 99.999999 ms, else usec where they are over 2 us and 99.999 us, else nsec. With
    a standard deviation (display_lat) a unit also needs it over one of that unit."""
    for unit, div in (("msec", 1_000_000), ("usec", 1_000)):
        if lo > 2 * div and hi > 100 * div - 1 and (dev is None or dev > div):
            return unit, div
    return "nsec", 1


def lat_line(name: str, x: dict) -> str:
    """A latency's line as fio's display_lat prints it: in the unit of its min, max and stdev,
    min and max divided down to whole units (truncated; fio's num2str at 6 digits before a
    k/M suffix), mean and stdev at "%5.02f"."""
    lo, hi, mean, dev = int(x["min"]), int(x["max"]), float(x["mean"]), float(x["stddev"])
    unit, div = _scale(lo, hi, dev)
    return (f"    {name} ({unit}): min={num2str(lo // div, False, maxlen=6)}, "
            f"max={num2str(hi // div, False, maxlen=6)}, avg={mean / div:5.2f}, stdev={dev / div:5.2f}")


def pct_lines(pre: str, lat: dict, precision: int = 2) -> list[str]:
    """A latency's percentiles as fio's show_clat_percentiles prints them: the unit of the
    smallest and largest percentile, each value rounded up to it, the values as wide as the
    largest's digits (at least 5) and as many to a row as fit in fio's 73 columns."""
    pct = [(float(k), int(v)) for k, v in lat.get("percentile", {}).items()]
    if not pct:
        return []
    vals = [v for _, v in pct]
    unit, div = _scale(min(vals), max(vals))
    width = max(5, len(str(max(vals) // div)))
    per_line = 73 // (precision + 10 + width)
    cells = [f" {p:{precision + 3}.{precision}f}th=[{-(-v // div):{width}d}]" for p, v in pct]
    rows = [",".join(cells[i:i + per_line]) for i in range(0, len(cells), per_line)]
    return [f"    {pre} percentiles ({unit}):"] + ["     |" + r + ("," if i < len(rows) - 1 else "")
                                                   for i, r in enumerate(rows)]


def precision(j: dict, doc: dict) -> int:
    """fio's percentile_precision: the most decimals any value of the job's percentile_list
    was written with (parse.c counts them as it reads the list; 2 for its default list)."""
    text = (j.get("job options") or {}).get("percentile_list") or \
        (doc.get("global options") or {}).get("percentile_list")
    if not text:
        return 2
    return max(len(x.split(".", 1)[1]) if "." in x else 0 for x in str(text).split(":"))


def _samples_lines(d: dict) -> list[str]:
    """The direction's bandwidth and IOPS samples as fio's show_ddir_status prints them:
    only where there are samples, KiB/s (MiB/s from a mean over 1024 MiB/s)."""
    out = []
    if d.get("bw_samples"):
        k = 1024.0 if d["bw_mean"] > 1024 * 1024 else 1.0
        unit = "MiB" if k > 1 else "KiB"
        out.append(f"   bw ({unit:>5}/s): min={int(d['bw_min'] / k):5d}, max={int(d['bw_max'] / k):5d}, "
                   f"per={d['bw_agg']:3.2f}%, avg={d['bw_mean'] / k:5.2f}, stdev={d['bw_dev'] / k:5.2f}, "
                   f"samples={d['bw_samples']}")
    if d.get("iops_samples"):
        out.append(f"   iops        : min={int(d['iops_min']):5d}, max={int(d['iops_max']):5d}, "
                   f"avg={d['iops_mean']:5.2f}, stdev={d['iops_stddev']:5.2f}, samples={d['iops_samples']}")
    return out


def _latency_lines(j: dict) -> list[str]:
    """fio's show_latencies: the share of I/Os under each bound, nsec then usec then msec,
    five to a line, only the bounds with a share ("%3.2f%%")."""
    out = []
    for unit, key in (("nsec", "latency_ns"), ("usec", "latency_us"), ("msec", "latency_ms")):
        cells = [f"{k}={v:3.2f}%" for k, v in (j.get(key) or {}).items() if v > 0]
        out += [f"  lat ({unit})   : " + ", ".join(cells[i:i + 5]) for i in range(0, len(cells), 5)]
    return out


def _sync(j: dict) -> dict:
    """The job's syncs: its JSON's entry, or under unified_rw_reporting=mixed (no such entry)
    the ones kept for the text, which fio prints there too."""
    return j.get("sync") or j.get(TEXT_SYNC) or {}


def _depth_lines(j: dict) -> list[str]:
    """fio's IO depths, submit and complete lines (stat.c: "%3.1f%%" each) and its issued
    rwts line: total, short and dropped per direction, the fourth total the syncs (fio prints
    0 for the fourth short and dropped)."""
    def dist(key: str) -> str:
        return ", ".join(f"{k}={v:3.1f}%" for k, v in j[key].items())

    dirs = [j.get(name) or {} for name in _DIRS]
    if not any(dirs) and j.get(MIXED):  # unified_rw_reporting=mixed: fio sums them in the first
        dirs = [j[MIXED], {}, {}]

    def per(key: str) -> str:
        return ",".join(str(int(d.get(key, 0))) for d in dirs)

    syncs = int(_sync(j).get("total_ios", 0))
    return [f"  IO depths    : {dist('iodepth_level')}",
            f"     submit    : {dist('iodepth_submit')}",
            f"     complete  : {dist('iodepth_complete')}",
            f"     issued rwts: total={per('total_ios')},{syncs} short={per('short_ios')},0 "
            f"dropped={per('drop_ios')},0"]


def fio_text(doc: dict) -> str:
    """fio's normal output for a fio_json document."""
    lines = []
    for j in doc["jobs"]:
        if j.get("ssdlab_error"):
            lines.append(j["ssdlab_error"])
        err = f"err={j['error']:2d}" + (f" ({ERROR_FUNCS.get(j['error'], '?')})" if j["error"] else "")
        lines.append(f"{j['jobname']}: (groupid={j['groupid']}, jobs={j.get('jobs', 1)}): {err}: pid=0: {doc['time']}")
        if j.get("desc"):
            lines.append(f"  Description  : [{j['desc']}]")
        prec = precision(j, doc)
        for name in DIRS:
            d = j.get(name)
            if not d or not d["total_ios"]:
                continue
            # fio 3.33 prints the zone resets on every write line (zbd_write_status)
            resets = f"; {j.get('zone_resets', 0)} zone resets" if name == "write" else ""
            ms = max(int(d["runtime"]), 1)  # fio's integer rates over the runtime in ms
            lines.append(f"  {name}: IOPS={num2str(1000 * d['total_ios'] // ms, False)}, "
                         f"BW={_bw(1000 * d['io_bytes'] // ms)}({num2str(d['io_bytes'], True, 'B')}/"
                         f"{d['runtime']}msec){resets}")
            for what, key in (("slat", "slat_ns"), ("clat", "clat_ns"), (" lat", "lat_ns")):
                x = d[key]
                if not x["N"]:  # fio prints a latency only where it has samples (slat of a sync engine)
                    continue
                lines.append(lat_line(what, x))
            for pre, key in (("slat", "slat_ns"), ("clat", "clat_ns"), ("lat", "lat_ns")):
                if d[key]["N"]:  # fio's percentiles of each latency it has them for
                    lines.extend(pct_lines(pre, d[key], prec))
            lines.extend(_samples_lines(d))
            if name == "read" and d.get("unwritten_ios"):
                lines.append(f"  note: {d['unwritten_ios']} reads touched blocks never written "
                             "(a drive answers them without reading flash)")
        lines.extend(_latency_lines(j))
        x = _sync(j).get("lat_ns") or {}
        if x.get("N"):  # fio's syncs (fsync=N, fdatasync=N)
            lines.append("  fsync/fdatasync/sync_file_range:")
            lines.append(lat_line("sync", x))
            lines.extend(pct_lines("sync", x, prec))
        lines.extend(_depth_lines(j))
        if j.get("latency_depth"):
            lines.append(f"     latency   : target={j.get('latency_target', 0)}, window={j.get('latency_window', 0)}, "
                         f"percentile={float(j.get('latency_percentile', 100.0)):.2f}%, depth={j['latency_depth']}")
        lines.append(f"  lat percentiles and IOPS in virtual time; iodepth={j['latency_depth']}")
    groups: dict[int, list[dict]] = {}
    for j in doc["jobs"]:
        groups.setdefault(j["groupid"], []).append(j)
    for g, js in groups.items():
        lines.append("")
        lines.append(f"Run status group {g} (all jobs):")
        for name in DIRS:
            ds = [j[name] for j in js if name in j and j[name]["total_ios"]]
            if not ds:
                continue
            # fio's show_group_stats: the aggregate over the longest runtime, each job's
            # integer rate for the range, binary then decimal
            tot = sum(d["io_bytes"] for d in ds)
            rt = [int(d["runtime"]) for d in ds]
            agg = 1000 * tot // max(rt) if max(rt) else 0
            bws = [1000 * d["io_bytes"] // r if r else 0 for d, r in zip(ds, rt)]
            lo, hi = min(bws), max(bws)
            lines.append(f"  {name.upper():>5}: bw={_bw(agg)}, {num2str(lo, True, 'B/s')}-"
                         f"{num2str(hi, True, 'B/s')} ({num2str(lo, False, 'B/s')}-"
                         f"{num2str(hi, False, 'B/s')}), io={num2str(tot, True, 'B')} "
                         f"({num2str(tot, False, 'B')}), run={min(rt)}-{max(rt)}msec")
    return "\n".join(lines)
