"""Parsers of other programs' output never crash a run: fio's JSON
reports (the recorded ones in tests/data/fio, mutated by hypothesis) and smartctl /
nvme-cli JSON (their real shapes, mutated the same way). A field that cannot be read is
unknown (NaN) with a warning; the rest is still read."""

from __future__ import annotations

import copy
import json
import math
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab.fioformat import json_read as fo
from ssdlab.targets.fio import identity

DATA = Path(__file__).parents[1] / "data" / "fio"
REPORTS = [r for d in sorted(DATA.iterdir()) if (d / "stdout.txt").exists()
           for r in fo.reports(fo.parse_stream((d / "stdout.txt").read_text())[0])]
FINALS = [fo.final_report((d / "stdout.txt").read_text()) for d in sorted(DATA.iterdir())
          if (d / "stdout.txt").exists()]

# the shapes smartctl 7.x (`-j -A`) and nvme-cli 2.x (`smart-log -o json`, `ocp
# smart-add-log -o json`) print, trimmed to a few fields around the ones read
SMARTCTL_NVME = {
    "json_format_version": [1, 0],
    "smartctl": {"version": [7, 3], "argv": ["smartctl", "-j", "-A", "/dev/nvme0"], "exit_status": 0},
    "device": {"name": "/dev/nvme0", "info_name": "/dev/nvme0", "type": "nvme", "protocol": "NVMe"},
    "nvme_smart_health_information_log": {
        "critical_warning": 0, "temperature": 44, "available_spare": 100,
        "available_spare_threshold": 5, "percentage_used": 3, "data_units_read": 21133527,
        "data_units_written": 18800418, "host_reads": 301116377, "host_writes": 412350233,
        "controller_busy_time": 1402, "power_cycles": 1021, "power_on_hours": 5113,
        "unsafe_shutdowns": 61, "media_errors": 0, "num_err_log_entries": 2,
        "warning_temp_time": 0, "critical_comp_time": 0, "temperature_sensors": [44, 51]},
    "temperature": {"current": 44},
    "power_cycle_count": 1021, "power_on_time": {"hours": 5113},
}


def _ata(aid: int, name: str, raw: int, rstr: str | None = None) -> dict:
    return {"id": aid, "name": name, "value": 100, "worst": 100, "thresh": 0, "when_failed": "",
            "flags": {"value": 50, "string": "-O--CK ", "prefailure": False, "updated_online": True},
            "raw": {"value": raw, "string": rstr or str(raw)}}


SMARTCTL_SATA = {
    "json_format_version": [1, 0],
    "smartctl": {"version": [7, 3], "argv": ["smartctl", "-j", "-A", "/dev/sdb"], "exit_status": 0},
    "device": {"name": "/dev/sdb", "info_name": "/dev/sdb [SAT]", "type": "sat", "protocol": "ATA"},
    "ata_smart_attributes": {"revision": 16, "table": [
        _ata(9, "Power_On_Hours", 12211),
        _ata(194, "Temperature_Celsius", 0x2A0014001F, "31 (Min/Max 20/42)"),
        _ata(241, "Total_LBAs_Written", 80250377922),
        _ata(247, "Host_Program_Page_Count", 1215513),
        _ata(248, "FTL_Program_Page_Count", 711050),
        _ata(249, "NAND_Writes_1GiB", 40993)]},
    "temperature": {"current": 31},
}
NVME_CLI = {"critical_warning": 0, "temperature": 317, "avail_spare": 100, "spare_thresh": 10,
            "percent_used": 1, "endurance_grp_critical_warning_summary": 0,
            "data_units_read": 9925612, "data_units_written": 13620390, "host_read_commands": 1,
            "host_write_commands": 2, "controller_busy_time": 3, "power_cycles": 4,
            "power_on_hours": 5, "unsafe_shutdowns": 6, "media_errors": 0, "num_err_log_entries": 0,
            "warning_temp_time": 0, "critical_comp_time": 0, "temperature_sensor_1": 317}
OCP = {"Physical media units written": {"hi": 0, "lo": 7000000000000},
       "Physical media units read": {"hi": 0, "lo": 6000000000000}, "Bad user nand blocks Raw": 0}

# odd documents met on real machines and in the audit
ODD = [[], None, "N/A", {"temperature": {"current": "N/A"}}, {"temperature": "hot"},
       {"ata_smart_attributes": {"table": [None, {"name": "Total_LBAs_Written", "raw": {"value": "1e3"}}]}},
       {"ata_smart_attributes": {"table": [_ata(194, "Temperature_Celsius", 0, "40 (Min/Max 20/50)")
                                          | {"raw": {"value": "40 (Min/Max 20/50)"}}]}},
       {"ata_smart_attributes": {"table": "none"}}, {"nvme_smart_health_information_log": []},
       {"nvme_smart_health_information_log": {"data_units_written": [1, 2]}}]

JSONS = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats()
                     | st.text(max_size=12), lambda c: st.lists(c, max_size=3)
                     | st.dictionaries(st.text(max_size=8), c, max_size=3), max_leaves=6)


