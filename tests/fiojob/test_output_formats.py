"""fio's --output-format takes a comma list of formats and prints each, the JSON document
before the text whatever the list's order (json+: the JSON with its latency bins): `ssdlab
run fio` prints them as fio does, and refuses a format it does not write in one line. The
JSON's numbers with a fraction as fio prints them ("%f"), the text's depth lines and issued
rwts line as fio's."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from fiojobs import job, refused, run_fio

BODY = "[a]\nrw=randread\nbs=4k\nsize=1m\n"


def _split(out: str) -> tuple[dict, str]:
    """The JSON document and the text after it."""
    start, end = out.index("{"), out.rindex("\n}") + 2
    return json.loads(out[start:end]), out[end:]


def _fio(tmp_path, fmt: str, body: str = BODY) -> str:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    job(tmp_path, "[global]\nioengine=null\nfilename=ssdlab-null\n" + body, "null.fio")
    r = subprocess.run(["fio", f"--output-format={fmt}", "null.fio"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("fmt", ["json,normal", "normal,json", "normal,json+", "json+,json"])
def test_a_list_of_formats_prints_the_json_then_the_text_as_fio_does(tmp_path, fmt):
    fdoc, ftext = _split(_fio(tmp_path, fmt))
    r = run_fio(tmp_path, job(tmp_path, BODY), "--output-format", fmt)
    assert r.exit_code == 0, r.output
    sdoc, stext = _split(r.stdout)
    for doc, text in ((fdoc, ftext), (sdoc, stext)):
        assert doc["jobs"][0]["read"]["total_ios"] == 256
        assert ("bins" in doc["jobs"][0]["read"]["clat_ns"]) == ("json+" in fmt)
        assert ("groupid=0" in text and "Run status group 0" in text) == ("normal" in fmt)
    assert "stored as run" in r.stderr and "stored as run" not in r.stdout  # stdout: fio's output


@pytest.mark.parametrize("fmt,words", [("json,terse", ("json,terse", "terse", "json,normal")),
                                       ("json,", ("a blank", "normal, json or json+")),
                                       ("xml", ("xml", "normal, json or json+"))])
def test_a_format_ssdlab_does_not_write_is_refused_in_one_line(tmp_path, fmt, words):
    refused(tmp_path, run_fio(tmp_path, job(tmp_path, BODY), "--output-format", fmt), *words)


SYNCS = "[a]\nioengine=null\nrw=randwrite\nbs=4k\nsize=16m\niodepth=8\nfsync=4\n"
MIXED_SYNCS = "[a]\nrw=write\nbs=4k\nsize=1m\nfsync=4\nunified_rw_reporting=mixed\n"


def _lines(text: str, *starts: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip().startswith(starts)]


@pytest.mark.parametrize("body", [SYNCS, BODY, "[a]\nrw=randwrite\nbs=4k\nsize=1m\nfdatasync=4\n",
                                  "[a]\nrw=randrw\nbs=4k\nsize=1m\nunified_rw_reporting=mixed\n", MIXED_SYNCS])
def test_the_text_has_fios_depth_and_issued_rwts_lines(tmp_path, body):
    # fio 3.33: "     issued rwts: total=0,4096,0,2046 short=0,0,0,0 dropped=0,0,0,0" (SYNCS);
    # at iodepth 1 the null engine counts no submission or reap ("submit    : 0=0.0%, 4=0.0%,
    # ..."); under unified_rw_reporting=mixed the fourth total and the sync lines are still
    # the syncs ("total=256,0,0,63"), though the JSON has no sync entry
    ftext = _fio(tmp_path, "normal", body)
    r = run_fio(tmp_path, job(tmp_path, "[global]\nioengine=null\n" + body), "--output-format", "normal")
    assert r.exit_code == 0, r.output
    starts = ("IO depths", "submit", "complete", "issued rwts")
    sl, fl = _lines(r.stdout, *starts), _lines(ftext, *starts)
    assert len(sl) == 4 and sl[0].startswith("  IO depths    : 1=")
    assert sl == fl
    assert _lines(r.stdout, "fsync/fdatasync") == _lines(ftext, "fsync/fdatasync")
    assert len(_lines(r.stdout, "sync percentiles")) == len(_lines(ftext, "sync percentiles"))  # units fio's own


def test_the_json_under_mixed_reporting_has_no_sync_entry_as_fios(tmp_path):
    fdoc, _ = _split(_fio(tmp_path, "json", MIXED_SYNCS))
    r = run_fio(tmp_path, job(tmp_path, "[global]\nioengine=null\n" + MIXED_SYNCS), "--output-format", "json+")
    assert r.exit_code == 0, r.output
    (sj,), (fj,) = json.loads(r.stdout)["jobs"], fdoc["jobs"]
    assert "sync" not in fj and "sync" not in sj
    assert set(sj) - set(fj) == {"jobs"}  # ssdlab's one extra key


def test_the_json_prints_its_fractions_as_fio_does(tmp_path):
    # psync, fsync=4: (4096 writes + 1023 syncs) / 4096 at depth 1 = 124.9755859375 %: fio
    # prints 124.975586 (json.c "%f")
    r = run_fio(tmp_path, job(tmp_path, "[a]\nrw=randwrite\nbs=4k\nsize=16m\nfsync=4\n"),
                "--output-format", "json")
    assert r.exit_code == 0, r.output
    assert '"1": 124.975586' in r.stdout and "124.9755859375" not in r.stdout

    def floats(x):
        if isinstance(x, float):
            yield x
        elif isinstance(x, dict):
            for v in x.values():
                yield from floats(v)
        elif isinstance(x, list):
            for v in x:
                yield from floats(v)

    found = list(floats(json.loads(r.stdout)["jobs"]))
    assert found and all(v == float(f"{v:.6f}") for v in found)
