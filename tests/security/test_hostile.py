"""Bad input, as a new user or a hostile one gives it (docs/cli.md "Errors"):
each row is one command and the words its error must carry. Every one must end with exit
status 2 and exactly one line on stderr, `ssdlab: error: ...`, with nothing on stdout, no
traceback, and nothing run or stored. The commands go through the real entry point
(`App.__call__`: command-line mistakes included) in this process, and a few also in a
real process."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
from pathlib import Path

import clirun
import pytest
from mounts import tmpfs

from ssdlab.cli import app
from ssdlab.store import Store

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "quick", "--drive", "sim:sn520-128", "--repeat", "1"]

# (arguments, words the one-line error must contain); {tmp} is a scratch directory with
# a store {db} holding one complete run (id 1)
MATRIX = [
    # --- options out of range: checked before anything runs (F5, F6, F9a/b/f)
    (RUN + ["--seconds", "inf"], ["--seconds inf", "at most 1e+07"]),
    (RUN + ["--seconds", "nan"], ["--seconds nan"]),
    (RUN + ["--seconds", "1e8"], ["--seconds 1e+08"]),
    (RUN + ["--seconds", "-1"], ["--seconds -1"]),
    (RUN + ["--seconds", "0"], ["--seconds 0"]),
    (["run", "quick", "--drive", "sim:sn520-128", "--repeat", "0"], ["--repeat 0", "1 to 100"]),
    (["run", "quick", "--drive", "sim:sn520-128", "--repeat", "101"], ["--repeat 101"]),
    (["run", "quick", "--drive", "sim:sn520-128", "--repeat", "99999999999999999999"], ["--repeat 99999999999999999999"]),
    (["run", "quick", "--drive", "sim:sn520-128", "--repeat", "1e20"], ["Invalid value for '--repeat'"]),
    (RUN + ["--spare", "nan"], ["--spare nan"]),
    (RUN + ["--spare", "-5"], ["--spare -5"]),
    (RUN + ["--spare", "100"], ["--spare 100"]),
    (RUN + ["--seed", "-1"], ["--seed -1", "0 to 2**64-1"]),
    (RUN + ["--seed", str(2**64)], [f"--seed {2**64}"]),
    # --- profile values (F5) and sizes (F6)
    (RUN + ["--set", "host.command_overhead_us=inf"], ["host.command_overhead_us = inf", "[0.001, 1e7]"]),
    (RUN + ["--set", "host.command_overhead_us=1e300"], ["host.command_overhead_us = 1e300"]),
    (RUN + ["--set", "nand.native.prog_us=inf"], ["nand.native.prog_us = inf"]),
    (RUN + ["--set", "nand.native.prog_us=1e-300"], ["nand.native.prog_us = 1e-300", "[0.001, 1e7]"]),
    (RUN + ["--set", "nand.erase_us=inf"], ["nand.erase_us = inf"]),
    (RUN + ["--set", "nand.channel_mbps=inf"], ["nand.channel_mbps = inf"]),
    (RUN + ["--set", "nand.channel_mbps=nan"], ["nand.channel_mbps = NaN"]),
    (RUN + ["--set", "slc.dynamic_max_gb=1e300"], ["slc.dynamic_max_gb = 1e300"]),
    # a whole-number key given a huge float: named as given, not in its 301 digits
    (RUN + ["--set", "nand.channels=1e300"], ["nand.channels", "`1e+300`"]),
    (RUN + ["--set", "nand.channels=4\n[evil]\nx=1"], ["control characters", "one key=value per --set"]),
    (RUN + ["--set", "nand.channels"], ["bad --set 'nand.channels'"]),
    (RUN + ["--set", "nand.blocks_per_plane=2000000", "--set", "user_capacity_gb=100000"],
     ["nand geometry", "16 TiB"]),
    # --- drives
    (["run", "fill", "--drive", "sim:/etc/passwd"], ["unknown profile '/etc/passwd'"]),
    (["run", "fill", "--drive", "sim:../profiles/tlc-256"], ["unknown profile '../profiles/tlc-256'"]),
    (["run", "fill", "--drive", "{tmp}/latin1.toml"], ["not UTF-8 text", "byte 0xff"]),
    (["run", "fill", "--drive", "{tmp}/nested.toml"], ["profile file '{tmp}/nested.toml': nested too deeply"]),
    (["run", "fill", "--drive", "file:{tmp}/a\nb.bin:64M"], ["character '\\n' is not allowed"]),
    (["run", "fill", "--drive", "file:{tmp}/$HOME.bin:64M"], ["character '$' is not allowed"]),
    (["run", "fill", "--drive", "file:{tmp}/t.bin :64M"], ["leading or trailing blanks"]),
    (["run", "fill", "--drive", "file:{tmp}/t.bin:64M", "--drive", "file:{tmp}/./t.bin:64M"],
     ["the same drive as --drive file:{tmp}/t.bin:64M"]),
    (["run", "fill", "--drive", "file:{tmp}/t.bin:1k"], ["too small"]),
    (["run", "fill", "--drive", "file:{tmp}/t.bin:512K"], ["too small for --spare 0.0", "at least 1 MiB"]),
    (["run", "fill", "--drive", "/dev/null", "--plan"], ["not a block device"]),
    (["run", "fill", "--drive", "/dev/nosuchdir/sdx", "--plan"], ["/dev/nosuchdir/sdx: no such device"]),
    (["run", "fill", "--drive", "/dev/null,/dev/zero"], ["no such device", "one --drive for each drive"]),
    (["run", "fill", "--drive", "fake"], ["unknown drive 'fake'"]),
    # a warning (--seconds unused by fill) is not shown before the error
    (["run", "fill", "--drive", "sim:nope", "--seconds", "5"], ["unknown profile 'nope'"]),
    (["run", "fill", "--drive", "sim:sn520-128", "--seconds", "5", "--set", "nand.channels=0"], ["nand.channels = 0"]),
    (["run", "fill", "--drive", "sim:sn520-128", "--seconds", "5", "--db", "{tmp}/text.sqlite"],
     ["{tmp}/text.sqlite is not an ssdlab results store (not an SQLite database", "check --db"]),
    # input files that are there but are no regular file: said so, not "no such file"
    (["run", "trace", "--trace", "{tmp}", "--drive", "sim:sn520-128"], ["--trace {tmp}: not a regular file"]),
    (["run", "fio", "{tmp}", "--drive", "sim:sn520-128"], ["{tmp}: not a regular file"]),
    (["run", "fill", "--drive", "{tmp}/fifo.toml"], ["profile file '{tmp}/fifo.toml': not a regular file"]),
    (["fit", "--figures", "{tmp}", "--out", "{tmp}/t.toml"], ["--figures {tmp}: not a regular file"]),
    # --- the store and run ids (F9g-j)
    (["results", "show", "99999999999999999999", "--db", "{db}"], ["no run 99999999999999999999", "1 to"]),
    (["results", "show", "0", "--db", "{db}"], ["no run 0"]),
    (["results", "show", "7", "--db", "{db}"], ["no run 7"]),
    (["compare", "1", str(2**63), "--db", "{db}"], [f"no run {2**63}"]),
    (["results", "list", "--limit", "0", "--db", "{db}"], ["--limit 0", "from 1 to 9223372036854775807"]),
    (["results", "list", "--limit", "-1", "--db", "{db}"], ["--limit -1"]),
    (["results", "list", "--limit", "1e20", "--db", "{db}"], ["--limit 1e20: not a whole number", "1 to 9223372036854775807"]),
    (["results", "list", "--limit", "99999999999999999999", "--db", "{db}"], ["out of range", "1 to 9223372036854775807"]),
    (["results", "list", "--db", "{tmp}/typo/r.sqlite"], ["no results store at {tmp}/typo/r.sqlite"]),
    (["report", "1", "-o", "{tmp}/rep", "--db", "{tmp}/typo.sqlite"], ["no results store"]),
    (["compare", "1", "--db", "{tmp}/typo.sqlite"], ["no results store"]),
    (["report", "--sweep", "sw-0000000000", "-o", "{tmp}/rep", "--db", "{db}"], ["no sweep sw-0000000000"]),
    (["results", "export", "1", "--db", "{tmp}/typo.sqlite"], ["no results store"]),
    # a file that never was a database (a --db typo): check --db, nothing to recover
    (["results", "list", "--db", "{tmp}/text.sqlite"], ["is not an ssdlab results store", "file is not a database",
                                                        "check --db"]),
    (["results", "list", "--db", "{tmp}/foreign.sqlite"], ["not an ssdlab results store"]),
    (["results", "list", "--db", "{tmp}"], ["results store {tmp} is a directory; give --db a file"]),
    (["run", "fill", "--drive", "sim:sn520-128", "--db", "{tmp}/fifo"], ["{tmp}/fifo is a device, FIFO or socket"]),
    (["results", "list", "--db", "{tmp}/fifo"], ["{tmp}/fifo is a device, FIFO or socket"]),
    (["run", "fill", "--drive", "sim:sn520-128", "--db", "{tmp}"], ["{tmp} is a directory", "{tmp}/results.sqlite"]),
    (["results", "show", "1", "--db", "{tmp}/damaged.sqlite"], ["is damaged", "malformed", ".recover"]),
    (["run", "fill", "--drive", "sim:sn520-128", "--db", "{tmp}/damaged.sqlite"], ["is damaged"]),
    (["results", "export", "1", "--format", "xml", "--db", "{db}"], ["--format xml"]),
    (["results", "import", "{tmp}/latin1.toml", "--db", "{db}"], ["cannot read"]),
    (["results", "import", "{tmp}/plain.json", "--db", "{db}"], ["not an ssdlab pending-results file"]),
    (["results", "import", "{tmp}/missing.json", "--db", "{tmp}/r3.sqlite"],
     ["results import: cannot read {tmp}/missing.json: No such file or directory"]),
    # --- reports (F9k/l)
    (["review", "--drive", "sim:sn520-128", "-o", "{tmp}/rep", "--jobs", "0", "--db", "{tmp}/r2.sqlite"],
     ["--jobs 0"]),
    (["review", "--drive", "sim:sn520-128", "-o", "{tmp}/rep", "--spare", "99.99", "--db", "{tmp}/r2.sqlite"],
     ["phase asssd_seq_read#1", "too few for 1 job(s)"]),
    (["report", "1", "-o", "{tmp}/rep", "--y-max", "-5", "--db", "{db}"], ["--y-max -5"]),
    (["report", "1", "-o", "{tmp}/rep", "--y-max", "nan", "--db", "{db}"], ["--y-max nan"]),
    (["review", "--drive", "sim:sn520-128", "-o", "{tmp}/text.sqlite/rep", "--db", "{tmp}/r2.sqlite"],
     ["cannot write the report to {tmp}/text.sqlite/rep"]),
    (["review", "--drive", "sim:sn520-128", "-o", "{tmp}/rep", "--y-max", "0", "--db", "{tmp}/r2.sqlite"],
     ["--y-max 0"]),
    # a directory no file can be made in, even by root (procfs): refused before anything runs
    (["review", "--drive", "sim:sn520-128", "-o", "/proc", "--db", "{tmp}/r2.sqlite"],
     ["cannot write the report to /proc", "no file can be made in /proc"]),
    (["fit", "--out", "/proc/twin.toml", "--runs", "1", "--db", "{db}"],
     ["--out /proc/twin.toml", "no file can be made in /proc"]),
]


# one worker runs this module: `scratch` (a module fixture) is made once
pytestmark = pytest.mark.xdist_group("hostile")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "latin1.toml").write_bytes(b"id = \"\xff\"\n")
    (tmp / "nested.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp / "text.sqlite").write_text("not a database\n" * 100)
    (tmp / "plain.json").write_text('{"hello": 1}')
    os.mkfifo(tmp / "fifo")
    os.mkfifo(tmp / "fifo.toml")
    c = sqlite3.connect(tmp / "foreign.sqlite")
    c.execute("CREATE TABLE t (x)")
    c.commit()
    c.close()
    r = clirun.cli("run", "fill", "--drive", "sim:sn520-128", "--db", str(tmp / "r.sqlite"), "--json")
    assert r.returncode == 0, r.stderr
    # a copy with the `phases` table's root page overwritten: a damaged page
    data = bytearray((tmp / "r.sqlite").read_bytes())
    c = sqlite3.connect(f"file:{tmp / 'r.sqlite'}?mode=ro", uri=True)
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name='phases'").fetchone()[0]
    size = c.execute("PRAGMA page_size").fetchone()[0]
    c.close()
    data[(root - 1) * size:(root - 1) * size + 64] = b"\x42" * 64
    (tmp / "damaged.sqlite").write_bytes(bytes(data))
    return tmp


def ssdlab(capsys, *args: str) -> tuple[int, str, str]:
    """One command through the real entry point, in this process."""
    with pytest.raises(SystemExit) as e:
        app(args=list(args), prog_name="ssdlab")
    out, err = capsys.readouterr()
    return e.value.code, out, err


def fill_in(x: str, tmp: Path) -> str:
    return x.replace("{tmp}", str(tmp)).replace("{db}", str(tmp / "r.sqlite"))


def files(d: Path) -> list[str]:
    return sorted(f for f in os.listdir(d) if not f.endswith(("-wal", "-shm")))


@pytest.mark.parametrize("args, words", MATRIX, ids=[" ".join(a)[:60] for a, _ in MATRIX])
def test_bad_input_is_one_line_exit_2(scratch, capsys, args, words):
    before = files(scratch)
    sizes = {f: os.path.getsize(scratch / f) for f in before if (scratch / f).is_file()}
    code, out, err = ssdlab(capsys, *(fill_in(a, scratch) for a in args))
    assert code == 2, err
    assert out == "" and err.startswith("ssdlab: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and len(err) <= 2100
    for w in words:
        assert fill_in(w, scratch) in err, err
    # nothing was created or stored (a refused review made no report and no store)
    assert files(scratch) == before
    assert {f: os.path.getsize(scratch / f) for f in before if (scratch / f).is_file()} == sizes


@pytest.mark.parametrize("args, words", [MATRIX[0], MATRIX[8], MATRIX[13], MATRIX[-4]],
                         ids=["seconds inf", "repeat 1e20", "seed 2**64", "y-max -5"])
def test_the_same_in_a_real_process(scratch, args, words):
    r = clirun.cli(*(fill_in(a, scratch) for a in args), timeout=120)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert all(fill_in(w, scratch) in r.stderr for w in words), r.stderr


def test_a_profile_larger_than_memory_is_refused_before_allocating(tmp_path):
    """Under a 3 GB address-space limit, a drive whose tables need ~7 GB: one line, exit 2,
    in about a second (without the check the allocation aborts the process, rc 134)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    r = clirun.cli("run", "fill", "--drive", "sim:sn520-128", "--set", "nand.blocks_per_plane=40000",
                   "--set", "user_capacity_gb=3000", "--db", str(tmp_path / "r.sqlite"), timeout=120,
                   preexec_fn=limit)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "needs about 6.99 GB" in r.stderr and "GB is available" in r.stderr
    assert "ulimit -v" in r.stderr
    assert not (tmp_path / "r.sqlite").exists() or Store(tmp_path / "r.sqlite").runs() == []


