"""What the tests of the SNIA Solid State Storage Performance Test Specification (PTS 2.0.2)
share: the client/enterprise settings, purge and workload-independent preconditioning,
rounds until steady state, and reading rounds back from the results.

A round is a list of phases (one per access pattern, `round_seconds` each); the phase
generator receives each PhaseResult back (`send`), computes the round's tracking
variables and stops once the last 5 rounds are steady for every one of them
(analysis/pts_steady.py) or after `max_rounds`. A round's steps go to the target as one
Batch, so a real drive runs them back to back in one fio process. Every phase is named
`rNN/<label>` and stored as it ends, so an interrupted run keeps its rounds.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable, Generator, Iterable, Mapping
import dataclasses
from dataclasses import dataclass

from typing import Optional

from ... import phase as ph
from ...analysis import pts_steady
from ...errors import UserError
from ...phase import KIB, Batch, Phase, PhaseResult
from ..test import CliOption, TestOptions

MIB = 1024 * KIB
# a PTS test's phases: a generator the runner sends each result back to (a list for a Batch)
Steps = Generator[Phase | Batch, Any, None]
SEGMENTS = ("client", "enterprise")
ROUND_SECONDS = 60.0  # every PTS test step lasts 1 minute
WIPC_CAPACITIES = 2  # workload-independent preconditioning: 2x user capacity
WIPC_BLOCK = 128 * KIB
QUICK_ROUNDS = 2
QUICK_SECONDS = 2.0
QUICK_SCALE = 0.001  # long fixed spans (WSAT, HIR, XSR) in quick mode
# threads x outstanding I/O per thread the specification recommends (WIPC, IOPS, WSAT, HIR)
OUTSTANDING = {"client": (2, 16), "enterprise": (4, 32)}
SMALL_BLOCK = 512  # the 0.5 KiB block size: only on drives with 512-byte logical blocks
RESPONSE_CEILING_MS = 5.0  # DIRTH: the highest average response time of its MaxIOPS point


@dataclass(frozen=True)
class PtsOptions:
    """segment: client (active range 75 %, write cache on) or enterprise (100 %, off).
    max_rounds: the steady-state rule's 25, or fewer (--rounds) to shorten a run.
    round_seconds: each step of a round (the specification's 1 minute).
    scale: factor on the long fixed spans (WSAT's 24 h, HIR's wait-state repetitions and
    XSR's hours); 1 is the specification."""

    segment: str = "client"
    max_rounds: int = pts_steady.MAX_ROUNDS
    round_seconds: float = ROUND_SECONDS
    scale: float = 1.0
    wait_scale: float = 1.0  # HIR's wait states (quick: x 0.1)
    # the drive's logical block size: 512 adds the 0.5 KiB steps of IOPS and Latency (as
    # TKperf does, they are left out on 4Kn drives); None: not known, left out
    logical_block: int | None = None
    response_ceiling_ms: float = RESPONSE_CEILING_MS  # DIRTH's MaxIOPS point

    def __post_init__(self) -> None:
        if self.segment not in SEGMENTS:
            raise ValueError(f"PTS segment '{self.segment}': choose client or enterprise")
        if not 1 <= self.max_rounds <= pts_steady.MAX_ROUNDS:
            raise ValueError(f"--rounds {self.max_rounds}: must be 1 to {pts_steady.MAX_ROUNDS}")
        if not 0 < self.round_seconds <= 3600:
            raise ValueError(f"--round-seconds {self.round_seconds:g}: must be above 0 and at most 3600")
        if not 0 < self.scale <= 1 or not 0 < self.wait_scale <= 1:
            raise ValueError(f"PTS scale {self.scale:g}/{self.wait_scale:g}: must be above 0 and at most 1")
        if self.logical_block is not None and (self.logical_block <= 0 or self.logical_block % SMALL_BLOCK):
            raise ValueError(f"logical block of {self.logical_block} bytes: a multiple of 512")
        if not 0 < self.response_ceiling_ms <= 1e5:
            raise ValueError(f"--response-ceiling {self.response_ceiling_ms:g}: must be above 0 and "
                             "at most 100000 (ms)")

    @classmethod
    def quick(cls, segment: str = "client") -> PtsOptions:
        """CI and smoke runs: 2 rounds of 2 s steps, fixed spans x 0.001, HIR's wait
        states x 0.1 (never steady: not a PTS result)."""
        return cls(segment=segment, max_rounds=QUICK_ROUNDS, round_seconds=QUICK_SECONDS,
                   scale=QUICK_SCALE, wait_scale=0.1)

    @property
    def enterprise(self) -> bool:
        return self.segment == "enterprise"

    @property
    def active_fraction(self) -> float:
        """The test's active range: enterprise 100 %, client 75 % of the LBAs."""
        return 1.0 if self.enterprise else 0.75

    @property
    def write_cache(self) -> str:
        return "disabled" if self.enterprise else "enabled"

    @property
    def threads_qd(self) -> tuple[int, int]:
        """The segment's recommended thread count and queue depth per thread."""
        return OUTSTANDING[self.segment]

    @property
    def small_blocks(self) -> bool:
        """The 0.5 KiB steps run: the drive addresses 512-byte logical blocks."""
        return self.logical_block == SMALL_BLOCK

    def small_blocks_note(self) -> str:
        if self.small_blocks:
            return "run (512-byte logical blocks)"
        if self.logical_block is None:
            return "left out: the drive's logical block size is not known"
        return f"left out: {self.logical_block}-byte logical blocks (4Kn)"


def logical_block(drives: Iterable[tuple[str, Any]]) -> int | None:
    """The logical block size the drives share (512 adds the 0.5 KiB steps), read from
    their identities: the largest when they differ, None when a drive's is not known."""
    sizes = {target.identify().extra.get("logical_block") for _, target in drives}
    if not sizes or None in sizes or "" in sizes:
        return None
    return max(int(x) for x in sizes)


def span_name(doc: Mapping[str, Any]) -> str:
    """What each value of a per-step series spans: "seconds" where a short run was judged per
    second (`step_s` 1), else "minutes" (WSAT, XSR)."""
    return "seconds" if doc.get("step_s") == 1 else "minutes"


def settings(enterprise: bool = False, rounds: int | None = None, quick: bool = False,
             round_seconds: float | None = None, response_ceiling: float | None = None) -> PtsOptions:
    """The PTS settings the flags of `ssdlab pts` and `ssdlab run pts-TEST` give; a value
    out of range raises UserError (one line)."""
    seg = "enterprise" if enterprise else "client"
    base = PtsOptions.quick(seg) if quick else PtsOptions(segment=seg)
    kw: dict[str, Any] = {}
    if rounds is not None:
        kw["max_rounds"] = rounds
    if round_seconds is not None:
        kw["round_seconds"] = round_seconds
    if response_ceiling is not None:
        kw["response_ceiling_ms"] = response_ceiling
    try:
        return dataclasses.replace(base, **kw)
    except ValueError as e:
        raise UserError(str(e)) from None


HELP = {  # the flags' help, `ssdlab pts` and `ssdlab run pts-TEST` alike
    "enterprise": "the enterprise settings (active range 100 %, enterprise outstanding I/O); default client (75 %)",
    "rounds": "at most this many rounds per test (1-25; the specification: 25); fewer than 5 never reach steady state",
    "quick": "CI/smoke: 2 rounds of 2 s steps, long fixed spans (WSAT, HIR, XSR) x 0.001, HIR wait "
             "states x 0.1; not a PTS result",
    "round_seconds": "seconds of each step of a round (the specification: 60)",
    "response_ceiling": "DIRTH: the highest average response time (ms) of the MaxIOPS point (default 5)",
}


class RunOptions(TestOptions):
    """`ssdlab run pts-TEST`: the specification's settings (client) or those its flags give,
    as `ssdlab pts` takes them, with the drives' logical block."""

    cli = (
        CliOption("enterprise", "--enterprise", bool, False, "PTS: " + HELP["enterprise"]),
        CliOption("rounds", "--rounds", Optional[int], None, "PTS: " + HELP["rounds"]),
        CliOption("pts_quick", "--quick", bool, False, "PTS: " + HELP["quick"]),
        CliOption("round_seconds", "--round-seconds", Optional[float], None, "PTS: " + HELP["round_seconds"]),
        CliOption("response_ceiling", "--response-ceiling", Optional[float], None,
                  "PTS: " + HELP["response_ceiling"]),
    )

    def parse(self, values: dict[str, Any], console: Any) -> PtsOptions:
        return settings(values["enterprise"], values["rounds"], values["pts_quick"],
                        values["round_seconds"], values["response_ceiling"])

    def for_drives(self, parsed: Any, values: dict[str, Any], drives: Any, seed: int,
                   console: Any) -> PtsOptions:
        return dataclasses.replace(parsed, logical_block=logical_block(drives))

    def stored(self, parsed: Any, values: dict[str, Any]) -> dict[str, Any]:
        """As `ssdlab pts` stores them."""
        if not isinstance(parsed, PtsOptions):
            return {}
        return {"segment": parsed.segment, "rounds": parsed.max_rounds, "round_seconds": parsed.round_seconds,
                "scale": parsed.scale, "wait_scale": parsed.wait_scale, "logical_block": parsed.logical_block,
                "response_ceiling_ms": parsed.response_ceiling_ms}


RUN_OPTIONS = RunOptions()


def pts_options(opts) -> PtsOptions:
    """The PTS settings of a run, the specification's when none were given."""
    return opts.of(PtsOptions, PtsOptions())


def precondition(capacity: int, po: PtsOptions, wipc: bool = True, suffix: str = ""
                 ) -> Generator[Phase, PhaseResult | None, None]:
    """The segment's write cache (client on, enterprise off; put back as found when the
    run ends), purge, then (wipc) workload-independent preconditioning: twice the user capacity of
    128 KiB sequential writes over the test's active range, at the segment's threads x
    queue depth, each thread writing its own part (a generator, so that `yield from`
    passes the results sent back)."""
    yield ph.write_cache(not po.enterprise, "write_cache" + suffix)
    yield ph.purge("purge" + suffix)
    if wipc:
        t, q = po.threads_qd
        yield ph.seq_write("wipc" + suffix, block_size=WIPC_BLOCK, queue_depth=q, jobs=t,
                           frac_offset=0.0, frac_length=po.active_fraction,
                           stop_bytes=WIPC_CAPACITIES * (capacity // MIB * MIB))


def io(name: str, po: PtsOptions, read_pct: int, block_size: int, threads: int, qd: int,
       pattern: str = "rand", seconds: float | None = None, **kw) -> Phase:
    """One step at T threads x Q outstanding each, over the test's active range."""
    rng = {} if "offset" in kw or "length" in kw else {"frac_length": po.active_fraction}
    return Phase(kind="io", name=name, pattern=pattern, read_pct=read_pct,  # type: ignore[arg-type]
                 block_size=block_size, queue_depth=qd, jobs=threads,
                 stop_seconds=seconds if seconds is not None else po.round_seconds, **rng, **kw)


def round_name(n: int, label: str) -> str:
    return f"r{n:02d}/{label}"


_ROUND = re.compile(r"^r(\d+)/(.+)$")


def parse_round(name: str | None) -> tuple[int, str] | None:
    m = _ROUND.match(name or "")
    return (int(m.group(1)), m.group(2)) if m else None


# a round's results by step label -> its tracking variables by name
Tracking = Callable[[dict[str, PhaseResult]], dict[str, float]]


def rounds(po: PtsOptions, steps: Callable[[int], Iterable[Phase]], tracking: Tracking,
           ) -> Generator[Batch, list[PhaseResult] | None, list[dict[str, PhaseResult]]]:
    """Rounds until steady: `steps(n)` are round n's phases (named with round_name), whose
    results by label give the round's tracking variables; the rounds stop once the last 5
    are steady for every one of them. A round is one Batch (its steps follow each other
    without waiting for results: a real drive runs them as one fio process). Returns each
    round's results by label. Without results (--plan) every round up to max_rounds is
    listed."""
    done: list[dict[str, PhaseResult]] = []
    tracks: dict[str, list[float]] = {}
    for n in range(1, po.max_rounds + 1):
        batch = Batch(steps(n))
        res = yield batch
        if not res:
            continue
        got = {parse_round(p.name)[1]: r for p, r in zip(batch, res)}  # type: ignore[index]
        done.append(got)
        for k, v in tracking(got).items():
            tracks.setdefault(k, []).append(v)
        if pts_steady.is_steady_all(tracks):
            break
    return done


def iops(r) -> float:
    return float(r.totals.get("iops", 0.0) or 0.0)


def mbps(r) -> float:
    return float(r.totals.get("mbps", 0.0) or 0.0)


def lat(r, key: str) -> float | None:
    v = (r.latency or {}).get(key)
    return None if v is None else float(v)


def by_round(results: Iterable) -> dict[int, dict[str, object]]:
    """{round: {label: result}} of the round phases among `results` (PhaseResult or
    report phases: anything with a name or a .phase.name)."""
    out: dict[int, dict[str, object]] = {}
    for r in results:
        name = getattr(getattr(r, "phase", None), "name", None) or getattr(r, "name", "")
        pr = parse_round(name)
        if pr:
            out.setdefault(pr[0], {})[pr[1]] = r
    return out


def complete_rounds(results: Iterable, labels: list[str]) -> dict[int, dict[str, object]]:
    """Rounds that ran every step (an interrupted round is left out of the analysis)."""
    return {n: r for n, r in sorted(by_round(results).items()) if all(k in r for k in labels)}


def steady_metrics(tracks: Mapping[str, list[float]], max_rounds: int) -> dict:
    """The PTS steady-state verdict of a test's tracking variables (name -> value per
    round, the first the test's main one), as metrics: the joint verdict, every
    variable's rounds and measurement window, and the first variable's window flat
    (`window_*`, as before there were several)."""
    v = pts_steady.joint(tracks, max_rounds)
    name, values = next(iter(tracks.items()))
    out: dict[str, Any] = {
        "steady_reached": v.reached, "steady_round": v.round, "rounds": v.rounds,
        "tracking": name, "tracking_by_round": {str(i + 1): x for i, x in enumerate(values[:v.rounds])},
        "tracking_variables": {k: {str(i + 1): x for i, x in enumerate(vals[:v.rounds])}
                               for k, vals in tracks.items()},
        "windows": {k: w.as_dict() for k, w in v.windows.items()},
        "not_steady": v.failing}
    w = v.windows.get(name)
    if w is not None:
        out.update(window_first_round=w.first_round, window_last_round=w.last_round,
                   window_average=w.average, window_data_excursion=w.data_excursion,
                   window_slope=w.slope, window_intercept=w.intercept,
                   window_slope_excursion=w.slope_excursion)
    return out


def n_rounds(n: Any) -> str:
    """'1 round', '3 rounds' (a stored count may come back as 2.0)."""
    k = int(n or 0)
    return f"{k} round" + ("" if k == 1 else "s")


def verdict(metrics: dict, opts: Any = None) -> str | None:
    """The line under a run's figures when it never reached steady state (None: it did):
    which tracking variables were not steady, in how many rounds (each block size of
    Throughput on its own)."""
    parts = [v for v in metrics.values() if isinstance(v, dict) and "steady_reached" in v] or [metrics]
    failed = [p for p in parts if p.get("steady_reached") is False]
    if not failed:
        return None
    said = [f"{', '.join(p.get('not_steady') or [p.get('tracking') or 'the tracking variable'])} not "
            f"steady in {n_rounds(p.get('rounds'))}" for p in failed]
    a, b = failed[0].get("window_first_round"), failed[0].get("window_last_round")
    n = int(b) - int(a) + 1 if a is not None and b is not None else 0
    return (f"steady state NOT ACHIEVED: {'; '.join(said)}; the figures average the last {n_rounds(n)}, "
            "not a steady state")


def window_rounds(metrics: dict, rounds_: dict[int, dict]) -> list[int]:
    """The rounds of the measurement window (all rounds when none was recorded)."""
    a, b = metrics.get("window_first_round"), metrics.get("window_last_round")
    if a is None or b is None:
        return sorted(rounds_)
    return [n for n in sorted(rounds_) if int(a) <= n <= int(b)]


def conditions(po: PtsOptions, wipc: bool = True, **test: object) -> dict:
    """The test conditions the PTS report page lists (stored with the metrics)."""
    t, q = po.threads_qd
    pre: dict[str, object] = (
        {"wipc": f"SEQ {WIPC_BLOCK // KIB} KiB W, {WIPC_CAPACITIES}x user capacity over the "
                 f"active range, T{t}Q{q}",
         "wipc_threads": t, "wipc_queue_depth": q, "wipc_capacities": WIPC_CAPACITIES}
        if wipc else {"wipc": "none: the test starts from the purge"})
    return {"segment": po.segment, "active_range_pct": round(po.active_fraction * 100),
            "write_cache_spec": po.write_cache, "data_pattern": "random (incompressible)",
            "round_seconds": po.round_seconds, "max_rounds": po.max_rounds,
            "scale": po.scale, "wait_scale": po.wait_scale,
            "logical_block": po.logical_block, **pre, **test}


def bs_label(bs: int) -> str:
    return f"{bs}b" if bs < KIB else f"{bs // KIB}k" if bs < MIB else f"{bs // MIB}m"


def bs_kib(bs: int) -> str:
    """A block size as the report names it: 0.5, 4 ... 1024 (KiB)."""
    return f"{bs / KIB:g}"
