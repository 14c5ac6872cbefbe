"""A command killed outright (SIGKILL: the OOM killer, `kill -9`) while its worker pool runs
leaves no message from Python's multiprocessing behind it: its resource tracker outlives it,
cleans up the pool's semaphores and must not print a warning about them to the user's terminal."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, signal, time
    from ssdlab import executor

    e = executor.PoolExecutor(2)
    for _ in range(2):
        e.pool.submit(time.sleep, 30)
    time.sleep(1.0)  # the pool, its queues (semaphores) and its workers are up
    print("up", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_pool_leaves_no_resource_tracker_warning():
    # stderr is read to its end: the tracker and the workers hold it too, so it closes only
    # once they have gone
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert r.returncode == -9
    assert "up" in r.stdout
    assert "resource_tracker" not in r.stderr, r.stderr
    assert r.stderr.strip() == ""
