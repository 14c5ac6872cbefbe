"""fio's zonemode=zbd on a simulated drive: zones with write pointers kept as fio keeps the
zones of a device that is not zoned. Writes land only at a zone's write pointer; size-bounded
jobs do the I/Os, bytes and zone resets fio's null engine does for the same job; resets
start at zone_reset_threshold and come every 1 / zone_reset_frequency writes; reads stay
below the write pointers; trims reset zones; the job kinds of fio's zoned examples run to
their end."""

from __future__ import annotations

import json

import pytest
from fiojobs import SMALL, counts, fio_null_zoned, sim
from typer.testing import CliRunner

_sim = pytest.importorskip("ssdlab._sim")

from ssdlab import profiles  # noqa: E402
from ssdlab.cli import app  # noqa: E402

ZONED = "zonemode=zbd\nzonesize=1m\n"
# size-bounded jobs over 8 zones of 1 MiB from offset 0 (fio's null engine takes the job's
# size as its device's, so the comparison keeps the region at the start, whole zones)
AS_FIO = {
    "sequential, three passes": "[a]\nrw=write\nbs=64k\nsize=8m\nio_size=24m\n" + ZONED,
    "sequential, reset threshold": ("[a]\nrw=write\nbs=64k\nsize=8m\nio_size=24m\n" + ZONED
                                    + "zone_reset_threshold=0.5\nzone_reset_frequency=0.25\n"),
    "random, no open-zone limit": "[a]\nrw=randwrite\nbs=64k\nsize=8m\nio_size=24m\n" + ZONED,
    "random, 3 open zones": ("[a]\nrw=randwrite\nbs=64k\nsize=8m\nio_size=24m\n" + ZONED
                             + "max_open_zones=3\n"),
}
EXACT_RESETS = {"sequential, three passes", "sequential, reset threshold", "random, no open-zone limit"}


def _resets(r: dict) -> int:
    return int(r["jobs"][0]["zone_resets"])


@pytest.mark.parametrize("name", list(AS_FIO))
def test_size_bounded_zbd_jobs_do_what_fios_null_engine_does(tmp_path, name):
    body = AS_FIO[name]
    r = sim(tmp_path, body)
    doc, fio_resets = fio_null_zoned(tmp_path, body)
    assert counts(r["jobs"][0], False) == counts(doc["jobs"][0], True)
    if name in EXACT_RESETS:  # fio's random zone picks are its own: the rest differ by a few
        assert _resets(r) == fio_resets[0]
    else:
        assert abs(_resets(r) - fio_resets[0]) <= 4


def test_resets_start_at_the_threshold_and_come_every_1_over_frequency_writes(tmp_path):
    base = "[a]\nrw=write\nbs=64k\nsize=8m\n" + ZONED + "zone_reset_threshold=0.5\n"
    cases = [
        # 3 MiB written of 8: under the threshold (4 MiB), no reset
        ("io_size=3m\nzone_reset_frequency=1\n", 0),
        # 8 MiB: the first 64 writes (4 MiB) fill zones 0-3; from then every write resets
        # the zone it goes to and lands at its start: the first of those 64 resets finds
        # the zone empty (nothing to reset), the other 63 reset one write each
        ("io_size=8m\nzone_reset_frequency=1\n", 63),
        # every 4th write past the threshold: 16 resets
        ("io_size=8m\nzone_reset_frequency=0.25\n", 16),
    ]
    for extra, n in cases:
        assert _resets(sim(tmp_path, base + extra)) == n
        assert fio_null_zoned(tmp_path, base + extra)[1] == [n]


def test_random_writes_land_only_at_write_pointers(tmp_path):
    """Random writes into zones under a 3-zone open limit, then every written byte read
    back in order below the write pointers: a write off a write pointer would leave a
    never-written block below one, which the read counts."""
    body = ("[global]\nbs=16k\nsize=16m\n" + ZONED + "max_open_zones=3\n"
            "[w]\nrw=randwrite\nio_size=5m\niodepth=8\n"
            "[r]\nstonewall\nrw=read\nio_size=5m\n")
    r = sim(tmp_path, body)
    w, rd = r["jobs"]
    assert w["write"]["bytes"] == 5 << 20
    assert rd["read"]["bytes"] == 5 << 20
    assert rd["read"]["unwritten_ios"] == 0
    # the same reads past the write pointers (read_beyond_wp) do meet unwritten blocks
    r2 = sim(tmp_path, body.replace("rw=read\n", "rw=read\nread_beyond_wp=1\n"))
    assert r2["jobs"][1]["read"]["unwritten_ios"] > 0


def test_a_read_of_empty_zones_reads_nothing(tmp_path):
    r = sim(tmp_path, "[a]\nrw=read\nbs=256k\nsize=16m\n" + ZONED)
    assert counts(r["jobs"][0], False) == [(0, 0), (0, 0), (0, 0)]


