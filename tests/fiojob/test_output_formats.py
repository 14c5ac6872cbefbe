"""fio's --output-format takes a comma list of formats and prints each, the JSON document
before the text whatever the list's order (json+: the JSON with its latency bins): `ssdlab
run fio` prints them as fio does, and refuses a format it does not write in one line."""

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


def _fio(tmp_path, fmt: str) -> str:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    job(tmp_path, "[global]\nioengine=null\nfilename=ssdlab-null\n" + BODY, "null.fio")
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
