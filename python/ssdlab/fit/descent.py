"""The search's first steps, before CMA-ES: the die count scanned over its powers of two, then
Levenberg-Marquardt steps on the figures' Jacobian (Gauss-Newton with damping).

Every figure's error depends smoothly on a few parameters over most of the cube, so the
Jacobian of the error vector (one trial per parameter) points much further than CMA-ES's
first generations: a step of each damping in LAMBDAS is tried in one batch and the best
taken, while a round lowers the loss by GAIN of itself (at a restart, search.py: at all; up to
ROUNDS rounds). CMA-ES then starts from there (search.py): it copes with what Gauss-Newton
cannot (steps in the loss, a cache's drop moving by a segment).
Between the two, screening (screening.py) has moved each parameter alone over its range; when
that moved a discrete one (GC buffers), the steps also go from the start's discrete values.""" 

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .loss import CAP, Trial, residual  # noqa: F401  (Trial: the type of search.trials)

LAMBDAS = (1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)  # one batch of damped steps
STEP = 0.05  # forward difference, in the cube
ROUNDS = 8
# a round is a trial a parameter plus a batch: one that gains less than this share of the loss
# says the steps have reached what the Jacobian sees (a PM981a's first steps gained 2 % a round
# for four rounds before screening found the cache), while the rounds that keep gaining go on
# (a fifth round halved a 256 GB drive's loss from where four had left it)
GAIN = 0.1
UNSEEN = 0.01  # a finite step that moves every figure by less (tolerances) sees nothing there


def discrete(search: Any) -> list[str]:
    """The parameters that take a few values (powers of two, whole numbers): scanned, not
    differentiated."""
    return [q.key for q in search.start.params if q.pow2 or q.integer]


def scan_pow2(search: Any, budget: Any) -> None:
    """The powers of two of each pow2 parameter (the die count) at the class's other values:
    the best becomes the start (the die count sets every rate's parallelism, so it is told
    apart from +-30 % timings in one pass). Rates grow with the dies up to the drive's own
    count and past it overshoot further, so the loss falls and then rises: the values are run
    from the smallest up to one past the class's own (one batch), then one at a time upwards
    while the largest run is the best; the larger ones, whose trial drives are the dearest
    (a trial's blocks grow with its dies), are not run once the loss has turned."""
    x0 = search.start.unit_start()
    for q in search.start.params:
        if not q.pow2 or budget.over(len(search.trials)):
            continue
        values = [2.0 ** k for k in range(int(math.log2(q.lo)), int(math.log2(q.hi)) + 1)]
        own = next((i for i, v in enumerate(values) if v >= q.physical(x0[q.key])), len(values))
        n = min(len(values), own + 2)  # up to one past the class's own
        done: list[Trial] = []
        while n > len(done) and not budget.over(len(search.trials)):
            points = [{**x0, q.key: q.unit_of(v)} for v in values[len(done):n]]
            ran = search.evaluate(points, first=len(search.trials), until=budget.deadline)
            search._record(ran)
            done += ran
            if len(ran) < len(points):
                break  # the deadline
            if min(done, key=lambda t: (t.loss, t.number)) is done[-1]:
                n = min(len(values), n + 1)  # the largest run is the best: one more (none past the top)
        if done:
            best = min(done, key=lambda t: (t.loss, t.number))
            if best is not done[-1] and len(done) == n:  # the loss turned (not cut by the deadline)
                # screening need not run past where it turned either, at these other values
                search.turned[q.key] = (values[n - 1], {k: v for k, v in x0.items() if k != q.key})
            x0 = best.u
    search.x0 = x0


def scan_choices(search: Any, budget: Any) -> None:
    """Every choice of each firmware policy (striping) from the start: the best becomes the
    start. A policy changes how every state writes (dynamic striping keeps a sequential
    write at its speed while dies collect), which no smooth parameter stands in for, and a
    step cannot see it; trials are dear, so this is one trial a choice before the steps."""
    x0 = search.x0
    for q in search.start.params:
        if not q.choices or budget.over(len(search.trials)):
            continue
        here = [t for t in search.trials if t.u == x0]
        points = [{**x0, q.key: q.unit_of(float(i))} for i in range(len(q.choices))]
        points = [u for u in points if not here or u[q.key] != x0[q.key]]
        done = search.evaluate(points, first=len(search.trials), until=budget.deadline)
        search._record(done)
        if done:
            x0 = min(here + done, key=lambda t: (t.loss, t.number)).u
    search.x0 = x0


