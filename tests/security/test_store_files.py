"""Files around the results store: the pending-results file a run writes when the store
cannot take its results (never through a planted link, never over someone's file),
`results import` of a malformed pending file (one line naming the file and the field,
exit 2, nothing stored), and a damaged store refused by `run` with the same full line,
recovery command included, as the read commands give."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbdserve import cli, one_line_exit_2
from ssdlab import pending
from ssdlab.pending import Pending, import_file, phase_doc
from ssdlab.phase import Phase
from ssdlab.store import Store, StoreError
from ssdlab.targets.base import PhaseResult

STAMP = "20260101-000000"


def a_pending(store_path: Path) -> Pending:
    p = Pending(store_path, {"id": 1, "test": "fill", "created": "2026-01-01T00:00:00+00:00",
                             "args": {"seconds": 3}, "testbed": None,
                             "engine_version": "x", "status": "failed", "error": "disk full"})
    d = p.drive(0, "sim:sn520-128", {"kind": "sim", "model": "m", "capacity": 10**9}, 1)
    res = PhaseResult(phase=Phase(kind="io", name="fill", stop_bytes=10**9),
                      series={"t_s": np.array([1.0, 2.0]), "mbps": np.array([500.0, math.nan])},
                      segments={"gb": np.array([1.0]), "mbps": np.array([480.0])},
                      latency={"edges_us": np.array([1.0, 2.0]), "counts": np.array([3.0, 4.0]), "p99_us": 9.5},
                      totals={"write_bytes": 10**9})
    d["phases"].append(phase_doc(1, res, "complete"))
    d.update(metrics={"avg_mbps": 490.0, "note": "x"}, status="failed")
    return p


def test_a_pending_file_never_follows_a_planted_link(tmp_path, monkeypatch):
    """The fallback place is a shared directory (/tmp): links planted at the names a run
    would use point at a root-only file, which stays untouched."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "secret"
    victim.write_text("root only\n")
    monkeypatch.setattr(pending.tempfile, "tempdir", str(shared))
    monkeypatch.setattr(time, "strftime", lambda *a: STAMP)
    name = f"r.sqlite.run1-{STAMP}.pending.json"
    for planted in (shared / name, shared / f"{name}.tmp"):
        planted.symlink_to(victim)
    p = a_pending(tmp_path / "gone" / "r.sqlite")  # the store's directory cannot take it
    f = p.save()
    assert f.parent == shared and f.name != name and not f.is_symlink()
    assert stat.S_IMODE(f.stat().st_mode) == 0o600 and f.stat().st_uid == os.geteuid()
    assert json.loads(f.read_text())["format"] == pending.FORMAT
    p.drive(0)["status"] = "complete"
    assert p.save() == f and json.loads(f.read_text())["drives"]["0"]["status"] == "complete"
    assert victim.read_text() == "root only\n"
    assert (shared / name).is_symlink() and (shared / f"{name}.tmp").is_symlink()
    assert sorted(x.name for x in shared.iterdir()) == sorted([name, f"{name}.tmp", f.name])


def test_a_pending_file_is_imported_whole(tmp_path):
    f = a_pending(tmp_path / "r.sqlite").save()
    store = Store(tmp_path / "other.sqlite")
    run_id, n = import_file(store, f)
    assert n == 1
    run = store.run(run_id)
    assert run["status"] == "failed" and run["error"] == "disk full"
    ph = store.phases(run["drives"][0]["id"])[0]
    assert ph["series"]["t_s"].tolist() == [1.0, 2.0] and math.isnan(ph["series"]["mbps"][1])
    assert run["drives"][0]["metrics"]["avg_mbps"] == 490.0


def a_finished_run(store: Store) -> int:
    """A complete run with a phase and a metric, as `ssdlab run` leaves it."""
    rid = store.create_run("fill", {"seconds": 3})
    rd = store.add_drive(rid, 0, "sim:sn520-128", {"kind": "sim", "model": "m", "capacity": 10**9})
    res = PhaseResult(phase=Phase(kind="io", name="fill", stop_bytes=10**9), series={"mbps": np.array([500.0])},
                      segments={}, latency={}, totals={"write_bytes": 10**9})
    store.add_phase(rd, 1, res)
    store.set_metrics(rd, {"avg_mbps": 500.0})
    store.finish_drive(rd, "complete")
    store.finish_run(rid, "complete")
    return rid


def forged(tmp_path: Path, store: Store, rid: int, token: str | None) -> Path:
    """A pending file naming run `rid` by its id, test and creation second (what anyone who
    can read the store knows), with `token`, saying the run failed with nothing measured."""
    p = a_pending(tmp_path / "r.sqlite")
    p.doc["run"].update(id=rid, test="fill", created=store.created(rid), token=token)
    p.drive(0).update(run_drive_id=store.run(rid)["drives"][0]["id"], metrics={"avg_mbps": 0.0}, status="failed")
    return p.save()


