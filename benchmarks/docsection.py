"""Benchmarks that write their measured section of a doc (`--update-docs`): the section starts
at its heading and runs to the next heading of the same or a higher level (or the end)."""

from __future__ import annotations

import math
import os
from pathlib import Path


def load() -> str:
    """The machine's load, said with every time a benchmark reports (the cores are shared)."""
    return "load average {:.1f}, {:.1f}, {:.1f}".format(*os.getloadavg())


def num(v: float | None) -> str:
    return "-" if v is None else "no limit" if v == math.inf else f"{v:.4g}"


def _levels(lines: list[str]) -> list[int]:
    """Each line's heading level (0: not a heading; nothing inside a fenced code block is one)."""
    out, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        out.append(len(line) - len(line.lstrip("#")) if line.startswith("#") and not fenced else 0)
    return out


def replace(doc: Path, text: str) -> None:
    """Put `text` (a section, its heading first) in place of the section with that heading;
    a missing section is an error (the doc says where it goes)."""
    heading = text.splitlines()[0]
    lines = doc.read_text().splitlines()
    if heading not in lines:
        raise SystemExit(f"{doc}: no line {heading!r} to replace; add the heading where the section goes")
    start = lines.index(heading)
    level = _levels(lines)
    end = next((i for i in range(start + 1, len(lines)) if 0 < level[i] <= level[start]), len(lines))
    new = lines[:start] + text.rstrip("\n").splitlines() + ([""] if end < len(lines) else []) + lines[end:]
    doc.write_text("\n".join(new) + "\n")
