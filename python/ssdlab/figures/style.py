"""Colours shared by both exporters, so a drive has the same colour in HTML and PNG."""

# Okabe-Ito: distinguishable with colour-blindness and in greyscale print.
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
          "#F0E442"]
COUNTER_COLOR = "#555555"
LINE_COLORS = {"temp_c": "#B3261E",  # drive temperature (real drives): set apart from counters
               "cpu_wait_pct": "#6A1B9A"}  # the host holding fio back (real drives)


def ink_on(rgb) -> str:
    """Text colour legible on a cell of colour `rgb` (0-1 floats): dark on light cells
    (viridis' yellow end), white on dark ones, by the cell's relative luminance (WCAG)."""
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(float(c)) for c in tuple(rgb)[:3])
    return "#111111" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 else "#ffffff"


def color_drives(runs) -> None:
    """One colour per drive for a whole report, in the order drives first appear: a drive
    keeps its colour from figure to figure, whichever other drives each test compares it
    with (a figure's position alone gave it another colour in each test)."""
    seen: dict[str, str] = {}
    for r in runs:
        for d in r.drives:
            d.color = seen.setdefault(d.label, COLORS[len(seen) % len(COLORS)])
