"""The search's CMA-ES stages on a loss of known shape (no simulator): a stage ends once its
batches stop lowering the best loss by search.STALL, and goes on while they still do."""

from __future__ import annotations

from types import SimpleNamespace

from ssdlab.fit import search
from ssdlab.fit.loss import Trial
from ssdlab.fit.space import Param

PARAMS = [Param(f"p{i}", 1, 100, "", f"parameter {i}") for i in range(4)]
START = SimpleNamespace(params=PARAMS, class_id="bowl", unit_start=lambda: {p.key: 0.5 for p in PARAMS})


class Bowl(search.Search):
    """loss = scale x squared distance to u = 0.3 in every coordinate, never below `floor`."""

    def __init__(self, scale: float, floor: float):
        self.scale, self.floor = scale, floor
        super().__init__(SimpleNamespace(scalable=lambda: False), START, 3, executor=None)  # type: ignore[arg-type]

    def evaluate(self, points, full=False, first=0):
        return [Trial(first + i, u, {}, max(self.floor, self.scale * sum((x - 0.3) ** 2 for x in u.values())))
                for i, u in enumerate(points)]


def test_a_stage_ends_once_its_batches_stop_gaining():
    flat = Bowl(100.0, 5.0)  # the floor is reached within a few batches
    trials = flat.run(search.Budget(400), screen=False)
    assert min(t.loss for t in trials) == 5.0
    # two stages (wide, then narrow from its best), each ending STALL[0] batches after its last gain
    assert len(trials) < 20 * search.BATCH


def test_a_stage_goes_on_while_its_batches_still_gain():
    steep = Bowl(1e5, 0.0)  # 6 400 at the start; every batch gains more than STALL[1] until well below 1
    trials = steep.run(search.Budget(400), screen=False)
    best = min(t.loss for t in trials)
    assert len(trials) > 12 * search.BATCH and best < 1.0