def test_another_programs_database_is_refused_unchanged(tmp_path, capsys):
    """A --db naming another program's SQLite file (a typo): reads and runs refuse it, and
    the file is left byte for byte as it was (not even its journal mode changed)."""
    for name, table in (("app.db", "CREATE TABLE t (x)"), ("runs.db", "CREATE TABLE runs (x)")):
        db = tmp_path / name
        c = sqlite3.connect(db)
        c.execute(table)
        c.commit()
        c.close()
        before = db.read_bytes()
        for args in (["results", "list"], RUN + ["--seconds", "0.1", "--interval", "0"]):
            code, out, err = ssdlab(capsys, *args, "--db", str(db))
            assert code == 2 and out == "" and err.count("\n") == 1, err
            assert f"{db} is not an ssdlab results store" in err and "a new file" in err, err
        assert db.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["app.db", "runs.db"]


def test_read_only_store_is_readable(scratch, tmp_path, capsys):
    """An archived store on read-only media (or a read-only file): list, show, export and
    report work and change nothing."""
    with tmpfs(tmp_path / "ro", "100m") as mnt:
        (mnt / "r.sqlite").write_bytes((scratch / "r.sqlite").read_bytes())
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        db = str(mnt / "r.sqlite")
        code, out, err = ssdlab(capsys, "results", "list", "--db", db)
        assert code == 0 and "fill" in out and err == "", err
        code, out, err = ssdlab(capsys, "results", "show", "1", "--db", db, "--json")
        assert code == 0 and '"status": "complete"' in out
        code, out, err = ssdlab(capsys, "report", "1", "-o", str(tmp_path / "rep"), "--db", db)
        assert code == 0 and out.strip().endswith("report.html"), err
        code, out, err = ssdlab(capsys, "run", "fill", "--drive", "sim:sn520-128", "--db", db)
        assert code == 2 and err.count("\n") == 1 and "is not writable (read-only" in err, err
        assert os.listdir(mnt) == ["r.sqlite"]


