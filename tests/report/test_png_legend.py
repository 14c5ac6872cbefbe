"""A PNG's legend under the plot fits the figure: labels with a drive's full name (two per
drive in the TRIM figure) take fewer columns, or wrap, instead of running off both sides."""

from __future__ import annotations

import pytest

from ssdlab.figures.png import WIDTH, _legend_below, plt

NAME = "Kioxia BG4 128 GB (OEM BGA, PCIe 3.0 x4, BiCS4 TLC, HMB)"


@pytest.mark.parametrize("labels, ncols", [
    ([f"{NAME}: clean", f"{NAME}: after TRIM"], 2),
    ([NAME, NAME.replace("128", "256"), NAME.replace("128", "512")], None),
    ([NAME * 3], None),  # one label wider than the figure: wrapped
    (["clean", "after TRIM"], 2),
])
def test_the_legend_fits_the_figure(labels, ncols):
    fig, ax = plt.subplots(figsize=(WIDTH, 3), layout="constrained")
    try:
        for i, label in enumerate(labels):
            ax.plot([0, 1], [i, i + 1], label=label)
        _legend_below(fig, ax, ncols=ncols)
        fig.canvas.draw()
        (legend,) = fig.legends
        box, page = legend.get_window_extent(), fig.bbox
        assert box.x0 >= page.x0 and box.x1 <= page.x1
        assert len(legend.get_texts()) == len(labels)
        if len(labels) == 2 and len(labels[0]) < 20:  # short labels keep their columns
            assert legend._ncols == 2
    finally:
        plt.close(fig)


def test_the_legend_fits_the_figure_as_saved():
    """Measured at the PNG's 200 dpi: two labels side by side that fit at 100 dpi ran a few
    pixels off both sides of the saved PNG (hinted text is wider than twice 100 dpi's)."""
    from ssdlab.figures.png import DPI, STYLE

    labels = [f"XXXXX {NAME}"[:53] + f" {i}" for i in range(2)]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH, 3), layout="constrained")
        try:
            for i, label in enumerate(labels):
                ax.plot([0, 1], [i, i + 1], label=label)
            _legend_below(fig, ax)
            fig.set_dpi(DPI)
            fig.canvas.draw()
            (legend,) = fig.legends
            box, page = legend.get_window_extent(), fig.bbox
            assert box.x0 >= page.x0 and box.x1 <= page.x1
        finally:
            plt.close(fig)
