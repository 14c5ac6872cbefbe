"""Logs of an entry per I/O (`log_avg_msec=0`, fio's default), compared with fio 3.33's own
(null engine) for the same job: one line per I/O in each of the bandwidth, IOPS and latency
logs, fio's columns (`time, value, ddir, bs, [offset, ]prio`), the offsets the job wrote,
and the JSON's bandwidth and IOPS statistics taken per I/O, as fio takes them then."""

from __future__ import annotations

from fiojobs import both_logged

KINDS = ("bw", "iops", "lat", "clat", "slat")


def _rows(path) -> list[list[str]]:
    return [[c.strip() for c in ln.split(",")] for ln in path.read_text().splitlines()]


def _logs(where, prefix: str) -> dict[str, list[list[str]]]:
    return {k: _rows(where / f"{prefix}_{k}.1.log") for k in KINDS}


def test_an_entry_per_io_with_fios_columns_and_offsets(tmp_path):
    body = ("[a]\nrw=randwrite\nbs=8k\nsize=1m\nlog_offset=1\n"
            "write_bw_log=u\nwrite_iops_log=u\nwrite_lat_log=u\n")
    fj, sj, logs, _ = both_logged(tmp_path, body)
    fio, ours = _logs(tmp_path, "u"), _logs(logs, "u")
    for k in KINDS:
        assert len(ours[k]) == len(fio[k]), k  # 128 I/Os: 128 lines (slat: none, as fio's)
        assert [r[2:4] for r in ours[k]] == [r[2:4] for r in fio[k]], k  # ddir, bs
        assert {len(r) for r in ours[k]} <= {6}, k  # time, value, ddir, bs, offset, prio
        assert [r[5] for r in ours[k]] == [r[5] for r in fio[k]], k
    assert len(ours["iops"]) == 128
    assert {r[1] for r in ours["iops"]} == {r[1] for r in fio["iops"]} == {"1"}
    # the random map's offsets: every block of the region once, in the job's order
    assert sorted(int(r[4]) for r in ours["bw"]) == sorted(int(r[4]) for r in fio["bw"])
    assert [r[4] for r in ours["bw"]] == [r[4] for r in ours["lat"]]
    # each I/O's bandwidth: its bytes x 10^6 / its completion latency in ns, as fio's
    assert all(int(b[1]) == 8192 * 10**6 // int(c[1]) for b, c in zip(ours["bw"], ours["clat"]))
    # the JSON's bandwidth and IOPS statistics: a sample per I/O, as fio's
    for key in ("bw_samples", "iops_samples", "iops_min", "iops_max"):
        assert sj["write"][key] == fj["write"][key], key
    assert sj["write"]["bw_min"] == min(int(r[1]) for r in ours["bw"])


def test_the_priority_column_in_hex_and_no_offset_without_log_offset(tmp_path):
    body = ("[a]\nrw=read\nbs=4k\nsize=64k\nlog_prio=1\nwrite_lat_log=p\n")
    fj, sj, logs, _ = both_logged(tmp_path, body)
    fio, ours = _rows(tmp_path / "p_lat.1.log"), _rows(logs / "p_lat.1.log")
    assert len(ours) == len(fio) == 16
    assert [(r[2], r[3], r[4]) for r in ours] == [(r[2], r[3], r[4]) for r in fio]  # 0, 4096, 0x0000


def test_averaged_logs_keep_fios_columns_with_log_offset(tmp_path):
    body = ("[a]\nrw=randread\nbs=4k\nsize=64m\ntime_based\nruntime=1\nrate_iops=2000\n"
            "log_avg_msec=250\nlog_offset=1\nwrite_iops_log=v\nwrite_lat_log=v\n")
    fj, sj, logs, _ = both_logged(tmp_path, body)
    for k in ("iops", "lat"):
        fio, ours = _rows(tmp_path / f"v_{k}.1.log"), _rows(logs / f"v_{k}.1.log")
        assert ours and fio
        assert {tuple(r[2:]) for r in ours} == {tuple(r[2:]) for r in fio} == {("0", "0", "0", "0")}, k
    # averaged: the IOPS statistics are the intervals' (fio's 2 000 a second), not per I/O
    assert sj["read"]["iops_max"] > 1 and fj["read"]["iops_max"] > 1


def test_log_compression_samples_each_io_and_logs_each_windows_mean_as_fio(tmp_path):
    """fio's log_compression makes the bandwidth and IOPS logs per-I/O ones (iolog.h
    per_unit_log): every I/O a sample of the JSON's statistics, while each log keeps the mean
    of every log_avg_msec window, closed by the first I/O at or past its end or one ms short
    of it (stat.c's LOG_MSEC_SLACK): 256 I/Os at 1000 IOPS, 100 ms windows."""
    body = ("[r]\nrw=read\nbs=4k\nsize=1m\nrate_iops=1000\nwrite_bw_log=r\nwrite_iops_log=r\n"
            "log_avg_msec=100\nlog_compression=1M\n")
    fj, sj, logs, _ = both_logged(tmp_path, body)
    for j in (fj, sj):
        r = j["read"]
        assert r["total_ios"] == r["bw_samples"] == r["iops_samples"] == 256, r
        assert r["iops_min"] == r["iops_max"] == 1
    rows = {}
    for who, d in (("fio", tmp_path), ("ssdlab", logs)):
        for kind in ("bw", "iops"):
            lines = (d / f"r_{kind}.1.log").read_text().splitlines()
            rows[who, kind] = [[int(x) for x in ln.split(",")] for ln in lines]
    assert [r[0] for r in rows["ssdlab", "iops"]] == [99, 100, 199, 200, 255]
    assert [r[0] for r in rows["ssdlab", "bw"]] == [99, 100, 199, 200, 255]
    for kind in ("bw", "iops"):
        # fio's windows are in wall time: at least the run's 2.56 windows of 100 ms, more when
        # fio is held back (a loaded host wrote 8 rows, 4 of them at 99 ms), in time order
        times = [r[0] for r in rows["fio", kind]]
        assert len(times) >= 3 and times == sorted(times), rows["fio", kind]
        assert all(r[1] == 1 for r in rows["fio", "iops"] + rows["ssdlab", "iops"])
        assert all(r[2:] == [0, 0, 0] for r in rows["fio", kind] + rows["ssdlab", kind])
