"""What a client may ask of a drive host's agent is bounded by the time it takes: a phase
that samples faster than MIN_INTERVAL_S, or that would record more than MAX_SEGMENTS
segments, is refused with one line before it runs (such a phase held every sample in the
agent's memory: an idle phase at a sample a nanosecond took it past 1.5 GB in 47 s). So is
a phase whose fio would take more than half the memory the host has available: its I/O
buffers (jobs x queue_depth x block_size, allocated and filled when fio starts) or the
latency histograms fio keeps to the end of a long phase (its plan says so in its `# fio
memory:` line instead)."""

from __future__ import annotations

import subprocess
import sys

import clirun

SIZE = 64 << 10


def agent(requests: list[dict], *options: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    return clirun.converse([*clirun.COMMAND, "agent", *options], requests)


def refused(tmp_path, size: str, run: dict, checked: dict) -> tuple[dict, dict, dict]:
    """The agent's answers to `run` run, `checked` preflighted and `run` planned on a file of
    `size` it lists: (ran, checked, planned), after the open was taken and with a phase
    within the bounds still run after them (a refusal ends nothing)."""
    srv = tmp_path / "srv"
    srv.mkdir()
    requests = [{"op": "open", "spec": f"file:{srv}/t.bin:{size}"},  # a sparse file
                {"op": "run", "phase": run},
                {"op": "preflight", "phases": [checked]},
                {"op": "plan", "phases": [run]},
                {"op": "run", "phase": {"kind": "idle", "seconds": 0.2}}]
    answers, r = agent(requests, "--drives", f"file:{srv}/:{size}")
    assert r.returncode == 0, r.stderr
    assert "ok" in answers[0], answers[0]
    assert any("result" in a for a in answers[4:]), answers[4:]
    return answers[1], answers[2], answers[3]


def test_a_phase_faster_than_real_time_or_of_countless_segments_is_refused(tmp_path):
    flood = {"kind": "idle", "seconds": 0.2, "sample_interval_s": 1e-6}
    countless = {"kind": "io", "read_pct": 0, "block_size": 4096, "stop_seconds": 3600, "segment_bytes": 4096}
    ran, checked, planned = refused(tmp_path, "1M", flood, countless)
    assert ran == {"error": "phase idle: a sample every 1e-06 s: this host's agent takes one at most every "
                            "0.1 s; ask for sample_interval_s >= 0.1", "type": "value"}, ran
    assert checked["type"] == "value" and "segments" in checked["error"], checked
    assert planned == ran, planned


def test_an_idle_phase_of_countless_samples_is_refused(tmp_path):
    """An idle phase keeps a sample each sample_interval_s and the drive's temperature
    each second: its seconds are capped as an io phase's segments are."""
    endless = {"kind": "idle", "seconds": 1e9}
    fast = {"kind": "idle", "seconds": 200_000, "sample_interval_s": 0.1}
    ran, checked, planned = refused(tmp_path, "1M", endless, fast)
    assert ran == {"error": "phase idle: idle for 1e+09 s: this host's agent records at most 1000000 samples "
                            "of an idle phase (one each 1 s; the drive's temperature each second), 1e+06 s; "
                            "ask for at most 1e+06 seconds, or several idle phases", "type": "value"}, ran
    assert checked["type"] == "value" and "at most 100000 seconds" in checked["error"], checked
    assert planned == ran, planned


def test_a_phase_whose_fio_would_take_more_memory_than_the_host_has_is_refused(tmp_path):
    """1 GiB blocks x 65536 in flight: 70 TB of buffers fio would allocate and fill; 1024
    mixed jobs for a day: 5.3 TB of histograms. Refused before fio starts, in one line."""
    buffers = {"kind": "io", "read_pct": 100, "block_size": 1 << 30, "queue_depth": 65536,
               "stop_bytes": 4096, "segment_bytes": 4096}
    histograms = {"kind": "io", "read_pct": 50, "pattern": "rand", "block_size": 4096, "jobs": 1024,
                  "stop_seconds": 24 * 3600}
    ran, checked, planned = refused(tmp_path, "2G", buffers, histograms)
    assert ran["type"] == "value", ran
    assert ran["error"].startswith("phase io: fio would take about 70.4 TB of this host's memory "
                                   "(jobs x queue_depth x block_size of I/O buffers): this host's agent "
                                   "lets a phase take at most "), ran
    assert ran["error"].endswith("(half of what it has available); ask for fewer jobs, a lower queue_depth, "
                                 "smaller blocks or a shorter stop_seconds"), ran
    assert checked["type"] == "value" and "and its logs over stop_seconds" in checked["error"], checked
    # planned: the plan, whose fio memory line is the refusal the run met
    assert f"\n# fio memory: a run would be REFUSED: {ran['error']}\n" in planned["ok"], planned


def test_what_ssdlab_asks_for_is_within_the_limits(monkeypatch):
    """On a host with 6 GB available: the largest buffers ssdlab asks for (a PTS step of
    1 MiB blocks, 4 threads x QD32; AS SSD's 16 MiB reads), its longest default timed
    phase with the most jobs (PTS HIR's 30-minute baseline at 4 threads) and the fill of a
    4 TB drive (its logs over 22 h, 4 TB at the slowest 50 MB/s: 2.45 GB)."""
    from ssdlab.methodology import fill
    from ssdlab.methodology.pts import common as pts
    from ssdlab.phase import idle, rand_io, seq_read, seq_write
    from ssdlab.targets.remote import fio_memory, limits

    monkeypatch.setattr(fio_memory, "available", lambda: 6e9)
    area = 4 * 10**12
    for p in (seq_write("fill", offset=0, length=area, stop_bytes=area, segment_bytes=fill.segment_bytes(area)),
              seq_write("small", offset=0, length=SIZE, stop_bytes=SIZE, segment_bytes=4096),
              rand_io("r", 100, stop_seconds=3 * 3600), idle(7 * 24 * 3600),
              rand_io("iops", 0, block_size=1 << 20, queue_depth=32, jobs=4, stop_seconds=pts.ROUND_SECONDS),
              seq_read("asssd", block_size=16 << 20, queue_depth=1, stop_bytes=10**9),
              rand_io("hir", 0, queue_depth=32, jobs=4, stop_seconds=1800)):
        limits.check(p)


def test_a_phase_whose_fio_grows_past_the_hosts_bound_while_it_runs_is_stopped(tmp_path):
    """A phase that stops after stop_bytes alone lasts as long as the drive takes: on a
    drive slower than the estimate assumes (here: an agent that takes every drive to move
    10 TB a second) its histograms (64 mixed jobs: about 19 MB a second) outgrow what was
    counted, so the agent watches fio and stops it past the bound its owner gave, with the
    one line."""
    srv = tmp_path / "srv"
    srv.mkdir()
    spec = f"file:{srv}/t.bin:1G"  # a sparse file
    growing = {"kind": "io", "name": "growing", "read_pct": 50, "pattern": "rand", "block_size": 4096,
               "jobs": 64, "stop_bytes": 16 << 30}  # a minute and more here: 1 GB of histograms
    requests = [{"op": "open", "spec": spec},
                {"op": "run", "phase": growing},
                {"op": "run", "phase": {"kind": "idle", "seconds": 0.2}}]
    fast = [sys.executable, "-c", "from ssdlab.targets.fio import jobs; jobs.SLOWEST_BPS = jobs.SLOWEST_IOPS = 10**13; "
                                  "from ssdlab.cli import app; app()"]
    answers, r = clirun.converse([*fast, "agent", "--drives", f"file:{srv}/:1G", "--fio-memory", "64M"], requests)
    assert r.returncode == 0, r.stderr
    assert "ok" in answers[0], answers[0]
    ended = next(a for a in answers[1:] if "sample" not in a)
    assert ended == {"error": "phase growing: fio took more than 67.1 MB of this host's memory, the most this "
                              "host's agent lets a phase take (as --fio-memory says): stopped; ask for fewer "
                              "jobs or a shorter phase", "type": "value"}, ended
    assert any("result" in a for a in answers[answers.index(ended) + 1:]), answers[-2:]  # the agent goes on


def test_an_owners_bound_that_is_no_size_is_refused_in_one_line(tmp_path):
    r = clirun.cli("agent", "--drives", f"file:{tmp_path}/:1M", "--fio-memory", "lots")
    assert r.returncode == 2, r
    assert r.stderr.strip().splitlines() == [
        "ssdlab: error: agent: --fio-memory size 'lots': use bytes or a number with K, M, G, T (binary) or KB, "
        "MB, GB, TB"], r.stderr


def test_a_client_that_sends_requests_without_waiting_for_answers_is_disconnected():
    """While a phase runs the agent answers nothing else, so requests a client sends
    meanwhile wait; 40 of 30 MiB each took the agent from 52 MiB to 1.4 GB. More than
    MAX_WAITING end the connection (the phase is stopped as when the client is gone)."""
    import json
    import os
    import threading

    from ssdlab.targets.remote import agent
    from ssdlab.targets.remote.allowlist import AllowList

    MAX_WAITING = getattr(agent, "MAX_WAITING", 4)

    r, w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        a = agent.Agent(r, out_w, AllowList([]))
        os.write(w, b"".join(json.dumps({"op": "identify", "n": i}).encode() + b"\n"
                             for i in range(MAX_WAITING + 3)))
        t = threading.Thread(target=a._reader, daemon=True)
        t.start()
        t.join(20)  # the connection stays open: without the bound the reader waits for more
        assert not t.is_alive() and a.gone
        queued = []
        while not a.requests.empty():
            queued.append(a.requests.get_nowait())
        assert queued[-1] is None and len(queued) == MAX_WAITING + 1, queued
    finally:
        for fd in (r, w, out_r, out_w):
            os.close(fd)


def test_a_fio_job_files_phase_is_refused_whatever_asks(tmp_path):
    """A `fiojob` phase carries a fio job file's jobs (what `ssdlab run fio` compiles for a
    simulated drive): the agent runs ssdlab's own phases only. Its checks passed one (it
    writes nothing ssdlab's way of counting knew of) and only fio's job writer refused to
    run it; now the check, the plan and the run each refuse it in one line."""
    job = {"kind": "fiojob", "fiojob": {"file": "x.fio", "jobs": [{"name": "x", "rw": "write"}]}}
    ran, checked, planned = refused(tmp_path, "1M", job, job)
    for a in (ran, checked, planned):
        assert a.get("type") == "value" and "simulated drives only" in a.get("error", ""), a
