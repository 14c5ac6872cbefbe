"""What a fit searches: the physical parameters of a drive profile, each within physical
bounds, and the generic class a search starts from (a built-in profile with the structure
the evidence suggests: cell type, interface, mapping cache).

A search works in a unit cube: every parameter is a number u in [0, 1] mapped onto its bounds
(logarithmically for times, rates and sizes), so the optimizer, the spread over the best
trials and the slices of identifiability all see the same scale. A few parameters are
derived: the die count sets channels and dies per channel, the spare area sets the blocks
per plane for the drive's capacity, cache sizes are shares of the capacity.

Trials may run on a drive with fewer blocks per plane (`scaled`): the same dies, planes,
page types, timings and SLC share, with the capacity and every size grown or shrunk with
the blocks that hold data (all but GC's reserve and the open blocks of each die, which a
smaller drive keeps: `unscaled_blocks`; without that, 46 blocks per plane collect at twice
the WAF of 1365)."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, replace
from typing import Any

from ..profiles import builtin_ids, load_text

GB = 1e9
KIB = 1024
OFF_U = 0.05
BITS = {"slc": 1, "mlc": 2, "tlc": 3, "qlc": 4}  # bits a cell: a block in SLC mode holds 1/bits


def unscaled_blocks(threshold: float, static_gb: float, dynamic_gb: float) -> float:
    """The blocks a die keeps whatever its size, on average over a block's life: GC's
    threshold and half a block above it (GC frees a block at a time), and half of each open
    block the free pool gives (one a write stream: host and GC, and the host's SLC stream when
    the cache is dynamic only; a static cache opens its own blocks). Measured: the closed
    loops' hidden drives replayed at trial size and at full size agree best at 3.5 for
    mx100-256 (two streams) and the 1 TB QLC (static cache), 4 for bg4-128 (dynamic cache)."""
    streams = 2 + (1 if dynamic_gb > 0 and not static_gb else 0)
    return threshold + 0.5 + 0.5 * streams


@dataclass(frozen=True)
class Param:
    """One searched parameter: `key` is the profile key it sets (a dotted path) or a derived
    one (`dies`, `spare_pct`, `slc.cache_share`, `slc.static_share`, `slc.reclaim_share`)."""

    key: str
    lo: float
    hi: float
    unit: str
    meaning: str
    log: bool = True
    integer: bool = False
    pow2: bool = False  # a power of two (the die count: channels x dies per channel)
    off: bool = False  # the cube's bottom OFF_U is 0: the mechanism off (no cache, no retries)
    gate: str = ""  # an `off` parameter whose mechanism this one tunes: while it is 0, this moves nothing
    choices: tuple[str, ...] = ()  # a firmware policy: the whole number i of 0..len-1 stands for choices[i]
    whole: bool = False  # the ceiling is all of it (a share's 1, 100 %): no drive passes it

    def limit(self, top: bool) -> bool:
        """Whether the search's floor (ceiling, `top`) is a limit no drive passes (none of it: 0,
        or the mechanism off; all of it: `whole`; a count's or a policy's own values), not just
        where the search stops looking (a time, a rate, a size, a share of the capacity). The
        top of a limit's range (UNLIMITED) stands for no limit: nothing lies beyond it."""
        if self.pow2 or self.integer or self.choices:
            return True
        return (self.whole or self.key in UNLIMITED) if top else self.off or (not self.log and self.lo == 0)

    def physical(self, u: float) -> float:
        u = min(max(u, 0.0), 1.0)
        if self.off:
            if u < OFF_U:
                return 0.0
            u = (u - OFF_U) / (1 - OFF_U)
        x = math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo))) if self.log \
            else self.lo + u * (self.hi - self.lo)
        if self.pow2:
            return float(2 ** round(math.log2(x)))
        return float(round(x)) if self.integer else x

    def unit_of(self, x: float) -> float:
        """The cube coordinate of a physical value (clipped to the bounds; 0: off)."""
        if self.off and x <= 0:
            return 0.0
        x = min(max(x, self.lo), self.hi)
        u = (math.log(x) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo)) if self.log \
            else (x - self.lo) / (self.hi - self.lo)
        return OFF_U + u * (1 - OFF_U) if self.off else u


