"""The serving loop polls the plugin's stats file every 0.2 s for the rows to show: each
poll reads only what was added since the last, so a long session at a short --interval
costs the same per row at its end as at its start (rereading and reparsing the whole file
each time made it grow with the session: 6 -> 87 CPU seconds over 5 minutes)."""

from __future__ import annotations

import json

from ssdlab.served import stats


class Counting(stats.StatsTail):
    """Counts the bytes each poll reads."""

    def __init__(self, path):
        super().__init__(path)
        self.read = 0

    def new_rows(self, limit=stats.CHUNK):
        before = self.offset
        rows = super().new_rows(limit)
        self.read += self.offset - before
        return rows


def test_polls_read_each_byte_once_and_hold_a_line_until_it_ends(tmp_path):
    path = tmp_path / "stats.jsonl"
    tail = Counting(path)
    assert tail.new_rows() == []  # not there yet
    got = []
    with open(path, "w") as f:
        for i in range(2000):
            line = json.dumps({"t_s": i, "reads": i * 7})
            f.write(line[:5])  # a line half written when the poll comes
            f.flush()
            got += tail.new_rows()
            f.write(line[5:] + "\n")
            f.flush()
            got += tail.new_rows()
    size = path.stat().st_size
    assert tail.read == size  # each byte once: linear in the file, never quadratic
    assert [r["t_s"] for r in got] == list(range(2000))
    assert len(tail.drain()) == len(got)
    assert stats.StatsTail(path).drain().col("t_s").tolist() == list(range(2000))


def test_the_final_line_without_its_newline_counts_and_a_torn_one_does_not(tmp_path):
    path = tmp_path / "stats.jsonl"
    path.write_text('{"t_s": 1}\n{"t_s": 2, "final": true}')
    tail = stats.StatsTail(path)
    assert [r["t_s"] for r in tail.new_rows() + tail.last_line()] == [1, 2]
    assert len(stats.StatsTail(path).drain()) == 2
    path.write_text('{"t_s": 1}\n{"t_s": 2, "fin')
    assert stats.StatsTail(path).drain().col("t_s").tolist() == [1]


ROW = ('{"t_s":%d,"unix_s":1796549693.4855158,"now_s":2.000152308,"busy_until_s":0,"reads":%d,"writes":0,'
       '"trims":0,"flushes":0,"read_bytes":%d,"write_bytes":0,"trim_bytes":0,"slc_capacity_bytes":333332480,'
       '"mapped_bytes":0,"host_write_bytes":0,"nand_write_bytes":0,"nand_slc_write_bytes":0,'
       '"nand_native_write_bytes":0,"waf":null,"erases":0,"gc_moves":0,"gc_stalls":0,"slc_fold_bytes":0,'
       '"free_blocks":5460,"slc_used_bytes":0,"cmt_hit_rate":null,"i_requests":1,"i_late":0,"i_lag_mean_us":0,'
       '"i_lag_p99_us":0,"i_lag_max_us":0,"i_late_lag_mean_us":0,"i_late_lag_max_us":0}\n')


def test_a_long_session_is_held_in_columns_not_parsed_rows(tmp_path):
    """A session sampled every 10 ms for a day has 8.6 M rows: parsed, a row is about 3 KB
    (25 GB); the serving loop and the end of a session keep about 220 bytes a row, and
    parse the file a megabyte at a time (about 8 MB at once, 400 bytes a row of these)."""
    import tracemalloc

    n = 20_000
    path = tmp_path / "stats.jsonl"
    path.write_text("".join(ROW % (i, i, 4096 * i) for i in range(n)))
    tracemalloc.start()
    try:
        tail = stats.StatsTail(path)
        while tail.new_rows():
            pass  # the serving loop's polls
        cols = tail.drain()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(cols) == n
    assert peak / n < 1200, f"{peak / n:.0f} bytes a row"  # parsed whole: 4,300
    t = cols.totals()
    assert t["reads"] == n - 1 and t["lag_requests"] == n
    assert cols.series()["reads"].tolist() == [0.0] + [1.0] * (n - 1)
