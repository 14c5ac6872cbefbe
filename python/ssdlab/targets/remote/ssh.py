"""The one ssh connection of a drive on another host (remote/target.py): `ssh HOST ssdlab agent`
with the user's own ssh keys, accounts and configuration, talking JSON lines
(remote/wire.py) over ssh's stdin and stdout. Nothing listens anywhere: the agent lives
as long as this connection (remote/agent.py).

The command is `ssh` (or `$SSDLAB_SSH`, split like a shell would, e.g. `ssh -F
~/.ssh/lab.conf`) with these options after the user's, so the user's win where both say
something: BatchMode (never a password or host-key prompt: stdin is ssdlab's pipe), no
pseudo-terminal, no X11 or agent forwarding (the agent host gets no way back to the user's
keys), no port forwardings from a configuration file (nothing listens on either side), a
connect timeout, and keep-alives (a host that stops answering ends the connection in a
minute rather than never). The remote command is `ssdlab agent` (`$SSDLAB_REMOTE_COMMAND`
replaces `ssdlab`, e.g. `sudo -n /opt/ssdlab/bin/ssdlab`, or the whole command when it
names `agent`); no drive path or other input is ever part of it: those travel as data on
the connection."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from collections import deque

from ...errors import printable
from .. import child
from .wire import Lines, dumps, loads

SSH_ENV = "SSDLAB_SSH"
REMOTE_ENV = "SSDLAB_REMOTE_COMMAND"
OPTIONS = ("-o", "BatchMode=yes", "-o", "ClearAllForwardings=yes", "-o", "ConnectTimeout=30",
           "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "-T", "-x", "-a")
AGENT = "agent"
PING_S = 10.0  # the agent stops when it hears nothing for agent.SILENCE_S
CONNECT_S = 120.0  # ssh's connect timeout, authentication, and the agent's start


class ConnectionLost(RuntimeError):
    """The connection or the agent ended: the message says which and why."""


def ssh_command(host: str, user: str | None = None, port: int | None = None) -> list[str]:
    base = os.environ.get(SSH_ENV) or "ssh"
    try:
        cmd = shlex.split(base)
    except ValueError as e:
        raise ValueError(f"{SSH_ENV}={base!r}: {e}; write it as a shell command line, "
                         "e.g. SSDLAB_SSH='ssh -F ~/.ssh/lab.conf'") from None
    if not cmd:
        raise ValueError(f"{SSH_ENV} is empty: unset it, or give an ssh command line")
    cmd += OPTIONS
    if port is not None:
        cmd += ["-p", str(port)]
    if user:
        cmd += ["-l", user]
    return cmd + ["--", host, remote_command()]


def remote_command() -> str:
    """`ssdlab agent`, or $SSDLAB_REMOTE_COMMAND with `agent` appended unless it names it
    (e.g. `sudo -n /opt/ssdlab/bin/ssdlab agent --drives /dev/sdb`)."""
    remote = (os.environ.get(REMOTE_ENV) or "ssdlab").strip() or "ssdlab"
    try:
        words = shlex.split(remote)
    except ValueError as e:
        raise ValueError(f"{REMOTE_ENV}={remote!r}: {e}; write it as a shell command line") from None
    return remote if AGENT in words else f"{remote} {AGENT}"


def help_command(remote: str) -> str:
    """The remote command that asks ssdlab for its help instead of starting the agent."""
    words = shlex.split(remote)
    head = words[:words.index(AGENT)] if AGENT in words else words
    return " ".join(shlex.quote(w) for w in head + ["--help"])


STDERR_LINE = 4096  # what is kept of one line of ssh's stderr


class Connection:
    """ssh running the agent: send a request, read the answers. Its stderr is kept (the
    last lines explain a failure) and the agent's warnings are shown with the host."""

    def __init__(self, cmd: list[str], label: str):
        self.cmd = cmd
        self.label = label
        self.broken = False  # the other end left the protocol: not waited for at the end
        self.tail: deque[str] = deque(maxlen=20)
        self._wlock = threading.Lock()
        self._closed = threading.Event()
        try:
            # its own session: the terminal's Ctrl-C reaches ssdlab only, which then asks
            # the agent to stop the phase (the partial result comes back); ssh dies with us
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True,
                                         preexec_fn=child.die_with_parent())
        except OSError as e:
            raise ValueError(f"{label}: cannot start `{cmd[0]}` ({e.strerror}); install an ssh "
                             f"client, or set {SSH_ENV} to one") from None
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.stdin, self.stdout, self.stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        self.lines = Lines(self.stdout.fileno())
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._err.start()
        self._ping = threading.Thread(target=self._pinger, daemon=True)
        self._ping.start()

    def _read_stderr(self) -> None:
        """ssh's (and the agent's) stderr, line by line, at most STDERR_LINE bytes of each
        kept: the rest of a longer line is read and dropped (a host writing without a
        newline held all of it: 256 MB took this process to 2.1 GB)."""
        cut = False  # in the rest of a line already cut
        while raw := self.stderr.readline(STDERR_LINE):
            was_cut, cut = cut, not raw.endswith(b"\n")
            if was_cut:
                continue
            line = printable(raw.decode(errors="replace").rstrip())
            if not line:
                continue
            if line.startswith("ssdlab: warning: "):
                print(f"ssdlab: warning: {self.label}: {line[17:]}", file=sys.stderr, flush=True)
            else:
                self.tail.append(line)

    def _pinger(self) -> None:
        while not self._closed.wait(PING_S):
            try:
                self.send({"op": "ping"})
            except ConnectionLost:
                return

    def send(self, doc: dict) -> None:
        with self._wlock:
            try:
                self.stdin.write(dumps(doc))
                self.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                raise ConnectionLost(self.why()) from None

    def recv(self, timeout: float | None = None) -> dict:
        """The next answer; ConnectionLost when the connection ended (TimeoutError)."""
        try:
            line = self.lines.readline(timeout)
        except ValueError as e:
            self.broken = True
            raise ConnectionLost(f"the agent sent {e}") from None
        if line is None:
            raise ConnectionLost(self.why())
        try:
            return loads(line)
        except ValueError:
            self.broken = True
            text = line[:200].decode(errors="replace").strip()
            raise ConnectionLost(f"the agent sent something other than its protocol ({text!r}); "
                                 "is the same ssdlab version installed there?") from None

    def why(self, wait: float = 5.0) -> str:
        """Why the connection ended: ssh's or the agent's last words, or the exit status."""
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass
        self._err.join(timeout=2)
        said = [x for x in self.tail if not x.startswith("Warning: Permanently added")]
        last = said[-1].strip() if said else ""
        rc = self.proc.returncode
        if rc == 255 and not last:  # ssh says nothing when the remote command was killed
            return ("ssh ended with status 255 and no message: the agent on that host was killed "
                    "(a signal), or the connection was cut")
        if rc == 255 or (rc is None and last):
            return last if last.startswith("ssh: ") else f"ssh: {last}"
        if rc == 127:
            return (f"ssdlab is not installed on that host's PATH ({last or 'command not found'}); "
                    f"install it there, or set {REMOTE_ENV} to its path")
        if rc is None:
            return "the connection stopped answering"
        if rc < 0:
            return f"the ssh client was killed (signal {-rc})"
        return f"the agent exited with status {rc}" + (f": {last}" if last else "")

    def close(self, timeout: float = 10.0) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        with self._wlock:
            try:
                self.stdin.close()  # end of input: the agent closes the drive and exits
            except OSError:
                pass
        try:
            self.proc.wait(timeout=0 if self.broken else timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stdout.close()
        self._err.join(timeout=2)
        self.stderr.close()


__all__ = ["REMOTE_ENV", "SSH_ENV", "Connection", "ConnectionLost", "ssh_command"]
