"""What a twin is fitted to: figures with tolerances, from a drive's own runs in the results
store (the fingerprint battery first, any other test of the same drive too) or from a
figures file (calibration/figures_file.py: a review's or a spec sheet's figures).

A stored run becomes one figure per metric it measured (and per entry of a metric that is a
table, such as the fill curve's shares), with a tolerance for how much such a figure moves
between runs of one drive; the simulator's own counters (WAF, energy) are left out, as a
real drive has none. Every figure belongs to a group (the phase or test it comes from):
the groups are what cross-validation holds back one at a time."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Callable

from ..calibration import Ctx, Figure, FiguresError, RunKey
from ..calibration import load as load_figures
from ..errors import UserError

TWIN = "twin"
# the simulator's own counters and figures that only a simulated drive reports: left out
SIM_ONLY = ("waf", "steady_waf", "stretch_waf", "trimmed_waf", "mbps_per_watt", "idle_wait_s", "repeats")
COUNTS = ("recovery_peaks",)  # whole numbers the fill's rule counts: too coarse to fit to

def group_of(test: Any, metric: str) -> str:
    """The metric's group: the test's own grouping (Test.metric_groups), else the test."""
    return next((g for g, prefixes in test.metric_groups if any(metric.startswith(p) for p in prefixes)), test.name)


def tolerance(metric: str) -> float:
    """How far a figure of this kind moves between runs of one drive (a seed, a host): the
    tails most, dips next, binned curves, middle percentiles and spreads less, gains (one rate over another)
    less, means and rates least
    (a fill's binned speed jumps where the cache ends: its cumulative averages, from the start to
    each 2.5 % and to the head's small shares, carry that, with the binned curves' tolerance)."""
    if metric == "fill_mbps_by_share":
        return 0.15
    if any(t in metric for t in ("p99_99", "p99_9", "max_")):
        return 0.25
    if any(t in metric for t in ("min_iops", "p1_low", "dip")):
        return 0.20
    if any(t in metric for t in ("p99_", "_by_", "p90_", "stdev")):  # a spread is known less well than a mean
        return 0.10
    if metric.endswith("_gain"):  # one rate over another: both move by their 5 %
        return 0.07
    return 0.05


@dataclass
class Evidence:
    """Figures of one drive (drive label TWIN), their groups, the runs a trial makes, and
    what the evidence says of the drive's structure (facts)."""

    figures: list[Figure]
    groups: dict[str, str]  # figure name -> group
    facts: dict[str, Any] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    plans: dict[RunKey, Any] = field(default_factory=dict)  # a run's own options (the fingerprint's plan)
    left_out: list[str] = field(default_factory=list)  # figures a twin cannot be fitted to, and why
    start: str | None = None  # the class the evidence names
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)  # run label -> stored phases (report)
    inferred: frozenset[str] = frozenset()  # facts read off a fingerprint's figures, not stated (infer_facts)
    cautions: list[str] = field(default_factory=list)  # runs whose figures are partly the host's (held_back)

    def runs(self) -> list[RunKey]:
        out: list[RunKey] = []
        for f in self.figures:
            for _, r in ((f.drive, f.run), *f.needs):
                if r not in out:
                    out.append(r)
        return out

    def run_plans(self) -> dict[RunKey, Any]:
        """Each run's own options: a stored run's replay (the fingerprint's plan), else the
        test's own for the run's options where the test has them (what a trial scales)."""
        from ..calibration.fio_logs import test_of
        from ..methodology import Options, get

        out = dict(self.plans)
        for r in self.runs():
            sized = get(test_of(r[0])).sized
            if r not in out and sized is not None:
                out[r] = sized(Options(spare=r[1], seconds=r[2], repeat=r[3]))
        return out

    def scaled_runs(self) -> list[RunKey]:
        """The runs a trial makes on a smaller drive: those of scale-free tests (rates,
        latencies and shares); the others run at the drive's own size in the same trial."""
        from ..calibration.fio_logs import test_of
        from ..methodology import get

        return [r for r in self.runs() if get(test_of(r[0])).scale_free]

    def scalable(self) -> bool:
        """Trials may run on a smaller drive: some figure is of a scale-free test."""
        return bool(self.scaled_runs())

    def merged(self, other: "Evidence") -> "Evidence":
        names = {f.name for f in self.figures}
        clash = [f.name for f in other.figures if f.name in names]
        if clash:
            raise UserError(f"figure {clash[0]!r} is given twice (a run and the figures file); rename one")
        a, b = self.facts.get("capacity_gb"), other.facts.get("capacity_gb")
        if a and b and abs(a - b) > 0.05 * max(a, b):  # a drive's bytes against its rated GB: a few %
            raise UserError(f"the runs' drive holds {a:g} GB and {other.sources[0]} states capacity_gb = {b:g}: "
                            "a twin is fitted to the evidence of one drive")
        # a fact one side states wins over the other's guess (a fingerprint's interface, cell
        # and mapping cache, read off its figures); else the first's (the runs' bytes)
        facts = {**other.facts, **self.facts}
        for k in self.inferred & other.facts.keys() - other.inferred:
            facts[k] = other.facts[k]
        contradiction(f"{self.sources[0]} and {other.sources[0]}", self.figures + other.figures)
        return Evidence(self.figures + other.figures, {**self.groups, **other.groups},
                        facts, self.sources + other.sources, {**self.plans, **other.plans},
                        self.left_out + other.left_out, self.start or other.start,
                        {**self.measured, **other.measured},
                        (self.inferred | other.inferred) - (other.facts.keys() - other.inferred)
                        - (self.facts.keys() - self.inferred), self.cautions + other.cautions)

    def without(self, group: str) -> "Evidence":
        keep = [f for f in self.figures if self.groups[f.name] != group]
        return dataclasses.replace(self, figures=keep)

    def checks_apart(self) -> tuple["Evidence", "Evidence | None"]:
        """The evidence a trial runs, and the checks: behaviour figures (bounds any sane drive
        meets, "no second at 0 IOPS") whose runs no other figure needs. They tell the search
        nothing while they hold, and their runs (two 2000 s consistency tests) can cost more
        than the rest of a trial: they are checked on the search's best few, not every trial."""
        def needs(f: Figure) -> set[RunKey]:
            return {r for _, r in ((f.drive, f.run), *f.needs)}

        others = set().union(*(needs(f) for f in self.figures if f.kind != "behaviour"))
        checks = [f for f in self.figures if f.kind == "behaviour" and not needs(f) & others]
        if not checks or len(checks) == len(self.figures):
            return self, None
        names = {f.name for f in checks}
        return dataclasses.replace(self, figures=[f for f in self.figures if f.name not in names]), self