def paths(doc, prefix=()):
    """Every (path) to a value inside a JSON document."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, prefix + (i,))


@st.composite
def mutated(draw, docs):
    """A document from `docs` with 1-4 values swapped for random JSON (or deleted)."""
    doc = copy.deepcopy(draw(st.sampled_from(docs)))
    for _ in range(draw(st.integers(1, 4))):
        ps = [p for p in paths(doc) if p]
        if not ps:
            break
        p = draw(st.sampled_from(ps))
        parent = doc
        for k in p[:-1]:
            parent = parent[k]
        if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
            del parent[p[-1]]
        else:
            parent[p[-1]] = draw(JSONS)
    return doc


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fio_consumers(rep) -> None:
    tot = fo.totals_from_report(rep)
    assert all(isinstance(v, float) for v in tot.values())
    lat = fo.latency_from_report(rep)
    assert lat["edges_us"].shape == lat["counts"].shape
    assert all(isinstance(lat[k], float) for k, _ in fo.PERCENTILES)
    fo.report_errors(rep)
    tr = fo.StatusTracker(0.0)
    row = tr.update(rep)
    assert row is None or all(isinstance(v, float) for v in row.values())


@FUZZ
@given(mutated(REPORTS))
def test_fio_report_consumers_never_crash(rep):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fo.FioOutputWarning)
        _fio_consumers(rep)


def test_an_unreadable_field_is_unknown_with_a_warning_and_the_rest_is_read():
    rep = copy.deepcopy(FINALS[0])
    good = fo.totals_from_report(rep)
    rep["jobs"][0]["write"]["io_bytes"] = "12x"
    with pytest.warns(fo.FioOutputWarning, match="write.io_bytes = '12x' is not a number"):
        bad = fo.totals_from_report(rep)
    assert math.isnan(bad["write_bytes"]) and math.isnan(bad["mbps"])
    assert bad["read_bytes"] == good["read_bytes"] and bad["duration_s"] == good["duration_s"]
    jd = rep["jobs"][0]["write"]
    (jd.get("lat_ns") or jd["clat_ns"])["bins"] = {"12x": 3}  # the audit's bins key
    with pytest.warns(fo.FioOutputWarning, match="latency bin"):
        lat = fo.latency_from_report(rep)
    assert len(lat["counts"]) == 0  # the histogram is unknown; fio's own percentiles remain
    assert lat["p99_us"] > 0


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fio_text_stream_never_crashes_and_tells_a_torn_end(data):
    text = (DATA / data.draw(st.sampled_from(["randrw70", "short_fill", "interrupted"])) / "stdout.txt").read_text()
    cut = data.draw(st.integers(0, len(text)))
    flips = data.draw(st.lists(st.tuples(st.integers(0, max(0, cut - 1)), st.characters()), max_size=3))
    t = list(text[:cut])
    for i, c in flips:
        if t:
            t[i] = c
    s = fo.JsonStream()
    step = data.draw(st.integers(1, 5000))
    objs = []
    for i in range(0, len(t), step):
        objs += s.feed("".join(t[i:i + step]))
    s.close()
    assert all(isinstance(o, dict) for o in objs)
    if not flips:
        whole = text.rstrip()
        # cut inside the last object: torn; the whole output: not torn
        last_open = whole.rfind("\n{") + 1
        if last_open < cut < len(whole):
            assert s.torn_tail
        if cut >= len(whole):
            assert not s.torn_tail


@FUZZ
@given(mutated([SMARTCTL_NVME, SMARTCTL_SATA]) | st.sampled_from(ODD) | JSONS)
def test_smartctl_parser_never_crashes(doc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", identity.TelemetryWarning)
        out = identity.parse_smartctl(doc)
    assert {"temp_c", "host_write_bytes", "nand_write_bytes"} <= set(out)
    assert all(isinstance(v, float) for v in out.values())


@FUZZ
@given(mutated([NVME_CLI]) | mutated([OCP]) | st.sampled_from(ODD) | JSONS)
def test_nvme_cli_parsers_never_crash(doc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", identity.TelemetryWarning)
        out = identity.parse_nvme_smart_log(doc)
        ocp = identity.parse_ocp_smart(doc)
    assert all(isinstance(v, float) for v in out.values()) and isinstance(ocp, float)


def test_real_shapes_are_read():
    nv = identity.parse_smartctl(SMARTCTL_NVME)
    assert nv["temp_c"] == 44 and nv["host_write_bytes"] == 18800418 * 512000.0
    sata = identity.parse_smartctl(SMARTCTL_SATA)
    assert sata["temp_c"] == 31 and sata["nand_write_bytes"] == 40993 * 2**30
    assert sata["host_pages"] == 1215513 and sata["nand_pages"] == 1215513 + 711050
    assert identity.parse_nvme_smart_log(NVME_CLI)["temp_c"] == 44
    assert identity.parse_ocp_smart(OCP) == 7000000000000


@pytest.mark.parametrize("i", range(len(ODD)))
def test_odd_documents_degrade_with_a_warning(i):
    doc = ODD[i]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = identity.parse_smartctl(doc)
        identity.parse_nvme_smart_log(doc)
    assert all(issubclass(x.category, identity.TelemetryWarning) for x in w)
    known = {k: v for k, v in out.items() if not math.isnan(v)}
    if i == 5:  # "1e3" as a string: still a number
        assert known == {"host_write_bytes": 1000 * 512.0}
    elif i == 6:  # the raw string "40 (Min/Max 20/50)" smartctl prints: 40
        assert known == {"temp_c": 40.0}
    else:  # nothing readable: unknown, and said so
        assert known == {} and w, (doc, out)


def test_telemetry_json_that_is_not_an_object_is_none(tmp_path):
    f = tmp_path / "tool"
    f.write_text("#!/bin/sh\necho '[1, 2]'\n")
    f.chmod(0o755)
    with pytest.warns(identity.TelemetryWarning, match="not an object"):
        assert identity._run_json([str(f)]) is None
    f.write_text("#!/bin/sh\necho '{\"a\": 1'\n")
    assert identity._run_json([str(f)]) is None
    assert json.dumps(identity.parse_smartctl({}))  # all NaN: nothing known