def test_trims_reset_written_zones(tmp_path):
    body = ("[global]\nsize=8m\n" + ZONED + "[w]\nrw=write\nbs=64k\nio_size=4m\n"
            "[t]\nstonewall\nrw=randtrim\nbs=1m\nio_size=2m\n"
            "[r]\nstonewall\nrw=read\nbs=64k\nio_size=4m\n")
    r = sim(tmp_path, body)
    w, t, rd = r["jobs"]
    assert t["trim"]["ios"] == 2 and t["zone_resets"] == 2
    # the two reset zones hold nothing to read: the read passes cover the other two
    assert rd["read"]["unwritten_ios"] == 0


runner = CliRunner()


def _cli(tmp_path, body: str) -> dict:
    f = tmp_path / "z.fio"
    f.write_text(body)
    sets = [x for s in SMALL for x in ("--set", s)]
    res = runner.invoke(app, ["run", "fio", str(f), "--drive", "sim:tlc-256", *sets,
                              "--db", str(tmp_path / "r.sqlite"), "--output-format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{"):])


def _own_zone() -> int:
    d = _sim.Drive(profiles.load_text("tlc-256"), overrides=SMALL)
    i = d.info()
    return int(i["dies"] * i["block_mib"] * (1 << 20))


# the job kinds of fio's zoned examples (zbd-*.fio, libzbc-*.fio, uring-cmd-zoned*.fio),
# written small: each runs to its end
def test_many_jobs_random_writes_under_an_open_zone_limit(tmp_path):
    doc = _cli(tmp_path, "[global]\ngroup_reporting\nrw=randwrite\nzonemode=zbd\nzonesize=16m\n"
                         "max_open_zones=4\nbs=512k\ndirect=1\nnumjobs=4\ntime_based\nruntime=300ms\n"
                         "[dev]\nioengine=libzbc\nsize=256m\n")
    j = doc["jobs"][0]
    # fio's job_runtime of a group_reporting entry: its jobs' runtimes summed
    assert j["jobs"] == 4 and j["job_runtime"] == 4 * 300 and j["write"]["total_ios"] > 0
    assert j["zone_resets"] > 0  # 256 MiB of zones overwritten: full zones are reset


def test_zone_append_jobs_with_the_drives_own_zones_and_sizes_in_zones(tmp_path):
    zone = _own_zone()
    doc = _cli(tmp_path, "[global]\nioengine=io_uring_cmd\ncmd_type=nvme\nzonemode=zbd\n"
                         "write_mode=zone_append\nsize=1z\nbs=8k\nverify=crc32c\nstonewall=1\n"
                         "[a]\nrw=randwrite\n[b]\niodepth=4\nrw=write\n[c]\niodepth=4\nrw=randwrite\n")
    assert [j["write"]["io_bytes"] for j in doc["jobs"]] == [zone] * 3
    # with verify, each job resets its zone before it writes (fio's zbd_file_reset)
    assert [j["zone_resets"] for j in doc["jobs"]] == [0, 1, 1]


def test_trim_jobs_reset_zones_in_a_flow_with_writers(tmp_path):
    doc = _cli(tmp_path, "[global]\nzonemode=zbd\nzonesize=16m\ndirect=1\ntime_based\nruntime=1\n"
                         "offset=8z\n[warmup]\nrw=randwrite\nbs=2m\nsize=32z\nruntime=200ms\n"
                         "[w]\nwait_for=warmup\nrw=randwrite\nbs=2m\nsize=32z\nflow=128\n"
                         "[t]\nwait_for=warmup\nrw=randtrim\nbs=16m\nsize=32z\nflow=1\n")
    warm, w, t = doc["jobs"]
    assert t["trim"]["total_ios"] > 0 and t["zone_resets"] == t["trim"]["total_ios"]
    # one trim for every 128 writes (the flow's weights), from the first
    assert abs(t["trim"]["total_ios"] - w["write"]["total_ios"] / 128) <= 1
    assert w["write"]["total_ios"] > 500  # the writer runs beside the trims, not after them


def test_resets_by_threshold_in_a_time_based_job(tmp_path):
    doc = _cli(tmp_path, "[a]\nrw=randwrite\nzonemode=zbd\nzonesize=16m\nbs=4m\ntime_based\n"
                         "runtime=1\nsize=8z\noffset=4z\nzone_reset_threshold=0.7\n"
                         "zone_reset_frequency=0.125\n")
    j = doc["jobs"][0]
    assert j["job_runtime"] == 1000 and j["zone_resets"] > 0


def test_sequential_reads_of_written_zones_only(tmp_path):
    doc = _cli(tmp_path, "[global]\nzonemode=zbd\nzonesize=16m\nread_beyond_wp=0\noffset=4z\n"
                         "[w]\nrw=write\nbs=1m\nsize=4z\nio_size=40m\n"
                         "[r]\nstonewall\nrw=read\nbs=1m\nsize=10z\nioengine=libaio\niodepth=16\n")
    w, r = doc["jobs"]
    assert w["write"]["io_bytes"] == 40 << 20
    # fio loops over the written data until the job's bytes are done (10 zones' worth)
    assert r["read"]["io_bytes"] == 160 << 20
