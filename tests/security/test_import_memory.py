"""`ssdlab results import FILE` refuses, before parsing it, a pending file whose reading
would take more memory than the machine has available: a file of short numbers takes some
15 times its size (a crafted one of 48 MB took 710 MB; of the 1 GiB allowed, 15 GB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab import pending
from ssdlab.store import Store, StoreError


def _crafted(path: Path, values: int) -> Path:
    path.write_text('{"format":"ssdlab-pending/1","run":{"test":"quick","args":{}},"drives":{"0":{"position":0,'
                    '"phases":[{"seq":1,"status":"complete","phase":{"kind":"idle","seconds":1},'
                    '"series":{"t_s":[' + ",".join(["0.5"] * values) + "]}}]}}}")
    return path


def test_a_file_that_would_not_fit_in_memory_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    f = _crafted(tmp_path / "big.pending.json", 1_000_000)  # 4 MB of text, some 60 MB read
    monkeypatch.setattr(pending, "available_bytes", lambda: 40e6)
    parsed = []
    monkeypatch.setattr(pending.json, "loads", lambda *a, **k: parsed.append(1) or {})
    with pytest.raises(StoreError, match=r"big.pending.json: importing its 4 MB would take about 0.06 GB of "
                                         r"memory, more than this machine has available \(0.04 GB\)"):
        pending.read(f)
    assert not parsed


def test_a_file_that_fits_is_imported(tmp_path):
    f = _crafted(tmp_path / "small.pending.json", 1000)
    store = Store(tmp_path / "r.sqlite")
    run_id, n = pending.import_file(store, f)
    assert n == 1
