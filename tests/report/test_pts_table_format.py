"""PTS tables and figures read alike: one number format per column of a table (a column
held "1" and "10.0"), its numbers aligned right (on the page and in the PNG), thousands separators on a PNG's linear y ticks, a table PNG's first
column as wide as its content (not its header on one line), a matrix's columns of numbers
one width with their names wrapped alike, and every title of a table or a
3D chart wrapped inside its PNG as the plots' are."""

from __future__ import annotations

import ssdlab.figures.pts_plots as pp
from ssdlab.figures.png import DPI, STYLE, plt
from ssdlab.figures.pts_plots import Line, Matrix3D, Plot, Table

LONG = ("pts-iops: IOPS by block size and R/W mix, a title long enough to run off the figure"
        "\nWD SN520 128 GB (OEM, PCIe 3.0 x2, BiCS3 TLC, HMB) [user_capacity_gb=3, nand.blocks_per_plane=40, "
        "host.write_buffer_kib=4096, slc.dynamic_max_gb=12, nand.native.prog_us=1650]")


def keep(seen):
    def save(fig, out_dir, key):
        fig.set_dpi(DPI)
        fig.canvas.draw()
        seen["fig"] = fig
        seen["page"] = fig.bbox.frozen()
        return []
    return save


def test_a_numeric_column_has_one_format():
    t = Table("table-k", "t", ["wait (s)", "IOPS", "state"],
              [[1, 10.04, "ok"], [10, 2.5, None], [100, 1234.0, "steady"]])
    cols = list(zip(*t.cells()))
    assert cols[0] == ("1", "10", "100")  # whole numbers stay whole
    assert cols[1] == ("10.0", "2.5", "1,234.0")  # not 10.0, 2.5 and 1,234
    assert cols[2] == ("ok", "-", "steady")
    assert '<td class="num">1,234.0</td>' in t.html() and "<td>steady</td>" in t.html()
    # a column of names and numbers (a report header's values) keeps each value's own
    header = Table("table-h", "t", ["item", "value"], [["scale", 0.001], ["threads", 2], ["test", "IOPS"]])
    assert [r[1] for r in header.cells()] == ["0.001", "2", "IOPS"]


def test_linear_y_ticks_have_thousands_separators(tmp_path, monkeypatch):
    seen: dict = {}
    monkeypatch.setattr(pp, "_save", keep(seen))
    with plt.rc_context(STYLE):
        Plot("fig-k", "t", "round", "IOPS", [Line("a", [1, 2], [29_702.0, 31_319.0])]).png(tmp_path)
    (ax,) = seen["fig"].axes
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert any("," in x for x in labels) and all(x.replace(",", "").isdigit() for x in labels), labels
    plt.close(seen["fig"])


def test_a_table_png_sizes_its_first_column_to_its_content(tmp_path, monkeypatch):
    seen: dict = {}
    monkeypatch.setattr(pp, "_save", keep(seen))
    rows = [[bs, *(1000.5 * bs * (i + 1) for i in range(7))] for bs in (4, 8, 16, 1024)]
    with plt.rc_context(STYLE):
        Table("table-k", "t", ["block size (KiB)", *(f"R/W {m}" for m in ("0/100", "5/95", "35/65", "50/50",
                                                                          "65/35", "95/5", "100/0"))], rows).png(tmp_path)
    cells = seen["fig"].axes[0].tables[0].get_celld()
    first, others = cells[(0, 0)].get_width(), [cells[(0, c)].get_width() for c in range(1, 8)]
    assert first <= min(others), (first, others)
    plt.close(seen["fig"])


def test_table_and_3d_titles_wrap_inside_the_png(tmp_path, monkeypatch):
    for fig_ in (Table("table-k", LONG, ["a", "b"], [[1, 2]]),
                 Matrix3D("fig-k-3d", LONG, ["4", "8"], ["0/100", "100/0"], [[1.0, 2.0], [3.0, 4.0]],
                          "IOPS", "block size (KiB)", "R/W mix")):
        seen: dict = {}
        monkeypatch.setattr(pp, "_save", keep(seen))
        with plt.rc_context(STYLE):
            fig_.png(tmp_path)
        ax = seen["fig"].axes[0]
        box = ax.title.get_window_extent()
        assert seen["page"].x0 <= box.x0 and box.x1 <= seen["page"].x1, type(fig_).__name__
        assert box.y1 <= seen["page"].y1, type(fig_).__name__  # its lines all on the page
        assert " ".join(ax.title.get_text().split()) == " ".join(LONG.split())
        plt.close(seen["fig"])


def test_a_table_png_aligns_numbers_right_and_text_left(tmp_path, monkeypatch):
    seen: dict = {}
    monkeypatch.setattr(pp, "_save", keep(seen))
    with plt.rc_context(STYLE):
        Table("table-k", "t", ["IOPS", "state"], [[10.04, "ok"], [1234.0, None], [2.5, "steady"]]).png(tmp_path)
    cells = seen["fig"].axes[0].tables[0].get_celld()
    align = {(r, c): cell.get_text().get_horizontalalignment() for (r, c), cell in cells.items()}
    assert all(align[(r, 0)] == "right" for r in range(1, 4)), align
    assert all(align[(r, 1)] == "left" for r in range(1, 4)), align
    assert align[(0, 0)] == align[(0, 1)] == "center"  # the headers as before
    plt.close(seen["fig"])


def test_a_matrix_pngs_columns_of_numbers_share_a_width_and_wrap_their_names_alike(tmp_path, monkeypatch):
    """IOPS values of 8 characters: "R/W 5/95" fitted its column and "R/W 0/100" wrapped under
    it; the columns of numbers now share one width with room for each name on one line."""
    seen: dict = {}
    monkeypatch.setattr(pp, "_save", keep(seen))
    mixes = ("0/100", "5/95", "35/65", "50/50", "65/35", "95/5", "100/0")
    rows = [[str(bs), *(53_758.3 - 7.1 * bs * i for i in range(7))] for bs in (4, 8, 16, 1024)]  # as iops.py
    with plt.rc_context(STYLE):
        Table("table-k", "t", ["block size (KiB)", *(f"R/W {m}" for m in mixes)], rows).png(tmp_path)
    cells = seen["fig"].axes[0].tables[0].get_celld()
    heads = [cells[(0, c)].get_text().get_text() for c in range(1, 8)]
    assert heads == [f"R/W {m}" for m in mixes], heads
    assert len({round(cells[(0, c)].get_width(), 9) for c in range(1, 8)}) == 1
    plt.close(seen["fig"])
    # a row too long for one line each still wraps (the widest columns first, as before)
    seen.clear()
    wide = [f"read and write mix of {m} in percent" for m in mixes]
    with plt.rc_context(STYLE):
        Table("table-w", "t", ["block size (KiB)", *wide], rows).png(tmp_path)
    cells = seen["fig"].axes[0].tables[0].get_celld()
    assert all("\n" in cells[(0, c)].get_text().get_text() for c in range(1, 8))
    plt.close(seen["fig"])
