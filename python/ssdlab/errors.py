"""User errors at the bottom of the package: any layer raises UserError for a mistake in
what it was given; the CLI prints it as one line (one_line) and exits 2."""

from __future__ import annotations

import os
import re

from pydantic import ValidationError

MAX_LINE = 2000  # an error quoting a huge input (a 100 KB nested TOML line) is cut
# the simulator's profile errors spell a float out in every digit (`1e300` as 301 of them)
HUGE_FLOAT = re.compile(r"`(\d{17,}\.\d+)`")
NOT_A_FILE = "not a regular file (a directory, FIFO or device); give a file"  # an input path that is there


def file_problem(path: str | os.PathLike[str], missing: str = "no such file") -> str | None:
    """Why an input path is no file to read: NOT_A_FILE when something else is there,
    `missing` when nothing is (a dangling link included); None for a regular file or a
    link to one."""
    if os.path.isfile(path):
        return None
    return NOT_A_FILE if os.path.exists(path) else missing


class UserError(Exception):
    pass


def printable(text: str, keep: str = "") -> str:
    """Text from outside (another host, a store, a user's tag), safe to print: every control
    character (newlines but those in `keep`, terminal escapes) shown as '?'."""
    return "".join(c if c.isprintable() or c in keep else "?" for c in text)


def one_line(e: BaseException) -> str:
    if isinstance(e, ValidationError):
        text = "; ".join(f"{'.'.join(map(str, x['loc'])) or 'phase'}: {x['msg']}" for x in e.errors())
    else:
        text = (str(e).strip() or type(e).__name__).splitlines()[0]
        text = HUGE_FLOAT.sub(lambda m: f"`{float(m.group(1)):g}`", text)
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 3] + "..."
