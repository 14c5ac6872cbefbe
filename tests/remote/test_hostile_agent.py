"""A drive host's answers are checked like any input: an agent that is not ssdlab's (or is
hostile) answering with the wrong shapes, nesting without end or a line of 80 MB gets one
line naming the drive and what was wrong, exit 2 before the run, exit 1 (the run failed)
during it, never a Python exception's name, and a long line is refused as soon as it is
too long. The "ssh" here is a script that plays the agent (SSDLAB_SSH)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import clirun
import pytest

IDENTITY = {"kind": "block", "model": "fake", "capacity": 1 << 30, "firmware": "", "serial": "x", "extra": {}}
HELLO = {"ok": {"proto": 1, "version": "0", "kernel": "k", "machine_id": "m", "hostname": "h", "uid": 0,
                "pid": 1, "drive": "dev:8:99"}}
FAKE = """
import json, os, sys
script = json.load(open(os.environ["FAKE_AGENT"]))
out = sys.stdout.buffer
for line in sys.stdin:
    op = json.loads(line).get("op")
    if op == "ping":
        continue
    for answer in script.get(op, ['{"ok": true}']):
        if answer.startswith("BIG:"):  # a line of N bytes, then its newline
            n = int(answer[4:])
            chunk = b"x" * (1 << 20)
            while n > 0:
                out.write(chunk[:n]); n -= len(chunk)
            out.write(b"\\n")
        else:
            out.write(answer.encode() + b"\\n")
        out.flush()
    if op == "close":
        break
"""


def run_against(tmp_path: Path, script: dict[str, list[str]], *args: str) -> tuple[float, object]:
    fake = tmp_path / "fake_ssh.py"
    fake.write_text(FAKE)
    base = {"hello": [json.dumps(HELLO)], "open": [json.dumps({"ok": {"identity": IDENTITY, "engine_version": "fio"}})]}
    (tmp_path / "script.json").write_text(json.dumps({**base, **script}))
    env = clirun.environ(SSDLAB_SSH=f"{sys.executable} {fake}", FAKE_AGENT=str(tmp_path / "script.json"))
    t0 = time.monotonic()
    r = clirun.cli("run", "fill", "--drive", "lab:/dev/sdz", "--destroy-data", "lab:/dev/sdz",
                   "--db", str(tmp_path / "r.db"), *args, env=env, timeout=120)
    return time.monotonic() - t0, r


def one_clean_line(r, status: int) -> str:
    assert r.returncode == status and r.stderr.count("\n") == 1, (r.returncode, r.stderr[-3000:])
    for name in ("AttributeError", "KeyError", "RecursionError", "TypeError", "IndexError", "Traceback"):
        assert name not in r.stderr, r.stderr
    assert "lab:/dev/sdz" in r.stderr
    return r.stderr


@pytest.mark.parametrize("script, words", [
    ({"hello": ['{"ok": [1]}']}, ["answered outside its protocol", "hello"]),  # was AttributeError
    ({"open": ['{"ok": {"engine_version": "x"}}']}, ["answered outside its protocol", "identity"]),  # KeyError
    ({"open": ['{"ok": {"identity": {"kind": "block", "model": "m", "capacity": "big"}}}']}, ["capacity"]),
    ({"hello": ['{"ok": ' + "[" * 100000 + "]" * 100000 + "}"]}, ["something other than its protocol"]),
    ({"hello": ['{"ok": 1, "error": "x"}']}, ["one of ok, error"]),
    ({"hello": ['{"error": ["x"], "type": "value"}']}, ["an error answer holds its text"]),
], ids=["hello-list", "open-no-identity", "capacity-text", "nested", "two-kinds", "error-list"])
def test_malformed_answers_before_the_run_are_one_line_exit_2(tmp_path, script, words):
    _t, r = run_against(tmp_path, script)
    err = one_clean_line(r, 2)
    assert all(w in err for w in words), err
    assert not (tmp_path / "r.db").exists()


def test_malformed_answers_during_the_run_fail_it_with_one_line(tmp_path):
    _t, r = run_against(tmp_path, {"run": ['{"sample": {"t_s": "soon"}}']})
    err = one_clean_line(r, 1)
    assert "answered outside its protocol" in err and "a sample is an object of numbers" in err
    _t, r = run_against(tmp_path, {"run": ['{"result": {"phase": {"kind": "purge"}, "series": {"t_s": [1, 2]}}}']})
    err = one_clean_line(r, 1)
    assert "answered outside its protocol" in err and "result" in err


def test_a_line_of_80_mb_is_refused_as_soon_as_it_is_too_long(tmp_path):
    took, r = run_against(tmp_path, {"hello": [f"BIG:{80 << 20}"]})
    err = one_clean_line(r, 2)
    assert "a line longer than" in err
    assert took < 20  # each byte looked at once (it took 32 s)


FLOOD = """
import os, sys
chunk = b"x" * (1 << 20)
for _ in range(256):
    os.write(2, chunk)  # 256 MB of stderr, no newline
sys.exit(255)
"""
PEAK = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(p.returncode)")


def test_stderr_without_a_newline_is_not_held_whole(tmp_path):
    # ssh's stderr (the drive host's words) was read a whole line at a time: 256 MB without
    # a newline took the controller to 2.1 GB; now each line keeps its first 4 KiB
    fake = tmp_path / "flood_ssh.py"
    fake.write_text(FLOOD)
    env = clirun.environ(SSDLAB_SSH=f"{sys.executable} {fake}")
    r = subprocess.run([sys.executable, "-c", PEAK, *clirun.COMMAND, "run", "fill", "--drive", "lab:/dev/sdz",
                        "--destroy-data", "lab:/dev/sdz", "--db", str(tmp_path / "r.db")],
                       capture_output=True, text=True, env=env, cwd=clirun.ROOT, timeout=300)
    peak_mb = int(r.stdout.split()[-1]) / 1024
    assert peak_mb < 400, peak_mb
    err = one_clean_line(r, 2)
    assert "cannot run ssdlab on lab over ssh" in err and len(err) < 8192, err[:300]
    assert not (tmp_path / "r.db").exists()
