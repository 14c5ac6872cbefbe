"""A process group that ends with ssdlab, grandchildren included: this module leads the
group, runs the command in it and, when ssdlab dies (PR_SET_PDEATHSIG sends SIGTERM, set
by `child.die_with_parent` when ssdlab starts it), kills the whole group. A parent-death
signal reaches only the process that set it, not what that one forks: an emulated NVMe VM
is vng, which forks virtme-run, which forks QEMU, and a killed ssdlab would leave QEMU
running its guest to the end.

    Popen(group_leader.command(cmd), start_new_session=True, preexec_fn=child.die_with_parent())
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from ssdlab.targets import child


def command(cmd: list[str]) -> list[str]:
    """`cmd` run under a group leader (started in a new session, dying with its parent)."""
    return child.python_module(__name__, *cmd)


def _kill_group(signum: int, frame: object) -> None:
    os.killpg(0, signal.SIGKILL)  # this process too: nothing of the group is left


def main(argv: list[str]) -> int:
    if os.getpgid(0) != os.getpid():  # in ssdlab's own group, SIGTERM would kill ssdlab
        print("group_leader: start it in a process group of its own (start_new_session=True)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _kill_group)
    signal.signal(signal.SIGHUP, _kill_group)
    rc = subprocess.call(argv)
    return 128 - rc if rc < 0 else rc  # killed by a signal: the shell's convention


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
