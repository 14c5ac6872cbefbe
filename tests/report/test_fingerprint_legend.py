"""The fingerprint PNG's legend fits the figure and names each drive in full: two drives'
names, cut at 70 characters and set in two columns, ran off both sides of the figure, and
lost the `--set` that tells a what-if from the stock drive."""

from __future__ import annotations

import numpy as np

import ssdlab.figures.png as P
from ssdlab import methodology
from ssdlab.figures import FigureOptions
from ssdlab.figures.model import ReportDrive, ReportPhase, ReportRun

NAMES = ["WD SN520 128 GB (OEM, PCIe 3.0 x2, BiCS3 TLC, HMB) [user_capacity_gb=8]",
         "Samsung PM991 128 GB (OEM, PCIe 3.0 x4, V5 TLC, HMB) [user_capacity_gb=8]"]


def drive(name: str, mbps: float) -> ReportDrive:
    gb = np.arange(1.0, 9.0)
    return ReportDrive("sim:x", name, phases=[ReportPhase("fill", segments={"gb": gb, "mbps": np.full(8, mbps)})])


def test_the_legend_fits_and_names_each_drive_in_full(tmp_path, monkeypatch):
    seen = {}
    save = P._save

    def keep(fig, out_dir, name):
        fig.set_dpi(P.DPI)  # as saved: text at 200 dpi is not quite twice as wide as at 100
        fig.canvas.draw()
        (legend,) = fig.legends
        seen["box"], seen["page"] = legend.get_window_extent(), fig.bbox.frozen()
        seen["labels"] = [t.get_text().replace("\n", " ") for t in legend.get_texts()]
        return save(fig, out_dir, name)

    monkeypatch.setattr(P, "_save", keep)
    runs = [ReportRun(1, "fingerprint", [drive(NAMES[0], 800.0), drive(NAMES[1], 600.0)])]
    (fig,) = methodology.ALL["fingerprint"].figures(runs, FigureOptions())
    with P.plt.rc_context(P.STYLE):  # as the report draws it
        fig.png(tmp_path)
    assert seen["page"].x0 <= seen["box"].x0 and seen["box"].x1 <= seen["page"].x1
    assert seen["labels"] == NAMES