# Bounds: what NAND and controllers of 2010-2026 span (datasheets, ISSCC papers, the built-in
# profiles' sources in docs/profiles.md), per cell type where it differs.
READ_NATIVE = {"mlc": (30.0, 150.0), "tlc": (35.0, 200.0), "qlc": (50.0, 300.0), "slc": (15.0, 80.0)}
PROG_NATIVE = {"mlc": (500.0, 4000.0), "tlc": (600.0, 6000.0), "qlc": (1500.0, 25000.0), "slc": (60.0, 600.0)}


def params_for(cell: str, mapping: str, interface: str, extra: tuple[str, ...] = ()) -> list[Param]:
    """The parameters a search over a drive of this structure moves: the NAND's timing, the
    die count, spare area and SLC cache, the host front end and the write path, the mapping
    cache when the controller has no DRAM for it, and `extra` mechanism keys a class adds."""
    rn, pn = READ_NATIVE[cell], PROG_NATIVE[cell]
    out = [
        Param("nand.slc.read_us", 15, 100, "us", "SLC-mode page read (tR)"),
        Param("nand.native.read_us", rn[0], rn[1], "us", f"{cell.upper()} page read, the mean of the page types (tR)"),
        Param("nand.slc.prog_us", 50, 700, "us", "SLC-mode program (tPROG)"),
        Param("nand.native.prog_us", pn[0], pn[1], "us", f"{cell.upper()} program of one program unit (tPROG)"),
        Param("nand.erase_us", 1000, 15000, "us", "block erase (tBERS)"),
        Param("dies", 1, 64, "dies", "NAND dies (channels x dies per channel), a power of two", pow2=True),
        Param("spare_pct", 2, 60, "%", "spare area: raw NAND over the user capacity, less 1"),
        Param("nand.channel_mbps", 100, 2400, "MB/s", "NAND channel transfer rate"),
        Param("host.command_overhead_us", 0.5, 40, "us", "controller firmware time per command"),
        Param("host.host_latency_us", 2, 150, "us", "driver and interrupt round trip of every command"),
        Param("host.write_latency_us", 0, 60, "us", "write path before a write is acknowledged", log=False),
        Param("host.write_buffer_kib", 128, 65536, "KiB", "controller write buffer"),
        Param("ftl.idle_gc_target_pct", 0, 30, "%", "free blocks idle GC works up to", log=False),
        Param("ftl.gc_pace", 0.25, 4, "", "GC aggressiveness (1 keeps up with the host)"),
    ]
    if interface == "pcie":
        out.append(Param("host.protocol_efficiency", 0.5, 0.97, "", "share of the link rate left after "
                         "command and packet overhead (the host's practical limit too)", log=False))
    if cell != "mlc" and cell != "slc":
        out += [Param("slc.cache_share", 0.003, 0.6, "of capacity", "dynamic SLC cache at most, as a share "
                      "of the user capacity (0: none)", off=True),
                Param("slc.dynamic_share", 0.05, 1.0, "", "share of the free space (over bits per cell) the "
                      "dynamic cache may take", log=False, whole=True),
                Param("nand.native_write_mbps", 50, 20000, "MB/s", "controller's native-mode program pipeline")]
    if mapping in ("hmb", "sram"):
        out += [Param("mapping.cache_mib", 0.25, 1024, "MiB", "mapping-table cache (4 B per 4 KiB covered)"),
                Param("ftl.gc_buffers", 1, 64, "", "GC program units in flight at once (controller SRAM)",
                      integer=True)]
    if mapping == "hmb":
        out.append(Param("mapping.hmb_access_us", 0.05, 10, "us", "extra latency of a lookup in host memory"))
    known = {p.key for p in out}
    out += [EXTRA[k] for k in extra if k not in known]
    if any(p.key == "slc.cache_share" for p in out):  # a cache: the firmware's reclaim of it too
        out += [EXTRA[k] for k in RECLAIM if k not in known and k not in extra]
    return out


