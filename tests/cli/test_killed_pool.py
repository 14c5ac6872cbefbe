"""A command killed outright (SIGKILL: the OOM killer, `kill -9`) while its worker pool runs
leaves no message from Python's multiprocessing behind it: its resource tracker outlives it,
cleans up the pool's semaphores and must not print a warning about them to the user's terminal;
and its workers, even one still starting when the command died, do not live on."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    from ssdlab import executor

    here = sys.argv[1]  # the test's own directory: this process is killed before it could clean up
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


def test_a_killed_pool_leaves_no_resource_tracker_warning(tmp_path):
    # stderr is read to its end: the tracker and the workers hold it too, so it closes only
    # once they have gone
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == -9
    assert r.stdout.split() == ["up", "2"]
    assert "resource_tracker" not in r.stderr, r.stderr
    assert r.stderr.strip() == ""


# The command (a file, so a spawned worker imports it as __mp_main__ while it starts) makes a
# pool of one worker, prints its pid and is killed; the worker waits in its start until GO
# exists: its parent is gone before the worker could ask to die with it.
STARTING = textwrap.dedent("""
    import os, signal, sys, time

    if __name__ == "__mp_main__":  # the worker, starting
        while not os.path.exists(os.environ["GO"]):
            time.sleep(0.05)
    if __name__ == "__main__":
        from ssdlab import executor

        e = executor.PoolExecutor(1)
        e.pool.submit(time.sleep, 60)
        print(*e.pool._processes, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
""")


def gone(pid: int) -> bool:
    """No such process, or a zombie nobody reaps (its parent was killed)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_worker_whose_command_was_killed_while_it_started_does_not_live_on(tmp_path):
    import os
    import signal
    import time

    import clirun

    main, go, out = tmp_path / "command.py", tmp_path / "go", tmp_path / "out"
    main.write_text(STARTING)
    with open(out, "w") as f:  # (a file: the worker holds it open, a pipe would not end)
        code = subprocess.run([sys.executable, str(main)], stdout=f, stderr=subprocess.STDOUT, timeout=60,
                              env=clirun.environ(GO=str(go)), cwd=tmp_path).returncode
    (pid,) = map(int, out.read_text().split()[:1])
    try:
        assert code == -9 and not gone(pid), out.read_text()
        go.touch()
        end = time.monotonic() + 20
        while not gone(pid) and time.monotonic() < end:
            time.sleep(0.1)
        assert gone(pid), "the worker lives on after its command was killed"
    finally:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)
