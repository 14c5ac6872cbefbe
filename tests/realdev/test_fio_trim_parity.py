"""Trims against real fio on a loop device (which discards them): `ssdlab run fio` on a
simulated drive issues the same trims, writes and bytes per direction for rw=trim,
randtrim, trimwrite and randtrimwrite, reports fio's JSON keys (and ssdlab's own few), and
records a submission latency for a trim only where fio does (libaio trims synchronously)."""

from __future__ import annotations

import json
import subprocess

import pytest
from typer.testing import CliRunner

from loopdevs import MIB, REASON, loops  # noqa: F401  (loops: a fixture)

pytestmark = pytest.mark.realdev
if REASON:
    pytestmark = [pytest.mark.realdev, pytest.mark.skip(reason=REASON)]

OWN = {"jobs", "read.unwritten_ios"}  # ssdlab's additions to fio's job object


def _keys(x: dict, prefix: str = "") -> set[str]:
    out = set()
    for k, v in x.items():
        out.add(prefix + k)
        if isinstance(v, dict) and k in ("read", "write", "trim", "slat_ns", "clat_ns", "lat_ns"):
            out |= _keys(v, prefix + k + ".")
    return out


def _ssdlab(tmp_path, body: str) -> dict:
    pytest.importorskip("ssdlab._sim")
    from ssdlab.cli import app

    f = tmp_path / "sim.fio"
    f.write_text(body)
    r = CliRunner().invoke(app, ["run", "fio", str(f), "--drive", "sim:tlc-256", "--set", "user_capacity_gb=8",
                                 "--db", str(tmp_path / "r.sqlite"), "--output-format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["jobs"][0]


@pytest.mark.parametrize("engine", ["psync", "libaio"])
@pytest.mark.parametrize("rw,bs", [("trim", "64k"), ("randtrim", "4k"), ("trimwrite", "16k"),
                                   ("randtrimwrite", "16k")])
def test_trims_as_fio_issues_them_on_a_loop_device(loops, tmp_path, engine, rw, bs):  # noqa: F811
    dev, _ = loops.make(64 * MIB)
    body = f"[a]\nioengine={engine}\nrw={rw}\nbs={bs}\nsize=16m\niodepth=8\n"
    (tmp_path / "dev.fio").write_text(body + f"filename={dev}\n")
    r = subprocess.run(["fio", "--output-format=json", "dev.fio"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    fj = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
    sj = _ssdlab(tmp_path, body)
    for d in ("read", "write", "trim"):
        assert (sj[d]["total_ios"], sj[d]["io_bytes"]) == (fj[d]["total_ios"], fj[d]["io_bytes"]), d
        for lat in ("slat_ns", "clat_ns", "lat_ns"):
            assert sj[d][lat]["N"] == fj[d][lat]["N"], (d, lat)
    assert fj["trim"]["io_bytes"] == 16 * MIB and fj["trim"]["slat_ns"]["N"] == 0
    assert _keys(sj) - OWN == _keys(fj)
