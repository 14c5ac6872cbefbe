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

    def new_rows(self):
        before = self.offset
        rows = super().new_rows()
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
    assert tail.all_rows() == got == stats.read_lines(path)


def test_the_final_line_without_its_newline_counts_and_a_torn_one_does_not(tmp_path):
    path = tmp_path / "stats.jsonl"
    path.write_text('{"t_s": 1}\n{"t_s": 2, "final": true}')
    assert [r["t_s"] for r in stats.StatsTail(path).all_rows()] == [1, 2]
    path.write_text('{"t_s": 1}\n{"t_s": 2, "fin')
    assert [r["t_s"] for r in stats.read_lines(path)] == [1]