def residuals(search: Any, t: Trial) -> np.ndarray:
    lim = math.sqrt(CAP)
    return np.array([max(-lim, min(lim, residual(f, t.values.get(f.name)))) for f in search.ev.figures])


def jacobian(search: Any, at: Trial, keys: list[str], until: float, record: bool = True) -> np.ndarray | None:
    """The figures' errors' Jacobian at `at` over `keys`: a trial per key, STEP forward (back
    at the top of the cube); None when the deadline cut it short or a trial failed. `record`:
    the trials join the search's (a step's), else they are only looked at (pinning's)."""
    points = [{**at.u, k: at.u[k] + (STEP if at.u[k] + STEP <= 1.0 else -STEP)} for k in keys]
    done = search.evaluate(points, first=len(search.trials) if record else -1, until=until)
    if record:
        search._record(done)
    if len(done) < len(keys) or (not record and any(t.error for t in done)):
        return None
    r0 = residuals(search, at)
    return np.stack([(residuals(search, t) - r0) / (t.u[k] - at.u[k]) for k, t in zip(keys, done)], axis=1)


def group_weights(search: Any) -> np.ndarray:
    sizes: dict[str, int] = {}
    for f in search.ev.figures:
        g = search.ev.groups[f.name]
        sizes[g] = sizes.get(g, 0) + 1
    return np.array([1.0 / sizes[search.ev.groups[f.name]] for f in search.ev.figures])


def other_discrete(search: Any) -> Trial | None:
    """The best trial whose discrete parameters are the start's, when the best trial's are
    not (screening moved one): a whole number is chosen between, not differentiated, and a
    choice can stand in for smooth parameters the steps have not moved yet (64 GC buffers
    for more spare area: both raise the random-write level), so the steps go from both."""
    by = {q.key: q for q in search.start.params}
    keys = [k for k in discrete(search) if k not in search.frozen]

    def choice(t: Trial) -> tuple[float, ...]:
        return tuple(by[k].physical(t.u[k]) for k in keys)

    ok = [t for t in search.trials if not t.error]
    if not keys or not ok:
        return None
    best = min(ok, key=lambda t: (t.loss, t.number))
    mine = choice(Trial(-1, search.x0, {}, 0.0))
    same = [t for t in ok if choice(t) == mine]
    if choice(best) == mine or not same:
        return None
    return min(same, key=lambda t: (t.loss, t.number))


def descend(search: Any, budget: Any, keys: list[str], gain: float = GAIN, rounds: int = ROUNDS) -> None:
    """Up to `rounds` rounds of steps from the best trial; when screening chose another
    discrete value than the start's, one round from each basin first (the budget rarely has
    room for two whole descents), then the rest from the better."""
    other = other_discrete(search)
    if other is None:
        levenberg_marquardt(search, budget, keys, rounds=rounds, gain=gain)
        return
    a = levenberg_marquardt(search, budget, keys, rounds=1, gain=gain)
    b = levenberg_marquardt(search, budget, keys, other, rounds=1, gain=gain)
    levenberg_marquardt(search, budget, keys, min((a, b), key=lambda t: (t.loss, t.number)), rounds - 1, gain)


