"""`python -m ssdlab.cli`: the `ssdlab` command."""

from . import app

app()