def test_an_import_never_rewrites_a_finished_run(tmp_path):
    store = Store(tmp_path / "into.sqlite")
    rid = a_finished_run(store)
    before = store.run(rid)
    for token in (None, "0" * 32, store.token(rid)):
        f = forged(tmp_path, store, rid, token)
        new, n = import_file(store, f)
        if token == store.token(rid):  # its own file (imported again): nothing to add, nothing changed
            assert (new, n) == (rid, 0)
        else:  # not the run's own file: a run of its own
            assert new != rid and store.run(new)["status"] == "failed"
        f.unlink()
    assert store.run(rid) == before and store.run(rid)["drives"][0]["metrics"]["avg_mbps"] == 500.0


def test_an_import_completes_the_run_it_belongs_to(tmp_path):
    store = Store(tmp_path / "into.sqlite")
    rid = store.create_run("fill", {"seconds": 3})  # its process lost the store, then ended:
    with store.tx() as c:  # (this process made it, so it reads as a process since replaced)
        c.execute("UPDATE runs SET pid_start = 'ended' WHERE id = ?", (rid,))
    store.add_drive(rid, 0, "sim:sn520-128", {"kind": "sim", "model": "m", "capacity": 10**9})
    f = forged(tmp_path, store, rid, store.token(rid))
    assert import_file(store, f) == (rid, 1)
    run = store.run(rid)
    assert run["status"] == "failed" and run["drives"][0]["metrics"]["avg_mbps"] == 0.0
    assert "token" not in run and store.token(rid) not in json.dumps(store.runs())  # never shown
    assert len(store.runs()) == 1


def test_import_reads_only_a_regular_file_of_bounded_size(tmp_path):
    db = tmp_path / "into.sqlite"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for f, words in (("/dev/zero", "not a regular file"), (str(fifo), "not a regular file")):
        t0 = time.monotonic()
        r = cli("results", "import", f, "--db", str(db), check=False, timeout=60)
        one_line_exit_2(r, f, words)
        assert time.monotonic() - t0 < 30
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(pending.MAX_BYTES + 1)  # sparse
    one_line_exit_2(cli("results", "import", str(big), "--db", str(db), check=False, timeout=60), "more than")


MALFORMED = [
    (lambda d: d.update(run=[1]), ["run: must be an object"]),  # was AttributeError
    (lambda d: d.pop("drives"), ["drives: must be an object"]),  # was KeyError
    (lambda d: d["run"].update(id=2**64), ["run.id: must be an integer"]),  # was OverflowError
    (lambda d: d["drives"]["0"].update(position="0"), ["drives.0.position"]),
    (lambda d: d["drives"]["0"]["phases"][0].update(seq=None), ["drives.0.phases[0].seq"]),
    (lambda d: d["drives"]["0"]["phases"][0]["series"].update(t_s=[[1]]), ["series.t_s"]),
    (lambda d: d["drives"]["0"]["phases"][0]["phase"].update(kind="dance"), ["phases[0].phase: not a valid phase"]),
    (lambda d: d["drives"]["0"].update(metrics={"m": 10**30}), ["drives.0.metrics.m: integer"]),
    (lambda d: d["run"].update(status="done"), ["run.status: must be one of"]),
    (lambda d: d["drives"]["0"]["phases"][0].update(status="done"), ["phases[0].status: must be one of"]),
    (lambda d: d["run"].update(token=["x"]), ["run.token: must be text"]),
]


def malformed(tmp_path: Path, change) -> Path:
    f = a_pending(tmp_path / "r.sqlite").save()
    doc = json.loads(f.read_text())
    change(doc)
    f.write_text(json.dumps(doc))
    return f


@pytest.mark.parametrize("change, words", MALFORMED[:3])
def test_a_malformed_pending_file_is_one_line_exit_2_and_nothing_is_stored(tmp_path, change, words):
    f = malformed(tmp_path, change)
    db = tmp_path / "into.sqlite"
    r = cli("results", "import", str(f), "--db", str(db), check=False, timeout=120)
    one_line_exit_2(r, str(f), *words)
    assert Store(db).runs() == []


@pytest.mark.parametrize("change, words", MALFORMED)
def test_a_malformed_pending_file_names_the_field(tmp_path, change, words):
    store = Store(tmp_path / "into.sqlite")
    with pytest.raises(StoreError) as e:
        import_file(store, malformed(tmp_path, change))
    assert all(w in str(e.value) for w in words) and "\n" not in str(e.value), str(e.value)
    assert store.runs() == []


def _junk():
    return st.recursive(
        st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
        | st.floats(allow_nan=False) | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=8)


