"""ssdlab: SSD characterization on simulated and real drives."""

__version__ = "0.1.0"
METHODOLOGY_VERSION = "2"  # 2: quick as the tools run it; working-set idles first; idle adds read_written
