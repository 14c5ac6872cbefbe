"""ssdlab: SSD characterization on simulated and real drives."""

__version__ = "0.1.0"
METHODOLOGY_VERSION = "1"