# ---- runs of the store -----------------------------------------------------------------------
def _entries(value: Any) -> list[tuple[str | None, float]]:
    """(entry or None, number) of a metric: a number itself, or each numeric entry of a table."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [(None, float(value))] if math.isfinite(value) else []
    if isinstance(value, dict):
        return [(str(k), float(v)) for k, v in value.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
    return []


def _reader(run: RunKey, key: str, entry: str | None) -> Callable[[Ctx], float | None]:
    def f(c: Ctx) -> float | None:
        v = c.runs[(c.drive, run)]["metrics"].get(key)
        if entry is not None:
            v = v.get(entry) if isinstance(v, dict) else None
        return None if v is None or isinstance(v, (dict, list)) else float(v)
    return f


def replayable() -> list[str]:
    """Tests whose stored runs a twin can run again: their options are all spare area, seconds
    and repeats (not a trace or a job file of the user's)."""
    from ..methodology import ALL

    return [n for n, t in ALL.items() if t.options is None]


def identity_of(run: dict[str, Any], drive: dict[str, Any]) -> tuple[Any, ...]:
    """What tells drives apart: kind, model, serial, capacity, and for a simulated drive the
    `--set` overrides it was run with (the profile itself is never read)."""
    i = drive["identity"]
    sets = tuple(sorted(_canonical(o) for o in run["args"].get("set") or ())) if i.get("kind") == "sim" else ()
    return (i.get("kind"), i.get("model"), i.get("serial"), i.get("capacity"), sets)


def _canonical(override: str) -> str:
    """key=value with a number written one way (75, 75.0 and 7.5e1 are one drive's value)."""
    key, _, value = override.partition("=")
    try:
        value = repr(float(value))
    except ValueError:
        value = value.strip()
    return f"{key.strip()}={value}"


def from_runs(store: Any, run_ids: list[int]) -> Evidence:
    """The figures of stored runs of one drive; bad input (another drive's run, a run not
    complete, a test the twin cannot replay) is a UserError naming the run."""
    from ..methodology import Options, get
    from ..methodology.common import Paced, area_bytes

    figs: list[Figure] = []
    groups: dict[str, str] = {}
    plans: dict[RunKey, Any] = {}
    left: list[str] = []
    measured: dict[str, dict[str, Any]] = {}
    first: tuple[Any, ...] | None = None
    capacity = 0
    facts: dict[str, Any] = {}
    inferred: set[str] = set()
    cautions: list[str] = []
    for rid in run_ids:
        run = store.run(rid)
        if len(run["drives"]) != 1:
            raise UserError(f"run {rid} measured {len(run['drives'])} drives; fit one drive's runs (run each "
                            "drive on its own)")
        d = run["drives"][0]
        if run["test"] not in replayable():
            raise UserError(f"run {rid} is a {run['test']} run, which a twin cannot replay; give runs of "
                            f"{', '.join(replayable())}")
        if d["status"] != "complete":
            raise UserError(f"run {rid} is {d['status']}, not complete; fit complete runs only")
        if run["args"].get("precondition") is False:
            raise UserError(f"run {rid} was made with --no-precondition (the drive in whatever state it was in), "
                            "which a twin cannot replay; give a run with the test's own preconditioning")
        ident = identity_of(run, d)
        if first is None:
            first, capacity = ident, int(d["identity"]["capacity"])
        elif ident != first:
            raise UserError(f"run {rid} is of another drive ({d['spec']}: {ident[1]}, {ident[3]} bytes) than "
                            f"run {run_ids[0]}; a twin is fitted to the runs of one drive")
        args = run["args"]
        spare = float(args.get("spare") or 0.0)
        seconds = args.get("seconds")
        test = run["test"]
        the_test = get(test)
        # repeats only where the test reads them: a fill is the figures file's fill (repeat 1)
        repeat = int(args.get("repeat") or 1) if "repeat" in the_test.uses else 1
        key: RunKey = (test, spare, None if seconds is None else float(seconds), repeat, ())
        if key in plans or any(f.run == key for f in figs):
            raise UserError(f"run {rid} repeats another run's test and options; give each once")
        resolution: dict[str, float] = {}
        phases = store.phases(d["id"], with_data=True)
        if (why := held_back(phases)) is not None:
            cautions.append(f"run {rid}: {why}: figures from it are partly the host's; run it again on a quiet host")
        metrics = analyzed(test, phases, Options(spare=spare, seconds=key[2], repeat=key[3])) or d["metrics"]
        if the_test.resolution is not None:
            resolution.update(the_test.resolution(phases, metrics))
        if the_test.replay is not None:
            area = area_bytes(capacity, Options(spare=spare))
            plans[key] = the_test.replay(phases, area)
            measured[f"run {rid}"] = {"phases": phases, "spec": d["spec"]}
            shown = infer_facts(metrics)
            facts.update(shown)
            inferred |= shown.keys()
        elif args.get("interval") is not None:  # quick's idle between tests: its trials idle so too
            plans[key] = Paced(float(args["interval"]))
        for name, value in metrics.items():
            if name in SIM_ONLY or name in COUNTS:
                continue
            if any(fnmatchcase(name, p) for p in the_test.unfitted):
                continue
            for entry, v in _entries(value):
                label = f"{test}: {name}" + (f"[{entry}]" if entry is not None else "")
                if v <= 0:
                    left.append(f"{label}: {v:g} (a rate or latency must be above 0)")
                    continue
                tol = max(tolerance(name), resolution.get(name, 0.0))
                # a whole metric reads what a figures file's `metric = name` reads (contradiction)
                node = {"metric": name} if entry is None else None
                figs.append(Figure(TWIN, label, key, _reader(key, name, entry), value=v, unit=_unit(name),
                                   how=f"{test}: {name}" + (f" {entry}" if entry else ""), tol=tol,
                                   source=f"run {rid} ({d['spec']})", kind="run", node=node))
                groups[label] = group_of(the_test, name)
    facts["capacity_gb"] = capacity / 1e9
    ids = ",".join(str(i) for i in run_ids)
    return Evidence(figs, groups, facts, [f"runs {ids} of {store.path}"], plans, left, None, measured,
                    frozenset(inferred), cautions)


def held_back(phases: list[dict[str, Any]]) -> str | None:
    """Where a real drive's run had fio waiting for a CPU (targets/fio/cpu_wait.py) as long as
    a report draws it: its worst phase, said in a clause; None for a calm or simulated run."""
    from ..figures.data import CPU_WAIT_SHOWN_PCT

    waits = [(float(w), p["name"]) for p in phases
             if isinstance(w := p["totals"].get("cpu_wait_max_pct"), (int, float)) and math.isfinite(w)]
    worst = max(waits, default=(0.0, ""))  # NaN: no second sampled
    if worst[0] < CPU_WAIT_SHOWN_PCT:
        return None
    return f"fio waited for a CPU up to {worst[0]:.0f} % of a second in its '{worst[1]}' phase"


def analyzed(test: str, phases: list[dict[str, Any]], opts: Any) -> dict[str, Any] | None:
    """The test's metrics computed again from the stored phases (a run stored before a metric
    was added has it too); None if the phases do not make a result (a run of another version)."""
    from ..methodology import get
    from ..phase import Phase, PhaseResult

    try:
        results = [PhaseResult(Phase(**p["spec"]), p["series"], p["segments"],
                               {**p["latency"], **(p["histogram"] or {})}, p["totals"]) for p in phases]
        return get(test).analyze(results, opts)
    except (KeyError, ValueError, TypeError, IndexError):
        return None


def _unit(name: str) -> str:
    """A metric's unit from its name: a table's values by what precedes `_by_` (iops_by_gb
    holds IOPS, per GB), a quick run's mean of its repeats as the figure's."""
    base = name.split("_by_")[0].removesuffix("_mean")
    for suffix, unit in (("mbps", "MB/s"), ("iops", "IOPS"), ("us", "us"), ("ms", "ms"), ("gb", "GB"),
                         ("share", "share"), ("s", "s")):
        if base == suffix or base.endswith(f"_{suffix}"):
            return unit
    return "ratio"


def infer_facts(m: dict[str, Any]) -> dict[str, Any]:
    """The structure a fingerprint shows: the interface (no phase above 600 MB/s: SATA's link;
    the reads of cached data are the fastest a drive moves), the cell type (no SLC cache: MLC; the spread of QD1 read page types: 2 levels of
    1 and 2 reference voltages (MLC) a ratio of 2 between the fast and slow half, 2-3-2 (TLC)
    1.5, QLC's 4-4-4-3 under 1.35), the mapping cache (QD1 reads slower over the whole area
    than over the smallest span: a cache that does not cover the drive)."""
    out: dict[str, Any] = {}
    seq = max((m.get(k) or 0.0) for k in ("read_seq_mbps", "cache_seq_read_mbps", "peak_mbps"))
    if seq:
        out["interface"] = "sata" if seq < 600 else "pcie"
        if seq > 4200:
            out["pcie_gen"] = 4
    p25, p75 = m.get("qd1_read_p25_us"), m.get("qd1_read_p75_us")
    spread = p75 / p25 if p25 and p75 else None
    if m.get("slc_cache_share") is None:
        out["cell"] = "mlc"
    elif spread is not None and spread < 1.35:
        out["cell"] = "qlc"
    else:
        out["cell"] = "tlc"
    spans = m.get("qd1_read_mean_us_by_span") or {}
    vals = [v for v in spans.values() if v]
    if len(vals) >= 2 and spans.get("1") and spans["1"] > 1.1 * min(vals):
        out["mapping"] = "hmb"
    else:
        out["mapping"] = "dram"
    return out


# ---- a figures file --------------------------------------------------------------------------
def _other_drives(node: dict[str, Any]) -> bool:
    if "drive" in node:
        return True
    return any(_other_drives(n) for k in ("ratio", "difference", "max", "sum") for n in node.get(k, []))


def from_figures(path: Path) -> Evidence:
    """A figures file's figures for one twin: those that compare with another drive are left
    out (said in `left_out`), every other one is a figure of the twin."""
    try:
        ff = load_figures(path)
    except FiguresError as e:
        raise UserError(str(e)) from None
    figs, groups, left = [], {}, []
    for f in ff.figures:
        if f.node is not None and _other_drives(f.node):
            left.append(f"{f.name}: compares with another drive ({', '.join(sorted({d for d, _ in f.needs}))})")
            continue
        g = dataclasses.replace(f, drive=TWIN, needs=tuple((TWIN, r) for _, r in f.needs))
        figs.append(g)
        groups[g.name] = f.run[0] if f.kind != "spec sheet" else "spec sheet"
    contradiction(path, figs)
    facts = dict(ff.facts)
    cap = facts.get("capacity_gb")
    if cap is not None and not 0 < cap <= MAX_GB:  # 0 is not "none given": that is leaving it out
        raise UserError(f"{path}: fact capacity_gb = {cap:g}: must be above 0 and at most {MAX_GB:g} (GB)")
    if ff.start is not None:
        from ..profiles import builtin_ids

        if ff.start not in builtin_ids():
            raise UserError(f"{path}: start = {ff.start!r}: not a class (a built-in profile: "
                            f"{', '.join(builtin_ids())})")
    return Evidence(figs, groups, facts, [f"figures {path}"], {}, left, ff.start)


def contradiction(where: Path | str, figs: list[Figure]) -> None:
    """Two figures that read the same thing of the same run, which no value passes together (a
    typo, or two sources that disagree: a stored run and a review's figure): no twin can meet
    both, and the search would settle between them. A UserError naming both."""
    seen: dict[str, Figure] = {}
    for f in figs:
        if f.node is None:  # read by its own reader (a table's entry of a run): nothing to match
            continue
        key = json.dumps([f.run, f.node], sort_keys=True, default=str)
        g = seen.setdefault(key, f)
        (alo, ahi), (blo, bhi) = g.passing(), f.passing()
        if g is not f and (ahi < blo or bhi < alo):
            raise UserError(f"{where}: figures {g.name!r} and {f.name!r} read the same ({f.run[0]}: "
                            f"{_what(f.node)}) and no value passes both ({alo:g}..{ahi:g} and {blo:g}..{bhi:g}); "
                            "fix or drop one")


def _what(node: dict[str, Any] | None) -> str:
    node = node or {}
    return str(node.get("metric") or node.get("measure") or next((k for k in node if k in ("ratio", "difference",
                                                                                          "max", "sum")), "?"))


def check_metrics(ev: Evidence, known: Callable[[str], set[str] | None]) -> None:
    """Every `metric` a figure names is one its test reports (`known(test)`, None: not
    checked): a figure that could never be measured is refused before anything runs."""
    def walk(node: dict[str, Any], test: str, name: str) -> None:
        test = node.get("test", test)
        if "metric" in node:
            try:
                names = known(test)
            except UserError as e:  # an unknown test: say which figure names it
                raise UserError(f"figure {name!r}: {e}") from None
            if names is not None and node["metric"] not in names:
                close = sorted(names)[:12]
                raise UserError(f"figure {name!r}: {test} has no metric {node['metric']!r} (it reports "
                                f"{', '.join(close)}{', ...' if len(names) > 12 else ''})")
        for k in ("ratio", "difference", "max", "sum"):
            for n in node.get(k, []):
                walk(n, test, name)
    for f in ev.figures:
        if f.node is not None:
            walk(f.node, f.run[0], f.name)
            test = f.node.get("test", f.run[0])
            if "metric" in f.node and known(test) is not None:
                check_value(f, test, f.node["metric"])


MAX_GB = 1e5  # a capacity the simulator builds (user_capacity_gb's bound)
RATES = ("MB/s", "IOPS", "us", "ms")  # above 0 on any drive that moves data
SIZES = ("GB", "s")  # 0 at least (no SLC cache, steady from the start)
SHARES = ("share", "of capacity", "share of fill", "ratio")  # a share's names


def check_value(f: Figure, test: str, metric: str) -> None:
    """A figure of a metric is in the metric's own unit (its name's: a unit is a label, not
    converted, so 0.085 ms of a metric in us would fit the twin to 0.085 us), and a rate or
    latency above 0 (a size or time at least 0), as a run's figures are: a UserError naming
    the figure."""
    own = _unit(metric)
    if own != "ratio" and f.unit != own and not (own == "share" and f.unit in SHARES):
        raise UserError(f"figure {f.name!r}: {test}'s {metric} is in {own}, not {f.unit} (a unit is not converted: "
                        f"give the value in {own})")
    ends = [v for v in (f.value, f.lo, f.hi) if v is not None]
    if own in RATES and (any(v < 0 for v in ends) or (f.value is not None and f.value <= 0)
                         or (f.hi is not None and f.hi <= 0)):
        raise UserError(f"figure {f.name!r}: a rate or latency is above 0, not {f.published()} {f.unit} "
                        f"({test}'s {metric})")
    if own in SIZES and any(v < 0 for v in ends):
        raise UserError(f"figure {f.name!r}: a size or time is at least 0, not {f.published()} {f.unit} "
                        f"({test}'s {metric})")


_KNOWN: dict[str, set[str]] = {}


def metric_names(test: str) -> set[str] | None:
    """The metrics a test reports, from one run on a small simulated drive (cached); None for
    a fio job's run (its figures read fio's JSON through a measure)."""
    from ..calibration.fio_logs import test_of
    from ..methodology import Options, get

    try:
        t = get(test_of(test))
    except ValueError as e:
        raise UserError(str(e)) from None
    if t.options is not None:  # a test of the user's own input: nothing to run it on here
        return None
    if test not in _KNOWN:
        from ..profiles import load_text
        from ..runner import walk_phases
        from ..targets.sim import SimTarget

        target = SimTarget(load_text("tlc-256"), ["user_capacity_gb=2", "nand.blocks_per_plane=24",
                                                   "slc.dynamic_max_gb=0.25"])
        cap = target.identify().capacity
        opts = Options(seconds=0.2, repeat=1, interval=0)
        _KNOWN[test] = set(t.analyze(walk_phases(t, target, cap, opts), opts))
    return _KNOWN[test]

