"""The closed loop of `ssdlab fit` (tests/fit/test_closed_loop.py, benchmarks/fit_closed_loop.py):
a hidden drive (a built-in profile with perturbed parameters) runs the fingerprint; `ssdlab
fit` sees those runs alone (never the hidden profile); twin and hidden drive then run tests
outside the fingerprint, and every figure of HELD_OUT must agree within 10 %. Everything
goes through the `ssdlab` command as a user would run it."""

from __future__ import annotations

import json
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path

from clirun import cli
from ssdlab.profiles import load_text

WITHIN = 0.10
# the tests outside the fingerprint and the figures of each that must agree (fixed up front)
HELD_OUT = {
    "consistency": ("steady_iops", "p1_low_iops"),
    "quick": ("cdm_seq1m_q8t1_read_mbps", "cdm_seq1m_q8t1_write_mbps", "cdm_seq1m_q1t1_read_mbps",
              "cdm_seq1m_q1t1_write_mbps", "cdm_rnd4k_q32t16_read_iops", "cdm_rnd4k_q32t16_write_iops",
              "cdm_rnd4k_q1t1_read_iops", "cdm_rnd4k_q1t1_write_iops"),
    "idle": ("full_read_mbps", "full_write_mbps", "idle_read_mbps", "idle_write_mbps", "trim_write_mbps"),
    "trace": ("full_lat_mean_us", "full_read_lat_mean_us", "full_write_lat_mean_us"),
}
TIMES = ("nand.slc.read_us", "nand.native.read_us", "nand.slc.prog_us", "nand.native.prog_us", "nand.erase_us",
         "host.host_latency_us", "host.command_overhead_us", "host.write_latency_us")


def _get(p: dict, key: str):
    cur = p
    for part in key.split("."):
        if part not in cur:
            return None
        cur = cur[part]
    return cur


def perturbed(profile: str, seed: int, base: list[str] = ()) -> list[str]:
    """`--set` overrides of a hidden drive: every time +-30 % (drawn), the SLC cache 0.6-1.5 x,
    the spare area changed by 5-20 % more blocks per plane (`base`: a smaller drive first)."""
    rng = random.Random(seed)
    p = tomllib.loads(load_text(profile))
    given = dict(o.split("=", 1) for o in base)
    out = list(base)
    for key in TIMES:
        v = float(given.get(key, _get(p, key) or 0))
        if v:
            out.append(f"{key}={v * rng.uniform(0.7, 1.3):.4g}")
    for key in ("slc.dynamic_max_gb", "slc.static_gb"):
        v = float(given.get(key, _get(p, key) or 0))
        if v:
            out.append(f"{key}={v * rng.choice((0.6, 0.75, 1.3, 1.5)):.4g}")
    blocks = int(given.get("nand.blocks_per_plane", p["nand"]["blocks_per_plane"]))
    out.append(f"nand.blocks_per_plane={int(blocks * rng.uniform(1.05, 1.20))}")
    return out


def hidden_values(profile: str, overrides: list[str], keys: list[str]) -> dict[str, float]:
    """The hidden drive's value of each of the fit's parameters `keys` (derived ones, such as
    spare_pct and dies, computed from the overridden profile as the fit computes a class's)."""
    from ssdlab.fit.space import UNLIMITED, class_value

    p = tomllib.loads(load_text(profile))
    for o in overrides:
        key, _, v = o.partition("=")
        *path, last = key.split(".")
        cur = p
        for part in path:
            cur = cur.setdefault(part, {})
        cur[last] = float(v)
    out = {k: class_value(p, k, float(p["user_capacity_gb"])) for k in keys}
    return {k: float("inf") if k in UNLIMITED and not v else v for k, v in out.items()}  # 0: no such limit


def sets(overrides: list[str]) -> list[str]:
    return [x for o in overrides for x in ("--set", o)]


@dataclass
class Loop:
    fit: dict
    rows: list[dict]  # test, figure, hidden, twin, error, ok (and each seed's values: hidden_runs, twin_runs)
    twin: str = ""  # the twin's profile (TOML), to run it again

    @property
    def passed(self) -> bool:
        return all(r["ok"] for r in self.rows)


def metrics(test: str, drive: list[str], db: Path, args: list[str], timeout: float) -> dict:
    """The run's metrics; a consistency run's with its per-second IOPS too (`_iops`, from the
    store: what `compare` reads both drives over the same seconds from)."""
    r = cli("run", test, "--drive", *drive, *args, "--db", str(db), "--json", timeout=timeout, check=True)
    doc = json.loads(r.stdout)
    out = dict(doc["drives"][0]["metrics"])
    if "steady_reached" in out:
        from ssdlab.store import Store

        s = Store(db, create=False)
        try:
            d = s.run(int(doc["run_id"]))["drives"][0]["id"]
            out["_iops"] = next(p for p in s.phases(d) if p["name"] == "random")["series"]["iops"]
        finally:
            s.close()
    return out


def seeded(test: str, drive: list[str], db: Path, args: list[str], timeout: float,
           seeds: tuple[int, ...]) -> list[dict]:
    """The test's metrics, a run for each simulator seed (none given: one run, the default seed)."""
    return [metrics(test, drive, db, [*args, *(["--seed", str(s)] if seeds else [])], timeout)
            for s in seeds or (None,)]


def mean(runs: list[dict], name: str) -> float | None:
    vals = [r.get(name) for r in runs]
    return None if any(v is None for v in vals) else sum(vals) / len(vals)


