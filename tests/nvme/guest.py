"""Runs inside the NVMe VM as root (tests/nvme/conftest.py boots it): ssdlab against the
emulated controller's namespaces, each step's outcome written to OUT/steps.json for the
host's tests to judge. The steps only gather facts; the assertions live in the tests.

  /dev/nvme0n1  512 B LBAs, a partition table (made on the host), partition 1 mounted here
  /dev/nvme0n2  4 KiB LBAs, blank: identity, purge, fill, consistency, interrupts
  /dev/nvme0n3  512 B LBAs, a simulated drive served by `ssdlab serve` over NBD
  /dev/nvme0n4  4 KiB LBAs with 8 bytes of metadata and protection information (type 1)

One Python process: ssdlab's CLI is imported once, and each `ssdlab` command runs in a
forked child of it (the command's own process, with its exit status, signal handlers and a
pid to signal) that shares those imports: under an emulated CPU, importing ssdlab.cli
takes 6-9 s (15-17 s from the VM's uncached root filesystem). Nothing here makes a report (the host
does, from the stores written back).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

T0 = time.monotonic()
from ssdlab.cli import app  # noqa: E402 (timed: the guest's one import of ssdlab)

IMPORT_S = time.monotonic() - T0
from ssdlab.targets.fio import jobs as fio_jobs  # noqa: E402

# fio's version and usable engine, asked here once: each command's fork inherits them, as
# one process running several tests would (under an emulated CPU each fio start takes 2-3 s)
FIO = {"version": fio_jobs.fio_version(), "engine": fio_jobs.pick_engine()}
OUT = Path(sys.argv[1])
ONLY = sys.argv[2].split(",") if len(sys.argv) > 2 else None  # a subset of the steps, by name
# SQLite cannot lock on the shared directory: the stores live in the guest's /tmp and are
# copied to OUT after each step
LOCAL = Path("/tmp/ssdlab-guest")
LOCAL.mkdir(exist_ok=True)
DB = LOCAL / "r.sqlite"
N1, N2, N3, N4 = "/dev/nvme0n1", "/dev/nvme0n2", "/dev/nvme0n3", "/dev/nvme0n4"
NS_SECTORS = int(Path("/sys/block/nvme0n2/size").read_text())  # in 512 B units, as its stat
steps: dict[str, dict] = {"start": {"ok": True, "import_s": IMPORT_S, "fio": FIO}}
modules: set[str] = set(sys.modules)  # every module any ssdlab command here imported


def save() -> None:
    steps["modules"] = {"ok": True, "names": sorted(modules)}
    tmp = OUT / "steps.json.tmp"
    tmp.write_text(json.dumps(steps, default=str, indent=1))
    tmp.replace(OUT / "steps.json")


def export(db: Path) -> None:
    """A consistent copy of a store (its write-ahead log included) into OUT."""
    tmp = LOCAL / "export" / db.name
    tmp.parent.mkdir(exist_ok=True)
    tmp.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(tmp) as dst:
        src.backup(dst)
    shutil.copyfile(tmp, OUT / db.name)


def step(fn):
    if ONLY is not None and fn.__name__ not in ONLY:
        return fn
    t0 = time.monotonic()
    try:
        steps[fn.__name__] = {"ok": True, **fn()}
    except Exception:
        steps[fn.__name__] = {"ok": False, "error": traceback.format_exc()[-3000:]}
    steps[fn.__name__]["wall_s"] = time.monotonic() - t0
    for f in LOCAL.glob("*.sqlite"):
        export(f)
    line = (f"guest: {fn.__name__} {'ok' if steps[fn.__name__]['ok'] else 'FAILED'} "
            f"({steps[fn.__name__]['wall_s']:.0f} s)")
    print(line, flush=True)
    with open(OUT / "guest.log", "a") as f:
        f.write(line + "\n")
    save()
    return fn


def sh(*cmd: str, timeout: float = 300, cwd: Path | None = None) -> dict:
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, cwd=cwd)
    return {"rc": r.returncode, "stdout": r.stdout[-20000:], "stderr": r.stderr[-4000:]}


class Command:
    """`ssdlab ARGS` in a forked child of this process: stdout and stderr to files."""

    def __init__(self, *args: str):
        self.args = args
        n = len(list(LOCAL.glob("cmd*.out")))
        self.out, self.err, self.mods = (LOCAL / f"cmd{n}.{x}" for x in ("out", "err", "mods"))
        # this process's objects out of the collector's sight: the child's collections would
        # touch every one (emulated, seconds) and copy each page it shares with this process
        gc.freeze()
        self.pid = os.fork()
        if self.pid == 0:
            self._child()

    def _child(self) -> None:
        code = 70
        try:
            for fd, path in ((1, self.out), (2, self.err)):
                f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(f, fd)
                os.close(f)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            try:
                app(args=list(self.args), prog_name="ssdlab")
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            self.mods.write_text("\n".join(sorted(sys.modules)))
        except BaseException:
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)

    def wait(self, timeout: float = 900) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                stuck = processes()
                os.kill(self.pid, signal.SIGKILL)
                raise TimeoutError(f"ssdlab {' '.join(self.args)}: still running after {timeout:.0f} s; "
                                   f"its processes:\n{stuck}")
            time.sleep(0.2)
        if self.mods.exists():
            warm(set(self.mods.read_text().split()) - set(sys.modules))
        return {"rc": os.waitstatus_to_exitcode(status), "args": list(self.args),
                "stdout": self.out.read_text()[-20000:], "stderr": self.err.read_text()[-4000:]}


def warm(names: set[str]) -> None:
    """Import here what a command imported on its way (the real-drive path's modules the
    CLI imports when a command needs them), so the next command's fork has them."""
    modules.update(names)
    for name in sorted(names, key=lambda n: n.count(".")):
        try:
            importlib.import_module(name)
        except Exception:  # a module that only imports in its own context: the command imports it again
            pass


