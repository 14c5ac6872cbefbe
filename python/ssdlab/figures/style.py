"""Colours shared by both exporters, so a drive has the same colour in HTML and PNG."""

# Okabe-Ito: distinguishable with colour-blindness and in greyscale print.
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
          "#F0E442"]
COUNTER_COLOR = "#555555"
LINE_COLORS = {"temp_c": "#B3261E"}  # drive temperature (real drives): set apart from counters
