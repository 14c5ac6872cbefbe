"""A drive host reached over ssh, for the tests of drives on other hosts: a network
namespace of its own (`ip netns`, joined to this one by a veth pair, IPv4 and IPv6) where
a real sshd (OpenSSH, `sshd -D -e`) listens with a host key and one authorized client
key made for the test (and one it accepts for `ssdlab agent` only). The agent there tests
only the drives the host lists (`allow`: its agent.toml; `restrict_agent`: the restricted
key's `--drives`). ssdlab reaches it
as `lab1` (and `lab1-again`, the same host by another name, or its addresses;
`lab1-agent-only` with the restricted key) through an ssh configuration passed in SSDLAB_SSH; the
agent there runs this checkout's ssdlab. Same kernel, same loop devices (loopdevs.py):
another host as far as the network goes.

`attacker()` adds a second namespace wired to the drive host only: a machine on the
drive host's network with no key."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, sshd)"
    for tool, pkg in (("sshd", "openssh-server"), ("ssh", "openssh-client"),
                      ("ssh-keygen", "openssh-client"), ("ip", "iproute2"), ("ss", "iproute2"),
                      ("runuser", "util-linux"), ("nsenter", "util-linux")):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            return f"{tool} not installed (apt-get install {pkg})"
    return None


REASON = _why_not()


def sh(*cmd: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r


def _free_subnet() -> int:
    used = sh("ip", "-o", "addr").stdout
    for _ in range(100):
        n = random.randrange(1, 250)
        if f"10.213.{n}." not in used and f"10.214.{n}." not in used:
            return n
    raise RuntimeError("no free 10.213.N.0/30 subnet")


def _wait_port(addr: str, port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with socket.socket(fam) as s:
            s.settimeout(2)
            if s.connect_ex((addr, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on {addr}:{port} (exit {proc.poll()}): "
                       f"{proc.stderr.read() if proc.poll() is not None else ''}")


class SshHost:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.n = _free_subnet()
        tag = f"{os.getpid() % 100000}{self.n}"
        self.ns = f"ssdlab-h{tag}"
        self.va, self.vb = f"sh{tag}a", f"sh{tag}b"
        self.addr, self.local = f"10.213.{self.n}.2", f"10.213.{self.n}.1"
        self.addr6 = f"fd13:{self.n:x}::2"
        self.namespaces: list[str] = []
        self.sshd: subprocess.Popen | None = None

    # ---------------------------------------------------------------- set up
    def start(self) -> SshHost:
        self._netns(self.ns)
        sh("ip", "link", "add", self.va, "type", "veth", "peer", "name", self.vb, "netns", self.ns)
        sh("ip", "addr", "add", f"{self.local}/30", "dev", self.va)
        sh("ip", "-6", "addr", "add", f"fd13:{self.n:x}::1/64", "dev", self.va, "nodad")
        sh("ip", "link", "set", self.va, "up")
        sh("ip", "-n", self.ns, "addr", "add", f"{self.addr}/30", "dev", self.vb)
        sh("ip", "-n", self.ns, "-6", "addr", "add", f"{self.addr6}/64", "dev", self.vb, "nodad")
        sh("ip", "-n", self.ns, "link", "set", self.vb, "up")
        for name in ("host_key", "client_key", "agent_only_key"):
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(self.tmp / name))
        self.allowed: list[str] = []
        self.allow()  # the host's list of drives its agent may test: none yet
        self.restrict_agent("")
        host_pub = (self.tmp / "host_key.pub").read_text().split()
        (self.tmp / "known_hosts").write_text(f"sshlab {host_pub[0]} {host_pub[1]}\n")
        (self.tmp / "sshd_config").write_text("\n".join([
            "Port 22", "ListenAddress 0.0.0.0", "ListenAddress ::",  # every address of its namespace
            f"HostKey {self.tmp / 'host_key'}", f"AuthorizedKeysFile {self.tmp / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PidFile none",
            "AllowTcpForwarding no", "AllowAgentForwarding no", "X11Forwarding no",
            "PermitTunnel no", "LogLevel ERROR", ""]))
        self.config = self.tmp / "ssh_config"
        self.config.write_text("\n".join([
            "Host lab1 lab1-again", f"  HostName {self.addr}",
            "Host lab1-agent-only", f"  HostName {self.addr}", f"  IdentityFile {self.tmp / 'agent_only_key'}",
            "Host *", "  User root", f"  IdentityFile {self.tmp / 'client_key'}", "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {self.tmp / 'known_hosts'}", "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes", "  HostKeyAlias sshlab", "  LogLevel ERROR", ""]))
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
        # nsenter --net, not `ip netns exec`: that also gives sshd a mount namespace of its own,
        # where the tests' mounts would not show (a drive host sees its own mounts)
        self.sshd = subprocess.Popen(["nsenter", f"--net=/run/netns/{self.ns}",
                                      shutil.which("sshd", path="/usr/sbin:/sbin:/usr/bin"),
                                      "-D", "-e", "-f", str(self.tmp / "sshd_config")],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        _wait_port(self.addr, 22, self.sshd)
        return self

    def _netns(self, name: str) -> None:
        sh("ip", "netns", "add", name)
        self.namespaces.append(name)
        sh("ip", "-n", name, "link", "set", "lo", "up")

    def attacker(self) -> tuple[str, str]:
        """A second namespace on the drive host's network only: (its name, the drive
        host's address seen from it)."""
        name = f"{self.ns}x"
        self._netns(name)
        a, b = f"{self.va[:-1]}x", f"{self.va[:-1]}y"
        sh("ip", "link", "add", a, "netns", self.ns, "type", "veth", "peer", "name", b, "netns", name)
        sh("ip", "-n", self.ns, "addr", "add", f"10.214.{self.n}.1/30", "dev", a)
        sh("ip", "-n", self.ns, "link", "set", a, "up")
        sh("ip", "-n", name, "addr", "add", f"10.214.{self.n}.2/30", "dev", b)
        sh("ip", "-n", name, "link", "set", b, "up")
        return name, f"10.214.{self.n}.1"

    def stop(self) -> None:
        if self.sshd is not None and self.sshd.poll() is None:
            self.sshd.terminate()
            try:
                self.sshd.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.sshd.kill()
                self.sshd.wait()
        for name in reversed(self.namespaces):
            sh("ip", "netns", "del", name, check=False)
        sh("ip", "link", "del", self.va, check=False)

    # ---------------------------------------------------------------- use
    def remote_command(self) -> str:
        """This checkout's ssdlab, as the drive host runs it."""
        return f"env PYTHONPATH={ROOT / 'python'} {sys.executable} -m ssdlab.cli"

    def agent_command(self) -> str:
        """The agent as a login starts it: its drives from the host's configuration file."""
        return f"{self.remote_command()} agent --config {self.tmp / 'agent.toml'}"

    def allow(self, *drives: str) -> None:
        """Add drives (/dev/X, file:/PATH, file:/DIR/) to the host's list (agent.toml,
        root's, 0644: what /etc/ssdlab/agent.toml is on a drive host)."""
        self.allowed += drives
        f = self.tmp / "agent.toml"
        f.write_text("drives = [" + ", ".join(f'"{d}"' for d in self.allowed) + "]\n")
        os.chmod(f, 0o644)

    def restrict_agent(self, options: str) -> None:
        """authorized_keys: client_key a login; agent_only_key runs `ssdlab agent OPTIONS`
        (e.g. --drives /dev/loop3) whatever its holder asks."""
        (self.tmp / "authorized_keys").write_text(
            (self.tmp / "client_key.pub").read_text()
            + f'restrict,command="{self.remote_command()} agent {options}" '
            + (self.tmp / "agent_only_key.pub").read_text())

    def env(self, **extra: str) -> dict:
        """The environment of an ssdlab command that reaches this host."""
        return {**os.environ, "PYTHONPATH": str(ROOT / "python"), "SSDLAB_SSH": f"ssh -F {self.config}",
                "SSDLAB_REMOTE_COMMAND": self.agent_command(), **extra}

    def config_without_key(self) -> Path:
        """An ssh configuration for this host with a key it does not know."""
        cfg = self.tmp / "ssh_config_nokey"
        if not cfg.exists():
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "stranger", "-f", str(self.tmp / "stranger_key"))
            cfg.write_text(self.config.read_text().replace(str(self.tmp / "client_key"), str(self.tmp / "stranger_key"))
                           + "  IdentityAgent none\n")
        return cfg

    def in_ns(self, *cmd: str, ns: str | None = None, **kw) -> subprocess.CompletedProcess:
        return sh("nsenter", f"--net=/run/netns/{ns or self.ns}", *cmd, check=False, **kw)

    def listening(self) -> list[str]:
        """The listening TCP and bound UDP sockets of the drive host: `ss` lines."""
        return [x for x in self.in_ns("ss", "-Htuln").stdout.splitlines() if x.strip()]


@pytest.fixture(scope="module")
def sshhost(tmp_path_factory):
    if REASON:
        pytest.skip(REASON)
    h = SshHost(tmp_path_factory.mktemp("sshhost"))
    try:
        h.start()
        yield h
    finally:
        h.stop()