# the firmware's reclaim of the SLC cache while it writes direct: how much, how often, how fast,
# and how it fades as the drive fills (the PM981a's recovery peak halfway through the fill, the
# SN520's swings, the Vertex 460's conversion at half the LBAs, the 870 QVO's small folds)
RECLAIM = ("slc.reclaim_share", "slc.reclaim_interval_gb", "slc.reclaim_pace", "slc.reclaim_min_free_pct")


# mechanisms some classes have, searched when the class has them
EXTRA = {p.key: p for p in (
    # a firmware time of 0 costs nothing: off at the bottom (not "no limit" at the top, the slowest)
    Param("ftl.gc_move_us", 0.1, 80, "us", "controller firmware time per slot GC relocates (0: none)", off=True),
    Param("mapping.checkpoint_gb", 0.5, 64, "GB", "host writes between writes of the whole mapping table"),
    Param("ftl.idle_gc_max_valid_pct", 50, 99, "%", "idle GC collects only blocks at most this share valid "
          "(moving fuller ones costs wear)", log=False),
    Param("host.read_op_us", 0.1, 60, "us", "controller time per flash read it issues (0: none)", off=True),
    Param("host.read_mbps", 100, 20000, "MB/s", "controller read path"),
    Param("host.write_mbps", 100, 20000, "MB/s", "controller write path"),
    Param("slc.static_share", 0.0005, 0.05, "of capacity", "dedicated SLC blocks, as a share of the capacity "
          "(0: none)", off=True),
    Param("nand.retry.steps_fresh", 0.0005, 0.3, "steps", "mean read-retry steps of year-old data on new NAND "
          "(0: no retries)", off=True),
    Param("slc.cache_share", 0.003, 0.6, "of capacity", "dynamic SLC cache at most, as a share of the user capacity "
          "(0: none)", off=True),
    Param("slc.dynamic_mapped_max_pct", 0, 100, "%", "performance mode: the cache takes host writes while at "
          "most this share of the LBAs is mapped (0: off)", log=False, gate="slc.cache_share", whole=True),
    Param("slc.reclaim_share", 0.003, 1.0, "of the cache", "cache folded by each reclaim, as a share of the "
          "dynamic cache (0: no reclaim)", off=True, gate="slc.cache_share", whole=True),
    Param("slc.reclaim_interval_gb", 0.05, 50, "GB", "host writes between reclaims while writing direct",
          gate="slc.reclaim_share"),
    Param("slc.reclaim_pace", 0.05, 8, "", "SLC slots a reclaim folds per host slot written",
          gate="slc.reclaim_share"),
    Param("ftl.striping", 0, 1, "0 static, 1 dynamic", "write striping: pages to the dies in order, or each to "
          "the die free first (dies busy collecting take fewer host writes)", log=False, integer=True,
          choices=("static", "dynamic")),
    Param("slc.reclaim_min_free_pct", 0, 95, "%", "the reclaim's batches shrink as the drive fills, to none "
          "with this share of the capacity free (0: whole batches to the end)", log=False, gate="slc.reclaim_share"),
)}


@dataclass(frozen=True)
class Class:
    """A generic class: the built-in profile a search starts from, and the mechanisms of it
    the search moves besides the common ones."""

    profile: str
    what: str
    extra: tuple[str, ...] = ()


CLASSES = {
    "tlc-256": Class("tlc-256", "PCIe 3.0 TLC with DRAM", ("nand.retry.steps_fresh",)),
    "tlc-pcie4-1000": Class("tlc-pcie4-1000", "PCIe 4.0 TLC with DRAM", ("nand.retry.steps_fresh",)),
    "bg4-256": Class("bg4-256", "DRAM-less (HMB) PCIe TLC"),
    "qlc-pcie4-hmb-1000": Class("qlc-pcie4-hmb-1000", "QLC", ("slc.static_share",)),
    "mx100-256": Class("mx100-256", "SATA MLC with DRAM", ("ftl.gc_move_us", "ftl.idle_gc_max_valid_pct",
                                                           "mapping.checkpoint_gb", "host.read_op_us",
                                                           "host.read_mbps", "host.write_mbps", "slc.cache_share",
                                                           "slc.dynamic_mapped_max_pct", "ftl.striping")),
}