def closed_loop(tmp: Path, profile: str, hidden: list[str], fingerprint: list[str], fit: list[str],
                held: dict[str, list[str]], timeout: float = 3600,
                seeds: dict[str, tuple[int, ...]] | None = None) -> Loop:
    """`held`: each held-out test's `run` options (e.g. {"consistency": ["--seconds", "300"]});
    `seeds`: tests whose figures are compared as their mean over runs with these simulator
    seeds (a figure that one run gives only roughly: the consistency test's 1 % low)."""
    db = tmp / "r.sqlite"
    fp = json.loads(cli("run", "fingerprint", "--drive", f"sim:{profile}", *sets(hidden), *fingerprint,
                        "--db", str(db), "--json", timeout=timeout, check=True).stdout)
    twin = tmp / "twin.toml"
    doc = json.loads(cli("fit", "--runs", str(fp["run_id"]), "--db", str(db), "--out", str(twin), *fit,
                         "--json", timeout=timeout, check=True).stdout)
    return Loop(doc, held_rows(db, profile, hidden, twin, held, timeout, seeds), twin.read_text())


def held_rows(db: Path, profile: str, hidden: list[str], twin: Path, held: dict[str, list[str]],
              timeout: float = 3600, seeds: dict[str, tuple[int, ...]] | None = None) -> list[dict]:
    """Twin (a profile file) and hidden drive run the held-out tests: a row per figure."""
    rows = []
    for test, args in held.items():
        many = (seeds or {}).get(test, ())
        h = seeded(test, [f"sim:{profile}", *sets(hidden)], db, args, timeout, many)
        t = seeded(test, [f"sim:{twin}"], db, args, timeout, many)
        rows += [{**r, **({"seeds": list(many)} if many else {})} for r in compare(test, h, t)]
    return rows


def same_window(h: list[dict], t: list[dict]) -> list[int] | None:
    """The seconds over which every consistency run of both drives is read when one of them did
    not reach steady state (it reports no figure of its own): from the latest steady start of
    the runs that reached it (every one of them is steady from there) or, none did, the steady
    rule's last five rounds (the band it compares every window with), to the end of the
    shortest run. None when every run reached steady state: each its own figures, as the test
    reports them. Twin and hidden drive ran the same test, so they are compared on what both
    measured, never a run's figure against nothing."""
    from ssdlab.analysis.steady import WINDOW, round_seconds

    runs = [*h, *t]
    if all(r.get("steady_reached") is not False for r in runs) or any("_iops" not in r for r in runs):
        return None
    n = min(len(r["_iops"]) for r in runs)
    starts = [int(r["steady_start_s"]) for r in runs if r.get("steady_reached")]
    return [max(starts) if starts else max(0, n - WINDOW * round_seconds(n)), n]


def _in_window(run: dict, name: str, window: list[int]) -> float | None:
    from ssdlab.analysis import summary

    s = summary(run["_iops"][window[0]:window[1]])
    return {"steady_iops": s.mean, "p1_low_iops": s.p1_low, "min_iops": s.min}.get(name)


def compare(test: str, h: list[dict], t: list[dict]) -> list[dict]:
    """A row per figure of HELD_OUT[test]: each drive's mean over its runs (one a seed), its
    error and whether it is within WITHIN; a consistency test where a run of either drive did
    not reach steady state is read over `same_window` for both (`window`, and which runs were
    steady: `hidden_steady`, `twin_steady`)."""
    window = same_window(h, t)
    rows = []
    for name in HELD_OUT[test]:
        if window is not None and name in ("steady_iops", "p1_low_iops"):
            hr, tr = ([_in_window(r, name, window) for r in x] for x in (h, t))
            extra = {"window": window, "hidden_steady": [bool(r.get("steady_reached")) for r in h],
                     "twin_steady": [bool(r.get("steady_reached")) for r in t]}
        else:
            hr, tr, extra = [r.get(name) for r in h], [r.get(name) for r in t], {}
        hv, tv = mean([{name: v} for v in hr], name), mean([{name: v} for v in tr], name)
        err = None if not hv or tv is None else (tv - hv) / hv
        rows.append({"test": test, "figure": name, "hidden": hv, "twin": tv, "error": err,
                     "ok": err is not None and abs(err) <= WITHIN, **extra,
                     **({"hidden_runs": hr, "twin_runs": tr} if len(h) > 1 or len(t) > 1 or extra else {})})
    return rows


def basis(row: dict) -> str:
    """What a row's figures were read over when not each run's own steady state (else ""):
    the window and the runs that did not reach steady state."""
    if "window" not in row:
        return ""
    a, b = row["window"]
    seeds, off = row.get("seeds"), []
    for side, name in (("hidden", "the hidden drive's"), ("twin", "the twin's")):
        which = [str(seeds[i]) if seeds else str(i + 1) for i, x in enumerate(row[f"{side}_steady"]) if not x]
        if which:
            off.append(f"{name} {'seed' if seeds else 'run'}{'s' if len(which) > 1 else ''} {', '.join(which)}")
    return f" (read over {a}-{b} s of every run: no steady state in {' and '.join(off)})"


def table(loop: Loop) -> str:
    lines = [f"{'test':12s} {'figure':28s} {'hidden':>10s} {'twin':>10s} {'error':>8s}"]
    for r in loop.rows:
        err = "-" if r["error"] is None else f"{100 * r['error']:+.1f} %"
        hidden, twin = (f"{v:10.4g}" if v is not None else f"{'none':>10s}" for v in (r["hidden"], r["twin"]))
        lines.append(f"{r['test']:12s} {r['figure']:28s} {hidden} {twin} {err:>8s}"
                     + ("" if r["ok"] else "  FAIL") + basis(r)
                     + (f"  (seeds {r['seeds']}: hidden {r['hidden_runs']}, twin {r['twin_runs']})" if "seeds" in r else ""))
    return "\n".join(lines)
