"""Spec-sheet rows: each drive's rated sequential speeds and random IOPS against
CrystalDiskMark on the purged simulated drive, as a reviewer compares them, and the rated
sequential write after the SLC cache ("after TurboWrite") against the fill test's
post-cache speed. Sequential within +-15 %, random within +-35 % (ratings are best-case
figures of varying test conditions). The ratings and their sources are in spec_sheets.toml."""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Callable

from .figure import FILL, QUICK, Ctx, Figure, RunKey, of, on_testbed, ratio, testbed_flags

SEQ_TOL, RND_TOL = 0.15, 0.35


def _best(run: RunKey, keys: tuple[str, ...]) -> Callable[[Ctx], float | None]:
    """The best of several CrystalDiskMark figures (random IOPS: Q32T1 or Q32T16, as a
    rating's queue depth and thread count are often not stated)."""
    def f(c: Ctx) -> float | None:
        vals = [v for k in keys if (v := c.m(run, k)) is not None]
        return max(vals) if vals else None
    return f


# rating key: (figure name, metrics (the best of them), how, unit, tolerance); read from
# quick, except the post-cache rating (POST_CACHE), read from the fill test
POST_CACHE = "post_cache_write_mbps"
MEASURES = {
    "seq_read_mbps": ("rated seq read", ("cdm_seq1m_q8t1_read_mbps",),
                      "quick: cdm_seq1m_q8t1_read_mbps (purged drive, 1 GiB test file)", "MB/s", SEQ_TOL),
    "seq_write_mbps": ("rated seq write", ("cdm_seq1m_q8t1_write_mbps",),
                       "quick: cdm_seq1m_q8t1_write_mbps (purged drive, 1 GiB test file)", "MB/s", SEQ_TOL),
    "rnd_read_iops": ("rated 4K random read", ("cdm_rnd4k_q32t1_read_iops", "cdm_rnd4k_q32t16_read_iops"),
                      "quick: best of cdm_rnd4k_q32t1 / q32t16 read IOPS", "IOPS", RND_TOL),
    "rnd_write_iops": ("rated 4K random write", ("cdm_rnd4k_q32t1_write_iops", "cdm_rnd4k_q32t16_write_iops"),
                       "quick: best of cdm_rnd4k_q32t1 / q32t16 write IOPS", "IOPS", RND_TOL),
    POST_CACHE: ("rated write after the SLC cache", ("post_cache_mbps",),
                 "fill: post_cache_mbps (bytes/time from the drop to the end)", "MB/s", SEQ_TOL),
}
KINDS = {"rating": "rated", "twin": "twin's rating", "series": "series best", "class": "class range"}


def ratings() -> dict[str, dict]:
    return tomllib.loads((resources.files(__package__) / "spec_sheets.toml").read_text())


def _rated(r: dict, kind: str) -> tuple[dict, str]:
    """Every rating of `kind` one drive's sources give ({key: rating}, source): its own
    (kind = its `kind`) or its retail twin's (`[ID.twin]`, kind "twin")."""
    src = r if r["kind"] == kind else r.get("twin") if kind == "twin" else None
    if src is None:
        return {}, ""
    return {k: src[k] for k in MEASURES if k in src}, src["source"]


def rating_sets(r: dict) -> list[tuple[str, dict, str]]:
    """A drive's ratings as (kind, {key: rating}, source): its own, then its retail twin's
    for the keys its own source does not give."""
    own, source = _rated(r, r["kind"])
    out = [(r["kind"], own, source)]
    if "twin" in r:
        twin, twin_source = _rated(r, "twin")
        out.append(("twin", {k: v for k, v in twin.items() if k not in own}, twin_source))
    return out


def _run(key: str, r: dict) -> RunKey:
    # the maker's host where it differs from the review's (spec_sheets.toml `testbed`)
    return on_testbed(FILL if key == POST_CACHE else QUICK, tuple(r.get("testbed", ())))


def figures() -> list[Figure]:
    out = []
    table = ratings()
    for drive, r in table.items():
        for kind, rated, source in rating_sets(r):
            for key, v in rated.items():
                name, keys, how, unit, tol = MEASURES[key]
                run = _run(key, r)
                host = f", on the maker's host ({testbed_flags(run)})" if run[4] else ""
                lo, hi = (v, v) if not isinstance(v, list) else v
                value = None
                if kind == "series":  # an upper bound: the capacity can only be slower
                    lo, hi = None, hi * (1 + tol)
                elif lo == hi and kind != "class":
                    value, lo, hi = lo, None, None
                else:
                    lo, hi = lo * (1 - tol), hi * (1 + tol)
                out.append(Figure(drive, name if kind == "rating" else f"{name} ({KINDS[kind]})", run,
                                  _best(run, keys), value=value, lo=lo, hi=hi, unit=unit, how=how + host,
                                  source=source, tol=tol, kind="spec sheet"))
        out += _ratio_figures(drive, r, table)
    return out


def _ratio_figures(drive: str, r: dict, table: dict[str, dict]) -> list[Figure]:
    """The larger capacity against its `sibling`: measured ratio against the rated ratio, for
    every key both capacities are rated for by the same kind of source."""
    sib = r.get("sibling")
    if sib is None:
        return []
    out = []
    for kind in ("rating", "twin"):
        (mine, src), (theirs, sib_src) = _rated(r, kind), _rated(table[sib], kind)
        for key in MEASURES:
            if key not in mine or key not in theirs or any(isinstance(x, list) for x in (mine[key], theirs[key])):
                continue
            name, keys, how, _unit, tol = MEASURES[key]
            run = _run(key, r)
            out.append(Figure(
                drive, f"{name} over {sib}" + ("" if kind == "rating" else f" ({KINDS[kind]}s)"), run,
                ratio(_best(run, keys), of(sib, _best(run, keys))), value=mine[key] / theirs[key],
                unit="ratio", how=f"{how.split(' (')[0]} over the {sib}'s",
                source=f"{mine[key]:g} / {theirs[key]:g}: {src} | {sib_src}", tol=tol,
                kind="spec sheet", needs=((sib, run),)))
    return out
