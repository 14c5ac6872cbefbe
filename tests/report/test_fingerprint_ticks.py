"""The fingerprint PNG's latency axis keeps its numbers apart: QD1 latencies from 5 us to a
20 ms tail (a loop device's p99.9) span four decades, and labels at 1, 2 and 5 of each ran
into each other in the half-width panel ("5010020050100200...")."""

from __future__ import annotations

import pytest

from ssdlab.figures.fingerprint import latency_ticks
from ssdlab.figures.png import WIDTH, plt


@pytest.mark.parametrize("lo, hi", [(5, 20000), (8, 300), (20, 60)])
def test_the_latency_axis_labels_do_not_overlap(lo, hi):
    fig, (ax, _) = plt.subplots(1, 2, figsize=(WIDTH, 2.8), layout="constrained")
    try:
        ax.set(xscale="log", xlim=(lo, hi))
        latency_ticks(ax)
        fig.canvas.draw()
        boxes = sorted((t.get_window_extent() for t in ax.get_xticklabels()
                        if t.get_text() and lo <= t.get_position()[0] <= hi), key=lambda b: b.x0)
        assert len(boxes) >= 2
        assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:])), [b.x0 for b in boxes]
    finally:
        plt.close(fig)
