"""Ctrl-C handling: a stop lasts as long as the block that took it."""

import os
import signal
import subprocess
import sys

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


def test_a_stop_python_swallowed_still_stops_the_work(capsys):
    """A Ctrl-C that lands in a destructor, where Python cannot raise it, prints no
    "Exception ignored" traceback, and still stops the work at the next phase."""
    class Late:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10**6):  # the handler runs in here
                pass

    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        Late()  # dropped at once
        assert interrupts.stopping()
        interrupts.raise_if_stopping()
    assert "Exception ignored" not in capsys.readouterr().err


# a command's process after its stop: the signals ignored from then on. A signal that came as
# the handler became SIG_IGN is reported by CPython as an unraisable OSError, here made by a
# destructor; any other unraisable error is still printed.
LATE_SIGNAL = """
import os, signal, sys
from ssdlab import interrupts
try:
    with interrupts.handled(ignore_after_stop=True):
        os.kill(os.getpid(), signal.SIGINT)
        while True:
            pass
except KeyboardInterrupt:
    pass
assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN

class Late:
    def __init__(self, text):
        self.text = text

    def __del__(self):
        raise OSError(self.text)

Late("Signal 2 ignored due to race condition")
Late("Signal 15 ignored due to race condition")
Late("something else")
"""


def test_a_signal_that_came_as_the_handler_became_sig_ign_prints_nothing():
    r = subprocess.run([sys.executable, "-c", LATE_SIGNAL], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "race condition" not in r.stderr and "OSError: something else" in r.stderr, r.stderr


def test_ctrl_c_at_any_moment_of_a_command_is_one_line_and_130(tmp_path):
    """A Ctrl-C in the CLI's import, in typer's parsing, as the run is created or between
    phases: one line, status 130, and a run created meanwhile is `interrupted`, never
    `running`; a Ctrl-C Python took is never lost (the command ending 0 as if untouched)."""
    import subprocess
    import sys
    import time

    from ssdlab.store import Store

    db = tmp_path / "r.sqlite"
    code = ("import os, signal, sys, threading\n"
            "t = threading.Timer(float(sys.argv[1]), os.kill, (os.getpid(), signal.SIGINT))\n"
            "t.daemon = True\n"
            "t.start()\n"
            "sys.argv = ['ssdlab', 'run', 'quick', '--drive', 'sim:pm991-128', '--seconds', '0.05',"
            " '--db', sys.argv[2]]\n"
            "from ssdlab.command import main\n"
            "main()\n")

    def command(delay: float) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, str(delay), str(db)], capture_output=True,
                              text=True)
    t0 = time.monotonic()
    assert command(1e6).returncode == 0
    whole = time.monotonic() - t0
    for k in range(1, 16):  # over the whole command, a run reached or not
        p = command(whole * k / 16)
        assert p.returncode in (0, 130), p.stderr
        if p.returncode == 130:
            assert p.stderr.count("\n") == 1 and "interrupted" in p.stderr, p.stderr
    runs = Store(db).runs(100)
    assert {r["status"] for r in runs} <= {"complete", "interrupted"}
    assert any(r["status"] == "interrupted" for r in runs)  # a run was reached


def _swallows_a_stop() -> int:
    """A unit whose code takes Ctrl-C and drops it (as the simulator can when the stop comes
    with a phase's last sample): the handler ran, no KeyboardInterrupt came out."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        while True:
            pass
    except KeyboardInterrupt:
        return 1


def test_a_stop_a_unit_swallowed_stops_the_inline_executor_after_it():
    ran = []

    def unit(i: int) -> int:
        ran.append(i)
        return _swallows_a_stop() if i == 0 else i

    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        list(executor.Executor().run([executor.Unit(i, unit, (i,)) for i in range(3)]))
    assert ran == [0]
