"""NVMe command options of fio's io_uring_cmd engine on a simulated drive: an extended-LBA
format (bs=4160: 4096 data + 64 metadata bytes a block) moves 4096 data bytes a block to NAND
while fio's byte counts keep 4160; write_mode= Write Zeroes and Write Uncorrectable program
nothing and deallocate the range, Verify reads the range inside the drive with no data on the
link, and a split draws each mode in its share."""

from __future__ import annotations

import pytest

from fiojobs import both_logged, fio_null, sim

CAP = 8 * 10**9


def compiled(tmp_path, body):
    from ssdlab.fiojob.compile import compile_job

    f = tmp_path / "c.fio"
    f.write_text(body)
    return compile_job(f, CAP)


EXT = "[w]\nrw=write\nbs=4160\nsize=4160k\n[r]\nstonewall\nrw=read\nbs=4160\nsize=4160k\n"
PI = "[global]\nioengine=io_uring_cmd\ncmd_type=nvme\npi_act=0\npi_chk=GUARD,APPTAG,REFTAG\napptag=0x0888\n"


def test_extended_lba_moves_4096_data_bytes_a_block_and_counts_fios_bytes(tmp_path):
    from ssdlab.fioformat.json_write import fio_json

    c = compiled(tmp_path, PI + EXT)
    assert [j.bs[1][0][0] for j in c.jobs] == [4096, 4096] and c.jobs[0].size == 4 << 20
    assert any("pi_chk" in n for n in c.notes) and any("metadata" in n for n in c.notes)
    r = sim(tmp_path, PI + EXT)
    assert r["totals"]["host_write_bytes"] == 1024 * 4096  # data only to NAND
    assert r["jobs"][1]["read"]["ios"] == 1024
    assert r["jobs"][1]["read"]["unwritten_ios"] == 0  # the reads find the blocks written
    doc = fio_json(c.spec(), r["jobs"], False, 1000)
    ours = [(j[d]["total_ios"], j[d]["io_bytes"]) for j in doc["jobs"] for d in ("read", "write")]
    fio = fio_null(tmp_path, EXT)
    theirs = [(j[d]["total_ios"], j[d]["io_bytes"]) for j in fio["jobs"] for d in ("read", "write")]
    assert ours == theirs == [(0, 0), (1024, 1024 * 4160), (1024, 1024 * 4160), (0, 0)]


def _three(mode: str, bs: str = "4k", size: str = "4m", depth: int = 1) -> str:
    return (f"[global]\nioengine=io_uring_cmd\nbs={bs}\nsize={size}\niodepth={depth}\n"
            f"[w]\nrw=write\n[m]\nstonewall\nrw=write\nwrite_mode={mode}\n[r]\nstonewall\nrw=read\n")


@pytest.mark.parametrize("mode", ["zeroes", "uncor"])
def test_zeroes_and_uncor_program_nothing_and_deallocate(tmp_path, mode):
    r = sim(tmp_path, _three(mode))
    assert r["totals"]["host_write_bytes"] == 4 << 20  # the first job's writes only
    assert r["totals"]["nand_write_bytes"] == 4 << 20
    m = r["jobs"][1]["write"]
    assert (m["ios"], m["bytes"]) == (1024, 4 << 20)  # counted as writes, as fio counts them
    assert r["jobs"][2]["read"]["unwritten_ios"] == 1024  # deallocated


def test_verify_reads_nand_inside_the_drive_without_the_link(tmp_path):
    r = sim(tmp_path, _three("verify", bs="128k", size="256m"))
    assert r["totals"]["host_write_bytes"] == 256 << 20  # verify programs nothing
    assert r["totals"]["read_bytes"] == 256 << 20  # only the read job's data crossed the link
    verify = r["jobs"][1]["write"]["lat"]["mean_us"]
    read = r["jobs"][2]["read"]["lat"]["mean_us"]
    empty = sim(tmp_path, "[v]\nioengine=io_uring_cmd\nrw=write\nwrite_mode=verify\nbs=128k\nsize=256m\n")
    assert empty["jobs"][0]["write"]["lat"]["mean_us"] < verify < read  # NAND read, no transfer


def test_write_mode_split_draws_each_mode_in_its_share(tmp_path):
    r = sim(tmp_path, "[a]\nioengine=io_uring_cmd\nrw=write\nbs=4k\nsize=64m\n"
                      "write_mode=write/40:zeroes/30:uncor/20:verify/10\n")
    share = r["totals"]["host_write_bytes"] / (64 << 20)
    assert 0.38 < share < 0.42
    assert r["jobs"][0]["write"]["ios"] == 16384


@pytest.mark.parametrize("value,shares", [
    ("zeroes", [0, 100, 0, 0]), ("write", [100, 0, 0, 0]),
    ("write/60:zeroes/30:uncor/10", [60, 30, 10, 0]),
    ("write/50:zeroes/:uncor/", [50, 25, 25, 0]),  # blanks split what is left, as fio does
    ("write/10:verify/:uncor/:zeroes/", [10, 30, 30, 30]),
])
def test_write_mode_values_read_as_fio_reads_them(value, shares):
    from ssdlab.fiojob.options import write_mode

    assert write_mode(value, "x") == shares


def test_extended_lba_bandwidth_samples_and_logs_count_fios_bytes(tmp_path):
    """fio's bandwidth samples (JSON bw_min/mean/max, the bw log) count each block's
    metadata as its byte counts do: 4160 bytes a block, 1000 blocks a second, about
    4062 KiB/s a 500 ms window, not the 4000 of the 4096 data bytes."""
    body = "[r]\nrw=read\nbs=4160\nsize=8320k\nrate_iops=1000\nwrite_bw_log=r\nlog_avg_msec=500\n"
    fj, sj, logs, _ = both_logged(tmp_path, body)
    for j in (fj, sj):
        assert j["read"]["io_bytes"] == 2048 * 4160
    # ssdlab's windows are exact in virtual time; fio's hold an I/O or two more or fewer on a
    # loaded host (a window of 503 blocks: 4086 KiB/s), so its windows are judged by their mean
    assert 4040 <= sj["read"]["bw_min"] <= sj["read"]["bw_max"] <= 4085, sj["read"]
    assert 4040 <= fj["read"]["bw_mean"] <= 4085, fj["read"]
    assert abs(sj["read"]["bw_mean"] - fj["read"]["bw_mean"]) <= 0.005 * fj["read"]["bw_mean"]
    ours = [int(ln.split(",")[1]) for ln in (logs / "r_bw.1.log").read_text().splitlines()]
    theirs = [int(ln.split(",")[1]) for ln in (tmp_path / "r_bw.1.log").read_text().splitlines()]
    assert len(ours) == len(theirs) and all(4040 <= v <= 4085 for v in ours), (ours, theirs)
    assert 4040 <= sum(theirs) / len(theirs) <= 4085, theirs
