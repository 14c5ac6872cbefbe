"""Trace replay on the simulator: the replay feeds the same engine path as the
phases (a sequential trace at QD32 gives exactly the io phase's figures), open-loop timing
follows the trace (speed, idle cap), closed loop keeps the queue full, trims and flushes
are replayed, the power model sees the idle gaps, and `ssdlab run trace` stores read and
write histograms and refuses bad traces with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

_sim = pytest.importorskip("ssdlab._sim")

from ssdlab import store_export  # noqa: E402
from ssdlab import profiles  # noqa: E402
from ssdlab.cli import app  # noqa: E402
from ssdlab.phase import purge, seq_write  # noqa: E402
from ssdlab.store import Store  # noqa: E402

from drives import SMALL  # noqa: E402
SETS = [x for s in SMALL for x in ("--set", s)]
DATA = Path(__file__).parents[1] / "data" / "traces"
KIB = 1024
runner = CliRunner()


def drive():
    d = _sim.Drive(profiles.load_text("tlc-256"), overrides=SMALL)
    cap = int(d.info()["user_bytes"])
    d.run(purge().resolve(cap))
    return d, cap


def arrays(t, op, off, ln):
    return (np.asarray(t, np.uint64), np.asarray(op, np.uint8), np.asarray(off, np.uint64),
            np.asarray(ln, np.uint64))


def test_sequential_trace_at_qd32_is_the_io_phase():
    """Same I/Os, same depth: the replay and the generated phase agree exactly."""
    n, bs = 4000, 128 * KIB
    a, cap = drive()
    ph = a.run(seq_write("w", block_size=bs, queue_depth=32, stop_bytes=n * bs).resolve(cap))
    b, _ = drive()
    r = b.replay(*arrays(np.zeros(n), np.ones(n), np.arange(n) * bs, np.full(n, bs)), queue_depth=32)
    for k in ("ios", "write_bytes", "duration_s", "mbps", "nand_write_bytes", "energy_j"):
        assert r["totals"][k] == pytest.approx(ph["totals"][k], rel=1e-12), k
    for k in ("mean_us", "p50_us", "p99_us", "p99_9_us", "max_us"):
        assert r["latency"][k] == pytest.approx(ph["latency"][k], rel=1e-12), k
    assert r["write_latency"]["p99_us"] == r["latency"]["p99_us"] and r["read_latency"]["ios"] == 0


def test_open_loop_follows_the_trace_times():
    d, cap = drive()
    n = 1000
    t = np.arange(n) * 1_000_000  # one 4 KiB read per ms: the drive keeps up
    args = arrays(t, np.zeros(n), (np.arange(n) * 7919 % (cap // 4096)) * 4096, np.full(n, 4096))
    r = d.replay(*args)
    assert r["totals"]["duration_s"] == pytest.approx(0.999, abs=1e-3)
    assert r["totals"]["iops"] == pytest.approx(1000, rel=0.01)
    assert r["totals"]["busy_s"] < 0.1 * r["totals"]["duration_s"]
    # twice as fast: half the time; the idle gaps cost idle power, not active power
    r2 = d.replay(args[0] // 2, *args[1:])
    assert r2["totals"]["duration_s"] == pytest.approx(0.4995, abs=1e-3)
    closed = d.replay(*args, queue_depth=1)
    assert closed["totals"]["duration_s"] < 0.1
    assert r["totals"]["avg_power_w"] < closed["totals"]["avg_power_w"]


def test_open_loop_queues_when_the_drive_falls_behind():
    """A burst far faster than the drive: the later I/Os wait, latency grows along it."""
    d, cap = drive()
    n = 3000
    r = d.replay(*arrays(np.zeros(n), np.ones(n), np.arange(n) * 256 * KIB, np.full(n, 256 * KIB)))
    lat = r["write_latency"]
    assert lat["max_us"] > 20 * lat["min_us"]
    qd1 = d.replay(*arrays(np.zeros(n), np.ones(n), np.arange(n) * 256 * KIB, np.full(n, 256 * KIB)),
                   queue_depth=1)
    assert r["latency"]["mean_us"] > 10 * qd1["latency"]["mean_us"]


def test_trims_and_flushes_are_replayed():
    d, cap = drive()
    mib = 2**20
    # write 64 MiB, flush, trim it all, read 4 KiB of each MiB: trimmed reads touch no flash
    n = 64
    t = np.zeros(n + 2 + n)
    op = [1] * n + [3, 2] + [0] * n
    off = list(np.arange(n) * mib) + [0, 0] + list(np.arange(n) * mib)
    ln = [mib] * n + [0, n * mib] + [4096] * n
    r = d.replay(*arrays(t, op, off, ln), queue_depth=1)
    assert r["totals"]["trim_ios"] == 1 and r["totals"]["flush_ios"] == 1
    assert r["totals"]["trim_bytes"] == n * mib
    assert r["totals"]["flush_lat_mean_us"] > 0
    trimmed = r["read_latency"]["mean_us"]
    d2, _ = drive()
    r2 = d2.replay(*arrays(np.zeros(2 * n + 1), [1] * n + [3] + [0] * n,
                           list(np.arange(n) * mib) + [0] + list(np.arange(n) * mib),
                           [mib] * n + [0] + [4096] * n), queue_depth=1)
    assert trimmed < 0.5 * r2["read_latency"]["mean_us"]


def test_replay_refuses_what_the_drive_cannot_take():
    d, cap = drive()
    with pytest.raises(ValueError, match="past the end of the drive"):
        d.replay(*arrays([0], [0], [cap], [4096]))
    with pytest.raises(ValueError, match="time goes back"):
        d.replay(*arrays([5, 1], [0, 0], [0, 0], [4096, 4096]))
    with pytest.raises(ValueError, match="length 0"):
        d.replay(*arrays([0], [1], [0], [0]))


def run_trace(db, *args):
    return runner.invoke(app, ["run", "trace", *map(str, args), "--drive", "sim:tlc-256", *SETS,
                               "--db", db, "--json"])


def test_run_trace_both_states_stores_histograms(tmp_path):
    db = str(tmp_path / "r.sqlite")
    r = run_trace(db, "--trace", DATA / "msr.csv", "--state", "both", "--idle-cap", "25ms")
    assert r.exit_code == 0, r.output
    assert "msr (detected)" in r.stderr and "idle cap 25 ms" in r.stderr
    doc = json.loads(r.stdout)
    m = doc["drives"][0]["metrics"]
    assert m["trace_format"] == "msr" and m["trace_ios"] == 5
    for state in ("empty", "full"):
        assert m[f"{state}_ios"] == 5
        assert m[f"{state}_read_bytes"] == 4096 + 512 + 3584 and m[f"{state}_write_bytes"] == 2 * 65536
        # the 1 s gap is capped at 25 ms
        assert m[f"{state}_duration_s"] == pytest.approx(0.0201 + 0.025, abs=1e-3)
        assert m[f"{state}_read_lat_p99_us"] > 0 and m[f"{state}_write_lat_mean_us"] > 0
    # reads of written data on the full drive go to flash; on the empty drive they do not
    assert m["full_read_lat_mean_us"] > m["empty_read_lat_mean_us"]
    s = Store(db)
    phases = s.phases(s.run(doc["run_id"])["drives"][0]["id"])
    assert [p["name"] for p in phases] == ["purge", "trace-empty", "fill", "trace-full"]
    rep = phases[1]
    assert sum(rep["latency"]["read"]["counts"]) == 3 and sum(rep["latency"]["write"]["counts"]) == 2
    assert rep["histogram"]["counts"].sum() == 5
    assert "lat_mean_us" in rep["series"]  # latency over time
    csv_rows = [x.split(",") for x in store_export.to_csv(s, doc["run_id"]).splitlines()]
    assert sum(int(x[7]) for x in csv_rows if x[3] == "trace-empty" and x[4] == "histogram_read") == 3


@pytest.mark.parametrize("args,words", [
    (["--trace", "nope.csv"], "--trace nope.csv: no such file"),
    ([], "give the trace file with --trace"),
    (["--trace", DATA / "msr.csv", "--speed", "0"], "--speed 0"),
    (["--trace", DATA / "msr.csv", "--idle-cap", "soon"], "--idle-cap soon"),
    (["--trace", DATA / "msr.csv", "--format", "xls"], "--format xls"),
    (["--trace", DATA / "msr.csv", "--state", "half"], "--state half"),
    (["--trace", DATA / "msr.csv", "--format", "blkparse"], "line 1: not a blkparse event"),
])
def test_run_trace_mistakes_are_one_line_exit_2(tmp_path, args, words):
    r = run_trace(str(tmp_path / "r.sqlite"), *args)
    assert r.exit_code == 2 and words in r.stderr, r.output
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.sqlite").exists()


def test_trace_past_the_drive_is_refused_or_wrapped(tmp_path):
    f = tmp_path / "far.csv"
    f.write_text("time_us,op,offset_bytes,length_bytes\n0,write,0,4096\n10,read,40000000000,4096\n")
    db = str(tmp_path / "r.sqlite")
    r = run_trace(db, "--trace", f)
    assert r.exit_code == 2 and "far.csv: line 3: the I/O reaches byte 40000004096" in r.stderr and "--wrap" in r.stderr
    # one line (no note on the trace read first) and no store made
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "r.sqlite").exists(), r.stderr
    (tmp_path / "text.sqlite").write_text("not a database\n")
    r = run_trace(str(tmp_path / "text.sqlite"), "--trace", f, "--wrap")
    assert r.exit_code == 2 and "text.sqlite is not an ssdlab results store" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run_trace(db, "--trace", f, "--wrap")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["drives"][0]["metrics"]["empty_ios"] == 2
    # the run says how many I/Os it moved, and within what
    assert "--wrap: offsets past " in r.stderr and "folded into the drive (1 I/Os)" in r.stderr, r.stderr


def test_trace_options_only_for_run_trace(tmp_path):
    r = runner.invoke(app, ["run", "fill", "--qd", "4", "--drive", "sim:tlc-256", "--db",
                            str(tmp_path / "r.sqlite")])
    assert r.exit_code == 2 and "--qd: only for `ssdlab run trace`" in r.stderr


def test_an_interrupted_replay_keeps_what_it_recorded(tmp_path):
    """Ctrl-C mid-replay: the target raises Interrupted with the rows recorded so far."""
    from ssdlab.phase import Phase, Replay
    from ssdlab.targets import Interrupted, open_target

    f = tmp_path / "long.csv"
    f.write_text("time_ms,op,offset_bytes,length_bytes\n"
                 + "".join(f"{i * 100},write,{i % 1000 * 4096},4096\n" for i in range(100)))
    t = open_target("sim:tlc-256", overrides=SMALL)
    seen = []

    def stop(row):
        seen.append(row)
        if len(seen) == 3:
            raise KeyboardInterrupt

    ph = Phase(kind="replay", name="trace-empty", replay=Replay(trace=str(f)))
    with pytest.raises(Interrupted) as e:
        t.run(ph, stop)
    part = e.value.partial
    assert part is not None and len(part.series["t_s"]) == 3 and part.totals["ios"] < 100
    assert Phase(**ph.model_dump()) == ph  # the stored spec rebuilds the phase


def test_a_trace_of_flushes_and_trims_only_has_no_read_write_latency(tmp_path):
    f = tmp_path / "sync.log"
    f.write_text("fio version 3 iolog\n10 /f sync\n20 /f trim 0 1048576\n30 /f sync\n")
    r = run_trace(str(tmp_path / "r.sqlite"), "--trace", f)
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["drives"][0]["metrics"]
    assert m["empty_ios"] == 0 and m["empty_flush_ios"] == 2 and m["empty_trim_ios"] == 1
    # no read or write: no latency of them (not 0 µs)
    assert m["empty_lat_mean_us"] is None and m["empty_lat_p99_us"] is None and m["empty_lat_p99_9_us"] is None
    # the flushes' and trims' own mean latency
    assert m["empty_flush_lat_mean_us"] > 0 and m["empty_trim_lat_mean_us"] > 0
