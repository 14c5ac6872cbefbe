"""The numbers of fio's normal output as fio prints them (lib/num2str.c at 4 significant
figures; stat.c's layouts): the job's `IOPS=, BW= (alt)(io/runtime)` line, the group's
`bw= (alt), min-max (min-max alt), io= (alt)` line, and the date as ctime writes it;
checked against fio's own output of the same job (null engine) line by line in shape, and
against values fio printed."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from fiojobs import job, run_fio
from ssdlab.fioformat.text_output import num2str

N = r"\d+(?:\.\d+)?"
JOB_LINE = re.compile(rf"^  (read|write|trim|mixed): IOPS={N}[kMGTPE]?, BW={N}[KMGTPE]?i?B/s "
                      rf"\({N}[kMGTPE]?B/s\)\({N}[KMGTPE]?i?B/\d+msec\)(; \d+ zone resets)?$")
GROUP_LINE = re.compile(rf"^ +(READ|WRITE|TRIM|MIXED): bw={N}[KMGTPE]?i?B/s \({N}[kMGTPE]?B/s\), "
                        rf"{N}[KMGTPE]?i?B/s-{N}[KMGTPE]?i?B/s \({N}[kMGTPE]?B/s-{N}[kMGTPE]?B/s\), "
                        rf"io={N}[KMGTPE]?i?B \({N}[kMGTPE]?B\), run=\d+-\d+msec$")
DATE = re.compile(r"pid=\d+: (Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ 123]\d \d\d:\d\d:\d\d \d{4}$")
BODY = ("[a]\nrw=randrw\nbs=4k\nsize=3m\n[b]\nrw=write\nbs=8k\nsize=1m\n[c]\nstonewall\nrw=read\nbs=4k\n"
        "size=100k\nunified_rw_reporting=mixed\n")


@pytest.mark.parametrize("num,pow2,unit,want", [
    (256000, False, "", "256k"), (64000, False, "", "64.0k"), (85333, False, "", "85.3k"),
    (1048576000, True, "B/s", "1000MiB/s"), (1048576000, False, "B/s", "1049MB/s"),
    (1572864, True, "B", "1536KiB"), (1572864, False, "B", "1573kB"), (1048576, True, "B", "1024KiB"),
    (349525333, True, "B/s", "333MiB/s"), (262144000, False, "B/s", "262MB/s"), (999, True, "B", "999B"),
    (12345678, False, "", "12.3M")])
def test_num2str_is_fios(num, pow2, unit, want):
    assert num2str(num, pow2, unit) == want


def test_the_text_lines_have_fios_shape(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (make sysdeps)")
    (tmp_path / "n.fio").write_text("[global]\nioengine=null\nfilename=ssdlab-null\n" + BODY)
    fio = subprocess.run(["fio", "n.fio"], capture_output=True, text=True, cwd=tmp_path, timeout=60).stdout
    r = run_fio(tmp_path, job(tmp_path, BODY))
    assert r.exit_code == 0, r.output
    for name, out in (("fio", fio), ("ssdlab", r.stdout)):
        lines = out.splitlines()
        jobs = [ln for ln in lines if re.match(r"^  (read|write|trim|mixed): IOPS=", ln)]
        groups = [ln for ln in lines if re.match(r"^ +(READ|WRITE|TRIM|MIXED): bw=", ln)]
        heads = [ln for ln in lines if re.match(r"^[a-z]+: \(groupid=", ln)]
        assert len(jobs) == 4 and len(groups) == 3 and len(heads) == 3, (name, out)
        assert all(JOB_LINE.match(ln) for ln in jobs), (name, jobs)
        assert all(GROUP_LINE.match(ln) for ln in groups), (name, groups)
        assert all(DATE.search(ln) for ln in heads), (name, heads)