def levenberg_marquardt(search: Any, budget: Any, keys: list[str], start: Trial | None = None,
                        rounds: int = ROUNDS, gain: float = GAIN) -> Trial:
    """Rounds of damped Gauss-Newton steps over `keys` from `start` (default: the best trial
    so far) while each lowers the loss by `gain` of itself (0: at all); the best trial they
    reached."""
    w = group_weights(search)
    best = start or min(search.trials, key=lambda t: (t.loss, t.number))
    jac = None
    for _ in range(rounds):
        if not budget.room(len(search.trials), len(keys) + len(LAMBDAS), search.pace):
            return best
        r0 = residuals(search, best)
        if jac is None:
            jac = jacobian(search, best, keys, budget.deadline)
            if jac is None:  # the deadline came first: no step from part of the Jacobian
                return best
            search.unseen = {k for j, k in enumerate(keys) if np.abs(jac[:, j]).max() * STEP < UNSEEN}
        # a parameter whose step moved no figure is not stepped: the damped steps scale each
        # parameter by what the Jacobian sees of it, so rounding noise over nearly nothing (a
        # retry rate, a reclaim share no figure moves with there) would send it to a bound,
        # and every step of the batch where a fragile figure (a fill's recovery peak) breaks
        seen = np.array([k not in search.unseen for k in keys])
        if not seen.any():
            return best
        a = jac.T @ (w[:, None] * jac)
        g = jac.T @ (w * r0)
        x = np.array([best.u[k] for k in keys])
        cands = []
        sub = np.ix_(seen, seen)
        for lam in LAMBDAS:
            step = np.zeros(len(keys))
            step[seen] = np.linalg.solve((a + lam * (np.diag(np.diag(a)) + 1e-6 * np.eye(len(keys))))[sub], -g[seen])
            y = np.clip(x + step, 0.0, 1.0)
            cands.append({**best.u, **dict(zip(keys, y.tolist()))})
        done = search.evaluate(cands, first=len(search.trials), until=budget.deadline)
        search._record(done)
        if not done:
            return best
        new = min(done, key=lambda t: (t.loss, t.number))
        jac = None
        if new.loss >= best.loss:
            return best
        gained = best.loss - new.loss >= gain * best.loss
        best = new
        if not gained:
            return best
    return best


RATE_LIMITS = ("host.read_mbps", "host.write_mbps", "nand.native_write_mbps")
EDGE_POINTS = 8  # a batch of the bisection: a limit's unit range in this many


def limits_to_edge(search: Any, budget: Any) -> Trial | None:
    """A rate limit the best leaves at "none" (the top of its range) moves no figure by a
    step, and screening's five points over two decades seldom land where it just binds (the
    m4's write path binds usefully from 221 to 321 MB/s of 130-20000: 0.15-0.22 of the cube,
    between the grid's 0.05 and 0.3). From the best, each such limit is lowered to where it
    starts to bind (the largest of EDGE_POINTS points, then of EDGE_POINTS between it and
    the next, that moves a figure by UNSEEN), and the steps go from there, where they see
    the limit with what it couples to (a faster NAND behind a binding write path leaves GC
    room: the m4's write after random writes). The steps' best, None when no limit was at
    its top or none binds."""
    best = min((t for t in search.trials if not t.error), key=lambda t: (t.loss, t.number), default=None)
    if best is None:
        return None
    keys = [k for k in RATE_LIMITS if best.u.get(k, 0.0) >= 1.0 and k in search.free()]
    if not keys:
        return None
    at = best
    for k in keys:
        lo, hi = 0.0, 1.0
        edge: Trial | None = None
        for _ in range(2):
            if not budget.room(len(search.trials), EDGE_POINTS, search.pace):
                break
            us = [lo + (hi - lo) * (i + 1) / (EDGE_POINTS + 1) for i in range(EDGE_POINTS)]
            done = search.evaluate([{**at.u, k: u} for u in us], first=len(search.trials), until=budget.deadline)
            search._record(done)
            binds = [t for t in done if not t.error and search.change(t, at) >= UNSEEN]
            if not binds:
                break
            edge = max(binds, key=lambda t: t.u[k])
            nxt = [t.u[k] for t in done if t.u[k] > edge.u[k]]
            lo, hi = edge.u[k], min(nxt) if nxt else hi
        if edge is not None:
            at = edge
    if at is best:
        return None
    smooth = [k for k in search.free() if k not in discrete(search)]
    return levenberg_marquardt(search, budget, smooth, start=at)
