"""A command killed outright (SIGKILL: the OOM killer, `kill -9`) while its worker pool runs
leaves no message from Python's multiprocessing behind it: its resource tracker outlives it,
cleans up the pool's semaphores and must not print a warning about them to the user's terminal."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, signal, subprocess, sys, tempfile, time
    from ssdlab import executor

    here = tempfile.mkdtemp()
    e = executor.PoolExecutor(2)
    # each worker runs a shell that marks it has begun (the worker is up, past its start),
    # then sleeps with none of the test's pipes open
    work = f"touch {here}/$$; exec sleep 30 </dev/null >/dev/null 2>&1"
    for _ in range(2):
        e.pool.submit(subprocess.call, ["sh", "-c", work])
    end = time.monotonic() + 60
    while len(os.listdir(here)) < 2 and time.monotonic() < end:
        time.sleep(0.05)
    print("up", len(os.listdir(here)), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_pool_leaves_no_resource_tracker_warning():
    # stderr is read to its end: the tracker and the workers hold it too, so it closes only
    # once they have gone
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert r.returncode == -9
    assert r.stdout.split() == ["up", "2"]
    assert "resource_tracker" not in r.stderr, r.stderr
    assert r.stderr.strip() == ""
