"""The figures of published fio logs: their jobs compile for the drive, and a figure reads
the named job's direction and percentile from fio's JSON."""

import pytest

from ssdlab.calibration import Ctx, fio_logs
from ssdlab.calibration.measures import fio_clat
from ssdlab.fiojob.compile import compile_job
from ssdlab.validate import FIGURES


def fio_figures():
    return [f for f in FIGURES if f.run[0].startswith(fio_logs.PREFIX)]


def job_names(node) -> set[str]:
    """Every fio job a figure's node reads (measure args, in combinations too)."""
    out = {node["args"]["job"]} if "args" in node and "job" in node["args"] else set()
    for k in ("ratio", "difference", "max", "sum"):
        for n in node.get(k, []):
            out |= job_names(n)
    return out


def test_every_job_compiles_and_holds_the_jobs_its_figures_read():
    figs = fio_figures()
    files = {f.run[0] for f in figs}
    assert files == {fio_logs.PREFIX + p.stem for p in fio_logs.JOBS.glob("*.fio")}
    for test in files:
        c = compile_job(fio_logs.job_file(test), 256 * 10**9, 42, 0)
        names = {j.name for j in c.jobs}
        read = set().union(*(job_names(f.node) for f in figs if f.run[0] == test))
        assert read and read <= names, (test, read, names)


def test_a_figure_reads_its_jobs_direction_and_percentile():
    run = fio_logs.run_key("j")
    pct = {"50.000000": 70_000, "99.000000": 90_000}
    doc = {"jobs": [
        {"jobname": "a", "read": {"total_ios": 5, "clat_ns": {"max": 1, "percentile": {"99.000000": 1}}},
         "write": {"total_ios": 0}},
        {"jobname": "b", "read": {"total_ios": 5, "clat_ns": {"max": 120_000, "percentile": pct}},
         "write": {"total_ios": 0}},
    ]}
    c = Ctx("d", {("d", run): {"metrics": {"fio": doc}}})
    assert fio_clat(c, run, "b", "read", "99.000000") == pytest.approx(90.0)
    assert fio_clat(c, run, "b", "read", "max") == pytest.approx(120.0)
    assert fio_clat(c, run, "b", "write", "max") is None
    assert fio_clat(c, run, "c", "read", "max") is None


def test_a_maximum_passes_within_a_factor_of_two_a_percentile_within_the_tolerance():
    f = {x.name: x for x in fio_figures() if x.drive == "pm981a-512"}
    top = f["QD1 4K read max"]
    assert top.hi == pytest.approx(4 * top.lo)  # published / 2 .. published x 2
    assert top.check(top.lo * 1.01)[0] and top.check(top.hi * 0.99)[0] and not top.check(top.lo * 0.9)[0]
    p50 = f["QD1 4K read p50"]
    assert p50.value is not None and p50.check(p50.value * 1.14)[0] and not p50.check(p50.value * 1.16)[0]
