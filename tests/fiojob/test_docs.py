"""docs/cli.md lists the fio options as the code classifies them (generated from the
allow-list by tools/fio_options_doc.py), so the doc cannot drift from what runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ssdlab.fiojob import options as O

ROOT = Path(__file__).resolve().parents[2]


def test_cli_doc_lists_the_fio_options_the_code_accepts_and_refuses():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "fio_options_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_parity_table_names_every_option_accepted():
    """docs/methodology-fio.md tells, for every option ssdlab accepts, what it does in virtual
    time and what is left different from fio."""
    text = (ROOT / "docs" / "methodology-fio.md").read_text()
    start = text.index("## fio's options in virtual time")
    end = text.find("\n## ", start + 1)
    table = text[start:] if end < 0 else text[start:end]
    named = set(re.findall(r"`([a-z0-9_]+)", table))
    assert sorted((O.COMPILED | O.NOTED) - named) == []
