"""The boundary to the compiled simulator keeps the shape ssdlab.sim_types declares (and
`_sim.pyi` promises mypy): small runs through every entry point of ssdlab._sim, each dict
it takes or gives checked key by key against its TypedDict's annotations (required and
NotRequired keys, no key the type does not name, each value's type, numpy arrays' dtype)."""

from __future__ import annotations

import types
import typing
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import typing_extensions as te

_sim = pytest.importorskip("ssdlab._sim")

from ssdlab import profiles  # noqa: E402
from ssdlab import sim_types as T  # noqa: E402
from ssdlab.fiojob.compile import compile_job  # noqa: E402
from ssdlab.phase import ResolvedPhase, idle, purge, rand_io, seq_write, trim  # noqa: E402

from drives import SMALL  # noqa: E402


class Mismatch(AssertionError):
    pass


def check(value: object, tp: object, path: str = "", exact: bool = True) -> None:
    """`value` has type `tp`. `exact`: a TypedDict has no key it does not name (what the
    simulator builds); inputs (exact=False) may carry more (the simulator ignores them), and an
    int stands for a float there as mypy lets it."""
    if te.is_typeddict(tp):
        if not isinstance(value, dict):
            raise Mismatch(f"{path}: {type(value).__name__}, not a dict ({tp.__name__})")
        hints = te.get_type_hints(tp)
        missing = set(tp.__required_keys__) - set(value)
        unknown = set(value) - set(hints)
        if missing or (exact and unknown):
            raise Mismatch(f"{path} ({tp.__name__}): missing {sorted(missing)}, unknown {sorted(unknown)}")
        for k, sub in hints.items():
            if k in value:
                check(value[k], sub, f"{path}.{k}", exact)
        return
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        fails = []
        for a in args:
            try:
                return check(value, a, path, exact)
            except Mismatch as e:
                fails.append(str(e))
        raise Mismatch(f"{path}: {value!r} is none of {tp}: {fails}")
    if origin is typing.Literal:
        if value not in args:
            raise Mismatch(f"{path}: {value!r} not one of {args}")
        return
    if origin is np.ndarray:
        dtype = typing.get_args(args[1])[0]
        if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim != 1:
            raise Mismatch(f"{path}: {value!r} is not a 1-D array of {dtype.__name__}")
        return
    if origin is list:
        if not isinstance(value, list):
            raise Mismatch(f"{path}: {type(value).__name__}, not a list")
        for i, x in enumerate(value):
            check(x, args[0], f"{path}[{i}]", exact)
        return
    if origin is tuple:
        if not isinstance(value, tuple) or len(value) != len(args):
            raise Mismatch(f"{path}: {value!r} is not a {len(args)}-tuple")
        for i, (x, a) in enumerate(zip(value, args)):
            check(x, a, f"{path}[{i}]", exact)
        return
    if tp is type(None):
        ok = value is None
    elif tp is float and not exact:
        ok = type(value) in (float, int)
    else:  # bool is not an int here, nor an int a float: the simulator builds each exactly
        ok = type(value) is tp
    if not ok:
        raise Mismatch(f"{path}: {value!r} ({type(value).__name__}) is not {getattr(tp, '__name__', tp)}")


def series_row(row: object) -> None:
    """A sample handed to on_sample: one row of the series, floats."""
    assert isinstance(row, dict) and list(row) == list(te.get_type_hints(T.Series)), row
    assert all(type(v) is float for v in row.values()), row


def drive() -> tuple[_sim.Drive, int]:
    d = _sim.Drive(profiles.load_text("tlc-256"), overrides=SMALL)
    return d, d.info()["user_bytes"]


def test_the_checker_fails_on_drift():
    """A key gone, a key the type does not name, a value of another type: each caught."""
    d, cap = drive()
    r = d.run(purge().resolve(cap))
    check(r, T.RunResult)
    for broken in ({k: v for k, v in r.items() if k != "interrupted"},
                   {**r, "surprise": 1},
                   {**r, "totals": {**r["totals"], "ios": 3}},
                   {**r, "latency": {**r["latency"], "counts": r["latency"]["counts"].astype(float)}}):
        with pytest.raises(Mismatch):
            check(broken, T.RunResult)
    with pytest.raises(Mismatch):  # a NotRequired key of the wrong type
        check({"kind": "io", "stop_bytes": "1"}, T.PhaseSpec, exact=False)


def test_drive_info_profile_state_and_every_phase_kind():
    d, cap = drive()
    text = profiles.load_text("tlc-256")
    check(d.info(), T.DriveInfo)
    check(_sim.Drive.describe(text, SMALL), T.DriveInfo)
    check(_sim.Drive.describe(text, {"user_capacity_gb": 8, "slc.dynamic_max_gb": 1.5}), T.DriveInfo)
    assert type(_sim.Drive.check(text, SMALL)) is int
    p = d.profile()
    check(p, T.Profile)
    check(_sim.Drive(p).info(), T.DriveInfo)  # a dict profile: the whole resolved one
    rows: list[dict] = []
    for ph in (purge(), seq_write("w", stop_bytes=64 << 20), rand_io("r", 70, stop_bytes=16 << 20),
               trim(frac_length=0.5), idle(2.0), idle(30.0, until_quiet=True)):
        spec = ph.resolve(cap)
        check(spec, ResolvedPhase)  # Phase.resolve's dict (cast from pydantic's dump)
        check(spec, T.PhaseSpec, exact=False)  # what the simulator reads of it
        check(d.run(spec, rows.append), T.RunResult)
    assert rows
    for row in rows:
        series_row(row)
    state = d.snapshot()
    assert type(state.table_bytes()) is int
    check(_sim.Drive.from_state(state).info(), T.DriveInfo)


