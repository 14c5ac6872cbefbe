"""Which host, and which kernel, a process runs on: drives on other hosts are told apart
by the kernel their agent runs on (remote/agent.py, remote/target.py), since device numbers name the
same device exactly on the same running kernel (two names of one host, or containers
sharing it)."""

from __future__ import annotations

from pathlib import Path

BOOT_ID = "/proc/sys/kernel/random/boot_id"


def kernel_id() -> str:
    """The running kernel's boot id ("" when unreadable)."""
    try:
        return Path(BOOT_ID).read_text().strip()
    except OSError:
        return ""


def machine_id() -> str:
    """The installation's machine id (systemd's /etc/machine-id; "" when there is none)."""
    for p in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            return Path(p).read_text().strip()
        except OSError:
            continue
    return ""


def platform_info() -> dict[str, str]:
    """What a report names as the test platform: the OS and kernel, the CPU, the host."""
    import platform

    u = platform.uname()
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"os": f"{u.system} {u.release}", "machine": u.machine, "cpu": cpu or u.processor,
            "hostname": u.node}
