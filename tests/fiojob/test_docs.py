"""docs/cli.md lists the fio options as the code classifies them (generated from the
allow-list by tools/fio_options_doc.py), so the doc cannot drift from what runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cli_doc_lists_the_fio_options_the_code_accepts_and_refuses():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "fio_options_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
