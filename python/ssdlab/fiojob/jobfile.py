"""fio's job-file format, read without fio: INI sections (`[global]` holds defaults for the
jobs after it, any other section is a job), `key=value` or a bare `key` (a flag), `;` and `#`
comment lines, `include FILE` (relative to the including file), `${ENV}` variables and fio's
own `$pagesize`, `$mb_memory`, `$ncpus`. Nothing in the file is executed or opened except
the included job files themselves."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import FioJobError

MAX_BYTES = 4 << 20  # a job file (with its includes) larger than this is not a job file
MAX_INCLUDE_DEPTH = 8
MAX_JOBS = 4096
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KEYWORDS = re.compile(r"\$(pagesize|mb_memory|ncpus)\b")


@dataclass
class Section:
    name: str
    where: str  # file:line of the header
    options: list[tuple[str, str, str]] = field(default_factory=list)  # key, value, file:line


def _keyword(m: re.Match) -> str:
    if m.group(1) == "pagesize":
        return "4096"
    if m.group(1) == "ncpus":
        return str(os.cpu_count() or 1)
    return str(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20)


def substitute(value: str, where: str) -> str:
    def env(m: re.Match) -> str:
        if m.group(1) not in os.environ:
            raise FioJobError(f"{where}: ${{{m.group(1)}}} is not set in the environment: set it "
                              "or write the value into the job file")
        return os.environ[m.group(1)]

    return _KEYWORDS.sub(_keyword, _ENV.sub(env, value))


def _read(path: Path, budget: list[int]) -> str:
    if not path.is_file():
        raise FioJobError(f"{path}: no such job file")
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    budget[0] -= len(data)
    if budget[0] < 0:
        raise FioJobError(f"{path}: over {MAX_BYTES >> 20} MiB of job file text: not a fio job file")
    if b"\0" in data:
        raise FioJobError(f"{path}: binary data: not a fio job file")
    return data.decode("utf-8", errors="replace")


def _lines(path: Path, depth: int, budget: list[int]):
    if depth > MAX_INCLUDE_DEPTH:
        raise FioJobError(f"{path}: includes nested over {MAX_INCLUDE_DEPTH} deep (an include loop?)")
    for n, raw in enumerate(_read(path, budget).splitlines(), 1):
        line = raw.strip()
        where = f"{path}:{n}"
        if not line or line[0] in ";#":
            continue
        line = re.split(r"\s[;#]", line, maxsplit=1)[0].rstrip()  # a comment after the value
        if line.startswith("include ") or line.startswith("include\t"):
            inc = Path(substitute(line[len("include"):].strip(), where))
            yield from _lines(inc if inc.is_absolute() else path.parent / inc, depth + 1, budget)
            continue
        yield line, where


def read(path: Path) -> list[Section]:
    """The job file's sections in order, options substituted; includes expanded."""
    sections: list[Section] = []
    for line, where in _lines(Path(path), 0, [MAX_BYTES]):
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise FioJobError(f"{where}: '{line[:80]}': a section header is [NAME]")
            sections.append(Section(line[1:-1].strip(), where))
            if len(sections) > MAX_JOBS:
                raise FioJobError(f"{path}: over {MAX_JOBS} sections: not a job file ssdlab runs")
            continue
        if not sections:
            raise FioJobError(f"{where}: '{line[:80]}' comes before any [section]: put it under "
                              "[global] or a job's [NAME]")
        key, eq, value = line.partition("=")
        key = key.strip().lower()
        if not re.fullmatch(r"[a-z0-9_\-]+", key):
            raise FioJobError(f"{where}: '{line[:80]}': not an option line (key=value or a flag)")
        sections[-1].options.append((key.replace("-", "_"), substitute(value.strip(), where) if eq else "", where))
    return sections
