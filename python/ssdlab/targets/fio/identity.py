"""Who a real drive is (sysfs) and what it reports about itself (smartctl / nvme-cli):
temperature, host writes and, where the drive reports it, NAND writes (-> real WAF)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..guard.block_dev import BlockDev

SYS = Path("/sys/class/block")


def _read(p: Path, default: str = "") -> str:
    try:
        return p.read_text().strip()
    except OSError:
        return default


def _int(s: str, default: int = 0) -> int:
    try:
        return int(s)
    except (TypeError, ValueError):
        return default


def block_info(block: BlockDev) -> dict[str, Any]:
    """Identity of a block device from sysfs (no tool needed): the device resolved once
    (guard/block_dev.py), never its path again."""
    real, name = block.real, block.name
    base = SYS / name
    disk = base
    if (base / "partition").exists():
        disk = base.resolve().parent  # the whole disk holds device/ and queue/
    q = disk / "queue"
    dev = disk / "device"
    model = _read(dev / "model") or _read(base / "device" / "model")
    serial = _read(dev / "serial") or _read(base / "serial")
    fw = _read(dev / "firmware_rev") or _read(dev / "rev")
    vendor = _read(dev / "vendor")
    kind = "nvme" if name.startswith("nvme") else "loop" if name.startswith("loop") else (
        "sd" if name.startswith("sd") else name.rstrip("0123456789"))
    backing = _read(base / "loop" / "backing_file")
    if kind == "loop":
        model = model or "Linux loop device"
        serial = serial or backing
    if not serial and shutil.which("lsblk"):
        r = subprocess.run(["lsblk", "-dno", "SERIAL", real], capture_output=True, text=True, timeout=10)
        serial = r.stdout.strip()
    info = {
        "path": block.path,
        "dev": real,
        "name": name,
        "kind": kind,
        "model": " ".join(f"{vendor} {model}".split()) if vendor and vendor not in model else model,
        "serial": serial,
        "firmware": fw,
        "capacity": _int(_read(base / "size")) * 512,
        "logical_block": _int(_read(q / "logical_block_size"), 512),
        "physical_block": _int(_read(q / "physical_block_size"), 512),
        "rotational": _read(q / "rotational") == "1",
        "discard": _int(_read(q / "discard_max_bytes")) > 0,
        "discard_max_bytes": _int(_read(q / "discard_max_bytes")),
        "discard_granularity": _int(_read(q / "discard_granularity")),
        "write_zeroes_max_bytes": _int(_read(q / "write_zeroes_max_bytes")),
        "scheduler": _read(q / "scheduler"),
        # the kernel's view of the volatile write cache: "write back" (on) / "write through"
        "write_cache": _read(q / "write_cache"),
        "transport": _read(dev / "transport") or ("nvme" if kind == "nvme" else ""),
    }
    if backing:
        info["backing_file"] = backing
    # an NVMe namespace's id (its controller's serial is every namespace's) and the
    # protection information its blocks carry (T10-DIF-TYPE1-CRC; "none"): a namespace's
    # format beyond its block size, which results of two formats differ by
    nsid, integrity = _read(disk / "nsid"), _read(disk / "integrity" / "format")
    if nsid:
        info["nsid"] = _int(nsid)
    if integrity:
        info["integrity"] = integrity
    return info


# --------------------------------------------------------------------------- telemetry
# The tools' JSON differs by version and vendor ("N/A" strings, raw values such as
# "40 (Min/Max 20/50)", null rows, a list instead of an object): every field is read
# defensively, and one that cannot be read is unknown (NaN) with a warning.
class TelemetryWarning(UserWarning):
    pass


def _warn(msg: str) -> None:
    import warnings

    warnings.warn(f"drive telemetry: {msg}; that value is unknown", TelemetryWarning, stacklevel=3)


def _run_json(cmd: list[str], timeout: float = 10.0) -> dict | None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        doc = json.loads(r.stdout) if r.stdout.strip() else None
    except (json.JSONDecodeError, RecursionError):
        return None
    if doc is not None and not isinstance(doc, dict):
        _warn(f"`{' '.join(cmd[:2])}` printed JSON that is not an object")
        return None
    return doc


def _obj(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _num(x: Any, where: str) -> float:
    """A counter or temperature as float; NaN (with a warning) when it is not a number.
    Integers stay exact up to 2**53; leading digits of a string ("40 (Min/Max 20/50)",
    smartctl's raw string) are taken."""
    if x is None:
        return math.nan
    if isinstance(x, bool):
        _warn(f"{where} = {x!r} is not a number")
        return math.nan
    if isinstance(x, (int, float)):
        return float(x) if math.isfinite(float(x)) else math.nan
    if isinstance(x, str):
        head = x.strip().split(" ", 1)[0]
        try:
            v = float(head)
            return v if math.isfinite(v) else math.nan
        except ValueError:
            pass
    _warn(f"{where} = {str(x)[:40]!r} is not a number")
    return math.nan


# SATA SMART attributes: name -> (counter, bytes per raw unit). Units differ by vendor;
# these are the documented ones.
ATA_HOST = {
    "Total_LBAs_Written": 512,
    "Host_Writes_32MiB": 32 * 2**20,
    "Host_Writes_GiB": 2**30,
    "Lifetime_Writes_GiB": 2**30,
    "Host_Program_Page_Count": None,  # Crucial/Micron: pages, paired with FTL_Program_Page_Count
}
ATA_NAND = {
    "NAND_Writes_1GiB": 2**30,
    "NAND_Writes_GiB": 2**30,
    "NAND_Writes_32MiB": 32 * 2**20,
    "FTL_Program_Page_Count": None,
}


def parse_smartctl(doc: Any) -> dict[str, float]:
    """Temperature (°C), host and NAND write counters (bytes) from `smartctl -j -A`.
    Counters are NaN when the drive does not report them (or reports them unreadably)."""
    out = {"temp_c": math.nan, "host_write_bytes": math.nan, "nand_write_bytes": math.nan}
    out.update(NVME_EXTRA_NAN)
    if not isinstance(doc, dict):
        _warn("smartctl output is not a JSON object")
        return out
    for section in ("temperature", "nvme_smart_health_information_log", "ata_smart_attributes"):
        if doc.get(section) is not None and not isinstance(doc[section], dict):
            _warn(f"smartctl's {section} is not an object")
    t = _obj(doc.get("temperature")).get("current")
    if t is not None:
        out["temp_c"] = _num(t, "temperature.current")
    nv = _obj(doc.get("nvme_smart_health_information_log"))
    if nv:
        if nv.get("temperature") is not None and math.isnan(out["temp_c"]):
            out["temp_c"] = _num(nv["temperature"], "nvme temperature")
        if nv.get("data_units_written") is not None:
            out["host_write_bytes"] = _num(nv["data_units_written"], "data_units_written") * 512000.0
        _nvme_extra(nv, out)
    table = _obj(doc.get("ata_smart_attributes")).get("table") or []
    if not isinstance(table, list):
        _warn("ata_smart_attributes.table is not a list")
        table = []
    pages_host = pages_ftl = None
    for a in table:
        if not isinstance(a, dict):
            continue
        name = str(a.get("name", ""))
        raw = _obj(a.get("raw")).get("value")
        if raw is None:
            continue
        v = _num(raw, f"attribute {name[:30]}")
        if name == "Host_Program_Page_Count":
            pages_host = v
        elif name == "FTL_Program_Page_Count":
            pages_ftl = v
        elif (host_unit := ATA_HOST.get(name)) and math.isnan(out["host_write_bytes"]):
            out["host_write_bytes"] = v * host_unit
        elif nand_unit := ATA_NAND.get(name):
            out["nand_write_bytes"] = v * nand_unit
        elif name in ("Temperature_Celsius", "Airflow_Temperature_Cel") and math.isnan(out["temp_c"]):
            # the raw value packs min/max in the upper bytes: the low byte is the current one
            out["temp_c"] = float(raw & 0xFF) if isinstance(raw, int) and not isinstance(raw, bool) else v
    if pages_host is not None and pages_ftl is not None:
        # Micron/Crucial: NAND pages = host pages + FTL (GC) pages; express in host bytes units
        # scaled so that their ratio is the WAF.
        out["host_pages"] = pages_host
        out["nand_pages"] = pages_host + pages_ftl
    return out


# NVMe SMART / health log fields beyond temperature and writes (smartctl and nvme-cli name
# them alike; nvme-cli older versions spell percentage used "percent_used")
NVME_EXTRA = {"host_read_bytes": ("data_units_read",), "percent_used": ("percentage_used", "percent_used"),
              "media_errors": ("media_errors",), "power_cycles": ("power_cycles",),
              "unsafe_shutdowns": ("unsafe_shutdowns",)}
NVME_EXTRA_NAN = {k: math.nan for k in NVME_EXTRA}


def _nvme_extra(log: dict, out: dict[str, float]) -> None:
    for key, names in NVME_EXTRA.items():
        for n in names:
            if log.get(n) is not None:
                v = _num(log[n], n)
                out[key] = v * 512000.0 if n == "data_units_read" else v
                break


def parse_nvme_smart_log(doc: Any) -> dict[str, float]:
    """`nvme smart-log -o json`: temperature is in kelvin there."""
    out = {"temp_c": math.nan, "host_write_bytes": math.nan, "nand_write_bytes": math.nan}
    out.update(NVME_EXTRA_NAN)
    if not isinstance(doc, dict):
        _warn("nvme smart-log output is not a JSON object")
        return out
    _nvme_extra(doc, out)
    if doc.get("temperature") is not None:
        t = _num(doc["temperature"], "temperature")
        out["temp_c"] = t - 273.0 if t > 200 else t
    if doc.get("data_units_written") is not None:
        out["host_write_bytes"] = _num(doc["data_units_written"], "data_units_written") * 512000.0
    return out


def parse_ocp_smart(doc: Any) -> float:
    """`nvme ocp smart-add-log -o json`: Physical media units written (bytes) or NaN."""
    if not isinstance(doc, dict):
        _warn("nvme ocp smart-add-log output is not a JSON object")
        return math.nan
    for k, v in doc.items():
        if "physical media units written" in str(k).lower():
            if isinstance(v, dict):
                return _num(v.get("hi", 0), "media units hi") * 2**64 + _num(v.get("lo", 0), "media units lo")
            return _num(v, "physical media units written")
    return math.nan


class Telemetry:
    """Reads a drive's own counters through smartctl (preferred) or nvme-cli; silently
    unavailable for loop devices, files and drives that report nothing."""

    def __init__(self, dev: str, kind: str):
        self.dev = dev
        self.kind = kind
        self.tool = ""
        # the OCP extended SMART log (NAND writes): asked until a drive has answered without
        # it; a drive that lacks the vendor page does not grow one mid-run
        self.ocp = kind == "nvme"
        if kind in ("loop", "file", "ram", "zram"):
            return
        if shutil.which("smartctl"):
            d = _run_json(["smartctl", "-j", "-A", dev])
            if d and (d.get("temperature") or d.get("nvme_smart_health_information_log")
                      or d.get("ata_smart_attributes")):
                self.tool = "smartctl"
        if not self.tool and kind == "nvme" and shutil.which("nvme"):
            d = _run_json(["nvme", "smart-log", dev, "-o", "json"])
            if d:
                self.tool = "nvme-cli"

    @property
    def available(self) -> bool:
        return bool(self.tool)

    def read(self) -> dict[str, float]:
        if self.tool == "smartctl":
            d = _run_json(["smartctl", "-j", "-A", self.dev])
            out = parse_smartctl(d or {})
        elif self.tool == "nvme-cli":
            d = _run_json(["nvme", "smart-log", self.dev, "-o", "json"])
            out = parse_nvme_smart_log(d or {})
        else:
            return {}
        if self.ocp and math.isnan(out.get("nand_write_bytes", math.nan)) and shutil.which("nvme"):
            d = _run_json(["nvme", "ocp", "smart-add-log", self.dev, "-o", "json"])
            if d:
                out["nand_write_bytes"] = parse_ocp_smart(d)
            self.ocp = bool(d) and not math.isnan(out.get("nand_write_bytes", math.nan))
        return out

    def temperature(self) -> float:
        if self.tool == "smartctl":
            d = _run_json(["smartctl", "-j", "-A", self.dev]) or {}
            return parse_smartctl(d)["temp_c"]
        if self.tool == "nvme-cli":
            d = _run_json(["nvme", "smart-log", self.dev, "-o", "json"]) or {}
            return parse_nvme_smart_log(d)["temp_c"]
        return math.nan


def write_counters_delta(before: dict, after: dict) -> dict[str, float]:
    """Drive-reported writes during a phase and the WAF they imply (NaN where unknown)."""
    out = {}
    hb = after.get("host_write_bytes", math.nan) - before.get("host_write_bytes", math.nan)
    nb = after.get("nand_write_bytes", math.nan) - before.get("nand_write_bytes", math.nan)
    out["drive_host_write_bytes"] = hb
    out["drive_nand_write_bytes"] = nb
    waf = nb / hb if hb and hb > 0 and not math.isnan(nb) else math.nan
    if "host_pages" in before and "host_pages" in after:
        dh = after["host_pages"] - before["host_pages"]
        dn = after["nand_pages"] - before["nand_pages"]
        if dh > 0:
            waf = dn / dh
    out["drive_waf"] = waf
    out["drive_host_read_bytes"] = after.get("host_read_bytes", math.nan) - before.get("host_read_bytes", math.nan)
    out["drive_media_errors"] = after.get("media_errors", math.nan) - before.get("media_errors", math.nan)
    return out


TELEMETRY_KEYS = ("temp_c", "host_write_bytes", "host_read_bytes", "percent_used", "media_errors")


def before_after(before: dict, after: dict) -> dict[str, float]:
    """The drive's own counters at the start and the end of a phase, stored with it:
    drive_before_temp_c, drive_after_host_write_bytes, ... (NaN where not reported)."""
    out = {}
    for k in TELEMETRY_KEYS:
        out[f"drive_before_{k}"] = float(before.get(k, math.nan))
        out[f"drive_after_{k}"] = float(after.get(k, math.nan))
    return out


class TempSampler:
    """Samples the drive temperature about once a second in a thread during a phase."""

    def __init__(self, telemetry: Telemetry, interval_s: float = 1.0):
        self.tel = telemetry
        self.interval = interval_s
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._t: threading.Thread | None = None
        self.t0 = 0.0

    def start(self) -> "TempSampler":
        self.t0 = time.monotonic()
        if self.tel.available:
            self._t = threading.Thread(target=self._loop, daemon=True, name="ssdlab-temp")
            self._t.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                t = self.tel.temperature()
            except Exception as e:  # a tool gone odd mid-run: no more samples, no thread traceback
                _warn(f"temperature sampling stopped ({type(e).__name__}: {e})")
                return
            if not math.isnan(t):
                self.samples.append((time.monotonic() - self.t0, t))
            self._stop.wait(self.interval)

    def stop(self) -> list[tuple[float, float]]:
        self._stop.set()
        if self._t:
            self._t.join(timeout=15)
        return self.samples


def attach_temps(series: dict[str, np.ndarray], temps: list[tuple[float, float]]) -> None:
    """Temperature column aligned to the series rows (the sample nearest each t_s)."""
    attach_column(series, "temp_c", temps)


def attach_column(series: dict[str, np.ndarray], name: str, samples: list[tuple[float, float]]) -> None:
    """A column of (t, value) samples taken beside the run, aligned to the series rows (the
    first sample at or after each row's t_s, else the last)."""
    if not samples or not len(series.get("t_s", [])):
        return
    tt = np.array([t for t, _ in samples])
    tv = np.array([v for _, v in samples])
    idx = np.clip(np.searchsorted(tt, series["t_s"]), 0, len(tt) - 1)
    series[name] = tv[idx].astype(np.float64)
