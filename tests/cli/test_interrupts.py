"""Ctrl-C handling: a stop lasts as long as the block that took it."""

import os
import signal

import pytest

from ssdlab import executor, interrupts


def test_a_stop_taken_in_one_block_does_not_stop_code_run_after_it():
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        os.kill(os.getpid(), signal.SIGINT)
        while True:
            pass
    assert not interrupts.stopping()
    # a pool started later in the same process runs its units (it checks stopping())
    with executor.PoolExecutor(1) as e:
        assert [d.value for d in e.run([executor.Unit(0, abs, (-3,))])] == [3]


def test_a_sigterm_is_still_told_apart_after_the_block():
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        os.kill(os.getpid(), signal.SIGTERM)
        while True:
            pass
    assert interrupts.terminated() and not interrupts.stopping()