def test_fuzzed_pending_files_import_or_are_refused_with_one_line(tmp_path):
    f = a_pending(tmp_path / "r.sqlite").save()
    good = f.read_text()
    store = Store(tmp_path / "into.sqlite")

    @settings(max_examples=200, derandomize=True)
    @given(data=st.data())
    def check(data):
        doc = json.loads(good)
        # walk to a random place in the document and replace (or delete) what is there
        node, key, parent = doc, None, None
        while True:
            keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
            if not keys or (key is not None and data.draw(st.booleans())):
                break
            key = data.draw(st.sampled_from(keys))
            parent, node = node, node[key]
        if parent is None:
            doc = data.draw(_junk())
        elif isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = data.draw(_junk())
        f.write_text(json.dumps(doc))
        before = len(store.runs())
        try:
            import_file(store, f)
        except StoreError as e:
            msg = str(e)
            assert str(f) in msg and "\n" not in msg, msg
            assert len(store.runs()) == before  # checked before anything was written

    check()


def damaged_store(tmp_path: Path) -> Path:
    """A store SQLite opens but whose `phases` table has a broken cell pointer: quick_check
    reports it on several lines, or SQLite calls the file malformed."""
    db = tmp_path / "damaged.sqlite"
    s = Store(db)
    rd = s.add_drive(s.create_run("fill", {}), 0, "sim:x", {})
    s.add_phase(rd, 1, PhaseResult(phase=Phase(kind="idle", seconds=1), series={}, segments={},
                                   latency={}, totals={}))
    s.close()
    # out of WAL mode: every page is in the main file, so the page changed below is the
    # table's (a checkpoint that a busy machine left unfinished pointed elsewhere)
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    c.close()
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name='phases'").fetchone()[0]
    size = c.execute("PRAGMA page_size").fetchone()[0]
    c.close()
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * size + 8)  # a leaf page's first cell pointer
        fh.write(b"\xff\xff")
    c = sqlite3.connect(db)
    try:  # quick_check lists the damage on several lines, or SQLite trips over the page first
        report = c.execute("PRAGMA quick_check").fetchone()[0]
        assert report.startswith("*** in database main ***\n"), report
    except sqlite3.DatabaseError as e:
        assert "malformed" in str(e)
    finally:
        c.close()
    return db


def test_a_multi_line_report_of_damage_is_one_line_with_the_recovery():
    from ssdlab.store_damage import damage_hint

    line = damage_hint(Path("s.sqlite"), "*** in database main ***\nOn tree page 4 cell 0: bad\n")
    assert "\n" not in line and "*** in database main ***; On tree page 4 cell 0: bad" in line
    assert line.endswith("`sqlite3 s.sqlite .recover | sqlite3 recovered.sqlite` and use --db recovered.sqlite")


@pytest.mark.serial
def test_run_on_a_damaged_store_gives_the_full_line_with_the_recovery(tmp_path):
    db = damaged_store(tmp_path)
    recover = f"recover what is left with `sqlite3 {db} .recover | sqlite3 recovered.sqlite` and use --db recovered.sqlite"
    r = cli("run", "fill", "--drive", "sim:sn520-128", "--db", str(db), check=False, timeout=120)
    # SQLite reports the damage as quick_check's lines or, when it trips over the page
    # first, as "malformed": either way one line with the recovery command
    err = one_line_exit_2(r, f"results store {db} is damaged (", recover)
    assert err.endswith(recover)
    read = cli("results", "show", "1", "--db", str(db), check=False, timeout=120)
    one_line_exit_2(read, f"results store {db} is damaged (", recover)


def test_a_new_store_is_readable_by_others_as_documented_and_a_private_one_stays_private(tmp_path):
    """docs/results.md: a new store is 0644 less the umask (a store made by `sudo ssdlab run`
    is read by its user, read-only); its -wal and -shm take the store's mode, so a store made
    private (chmod 600) keeps them private."""
    old = os.umask(0o022)
    try:
        db = tmp_path / "r.sqlite"
        s = Store(db)
        s.create_run("fill", {})
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.glob("r.sqlite*")}
        assert modes == {"r.sqlite": 0o644, "r.sqlite-wal": 0o644, "r.sqlite-shm": 0o644}
        s.close()
        assert [p.name for p in tmp_path.glob("r.sqlite*")] == ["r.sqlite"]
        db.chmod(0o600)
        s = Store(db)
        s.create_run("fill", {})
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.glob("r.sqlite*")}
        assert modes == {"r.sqlite": 0o600, "r.sqlite-wal": 0o600, "r.sqlite-shm": 0o600}
        assert os.path.getsize(f"{db}-wal") == 0  # emptied after the write (store_wal.py)
        s.close()
    finally:
        os.umask(old)