def test_compare_warns_about_runs_that_did_not_complete(scratch, tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    db.write_bytes((scratch / "r.sqlite").read_bytes())
    s = Store(db)
    run_id = s.create_run("fill", {}, None, None)
    s.add_drive(run_id, 0, "sim:x", {"capacity": 1})
    s.finish_run(run_id, "failed", "RuntimeError: boom")
    code, out, err = ssdlab(capsys, "compare", "1", str(run_id), "--db", str(db))
    assert code == 0
    assert f"ssdlab: warning: run {run_id} is failed (sim:x not complete): its metrics are partial or missing" in err
    assert "warning: run 1" not in err


def test_review_checks_its_report_directory_before_running(scratch, tmp_path, capsys):
    """`review -o` that cannot be written fails at once, not after every test ran."""
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores the mode: use a path under a file instead
            target = scratch / "plain.json" / "rep"
        else:
            target = ro / "rep"
        code, out, err = ssdlab(capsys, "review", "--drive", "sim:sn520-128", "-o", str(target),
                                "--db", str(tmp_path / "r.sqlite"))
        assert code == 2 and "cannot write the report to" in err
        assert not (tmp_path / "r.sqlite").exists()  # nothing ran, nothing stored
    finally:
        os.chmod(ro, 0o700)


def test_review_checks_every_test_on_every_drive_before_running(tmp_path, capsys, monkeypatch):
    """A drive that a later test of the review refuses (a 1 MiB file is too small for the
    quick tests) is refused before the first test runs (the fill, consistency, ... took
    hours before the refusal came) and before the report directory is made."""
    from ssdlab import review as review_mod

    def ran(*args, **kw):
        raise AssertionError("a test ran")

    monkeypatch.setattr(review_mod, "run_test", ran)
    code, out, err = ssdlab(capsys, "review", "--drive", f"file:{tmp_path}/t.bin:1M", "--seconds", "1",
                            "-o", str(tmp_path / "rep"), "--db", str(tmp_path / "r.sqlite"))
    assert code == 2 and err.count("\n") == 1 and "the quick tests (two test files of at least 1 MiB): 2097152 bytes needed, more than the drive's 1048576" in err, err
    assert not (tmp_path / "r.sqlite").exists() and not (tmp_path / "rep").exists()


def test_internal_value_error_is_not_a_user_error(scratch, tmp_path, monkeypatch, capsys):
    """A ValueError from inside a running test (here: fio's output parsing, as with the
    audit's bins key "12x") is exit 1 and the run is `failed`, not 'user error' exit 2."""
    import ssdlab.targets.sim as simmod

    def broken(self, phase, on_sample=None):
        raise ValueError("invalid literal for int() with base 10: '12x'")

    monkeypatch.setattr(simmod.SimTarget, "run", broken)
    db = tmp_path / "r.sqlite"
    code, out, err = ssdlab(capsys, "run", "fill", "--drive", "sim:sn520-128", "--db", str(db))
    assert code == 1, err
    assert err == ("ssdlab: error: run 1 failed: ValueError: invalid literal for int() with base 10: "
                   "'12x' (set SSDLAB_DEBUG=1 for the traceback)\n")
    assert Store(db).run(1)["status"] == "failed"
