"""Parsing fio's output and logs, against outputs recorded from real fio runs
(tests/data/fio/*/, re-recorded by tests/data/fio/record.py) and awkward variants."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ssdlab.fioformat import json_read as fo
from ssdlab.fioformat import logs as flogs
from ssdlab.fioformat import plat

DATA = Path(__file__).parents[1] / "data" / "fio"


def stdout(name: str) -> str:
    return (DATA / name / "stdout.txt").read_text()


def test_several_status_objects_in_one_stream():
    objs, noise = fo.parse_stream(stdout("randwrite_2jobs"))
    reps = fo.reports(objs)
    assert len(reps) >= 3  # 1 s status objects plus the final report
    assert noise == []
    written = [fo.report_bytes(r)["write"] for r in reps]
    assert written == sorted(written) and written[0] > 0  # cumulative
    final = fo.final_report(stdout("randwrite_2jobs"))
    assert final is reps[-1] or final == reps[-1]


def test_warnings_before_json_are_kept_as_noise():
    text = stdout("warnings")
    assert text.startswith("note:")
    objs, noise = fo.parse_stream(text)
    assert any("queue depth will be capped" in x for x in noise)
    rep = fo.final_report(text)
    assert fo.report_ios(rep)["read"] > 0


def test_brace_in_warning_line_and_garbage_between_objects():
    one = stdout("short_fill")
    text = "fio: warning {not json} here\n" + one + "\nfio: bad line }\n{ broken\n" + one
    objs, noise = fo.parse_stream(text)
    assert len(fo.reports(objs)) == 2
    assert any("not json" in x for x in noise)


@pytest.mark.parametrize("chunk", [1, 7, 100, 4096])
def test_stream_fed_in_chunks_matches_whole(chunk):
    text = "note: something\n" + stdout("randwrite_2jobs")
    s = fo.JsonStream()
    got = []
    for i in range(0, len(text), chunk):
        got += s.feed(text[i:i + chunk])
    assert s.close() == ["note: something"]
    whole, _ = fo.parse_stream(text)
    assert len(got) == len(whole)
    assert [o["timestamp_ms"] for o in got] == [o["timestamp_ms"] for o in whole]


def test_strings_with_braces_and_escapes():
    obj = {"jobs": [], "x": "a } \" { b", "y": ["}", "{"]}
    text = "pre\n" + json.dumps(obj, indent=2) + "\n"
    objs, noise = fo.parse_stream(text)
    assert objs == [obj] and noise == ["pre"]


def test_torn_last_object_is_not_a_report():
    text = stdout("randwrite_2jobs")
    cut = text[: len(text) - 500]
    objs, noise = fo.parse_stream(cut)
    assert len(fo.reports(objs)) == len(fo.reports(fo.parse_stream(text)[0])) - 1
    assert noise  # the torn tail


def test_no_report_raises_with_the_last_message():
    with pytest.raises(fo.FioOutputError, match="No such file"):
        fo.final_report("fio: open: No such file or directory\n")


def test_totals_and_latency_from_final_report():
    rep = fo.final_report(stdout("randwrite_2jobs"))
    tot = fo.totals_from_report(rep)
    job = rep["jobs"][0]
    assert tot["write_bytes"] == job["write"]["io_bytes"]
    assert tot["ios"] == job["write"]["total_ios"]
    assert 2.3 < tot["duration_s"] < 2.8
    assert tot["iops"] == pytest.approx(job["write"]["iops"], rel=0.02)
    lat = fo.latency_from_report(rep)
    # single direction: percentiles from the bins equal fio's own
    pct = job["write"]["lat_ns"]["percentile"]
    assert lat["p99_us"] == pytest.approx(pct["99.000000"] / 1000)
    assert lat["p50_us"] == pytest.approx(pct["50.000000"] / 1000)
    assert lat["min_us"] <= lat["p50_us"] <= lat["p99_99_us"] <= lat["max_us"]
    assert lat["mean_us"] == pytest.approx(job["write"]["lat_ns"]["mean"] / 1000)
    assert lat["counts"].sum() == tot["ios"]
    assert np.all(np.diff(lat["edges_us"]) > 0)


def test_percentiles_never_pass_the_slowest_io():
    # fio's bucket of the slowest I/O (232.1 us) has the value 233.472 us: fio prints that
    # as its 99.99th percentile; ssdlab stops at the maximum
    rep = fo.final_report(stdout("randwrite_2jobs"))
    w = rep["jobs"][0]["write"]
    for j in rep["jobs"][1:]:
        j["write"]["total_ios"] = 0
    w["lat_ns"].update(N=10_000, min=1_000, max=232_100, mean=2_000.0,
                       bins={"1000": 9_990, "233472": 10})
    lat = fo.latency_from_report(rep)
    assert lat["p99_99_us"] == pytest.approx(232.1) and lat["p50_us"] == pytest.approx(1.0)
    assert lat["hist_edges"] == "fio"


def test_mixed_read_write_latency_merges_directions():
    rep = fo.final_report(stdout("randrw70"))
    tot = fo.totals_from_report(rep)
    assert tot["read_ios"] > 2 * tot["write_ios"] > 0
    lat = fo.latency_from_report(rep)
    assert lat["counts"].sum() == tot["ios"]
    j = rep["jobs"][0]
    r, w = j["read"]["lat_ns"], j["write"]["lat_ns"]
    mean = (r["mean"] * r["N"] + w["mean"] * w["N"]) / (r["N"] + w["N"]) / 1000
    assert lat["mean_us"] == pytest.approx(mean)
    lo = min(r["percentile"]["50.000000"], w["percentile"]["50.000000"]) / 1000
    hi = max(r["percentile"]["50.000000"], w["percentile"]["50.000000"]) / 1000
    assert lo <= lat["p50_us"] <= hi


def test_series_from_logs_adds_up_to_the_report():
    d = DATA / "randwrite_2jobs"
    rep = fo.final_report(stdout("randwrite_2jobs"))
    tot = fo.totals_from_report(rep)
    s = flogs.series_from_logs(d / "p", 1000.0, tot)
    assert set(flogs.SERIES_KEYS) <= set(s)
    assert len(s["t_s"]) == 3  # 1 s, 2 s and the partial last 0.5 s
    assert s["t_s"][-1] == pytest.approx(tot["duration_s"], abs=0.01)
    widths = np.diff(np.concatenate([[0.0], s["t_s"]]))
    assert float(np.sum(s["iops"] * widths)) == pytest.approx(tot["ios"], rel=0.02)
    assert float(np.sum(s["write_mbps"] * widths)) * 1e6 == pytest.approx(tot["write_bytes"], rel=0.02)
    assert np.all(s["read_mbps"] == 0)
    assert np.all(s["lat_mean_us"] > 0)
    assert np.all(s["lat_max_us"] >= s["lat_mean_us"])


def test_series_without_totals_uses_logs_only():
    s = flogs.series_from_logs(DATA / "randwrite_2jobs" / "p", 1000.0)
    assert len(s["t_s"]) >= 2 and s["t_s"][0] == pytest.approx(1.0, abs=0.01)


def test_empty_logs_give_one_row_from_totals():
    d = DATA / "short_fill"
    assert (d / "p_iops.1.log").read_text() == ""
    tot = fo.totals_from_report(fo.final_report(stdout("short_fill")))
    s = flogs.series_from_logs(d / "p", 1000.0, tot)
    assert len(s["t_s"]) == 1
    assert s["write_mbps"][0] == pytest.approx(tot["write_mbps"], rel=0.01)


def test_missing_logs_give_empty_series(tmp_path):
    s = flogs.series_from_logs(tmp_path / "nothing", 1000.0)
    assert all(len(v) == 0 for v in s.values())
    seg = flogs.segments_from_hist(tmp_path / "nothing", 10**9)
    assert all(len(v) == 0 for v in seg.values())


def test_torn_log_line_is_skipped(tmp_path):
    (tmp_path / "p_iops.1.log").write_text("1000, 500, 1, 0, 0\n2000, 600, 1, 0, 0\n3000, 7")
    (tmp_path / "p_bw.1.log").write_text("1000, 2000, 1, 0, 0\n2000, 2400, 1, 0, 0\n")
    arr = flogs.read_log(tmp_path / "p_iops.1.log")
    assert arr.shape == (2, 4)  # the torn "3000, 7" is dropped
    s = flogs.series_from_logs(tmp_path / "p", 1000.0)
    assert list(s["t_s"][:2]) == [1.0, 2.0]
    assert s["iops"][0] == 500 and s["write_mbps"][1] == pytest.approx(2400 * 1024 / 1e6)


def test_segments_from_hist_log():
    d = DATA / "randwrite_2jobs"
    tot = fo.totals_from_report(fo.final_report(stdout("randwrite_2jobs")))
    seg_bytes = 50 * 10**6
    seg = flogs.segments_from_hist(d / "p", seg_bytes, tot["write_bytes"], tot["duration_s"], 4096)
    n_full = int(tot["write_bytes"] // seg_bytes)
    assert len(seg["gb"]) in (n_full, n_full + 1)
    assert seg["gb"][0] == pytest.approx(0.05)
    assert seg["gb"][-1] == pytest.approx(tot["write_bytes"] / 1e9)
    assert np.all(np.diff(seg["t_s"]) > 0)
    assert seg["t_s"][-1] == pytest.approx(tot["duration_s"], abs=0.01)
    # the harmonic picture adds up: sum of segment times = run time
    times = np.diff(np.concatenate([[0.0], seg["t_s"]]))
    mb = np.diff(np.concatenate([[0.0], seg["gb"]])) * 1e3
    assert np.allclose(mb / times, seg["mbps"])


def test_hist_log_max_latency_bucket():
    h = flogs.read_hist_logs(DATA / "randwrite_2jobs" / "p")
    assert len(h) == 2  # one per job
    t, d, bs, cnt, mx = h[0]
    assert np.all(bs == 4096) and np.all(d == 1)
    assert np.all(np.diff(t) > 0) and cnt.sum() > 0
    assert np.all(mx[cnt > 0] > 0)


def test_plat_idx_to_val_matches_json_bins():
    # every json+ bin key is a value fio's plat_idx_to_val produces
    rep = fo.final_report(stdout("randwrite_2jobs"))
    keys = {int(k) for k in rep["jobs"][0]["write"]["lat_ns"]["bins"]}
    vals = {int(plat.plat_idx_to_val(i)) for i in range(plat.PLAT_NR)}
    assert keys <= vals


def test_interrupted_run_still_has_a_report_and_logs():
    text = stdout("interrupted")
    rep = fo.final_report(text)
    tot = fo.totals_from_report(rep)
    assert 1.0 < tot["duration_s"] < 3.0
    s = flogs.series_from_logs(DATA / "interrupted" / "p", 1000.0, tot)
    assert len(s["t_s"]) >= 1
    assert s["t_s"][-1] == pytest.approx(tot["duration_s"], abs=0.01)


def test_status_tracker_rates():
    objs, _ = fo.parse_stream(stdout("randwrite_2jobs"))
    reps = fo.reports(objs)
    t0 = reps[0]["timestamp_ms"] - 1000
    tr = fo.StatusTracker(t0)
    rows = [r for r in (tr.update(x) for x in reps) if r]
    assert len(rows) == len(reps) or len(rows) == len(reps) - 1
    tot = fo.totals_from_report(reps[-1])
    assert sum(r["host_write_bytes"] for r in rows) == tot["write_bytes"]
    assert all(r["iops"] >= 0 and not math.isnan(r["write_mbps"]) for r in rows)
    s = tr.series()
    assert set(flogs.SERIES_KEYS) <= set(s)


def test_hist_log_with_a_priority_column(tmp_path):
    # newer fio (log_prio) puts a priority column before the bins
    bins = [0] * 232
    bins[100] = 5
    line = ", ".join(map(str, [100, 1, 4096, 0] + bins))
    (tmp_path / "p_clat_hist.1.log").write_text(line + "\n" + line.replace("100, 1,", "200, 1,", 1) + "\n")
    h = flogs.read_hist_logs(tmp_path / "p")
    t, d, bs, cnt, mx = h[0]
    assert list(t) == [100, 200] and list(cnt) == [5, 5] and list(bs) == [4096, 4096]
    assert mx[0] == plat.plat_idx_to_val(101 * 8 - 1)
    assert flogs._hist_bins(1859) == 1856 and flogs._hist_bins(235) == 232 and flogs._hist_bins(50) == 0


# ---- 1 s logs: fio's drifting log timer, stalls and lost samples --------------------------
def _write_logs(d: Path, iops_t: list[float], lat_t: list[float], hist: list[tuple[float, int]],
                value: float = 1000.0) -> None:
    """A one-job randwrite's logs: iops/bw entries at `iops_t`, lat entries at `lat_t`, and
    histogram windows (time, completions) with coarseness 3 (232 bins)."""
    (d / "p_iops.1.log").write_text("".join(f"{t:.0f}, {value:.0f}, 1, 4096, 0\n" for t in iops_t))
    (d / "p_bw.1.log").write_text("".join(f"{t:.0f}, {value * 4:.0f}, 1, 4096, 0\n" for t in iops_t))
    (d / "p_lat.1.log").write_text("".join(f"{t:.0f}, 50000, 1, 4096, 0\n" for t in lat_t))
    rows = []
    for t, n in hist:
        bins = [0] * 232
        bins[100] = n
        rows.append(", ".join(str(x) for x in [int(t), 1, 4096, *bins]))
    (d / "p_clat_hist.1.log").write_text("\n".join(rows) + "\n")


def test_drifting_log_timer_neither_skips_nor_zeroes_a_second(tmp_path):
    """Recorded on a RAM-backed loop device: fio's iops/bw entries land later and later
    (17031 ms for the 17th second) while its latency log stays on the second. Placing
    entries by absolute time once put the 17th second's entry into second 18, and the
    latency log's entry at 17000 left second 17 with no IOPS: a 0-IOPS second that never
    happened, and every later second shifted by one."""
    iops_t = [1000, 2000, 3002, 4002, 5003, 6003, 7004, 8005, 9006, 10006, 11007, 12007,
              13008, 14009, 15010, 16010, 17031, 18031, 19032, 20033]
    lat_t = [1000 * k for k in range(1, 21)]
    _write_logs(tmp_path, iops_t, lat_t, [(100 * k, 100) for k in range(1, 201)])
    s = flogs.series_from_logs(tmp_path / "p", 1000.0)
    assert len(s["iops"]) == 20 and (s["iops"] == 1000.0).all()
    assert s["t_s"].tolist() == [float(k) for k in range(1, 21)]


def test_a_stalled_second_is_zero_and_a_lost_sample_is_missing(tmp_path):
    """fio logs nothing for a second in which no I/O completed. The histogram log tells
    a stall (no completion in that second: 0 IOPS, a real sample) from a log timer that
    ran late (completions went on: the sample is missing, NaN, never 0)."""
    iops_t = [1000, 2000, 4000, 5000, 7020, 8000]  # nothing for seconds 3 and 6
    lat_t = [1000, 2000, 4000, 5000, 6000, 7000, 8000]
    # completions every 100 ms, except during second 3 (2000..3000 ms): the drive stalled
    hist = [(100 * k, 100) for k in range(1, 81) if not 2000 < 100 * k <= 3000]
    _write_logs(tmp_path, iops_t, lat_t, hist)
    s = flogs.series_from_logs(tmp_path / "p", 1000.0)
    assert s["t_s"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    iops = s["iops"]
    assert iops[2] == 0.0 and s["write_mbps"][2] == 0.0  # second 3: stalled
    assert np.isnan(iops[5]) and np.isnan(s["mbps"][5])  # second 6: not logged, I/O went on
    assert np.isfinite(np.delete(iops, 5)).all()
    # without a histogram log nobody can tell: missing
    (tmp_path / "p_clat_hist.1.log").unlink()
    s = flogs.series_from_logs(tmp_path / "p", 1000.0)
    assert np.isnan(s["iops"][2]) and np.isnan(s["iops"][5])
