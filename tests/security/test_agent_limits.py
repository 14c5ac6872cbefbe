"""What a client may ask of a drive host's agent is bounded by the time it takes: a phase
that samples faster than MIN_INTERVAL_S, or that would record more than MAX_SEGMENTS
segments, is refused with one line before it runs (such a phase held every sample in the
agent's memory: an idle phase at a sample a nanosecond took it past 1.5 GB in 47 s)."""

from __future__ import annotations

import subprocess

import clirun

SIZE = 64 << 10


def agent(requests: list[dict], *options: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    return clirun.converse([*clirun.COMMAND, "agent", *options], requests)


def test_a_phase_faster_than_real_time_or_of_countless_segments_is_refused(tmp_path):
    srv = tmp_path / "srv"
    srv.mkdir()
    spec = f"file:{srv}/t.bin:64K"
    flood = {"kind": "idle", "seconds": 0.2, "sample_interval_s": 1e-6}
    countless = {"kind": "io", "read_pct": 0, "block_size": 4096, "stop_seconds": 3600, "segment_bytes": 4096}
    requests = [{"op": "open", "spec": spec},
                {"op": "run", "phase": flood},
                {"op": "preflight", "phases": [countless]},
                {"op": "plan", "phases": [flood]},
                {"op": "run", "phase": {"kind": "idle", "seconds": 0.2}}]
    answers, r = agent(requests, "--drives", f"file:{srv}/:1M")
    assert r.returncode == 0, r.stderr
    assert "ok" in answers[0], answers[0]
    ran, checked, planned = answers[1:4]
    assert ran == {"error": "phase idle: a sample every 1e-06 s: this host's agent takes one at most every "
                            "0.1 s; ask for sample_interval_s >= 0.1", "type": "value"}, ran
    assert checked["type"] == "value" and "segments" in checked["error"], checked
    assert planned == ran, planned
    assert any("result" in a for a in answers[4:]), answers[4:]  # a refusal ends nothing


def test_what_ssdlab_asks_for_is_within_the_limits():
    from ssdlab.methodology import fill
    from ssdlab.phase import idle, rand_io, seq_write
    from ssdlab.targets.remote import limits

    area = 4 * 10**12
    for p in (seq_write("fill", offset=0, length=area, stop_bytes=area, segment_bytes=fill.segment_bytes(area)),
              seq_write("small", offset=0, length=SIZE, stop_bytes=SIZE, segment_bytes=4096),
              rand_io("r", 100, stop_seconds=24 * 3600), idle(7 * 24 * 3600)):
        limits.check(p)
