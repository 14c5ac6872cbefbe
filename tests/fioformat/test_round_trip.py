"""fio's formats as one package: what its writers write, its readers read back (the log
files' names and columns, the histogram log's bins, the iolog), and each module imports on
its own, first, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ssdlab.fioformat import iolog, logs, plat
from ssdlab.traces.stream import FLUSH, READ, TRIM, WRITE, IoStream

MODULES = ["fields", "iolog", "jobfile", "json_read", "json_write", "logs", "plat", "text_output"]


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports_first(name):
    r = subprocess.run([sys.executable, "-c", f"import ssdlab.fioformat.{name}; import ssdlab.traces"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_written_logs_read_back(tmp_path):
    opts = {"write_bw_log": "j", "write_iops_log": "j", "write_hist_log": "j", "log_hist_coarseness": "3"}
    specs = [{"name": "a", "settings": opts}, {"name": "b", "settings": opts}]
    log = {"t_ms": [500, 500, 1000, 1000], "dir": [0, 1, 0, 1], "kind": [logs.KIND_BW, logs.KIND_IOPS] * 2,
           "value": [4000, 7, 4100, 9]}
    hist = [(100, 1, 4096, [130, 900], [2, 5]), (200, 0, 4096, [PLAT_TOP := plat.PLAT_NR - 1], [1])]
    raw = [{"log": log, "hist_log": hist}, {"log": log, "hist_log": []}]
    made = logs.write_logs(specs, raw, {}, 500, tmp_path)
    assert {p.name for p in made} == {logs.log_name("j", k, n) for k in ("bw", "iops", "clat_hist") for n in (1, 2)}
    bw = logs.job_logs(tmp_path / "j", "bw")
    assert [p.name for p in bw] == ["j_bw.1.log", "j_bw.2.log"]  # the reader finds each job's, in order
    got = logs.read_log(bw[0])
    assert got.tolist() == [[500, 4000, 0, 0], [1000, 4100, 0, 0]]
    assert logs.read_log(logs.job_logs(tmp_path / "j", "iops")[0])[:, 1].tolist() == [7, 9]
    (t, d, bs, counts, mx), = logs.read_hist_logs(tmp_path / "j")  # the second job's is empty
    assert t.tolist() == [100, 200] and d.tolist() == [1, 0] and bs.tolist() == [4096, 4096]
    assert counts.tolist() == [7, 1]  # 232 columns of 8 bins each, read back as the writer summed them
    assert mx[0] == plat.plat_idx_to_val(900 // 8 * 8 + 7) and mx[1] == plat.plat_idx_to_val(PLAT_TOP)


def test_iolog_written_reads_back():
    s = IoStream.from_lists([0, 1500, 3000, 7000], [WRITE, READ, TRIM, FLUSH], [0, 4096, 8192, 0],
                            [4096, 8192, 65536, 0], format="test", has_time=True)
    text = list(iolog.v3_lines(s.time_ns, s, "trace"))
    assert text[0] == "fio version 3 iolog\n"
    back = iolog.parse(enumerate("".join(text).splitlines(), 1), "x.iolog")
    assert back.format == "fio-v3" and back.op.tolist() == s.op.tolist()
    assert back.time_ns.tolist() == [0, 1000, 3000, 7000]  # whole microseconds, as fio's log keeps them
    assert back.offset_bytes.tolist() == s.offset_bytes.tolist()
    assert back.length_bytes.tolist() == s.length_bytes.tolist()
    assert np.array_equal(back.op, np.array([WRITE, READ, TRIM, FLUSH], dtype=np.uint8))


def test_the_json_written_for_a_simulated_run_reads_back(tmp_path):
    """`run fio --output-format json+` on a simulated drive, read by the reader of a real
    run's JSON: the same bytes and I/Os, and fio's percentiles off the same bins."""

    from typer.testing import CliRunner

    from ssdlab.cli import app
    from ssdlab.fioformat import json_read

    pytest.importorskip("ssdlab._sim")
    f = tmp_path / "job.fio"
    f.write_text("[a]\nrw=randrw\nbs=4k\nsize=8m\niodepth=4\n")
    r = CliRunner().invoke(app, ["run", "fio", str(f), "--drive", "sim:tlc-256", "--set", "user_capacity_gb=8",
                                 "--db", str(tmp_path / "r.sqlite"), "--output-format", "json+"])
    assert r.exit_code == 0, r.output
    text = "note: a line before the report\n" + r.stdout  # as fio's stdout may hold
    doc = json_read.final_report(text)
    (job,) = doc["jobs"]
    tot = json_read.totals_from_report(doc)
    assert tot["read_bytes"] == job["read"]["io_bytes"] > 0 and tot["write_bytes"] == job["write"]["io_bytes"] > 0
    assert tot["ios"] == job["read"]["total_ios"] + job["write"]["total_ios"]
    assert tot["read_bytes"] + tot["write_bytes"] == 8 << 20
    lat = json_read.latency_from_report(doc)
    assert lat["counts"].sum() == tot["ios"]  # every I/O in the bins the writer wrote
    one = json_read.merged_bins({"jobs": [{"write": job["write"]}]})
    want = float(job["write"]["clat_ns"]["percentile"]["99.000000"])
    assert json_read.percentile_from_bins(one, 99.0) == want  # fio's rule, both ways