def discrete_keys() -> set[str]:
    """The parameters that take a few values: a power of two, a whole number, a policy."""
    return {q.key for q in [*params_for("tlc", "hmb", "pcie"), *EXTRA.values()] if q.pow2 or q.integer or q.choices}


def choose_class(facts: dict[str, Any]) -> str:
    """The class for what the evidence shows (cell, interface, mapping, PCIe generation)."""
    cell, mapping = facts.get("cell", "tlc"), facts.get("mapping", "dram")
    if cell == "qlc":
        return "qlc-pcie4-hmb-1000"
    if cell in ("mlc", "slc"):
        return "mx100-256"
    if mapping in ("hmb", "sram"):
        return "bg4-256"
    return "tlc-pcie4-1000" if facts.get("interface") == "pcie" and facts.get("pcie_gen", 3) >= 4 else "tlc-256"


@dataclass
class Start:
    """A search's start: the class profile (TOML text and parsed), what the facts fix on it
    (capacity, link, mapping), and the parameters with the class's values."""

    class_id: str
    text: str
    profile: dict[str, Any]
    capacity_gb: float
    fixed: dict[str, Any]  # profile key -> value the facts set (not searched)
    params: list[Param]
    start: dict[str, float] = field(default_factory=dict)  # key -> the class's physical value
    facts: dict[str, Any] = field(default_factory=dict)  # what the evidence states (capacity_gb, dies ...)
    inferred: frozenset[str] = frozenset()  # those of `facts` read off a fingerprint's figures (evidence.infer_facts)

    def overrides(self, values: dict[str, float]) -> list[str]:
        """`--set` overrides for the class profile: the facts, then `values` (key -> physical;
        the class's for keys not given), derived keys resolved."""
        return [f"{k}={_toml(v)}" for k, v in self.settings(values).items()]

    def settings(self, values: dict[str, float]) -> dict[str, Any]:
        v = {**self.start, **values}
        p = self.profile
        nand = p["nand"]
        out: dict[str, Any] = dict(self.fixed)
        top = {q.key: q.hi for q in self.params if q.key in UNLIMITED}
        for key, x in v.items():
            if key in DERIVED:
                continue
            if key in top and x >= top[key]:
                x = 0.0  # the top of a limit's range stands for no limit (64 GC buffers still limit a QLC fold)
            out[key] = CHOICES[key][int(round(x))] if key in CHOICES else int(round(x)) if _is_int(key) else x
        dies = int(v["dies"])
        channels = min(int(self.fixed.get("nand.channels", nand["channels"])), dies)
        while dies % channels:  # a die count the channels do not divide (12 dies: 6 channels of 2)
            channels -= 1
        out["nand.channels"] = channels
        out["nand.dies_per_channel"] = max(1, dies // channels)
        geo = {k: self.fixed.get(f"nand.{k}", nand[k]) for k in GEOMETRY}  # a datasheet's, else the class's
        block = geo["planes"] * geo["pages_per_block"] * geo["page_kib"] * KIB
        dies_total = channels * out["nand.dies_per_channel"]
        slc_static = v.get("slc.static_share", _static_share(p, self.capacity_gb)) * self.capacity_gb
        bits = BITS[nand["cell"]]
        raw = self.capacity_gb * GB * (1 + v["spare_pct"] / 100) + slc_static * GB * bits
        # at least the blocks the capacity needs besides the GC reserve (threshold + 4 per die)
        # and the static SLC cache's whole blocks on every die (as the simulator counts them),
        # and more than those and the threshold with 8 to spare (its room for native blocks)
        threshold = float(_get(p, "ftl.gc_threshold_blocks", 2))
        static = (math.ceil(math.ceil(slc_static * GB / (block / bits) - 1e-9) / dies_total)
                  if slc_static > 0 else 0)
        # of the capacity as the overrides write it (to 6 decimals: a 2 GiB drive's 2.147483648
        # is 2.147484, more than the blocks that hold 2 GiB exactly)
        cap = max(self.capacity_gb, float(_toml(float(self.capacity_gb))))
        least = cap * GB / (dies_total * block) + threshold + 4 + static
        out["nand.blocks_per_plane"] = max(8, math.ceil(raw / (dies_total * block)), math.ceil(least),
                                           int(threshold) + 9 + static)
        if "slc.cache_share" in v:
            out["slc.dynamic_max_gb"] = v["slc.cache_share"] * self.capacity_gb
        if "slc.reclaim_share" in v:
            cache = out.get("slc.dynamic_max_gb", float(_get(p, "slc.dynamic_max_gb", 0.0)))
            out["slc.reclaim_gb"] = v["slc.reclaim_share"] * cache
        if "slc.static_share" in v:
            out["slc.static_gb"] = slc_static
        return out

    def physical(self, u: dict[str, float]) -> dict[str, float]:
        by = {p.key: p for p in self.params}
        return {k: by[k].physical(x) for k, x in u.items()}

    def unit_start(self) -> dict[str, float]:
        return {p.key: p.unit_of(self.start[p.key]) for p in self.params}


DERIVED = ("dies", "spare_pct", "slc.cache_share", "slc.static_share", "slc.reclaim_share")
INTS = ("nand.channels", "nand.dies_per_channel", "nand.blocks_per_plane", "host.write_buffer_kib",
        "ftl.gc_buffers", "host.max_queue_depth", "nand.planes", "nand.pages_per_block", "nand.page_kib")
CHOICES = {p.key: p.choices for p in EXTRA.values() if p.choices}
# the NAND part's geometry: a figures file's facts (from its datasheet) fix it, else the class's
GEOMETRY = ("planes", "pages_per_block", "page_kib")


def _is_int(key: str) -> bool:
    return key in INTS


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


def _get(p: dict[str, Any], key: str, default: Any = None) -> Any:
    cur: Any = p
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return default
        cur = cur[part]
    return cur


def _static_share(p: dict[str, Any], capacity_gb: float) -> float:
    return float(_get(p, "slc.static_gb", 0.0)) / capacity_gb


def raw_bytes(p: dict[str, Any]) -> float:
    n = p["nand"]
    return float(n["channels"] * n["dies_per_channel"] * n["planes"] * n["blocks_per_plane"]
                 * n["pages_per_block"] * n["page_kib"] * KIB)


def class_value(p: dict[str, Any], key: str, capacity_gb: float) -> float:
    """The class profile's value of a searched key (derived keys computed from it)."""
    n = p["nand"]
    if key == "dies":
        return float(n["channels"] * n["dies_per_channel"])
    if key == "spare_pct":
        static = _static_share(p, float(p["user_capacity_gb"])) * float(p["user_capacity_gb"]) * GB
        bits = BITS[n["cell"]]
        return 100.0 * ((raw_bytes(p) - static * bits) / (float(p["user_capacity_gb"]) * GB) - 1.0)
    if key == "slc.cache_share":
        return float(_get(p, "slc.dynamic_max_gb", 0.0)) / float(p["user_capacity_gb"])
    if key == "slc.static_share":
        return _static_share(p, float(p["user_capacity_gb"]))
    if key == "slc.reclaim_share":
        cache = float(_get(p, "slc.dynamic_max_gb", 0.0))
        return min(1.0, float(_get(p, "slc.reclaim_gb", 0.0)) / cache) if cache > 0 else 0.0
    if key in CHOICES:  # the simulator's default: dynamic striping
        return float(CHOICES[key].index(str(_get(p, key, "dynamic"))))
    default = {"host.write_latency_us": 0.0, "ftl.gc_pace": 1.0, "ftl.idle_gc_target_pct": 10.0,
               "ftl.idle_gc_max_valid_pct": 90.0,
               "host.protocol_efficiency": 0.87, "nand.native_write_mbps": 0.0, "ftl.gc_buffers": 0.0,
               "mapping.hmb_access_us": 1.0, "ftl.gc_move_us": 0.0, "mapping.checkpoint_gb": 0.0,
               "host.read_op_us": 0.0, "host.read_mbps": 0.0, "host.write_mbps": 0.0,
               "nand.retry.steps_fresh": 0.0, "slc.dynamic_share": 1.0, "host.host_latency_us": 10.0}
    return float(_get(p, key, default.get(key, 0.0)))


# a value of 0 means "no such limit" for these keys: the search's top of the range stands for it
UNLIMITED = ("nand.native_write_mbps", "host.read_mbps", "host.write_mbps", "ftl.gc_buffers",
             "mapping.checkpoint_gb")


def start(class_id: str, facts: dict[str, Any], inferred: frozenset[str] = frozenset()) -> Start:
    """The search's start from class `class_id` (a class of CLASSES or any built-in profile)
    for a drive with `facts` (capacity_gb is needed; interface, link and mapping override the
    class's; `inferred`: the facts read off a fingerprint rather than stated)."""
    if class_id not in builtin_ids():
        raise ValueError(f"--start {class_id}: not a built-in profile; classes: {', '.join(CLASSES)}")
    text = load_text(class_id)
    p = tomllib.loads(text)
    cap = float(facts.get("capacity_gb") or p["user_capacity_gb"])
    fixed: dict[str, Any] = {"user_capacity_gb": cap}
    host = p["host"]
    interface = facts.get("interface", host["interface"])
    if interface != host["interface"]:
        fixed["host.interface"] = interface
        fixed["host.max_queue_depth"] = 32 if interface == "sata" else 1024
        fixed["host.protocol_efficiency"] = 0.92 if interface == "sata" else 0.87
    for k in ("pcie_gen", "lanes"):
        if k in facts and interface == "pcie":
            fixed[f"host.{k}"] = facts[k]
    mapping = facts.get("mapping", _get(p, "mapping.kind", "dram"))
    if mapping != _get(p, "mapping.kind", "dram"):
        fixed["mapping.kind"] = mapping
        fixed["mapping.cache_mib"] = 0.0 if mapping == "dram" else 64.0 if mapping == "hmb" else 1.0
        if mapping != "dram" and _get(p, "mapping.checkpoint_gb", 0.0):
            fixed["mapping.checkpoint_gb"] = 0.0  # a DRAM table's checkpoints: a cached one writes back its pages
    for k in GEOMETRY:  # the part's datasheet: not searched
        if k in facts:
            fixed[f"nand.{k}"] = int(facts[k])
    if "channels" in facts:
        fixed["nand.channels"] = int(facts["channels"])
    cell = p["nand"]["cell"]
    cls = CLASSES.get(class_id, Class(class_id, "a built-in profile"))
    params = params_for(cell, mapping, interface, cls.extra)
    if "dies" in facts:  # a teardown's die count: not searched
        params = [q for q in params if q.key != "dies"]
    if "nand_mts" in facts:  # the part's interface (8 bits a transfer): no channel moves more
        params = [_at_most(q, float(facts["nand_mts"])) if q.key == "nand.channel_mbps" else q for q in params]
    if "mapping.checkpoint_gb" in fixed:  # none without a DRAM table: not searched
        params = [q for q in params if q.key != "mapping.checkpoint_gb"]
    if interface == "sata":  # the SATA link's efficiency is the interface's, not searched
        params = [q for q in params if q.key != "host.protocol_efficiency"]
    base = dict(p)
    vals = {}
    for q in params:
        if q.key in fixed:
            vals[q.key] = float(fixed[q.key])
            continue
        x = class_value(base, q.key, cap)
        if q.key in UNLIMITED and x == 0:
            x = q.hi  # no limit: the top of the range (as fast as the search goes)
        vals[q.key] = 0.0 if q.off and x <= 0 else min(max(x, q.lo), q.hi)
    if "dies" in facts:
        vals["dies"] = float(facts["dies"])
    for k in list(fixed):
        if k in vals:
            del fixed[k]
    params = [q for q in params if q.key not in fixed]
    return Start(class_id, text, p, cap, fixed, params, vals, dict(facts), frozenset(inferred) & facts.keys())


def fact_behind(key: str) -> str:
    """The fact that sets profile key `key` when `start` fixes it (capacity_gb, interface,
    pcie_gen, lanes, mapping, channels or a NAND geometry fact)."""
    if key == "user_capacity_gb":
        return "capacity_gb"
    if key in ("host.interface", "host.max_queue_depth", "host.protocol_efficiency"):
        return "interface"
    if key.startswith("host."):
        return key.removeprefix("host.")
    if key.startswith("mapping."):
        return "mapping"
    return key.removeprefix("nand.")


def _at_most(q: Param, hi: float) -> Param:
    """`q` with its range ending at `hi` (a datasheet's limit), reaching at least a factor
    of four below it."""
    return replace(q, lo=min(q.lo, hi / 4), hi=min(q.hi, hi))


def scaled(overrides: list[str], profile: dict[str, Any], blocks: int) -> tuple[list[str], float]:
    """The same drive with `blocks` blocks per plane (fewer): overrides to add after
    `overrides`, and the factor every size (capacity, caches, the pause's idle work) was
    multiplied by. Unchanged (factor 1) when the drive already has no more blocks."""
    cur = {o.split("=", 1)[0]: o.split("=", 1)[1] for o in overrides}

    def val(key: str) -> float:
        return float(cur[key]) if key in cur else float(_get(profile, key, 0.0))

    b = val("nand.blocks_per_plane")
    if blocks >= b:
        return [], 1.0
    threshold = val("ftl.gc_threshold_blocks") or 2.0
    k = unscaled_blocks(threshold, val("slc.static_gb"), val("slc.dynamic_max_gb"))
    dies = val("nand.channels") * val("nand.dies_per_channel")
    block = val("nand.planes") * val("nand.pages_per_block") * val("nand.page_kib") * KIB
    # the static SLC cache is whole blocks a die (the simulator rounds up): the trial's
    # rounded count is taken, and the capacity grows or shrinks with what the dies have left,
    # so the free blocks a die scale exactly (a late end of a plateau moves by tens of percent
    # for half a block a die on a trial drive)
    slc_block = block / BITS.get(str(_get(profile, "nand.cell", "tlc")).strip('"'), 1)
    static = math.ceil(math.ceil(val("slc.static_gb") * GB / slc_block - 1e-9) / dies) if val("slc.static_gb") else 0
    small = max(1, round(static * (blocks - k) / (b - k))) if static else 0
    f = (blocks - k - small) / (b - k - static)
    most = dies * block * (blocks - threshold - 4 - small) / GB * 0.999  # what the GC reserve leaves
    out = [f"nand.blocks_per_plane={blocks}", f"user_capacity_gb={min(val('user_capacity_gb') * f, most)!r}"]
    if static:
        out.append(f"slc.static_gb={(small * dies - 0.5) * slc_block / GB!r}")
    for key in ("slc.dynamic_max_gb", "slc.reclaim_gb", "slc.reclaim_interval_gb", "mapping.checkpoint_gb"):
        x = val(key)
        if x:
            out.append(f"{key}={x * f!r}")
    # idle GC's free-block target (the drive's share, which the simulator spreads over the
    # dies to within a block): the burst after an idle time writes into the blocks it frees
    # down to a level that does not scale, and the part above that level scales with the
    # blocks, as the pause's time does. The level that gives the recovery's averages of full
    # size on a trial drive of 256 blocks a plane, measured: GC's threshold and 0.44 blocks
    # (the hidden drive of docs/fit-example.md, 1557 blocks a plane) and 0.91 (tlc-256 at 768);
    # their middle leaves the burst a few percent off either way (threshold + 1 gave the first
    # 13 % more)
    pct = float(cur.get("ftl.idle_gc_target_pct", _get(profile, "ftl.idle_gc_target_pct", 10.0)))
    if pct > 0:
        level = threshold + 0.75
        target = max(b * pct / 100, threshold + 1)  # a die's, on average
        want = level + f * (target - level)
        # the simulator rounds the drive's count up: aim at the nearest whole count
        out.append(f"ftl.idle_gc_target_pct={min(50.0, max(0.0, 100 * (want - 0.5 / dies) / blocks))!r}")
    kind = cur.get("mapping.kind", _get(profile, "mapping.kind", "dram")).strip('"')
    if kind in ("hmb", "sram"):
        out.append(f"mapping.cache_mib={max(val('mapping.cache_mib') * f, 0.01)!r}")
    return out, f
