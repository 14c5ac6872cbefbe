"""A sweep's grid file (`ssdlab sweep --grid g.toml`): read as a regular file of a grid's
size, and checked whole against its schema (each key's type, `[set]` tables at most
MAX_SET_DEPTH deep, the tests' own options a sweep takes) before anything is built from it.
docs/sweeps.md describes the format."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any, Optional, Union, get_args

from pydantic import (BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr,
                      TypeAdapter, ValidationError)

from . import safe_path
from .methodology.test import CliOption

GRID_KEYS = {"test", "drives", "spare", "set", "seconds", "repeat", "interval", "seed", "testbed"}
MAX_GRID_BYTES = 1 << 20  # a grid file is a few keys and one [set] table


def file_values(key: str, v: Any) -> list[str]:
    vals = v if isinstance(v, list) else [v]
    if not vals:
        raise ValueError(f"grid file: '{key}' = []: give at least one value, e.g. {key} = [4, 8]")
    if any(isinstance(x, (dict, list)) for x in vals):
        raise ValueError(f"grid file: '{key}' must be a value or a list of values")
    out = [str(x).lower() if isinstance(x, bool) else str(x) for x in vals]
    if len(set(out)) != len(out):
        raise ValueError(f"grid file: '{key}' gives a value twice")
    return out


Scalar = Union[StrictStr, StrictInt, StrictFloat, StrictBool]
MAX_SET_DEPTH = 8  # [set.a.b.c...]: profile keys are a few levels deep


class GridFile(BaseModel):
    """A grid file's keys and their types: checked whole before anything else is read."""

    model_config = ConfigDict(extra="forbid", strict=True)

    test: Optional[StrictStr] = None
    drives: Optional[Union[StrictStr, list[StrictStr]]] = None
    spare: Optional[Union[StrictInt, StrictFloat, list[Union[StrictInt, StrictFloat]]]] = None
    set: Optional[dict[str, Any]] = None
    seconds: Optional[Union[StrictInt, StrictFloat]] = None
    repeat: Optional[StrictInt] = None
    interval: Optional[Union[StrictInt, StrictFloat]] = None
    seed: Optional[StrictInt] = None
    testbed: Optional[StrictStr] = None


def own_keys() -> dict[str, tuple[CliOption, list[str]]]:
    """The grid file's keys for the tests' own options a sweep takes (the PTS settings:
    `round_seconds` for --round-seconds), each with its option and the tests that take it."""
    from .methodology import ALL

    out: dict[str, tuple[CliOption, list[str]]] = {}
    for name, test in ALL.items():
        if test.options is None or test.needs_own_options() is not None:
            continue
        for o in test.options.cli:
            if not o.argument:
                out.setdefault(o.flag.removeprefix("--").replace("-", "_"), (o, []))[1].append(name)
    return out


def _check_own(path: Path, key: str, v: Any, o: CliOption) -> None:
    """A grid file's value of a test's own option, of the type its flag takes."""
    kinds = [t for t in (get_args(o.type) or (o.type,)) if t is not type(None)]
    if bool in kinds:
        ok, want = isinstance(v, bool), "true or false"
    elif float in kinds:
        ok, want = isinstance(v, (int, float)) and not isinstance(v, bool), "a number"
    else:
        ok, want = isinstance(v, int) and not isinstance(v, bool), "a whole number"
    if not ok:
        raise ValueError(f"grid file {path}: {key} = {shown(v)}: must be {want}")


def _check_set(path: Path, table: dict, where: str = "set", depth: int = 1) -> None:
    """[set] is a table of profile keys (sub-tables for dotted keys) = a value or a list."""
    if depth > MAX_SET_DEPTH:
        raise ValueError(f"grid file {path}: [{where}] nests deeper than {MAX_SET_DEPTH} tables")
    for k, v in table.items():
        if isinstance(v, dict):
            _check_set(path, v, f"{where}.{k}", depth + 1)
            continue
        vals = v if isinstance(v, list) else [v]
        for x in vals:
            try:
                TypeAdapter(Scalar).validate_python(x)
            except ValidationError:
                raise ValueError(f"grid file {path}: {where}.{k}: each value must be a string, "
                                 f"number or boolean, not {type(x).__name__}") from None


def read_grid_file(path: Path) -> dict:
    if not os.path.lexists(path):
        raise ValueError(f"grid file {path} not found")
    try:  # a regular file of a grid's size: not /dev/zero, not a FIFO
        doc = tomllib.loads(safe_path.read_input(path, f"grid file {path}", MAX_GRID_BYTES).decode())
    except safe_path.UnsafePath as e:
        raise ValueError(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"grid file {path}: cannot read it ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"grid file {path} is not valid TOML: {e}") from None
    except RecursionError:
        raise ValueError(f"grid file {path}: nested too deeply to read (a grid file is a few "
                         "keys and one [set] table)") from None
    own = own_keys()
    bad = sorted(set(doc) - GRID_KEYS - set(own))
    if bad:
        raise ValueError(f"grid file {path}: unknown key '{bad[0]}' (known: {', '.join(sorted(GRID_KEYS | set(own)))}; "
                         "profile keys go under [set])")
    for k in sorted(set(doc) & set(own)):
        _check_own(path, k, doc[k], own[k][0])
    try:
        GridFile.model_validate({k: v for k, v in doc.items() if k not in own})
    except ValidationError as e:
        x = e.errors()[0]
        key = str(x["loc"][0]) if x["loc"] else "grid"
        want = {"set": "a table of profile key = [values]", "seconds": "a number (seconds)",
                "interval": "a number (seconds)", "repeat": "a whole number",
                "seed": "a whole number", "spare": "a number or a list of numbers (%)",
                "drives": "a drive or a list of drives (strings)", "testbed": "a string",
                "test": "a string"}[key]
        raise ValueError(f"grid file {path}: {key} = {shown(doc.get(key))}: must be {want}") from None
    _check_set(path, doc.get("set") or {})
    return doc


def shown(v: Any) -> str:
    text = json.dumps(v, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def flatten(table: dict, prefix: str = "") -> dict[str, Any]:
    """[set.nand] channels = [4, 8]  ->  {"nand.channels": [4, 8]}"""
    out: dict[str, Any] = {}
    for k, v in table.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out