def test_an_interrupted_run_carries_a_whole_result(tmp_path: Path):
    """Stopped by its sample callback, each entry point raises with `partial`: the result
    of its kind so far (SimTarget stores it)."""
    d, cap = drive()

    def stop(row: dict) -> None:
        raise KeyboardInterrupt

    n = 20_000
    f = tmp_path / "j.fio"
    f.write_text("[w]\nrw=randwrite\nbs=4k\nsize=64m\n")
    for call, tp in ((lambda: d.run(seq_write("w", stop_bytes=256 << 20, sample_interval_s=0.01).resolve(cap),
                                    stop), T.RunResult),
                     (lambda: d.replay(np.arange(n, dtype=np.uint64) * 10_000, np.ones(n, np.uint8),
                                       np.arange(n, dtype=np.uint64) * 4096, np.full(n, 4096, np.uint64),
                                       sample_interval_s=0.01, on_sample=stop), T.ReplayResult),
                     (lambda: d.run_fiojob(compile_job(f, cap).spec(), sample_interval_s=0.01, on_sample=stop),
                      T.FioRunResult)):
        with pytest.raises(KeyboardInterrupt) as e:
            call()
        check(e.value.partial, tp)
        assert e.value.partial["interrupted"] is True


def test_replay_result():
    d, cap = drive()
    n = 400
    op = np.arange(n, dtype=np.uint8) % 4  # read, write, trim, flush
    r = d.replay(np.arange(n, dtype=np.uint64) * 20_000, op, np.arange(n, dtype=np.uint64) * 4096,
                 np.full(n, 4096, np.uint64), on_sample=series_row)
    check(r, T.ReplayResult)
    assert r["totals"]["trim_ios"] == n // 4 and r["read_latency"]["ios"] == n // 4


def test_fio_jobs_in_and_out(tmp_path: Path):
    """Compiled jobs carry every key the simulator reads (with Python's own besides), and a
    run gives each job's figures: a job that misses its rate_min sets the optional key."""
    d, cap = drive()
    f = tmp_path / "j.fio"
    f.write_text("[global]\nsize=16m\nbs=4k\n"
                 "[slow]\nrw=randwrite\nrate=4m\ntime_based\nruntime=5\nrate_min=8m\n"
                 "write_bw_log=slow\nwrite_hist_log=slow\nlog_hist_msec=500\n"
                 "[mixed]\nrw=randrw\nbssplit=4k/50:64k/50\niodepth=8\nnumber_ios=500\nverify=crc32c\n")
    jobs = compile_job(f, cap).spec()
    for j in jobs:
        check(j, T.FioJobSpec, "job", exact=False)
        assert type(_sim.fiojob_check(j, cap)) is type(None)
        dirs, offs, lens = _sim.fiojob_stream(j, 16)
        check((dirs, offs, lens), tuple[bytes, list[int], list[int]])
    r = d.run_fiojob(jobs, on_sample=series_row)
    check(r, T.FioRunResult)
    slow = r["jobs"][0]
    assert "rate_min_failed" in slow and "rate_min_failed" not in r["jobs"][1]
    assert len(slow["log"]["t_ms"]) and slow["hist_log"]


def test_session_counters():
    s = _sim.Session(profiles.load_text("tlc-256"), overrides=SMALL)
    check(s.info(), T.DriveInfo)
    assert type(s.user_bytes) is int
    done = s.submit("write", 0, 1 << 20, 0)
    s.submit("read", 0, 4096, done)
    s.submit("trim", 0, 4096, s.now())
    s.submit("flush", 0, 0, s.now())
    s.advance(s.now() + 10**9)
    check(s.counters(), T.SessionCounters)


def test_plain_csv_arrays():
    """The native CSV reader's arrays have the dtypes the stub gives (None: the Python parser)."""
    text = b"time,op,offset,length\n0.5,read,0,4096\n1.5,write,8192,4096\n"
    got = _sim.plain_csv_arrays(text, (0, 1, 2, 3), (1e9, 1, 1), (1000, 100, 10**12))
    assert got is not None
    i64 = npt.NDArray[np.int64]
    check(got, tuple[i64, npt.NDArray[np.uint8], i64, i64, i64])
    assert got[1].tolist() == [0, 1] and got[2].tolist() == [0, 8192] and got[4].tolist() == [2, 3]


def test_dict_overrides_take_python_values():
    """A bool, an int and a float in a dict of overrides reach the profile as TOML values
    (str(False) is "False", which TOML would not read as a boolean)."""
    text = profiles.load_text("tlc-256")
    p = _sim.Drive(text, overrides={"nand.read_suspend": False, "user_capacity_gb": 100,
                                    "nand.erase_us": 2500.5}).profile()
    assert p["nand"]["read_suspend"] is False and p["user_capacity_gb"] == 100
    assert p["nand"]["erase_us"] == 2500.5
    assert _sim.Drive(text, overrides={"user_capacity_gb": "100"}).profile()["user_capacity_gb"] == 100
