"""The drive's volatile write cache: which tool switches it, what its answers say, and that
the fio target sets it, reads it back and puts back what it found (a stand-in nvme-cli on
PATH keeps the controller's feature 06h in a file)."""

from __future__ import annotations

import math
import os
import stat

import pytest
from ssdlab import phase as ph
from ssdlab.targets.fio import write_cache as wc

NVME = """#!/bin/sh
# a stand-in for nvme-cli: feature 6 of one controller with room for one namespace, kept in $STATE
case "$1" in
  id-ctrl) echo '{"nn":1,"oacs":0,"fna":0}';;
  get-feature) printf 'get-feature:0x06 (Volatile Write Cache), Current value:0x%08x\\n' "$(cat "$STATE")";;
  set-feature) shift; while [ "$1" != "-v" ]; do shift; done; echo "$2" > "$STATE"
               echo "set-feature:0x06 (Volatile Write Cache), value:0x0000000$2";;
esac
"""


@pytest.fixture
def fake_nvme(tmp_path, monkeypatch):
    tool = tmp_path / "bin" / "nvme"
    tool.parent.mkdir()
    tool.write_text(NVME)
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "feature6"
    state.write_text("1\n")
    monkeypatch.setenv("PATH", f"{tool.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("STATE", str(state))
    return state


@pytest.mark.parametrize("tool, text, want", [
    ("nvme", "get-feature:0x06 (Volatile Write Cache), Current value:0x00000001", True),
    ("nvme", "get-feature:0x6 (Volatile Write Cache), Current value:00000000", False),
    ("nvme", "NVMe status: Invalid Field in Command(0x2)", None),
    ("hdparm", "\n/dev/sda:\n write-caching =  1 (on)\n", True),
    ("hdparm", "\n/dev/sda:\n write-caching =  0 (off)\n", False),
    ("hdparm", "\n/dev/sda:\n write-caching = not supported\n", None),
])
def test_the_tools_answers(tool, text, want):
    assert wc.parse(tool, text) is want


def test_each_kind_of_drive_has_its_route(fake_nvme):
    assert wc.route("/dev/nvme0n1", "nvme").set_cmd(False) == [
        "nvme", "set-feature", "/dev/nvme0n1", "-f", "6", "-n", "0xffffffff", "-v", "0"]
    for kind in ("loop", "nbd", "file", "vd"):
        r = wc.route("/dev/x", kind)
        assert not r.tool and "no volatile write cache of its own" in r.why
        assert wc.switch(r, True) == (None, r.why)


def test_switched_read_back_and_put_back(fake_nvme):
    r = wc.route("/dev/nvme0n1", "nvme")
    assert wc.read(r) is True
    assert wc.switch(r, False) == (False, "")
    assert fake_nvme.read_text().strip() == "0"
    assert wc.switch(r, True) == (True, "")


def test_a_write_cache_phase_says_what_it_sets():
    p = ph.write_cache(False)
    assert p.kind == "write_cache" and p.write_cache is False
    with pytest.raises(ValueError, match="write_cache phase needs write_cache"):
        ph.Phase(kind="write_cache")
    with pytest.raises(ValueError, match="only a write_cache phase"):
        ph.Phase(kind="idle", seconds=1, write_cache=True)


def test_a_simulated_drive_keeps_its_buffer_on():
    from ssdlab.targets import open_target

    with open_target("sim:sn520-128") as t:
        r = t.run(ph.write_cache(False))
    assert r.totals == {"write_cache_on": 1.0, "write_cache_set": 0.0}


def test_a_file_target_records_that_nothing_was_switched(tmp_path):
    from ssdlab.targets import open_target

    f = tmp_path / "d.bin"
    with open_target(f"file:{f}:1M", destroy_data=str(f)) as t:
        r = t.run(ph.write_cache(True))
    assert r.totals["write_cache_set"] == 0.0 and math.isnan(r.totals["write_cache_on"])
