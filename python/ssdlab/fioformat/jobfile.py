"""fio's job-file format, read without fio (and written: `render`, the job files ssdlab
gives fio on a real drive): INI sections (`[global]` holds defaults for the
jobs after it, any other section is a job), `key=value` or a bare `key` (a flag), `;` and `#`
comment lines, `include FILE` (relative to the including file), `${ENV}` variables and fio's
own `$pagesize`, `$mb_memory`, `$ncpus`. Nothing in the file is executed or opened except
the included job files themselves, and only those inside the job file's own directory:
regular files, never echoed in an error, never read through a symlink another user owns
(safe_path: one planted in /tmp could make root read a file only root may read). The top
file's text as read is what the run stores (`read`'s `texts`), never the file read again. fio expands any environment variable; ssdlab
expands only the ones the user names (`--env NAME` or `--env NAME=VALUE`), so a job file
cannot copy the environment into the stored run."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import safe_path


class FioJobError(ValueError):
    """A job file ssdlab will not run: one line naming the option or line and why."""


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
    bare: set[str] = field(default_factory=set)  # the keys given without `=` (fio's JSON omits them)


def _keyword(m: re.Match) -> str:
    if m.group(1) == "pagesize":
        return "4096"
    if m.group(1) == "ncpus":
        return str(os.cpu_count() or 1)
    return str(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20)


def substitute(value: str, where: str, env: Mapping[str, str]) -> str:
    """`${NAME}` from `env` (the variables the user named), fio's keywords from the host."""
    def var(m: re.Match) -> str:
        if m.group(1) not in env:
            raise FioJobError(f"{where}: ${{{m.group(1)}}}: ssdlab expands only the variables you "
                              f"name: add --env {m.group(1)} (its value from the environment) or "
                              f"--env {m.group(1)}=VALUE")
        return env[m.group(1)]

    return _KEYWORDS.sub(_keyword, _ENV.sub(var, value))


def _read(path: Path, budget: list[int]) -> str:
    """A job file's text: a regular file (never a FIFO or a device), within the budget,
    through no symlink another user owns."""
    try:
        fd = safe_path.open_file(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY, what=f"job file {path}")
    except safe_path.Missing:
        raise FioJobError(f"{path}: no such job file (or not readable)") from None
    except safe_path.UnsafePath as e:
        if e.refusal:
            raise FioJobError(str(e)) from None
        raise FioJobError(f"{path}: no such job file (or not readable)") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise FioJobError(f"{path}: not a regular file: not a fio job file")
        data = f.read(MAX_BYTES + 1)
    budget[0] -= len(data)
    if budget[0] < 0:
        raise FioJobError(f"{path}: over {MAX_BYTES >> 20} MiB of job file text: not a fio job file")
    if b"\0" in data:
        raise FioJobError(f"{path}: binary data: not a fio job file")
    return data.decode("utf-8", errors="replace")


def _inside(inc: Path, top: Path, where: str) -> Path:
    """An included file, only inside the top job file's directory (links resolved first,
    none of another user's followed)."""
    try:
        real = Path(safe_path.real(inc, f"{where}: include {inc}"))
    except safe_path.UnsafePath as e:
        raise FioJobError(str(e)) from None
    if not real.is_relative_to(top):
        raise FioJobError(f"{where}: include: only files in the job file's directory ({top}) are "
                          "included: copy the file there")
    return real


def _lines(path: Path, depth: int, budget: list[int], env: Mapping[str, str], top: Path,
           texts: list[str] | None = None):
    if depth > MAX_INCLUDE_DEPTH:
        raise FioJobError(f"{path}: includes nested over {MAX_INCLUDE_DEPTH} deep (an include loop?)")
    text = _read(path, budget)
    if texts is not None and depth == 0:
        texts.append(text)
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"{path}:{n}"
        if not line or line[0] in ";#":
            continue
        line = re.split(r"\s[;#]", line, maxsplit=1)[0].rstrip()  # a comment after the value
        if line.startswith("include ") or line.startswith("include\t"):
            inc = Path(substitute(line[len("include"):].strip(), where, env))
            inc = _inside(inc if inc.is_absolute() else path.parent / inc, top, where)
            yield from _lines(inc, depth + 1, budget, env, top)
            continue
        yield line, where


def read(path: Path, env: Mapping[str, str] | None = None, texts: list[str] | None = None) -> list[Section]:
    """The job file's sections in order, options substituted (`${NAME}` from `env` only);
    includes expanded. Errors name the file and line, never a line's text. `texts` gets the
    top file's text as it was read (what a run stores: the file may have changed since)."""
    sections: list[Section] = []
    top = Path(os.path.realpath(Path(path).parent))
    for line, where in _lines(Path(path), 0, [MAX_BYTES], env or {}, top, texts):
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise FioJobError(f"{where}: not a section header ([NAME]) nor an option line")
            sections.append(Section(line[1:-1].strip(), where))
            if len(sections) > MAX_JOBS:
                raise FioJobError(f"{path}: over {MAX_JOBS} sections: not a job file ssdlab runs")
            continue
        key, eq, value = line.partition("=")
        key = key.strip().lower()
        if not re.fullmatch(r"[a-z0-9_\-]{1,64}", key):
            raise FioJobError(f"{where}: not an option line (key=value or a flag)")
        if not sections:
            raise FioJobError(f"{where}: {key}: an option before any [section]: put it under "
                              "[global] or a job's [NAME]")
        sections[-1].options.append((key.replace("-", "_"), substitute(value.strip(), where, env or {})
                                     if eq else "", where))
        if not eq:
            sections[-1].bare.add(key.replace("-", "_"))
    return sections


# ---- writing: the job files ssdlab gives fio on a real drive --------------------------------
_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f$\\]")


def check_path(path: str) -> str:
    """Refuse what a fio job file cannot carry verbatim: control characters (a newline
    would add job options), `$` (fio expands ${VAR}), a backslash (fio's escape) and
    leading or trailing blanks (fio strips them). ValueError with the fix."""
    bad = _UNSAFE_CHARS.search(path)
    if bad:
        raise ValueError(f"path {path!r}: character {bad.group()!r} is not allowed in a drive path "
                         "(fio job files cannot carry it); rename the file or directory")
    if path != path.strip():
        raise ValueError(f"path {path!r}: leading or trailing blanks are not allowed in a drive path")
    return path


def fio_filename(path: str) -> str:
    """`path` as fio's filename= value: ':' separates several files there, so it is
    escaped ('\\:'), and what cannot be escaped is refused (check_path)."""
    return check_path(path).replace(":", "\\:")


def section_name(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s or "phase")[:60] or "phase"


def render(comment: str, global_options: list[tuple[str, object]], name: str,
           job_options: list[tuple[str, object]]) -> str:
    """A job file of one `[global]` section and one job: a `;` comment line first, then
    `key=value` lines (values written as given: check_path and fio_filename make a path
    one fio reads verbatim)."""
    lines = [f"; {comment}", "[global]"]
    lines += [f"{k}={v}" for k, v in global_options]
    lines += ["", f"[{section_name(name)}]"]
    lines += [f"{k}={v}" for k, v in job_options]
    return "\n".join(lines) + "\n"
