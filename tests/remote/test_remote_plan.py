"""`run TEST --plan` of a drive on another host, the agent run here by an "ssh" that starts
it (SSDLAB_SSH): its `# remote:` line holds whether or not the plan shows its commands, and
its `# fio memory:` line is the agent's: what the agent lets a phase take (its owner's
--fio-memory, else half of what the host has available), or the refusal a run would meet."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import clirun

from ssdlab.targets.fio.memory import PLAN_PREFIX, PLAN_REFUSED

FAKE_SSH = """
import os, sys
os.execv(sys.executable, [sys.executable, "-m", "ssdlab.cli", "agent", *os.environ["AGENT_ARGS"].split()])
"""


def remote(tmp_path: Path, *args: str, agent: str = "") -> tuple[str, object]:
    """`ssdlab ARGS` with --drive lab:SRV/t.bin:2G, its agent `ssdlab agent --drives
    file:SRV/:2G AGENT` run here."""
    srv = tmp_path / "srv"
    srv.mkdir(exist_ok=True)
    fake = tmp_path / "fake_ssh.py"
    fake.write_text(FAKE_SSH)
    spec = f"lab:{srv}/t.bin:2G"
    env = clirun.environ(SSDLAB_SSH=f"{sys.executable} {fake}", AGENT_ARGS=f"--drives file:{srv}/:2G {agent}")
    return spec, clirun.cli(*[spec if a == "DRIVE" else a for a in args], env=env, timeout=120)


def test_the_remote_line_holds_with_the_commands_hidden_or_shown(tmp_path):
    for more in ([], ["--fio-jobs"]):
        spec, r = remote(tmp_path, "run", "fill", "--drive", "DRIVE", "--plan", *more)
        assert r.returncode == 0, r.stderr
        (line,) = [x for x in r.stdout.splitlines() if x.startswith("# remote: ")]
        assert line.startswith(f"# remote: {spec} over ssh (`") and "below" not in line, line
        assert line.endswith("`): its checks and every command of its plan run on "
                             f"{__import__('socket').gethostname()} as uid {__import__('os').geteuid()}"), line
    assert "[global]" in r.stdout  # with --fio-jobs: the commands are there too


def test_the_fio_memory_line_is_what_the_agent_lets_a_phase_take(tmp_path):
    _, r = remote(tmp_path, "run", "quick", "--drive", "DRIVE", "--plan", agent="--fio-memory 1G")
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.startswith(PLAN_PREFIX)]
    assert line.startswith(f"{PLAN_PREFIX}about 19.7 MB for its largest phase, asssd_seq_read#1 ("), line
    assert line.endswith("; this host's agent lets a phase take at most 1.07 GB (as --fio-memory says)"), line
    _, r = remote(tmp_path, "run", "quick", "--drive", "DRIVE", "--plan")
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.startswith(PLAN_PREFIX)]
    assert "this host's agent lets a phase take at most " in line and line.endswith(
        " (half of what it has available)"), line
    assert "this machine has available" not in line


def test_a_phase_over_the_agents_bound_plans_as_the_refusal_a_run_would_meet(tmp_path):
    spec, r = remote(tmp_path, "run", "quick", "--drive", "DRIVE", "--plan", agent="--fio-memory 10M")
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.startswith(PLAN_PREFIX)]
    _, ran = remote(tmp_path, "run", "quick", "--drive", "DRIVE", "--destroy-data", spec,
                    "--db", str(tmp_path / "r.db"), agent="--fio-memory 10M")
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1, ran.stderr
    assert ran.stderr == f"ssdlab: error: {line[len(PLAN_REFUSED):]}\n", (line, ran.stderr)
    assert line.startswith(f"{PLAN_REFUSED}{spec}: phase asssd_seq_read#1: fio would take about 19.7 MB"), line
    assert not (tmp_path / "r.db").exists() and not (tmp_path / "srv" / "t.bin").exists()
    _, r = remote(tmp_path, "run", "quick", "--drive", "DRIVE", "--plan", "--json", agent="--fio-memory 10M")
    (p,) = json.loads(r.stdout)["plan"]
    assert p["fio_memory"]["allowed"] is False and p["fio_memory"]["refusal"] == line[len(PLAN_REFUSED):]