def ssdlab(*args: str, timeout: float = 900) -> dict:
    return Command(*args).wait(timeout)


def sectors_written(dev: str) -> int:
    return int(Path(f"/sys/block/{os.path.basename(dev)}/stat").read_text().split()[6])


def holds(dev: str) -> list[str]:
    """The processes with `dev` open (the /proc/PID/fd links), but udev's: a writer's close
    makes udev probe the device again (its inotify watch), a worker that opens it for a
    moment whenever the guest's kernel gets to it, not a process the run left behind."""
    found = []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            if os.readlink(fd) == dev and not _udev(fd.parts[2]):
                found.append(fd.parts[2])
        except OSError:
            pass
    return sorted(set(found))


def _udev(pid: str) -> bool:
    """Is `pid` udev's daemon or one of its workers (named "(udev-worker)" or "systemd-udevd")?"""
    try:
        names = {Path(f"/proc/{pid}/comm").read_text().strip(),
                 Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")}
    except OSError:
        return False
    return bool(names & {"(udev-worker)", "systemd-udevd", "/usr/lib/systemd/systemd-udevd"})


def processes() -> str:
    """Every process with its state and where in the kernel it waits (a command stuck on
    the controller shows D and an nvme or blk wait), and the kernel's last NVMe lines."""
    ps = sh("ps", "-eo", "pid,ppid,stat,wchan:32,etimes,args", timeout=30)["stdout"]
    stacks = []
    for line in ps.splitlines()[1:]:
        f = line.split()
        if len(f) > 2 and f[2].startswith("D"):
            try:
                stacks.append(f"{f[0]}:\n" + Path(f"/proc/{f[0]}/stack").read_text())
            except OSError:
                pass
    dmesg = [x for x in sh("dmesg", timeout=30)["stdout"].splitlines() if "nvme" in x][-20:]
    return "\n".join([ps, *stacks, *dmesg])


def children() -> list[str]:
    """This process's live children (pid and command), as /proc lists them."""
    out = []
    for p in Path("/proc").glob("[0-9]*"):
        try:
            stat = (p / "stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[1] == str(os.getpid()):
            out.append(f"{p.name} {stat[stat.index('(') + 1:stat.rindex(')')]}")
    return sorted(out)


@step
def tools():
    return {"nvme_list": sh("nvme", "list", "-o", "json"),
            "id_ctrl": sh("nvme", "id-ctrl", N2, "-o", "json"),
            "id_ns1": sh("nvme", "id-ns", N1, "-o", "json"),
            "id_ns2": sh("nvme", "id-ns", N2, "-o", "json"),
            "smartctl": sh("smartctl", "-j", "-a", N2),
            "smart_log": sh("nvme", "smart-log", N2, "-o", "json")}


@step
def served():
    """The namespace backed by `ssdlab serve`: its purge (the controller's Format, which
    reaches the served drive as zero requests that may unmap) and a short write through
    the guest's NVMe driver and fio with direct I/O."""
    if not os.path.exists(N3):
        return {"absent": True}
    return {"run": ssdlab("run", "fill", "--drive", N3, "--destroy-data", N3, "--db", str(LOCAL / "served.sqlite"),
                          "--json", timeout=600),
            "queue": {k: Path(f"/sys/block/nvme0n3/queue/{k}").read_text().strip()
                      for k in ("max_hw_sectors_kb", "nr_requests", "discard_max_bytes",
                                "write_zeroes_max_bytes")}}


@step
def identity():
    from ssdlab.targets import open_target

    out = {}
    for dev in (N1, N2, N4):
        with open_target(dev) as t:
            ident = t.identify()
            out[dev] = {"identity": {"kind": ident.kind, "model": ident.model, "serial": ident.serial,
                                     "firmware": ident.firmware, "capacity": ident.capacity,
                                     "extra": ident.extra},
                        "telemetry_tool": t.telemetry.tool, "telemetry": t.telemetry.read(),
                        "purge_plan": t.where.purge_plan().method}
    return out


@step
def write_cache():
    """n2's volatile write cache as a write_cache phase asking for it off leaves it, read
    back by nvme-cli while the target is open and after it closes (switched, and put back,
    only on a controller with room for one namespace)."""
    from ssdlab import phase as ph
    from ssdlab.targets import open_target

    def feature() -> str:
        return sh("nvme", "get-feature", N2, "-f", "6")["stdout"]

    before = feature()
    with open_target(N2, destroy_data=N2) as t:
        r = t.run(ph.write_cache(False))
        during = feature()
    return {"before": before, "during": during, "after": feature(), "totals": r.totals}


@step
def refusals():
    """n1: its partition table without the flag; its mounted partition and the whole disk
    under it even with the flag; n2 held open O_EXCL by another process, read-only, or
    named by a flag that names another namespace or the serial all four share; the
    controller's and a namespace's character devices."""
    mnt = Path("/tmp/ssdlab-mnt")
    mnt.mkdir(exist_ok=True)
    part = N1 + "p1"
    out = {"partition_table": ssdlab("run", "fill", "--drive", N1, "--db", str(DB))}
    out["controller_node"] = ssdlab("run", "fill", "--drive", "/dev/nvme0", "--destroy-data", "/dev/nvme0",
                                    "--db", str(DB))
    out["generic_node"] = ssdlab("run", "fill", "--drive", "/dev/ng0n2", "--destroy-data", "/dev/ng0n2",
                                 "--db", str(DB))
    out["other_namespace"] = ssdlab("run", "fill", "--drive", N2, "--destroy-data", N1, "--db", str(DB))
    out["shared_serial"] = ssdlab("run", "fill", "--drive", N2, "--destroy-data", "SSDLABVM0001", "--db", str(DB))
    out["setro"] = sh("blockdev", "--setro", N2)
    try:
        out["read_only"] = ssdlab("run", "fill", "--drive", N2, "--destroy-data", N2, "--db", str(DB))
    finally:
        out["setrw"] = sh("blockdev", "--setrw", N2)
    out.update(mkfs=sh("mkfs.ext4", "-q", "-F", "-E", "nodiscard", part), mount=sh("mount", part, str(mnt)))
    try:
        out["mounted"] = ssdlab("run", "fill", "--drive", part, "--destroy-data", part, "--db", str(DB))
        out["disk_of_mounted"] = ssdlab("run", "fill", "--drive", N1, "--destroy-data", N1, "--db", str(DB))
    finally:
        sh("umount", str(mnt))
    r, w = os.pipe()
    holder = os.fork()
    if holder == 0:  # another process holding n2 open exclusively, as a mounted filesystem would
        try:
            os.open(N2, os.O_RDONLY | os.O_EXCL)
            os.write(w, b"held")
            time.sleep(600)
        finally:
            os._exit(0)
    try:
        out["holder_ready"] = os.read(r, 4).decode()
        out["in_use"] = ssdlab("run", "fill", "--drive", N2, "--destroy-data", N2, "--db", str(DB))
    finally:
        os.kill(holder, signal.SIGKILL)
        os.waitpid(holder, 0)
    return out


@step
def protected():
    """A fill on the namespace with protection information: its purge (a Format) keeps the
    namespace's LBA format and protection settings, as the controller reports them."""
    before = sh("nvme", "id-ns", N4, "-o", "json")
    run = ssdlab("run", "fill", "--drive", N4, "--destroy-data", N4, "--db", str(LOCAL / "pi.sqlite"), "--json")
    return {"id_ns_before": before, "run": run, "id_ns_after": sh("nvme", "id-ns", N4, "-o", "json"),
            "integrity": Path("/sys/block/nvme0n4/integrity/format").read_text().strip()}


@step
def consistency():
    """A short consistency run on the 4 KiB namespace (purge by the controller's route, fill,
    then seconds of 4 KiB random writes; telemetry stored around each phase); then the
    namespace's LBA format as the controller reports it after its Format."""
    return {"run": ssdlab("run", "consistency", "--drive", N2, "--destroy-data", N2, "--db", str(DB),
                          "--seconds", "6", "--json"),
            "id_ns2_after": sh("nvme", "id-ns", N2, "-o", "json")}


def _checkpointed(db: Path) -> bool:
    """Has the run stored its random phase's checkpoint (a `partial` row) yet?"""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return bool(c.execute("SELECT 1 FROM phases WHERE name='random' AND status='partial'").fetchall())
    except sqlite3.Error:  # not created yet
        return False


def _interrupt(sig: int) -> dict:
    """A consistency run signalled in its random-write phase (after the purge and the fill:
    phases it finished): SIGINT two seconds into it, SIGKILL once the runner has stored a
    checkpoint of it (what a kill keeps)."""
    db = LOCAL / f"sig{sig}.sqlite"
    base = sectors_written(N2)
    cmd = Command("run", "consistency", "--drive", N2, "--destroy-data", N2, "--db", str(db),
                  "--seconds", "600")

    def wait(until, timeout: float) -> float:
        t0 = time.monotonic()
        while not until() and time.monotonic() - t0 < timeout:
            if os.waitpid(cmd.pid, os.WNOHANG)[0]:
                raise RuntimeError(f"the run ended before it could be interrupted: {cmd.err.read_text()[-2000:]}")
            time.sleep(0.1)
        return time.monotonic() - t0

    # the fill writes the namespace once; sectors past that are the random phase's
    if wait(lambda: sectors_written(N2) - base > NS_SECTORS, 300) >= 300:
        stuck = processes()
        os.kill(cmd.pid, signal.SIGKILL)
        raise RuntimeError(f"the run never reached its random writes in 300 s; its processes:\n{stuck}")
    if sig == signal.SIGINT:
        cut_s = 2.0
        time.sleep(cut_s)
    else:  # seconds from the random phase's first writes to its first checkpoint
        cut_s = wait(lambda: _checkpointed(db), 120)
    os.kill(cmd.pid, sig)
    res = cmd.wait(300)
    # fio gets SIGTERM once its parent died and ends as it likes to: its queued commands
    # complete first, seconds on an emulated controller with the host's cores busy
    t0 = time.monotonic()
    while (held := holds(N2)) and time.monotonic() - t0 < 60:
        time.sleep(0.2)
    # read in the guest: a killed run reads as stale only where its process lived
    return {**res, "db": str(OUT / db.name), "holders_after": held, "holders_s": time.monotonic() - t0,
            "processes": processes() if held else "", "cut_s": cut_s,
            "list": ssdlab("results", "list", "--db", str(db), "--json")}


@step
def ctrl_c():
    return _interrupt(signal.SIGINT)


@step
def sigkill():
    return _interrupt(signal.SIGKILL)


# fio's sg engine on a SCSI disk: scsi_debug's (a RAM disk; 0.1 ms a command, and as ndelay is
# over 10 us a SYNCHRONIZE CACHE 1/20 s: every write in flight completes while a sync waits);
# sync=1 makes fio's sg do each I/O in the call. 64 writes a job: its syncs are most of its
# time (16 of them, 0.8 s)
SG_JOBS = "".join(f"[{name}]\nioengine=sg\nrw=randwrite\nbs=4k\nsize=256k\niodepth={qd}\n{kind}=4\n{extra}stonewall\n"
                  for name, qd, kind, extra in (("qd4", 4, "fsync", ""), ("qd8", 8, "fsync", ""),
                                                ("qd4_fdatasync", 4, "fdatasync", ""),
                                                ("qd8_sync", 8, "fsync", "sync=1\n")))


def _sg_device(loaded: dict) -> str:
    for _ in range(100):
        found = sorted(Path("/sys/bus/pseudo/drivers/scsi_debug").glob("adapter*/host*/target*/*/scsi_generic/sg*"))
        if found and os.path.exists(f"/dev/{found[0].name}"):
            return f"/dev/{found[0].name}"
        time.sleep(0.1)
    raise RuntimeError(f"no sg device for scsi_debug (modprobe: {loaded}); dmesg:\n{sh('dmesg')['stdout'][-2000:]}")


@step
def sg_syncs():
    """fio's own sg engine (the host's fio, on /dev/sgN) with fsync=4 and fdatasync=4 at
    iodepth 4 and 8, and with sync=1; the modules unloaded after (the guest uses none of them)."""
    loaded = {"scsi_debug": sh("modprobe", "scsi_debug", "dev_size_mb=8", "ndelay=100000"), "sg": sh("modprobe", "sg")}
    try:
        dev = _sg_device(loaded)
        jobs = LOCAL / "sg.fio"
        jobs.write_text(f"[global]\nfilename={dev}\n{SG_JOBS}")
        res = LOCAL / "sg.json"
        run = sh("fio", "--output-format=json", f"--output={res}", str(jobs), timeout=240)
        run["json"] = json.loads(res.read_text()) if res.exists() and res.stat().st_size else None
        return {"device": dev, "model": Path(f"/sys/class/scsi_generic/{os.path.basename(dev)}/device/model")
                .read_text().strip(), "kernel": os.uname().release, "loaded": loaded, "jobs": SG_JOBS, "fio": run}
    finally:
        sh("rmmod", "sg", "scsi_debug")


# fio's end flushes on sg (end_fsync, fsync_on_close): (job, device, options); "sg" is
# /dev/sgN, "sd" its disk's /dev/sdX
SG_FLUSH_JOBS = (
    ("read", "sg", "rw=read\niodepth=4\n"),
    ("read_end", "sg", "rw=read\niodepth=4\nend_fsync=1\n"),
    ("read_close", "sg", "rw=read\niodepth=4\nfsync_on_close=1\n"),
    ("read_end_sync", "sg", "rw=read\niodepth=4\nend_fsync=1\nsync=1\n"),
    ("trim_end", "sg", "rw=trim\niodepth=4\nend_fsync=1\n"),
    ("read_close_loops", "sg", "rw=read\niodepth=4\nfsync_on_close=1\nloops=2\n"),
    ("write_close_loops", "sg", "rw=write\niodepth=4\nfsync_on_close=1\nloops=2\n"),
    ("write_close_loops_sync", "sg", "rw=write\nfsync_on_close=1\nsync=1\nloops=2\n"),
    ("sd_read_end", "sd", "rw=read\nend_fsync=1\n"),
    ("sd_read_close_loops", "sd", "rw=read\nfsync_on_close=1\nloops=2\n"),
    ("sd_write_close_loops", "sd", "rw=write\nfsync_on_close=1\nloops=2\n"),
    # a pass whose offsets end before its bytes (every other block): fio closes the file there
    ("holes_close", "sg", "rw=read:4k\niodepth=4\nfsync_on_close=1\n"),
    ("holes_close_loops", "sg", "rw=read:4k\niodepth=4\nfsync_on_close=1\nloops=2\n"),
    ("holes_close_qd1", "sg", "rw=read:4k\nfsync_on_close=1\n"),
    ("holes_close_sync", "sg", "rw=read:4k\niodepth=4\nfsync_on_close=1\nsync=1\n"),
    ("holes_end", "sg", "rw=read:4k\niodepth=4\nend_fsync=1\n"),
)


class KernelLog:
    """The kernel's messages logged from now on, read from /dev/kmsg in this process (under
    an emulated CPU each dmesg run costs a start of its own)."""

    def __enter__(self) -> KernelLog:
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)  # past what is logged already
        return self

    def new(self) -> list[str]:
        """The messages since the last call (or since entering), one a line, as dmesg prints them."""
        lines = []
        while True:
            try:
                rec = os.read(self.fd, 8192).decode(errors="replace")
            except BlockingIOError:  # none left
                return lines
            except BrokenPipeError:  # records overwritten before they were read: read on from the oldest kept
                continue
            lines.append(rec.split(";", 1)[-1].split("\n", 1)[0])  # "level,seq,usec,flags;text\n KEY=..."

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


MARK = "ssdlab-job "  # what each job of the flushes step logs as it starts


def flushes_per_job(lines: list[str]) -> dict[str, int]:
    """The SYNCHRONIZE CACHEs (scsi_debug logs "cmd 35 ...") after each job's mark, by job."""
    out: dict[str, int] = {}
    job = None
    for x in lines:
        if x.startswith(MARK):
            job = x[len(MARK):].strip()
            out[job] = 0
        elif job is not None and " cmd 35 " in x:
            out[job] += 1
    return out


@step
def sg_flushes():
    """fio's sg with end_fsync and fsync_on_close, the jobs one after another in one fio run
    (under an emulated CPU each fio start takes about 0.6 s), the SYNCHRONIZE CACHEs each
    sent counted in the kernel's log (scsi_debug's opts=1 logs every command it gets) between
    the marks each job's exec_prerun writes there as it starts (stonewall: after the job
    before it closed its files)."""
    loaded = {"scsi_debug": sh("modprobe", "scsi_debug", "dev_size_mb=8", "ndelay=100000", "opts=1"),
              "sg": sh("modprobe", "sg")}
    try:
        sg = _sg_device(loaded)
        sd = "/dev/" + next(Path(f"/sys/class/scsi_generic/{os.path.basename(sg)}/device/block").iterdir()).name
        jobs = LOCAL / "flushes.fio"
        # fio cuts an option's value at ';' or '#' and sends the command's own output to a file
        # of its (a pipe, not a redirection, reaches /dev/kmsg)
        jobs.write_text("".join(f"[{name}]\nioengine=sg\nfilename={sg if where == 'sg' else sd}\nbs=4k\nsize=256k\n"
                                f"{options}exec_prerun=echo {MARK}{name} | tee /dev/kmsg\nstonewall\n"
                                for name, where, options in SG_FLUSH_JOBS))
        res = LOCAL / "flushes.json"
        with KernelLog() as log:
            # read while fio runs: scsi_debug logs each of its ~1500 commands, and records not
            # read before the kernel's ring wraps are lost
            lines: list[str] = []
            done = threading.Event()

            def drain() -> None:
                while not done.wait(0.05):
                    lines.extend(log.new())

            reader = threading.Thread(target=drain)
            reader.start()
            try:
                run = sh("fio", "--output-format=json", f"--output={res}", jobs.name, cwd=LOCAL, timeout=600)
            finally:
                done.set()
                reader.join()
            lines.extend(log.new())
        run["json"] = json.loads(res.read_text()) if res.exists() and res.stat().st_size else None
        run["flushes"] = flushes_per_job(lines)
        return {"sg": sg, "sd": sd, "write_cache": Path(f"/sys/block/{os.path.basename(sd)}/queue/write_cache")
                .read_text().strip(), "loaded": loaded, "jobs": SG_FLUSH_JOBS, "run": run}
    finally:
        sh("rmmod", "sg", "scsi_debug")


steps["kernel"] = {"ok": True, "nvme": [x for x in sh("dmesg")["stdout"].splitlines() if "nvme" in x][-60:],
                   "modules": sorted(x.split()[0] for x in Path("/proc/modules").read_text().splitlines())}
steps["done"] = {"ok": True, "wall_s": time.monotonic() - T0,
                 "threads": [t.name for t in threading.enumerate() if t is not threading.main_thread()],
                 "children": children()}
save()
sys.stdout.flush()
os._exit(0)  # nothing left behind can hold the VM up (the steps above say what was)
