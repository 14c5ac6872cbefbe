"""Quick synthetic tests: CrystalDiskMark (default and NVMe presets) and AS-SSD, each run
--repeat times on a 1 GiB test file written after a purge. Every figure is reported as
the mean, plus `<name>_stdev` (sample standard deviation) and, under `repeats`, every
individual value so clusters stay visible.

CrystalDiskMark measures each test for 5 s; we default to 2 s of (virtual) time per test
(--seconds). AS-SSD: sequential 16 MiB blocks over 1 GB, 4K at QD1, 4K with 64 threads,
and access time as the mean latency of 4K QD1 random I/O on the test file (AS-SSD uses
512 B over the whole drive; on a purged simulated drive unmapped LBAs would answer
without touching flash). Score (methodology.md): read = 0.1 x seq + 4K + 4K-64Thrd (MB/s),
write the same, total = read + write + 0.05 x seq write (sequential write weighs 0.15
in the total).
"""

from __future__ import annotations

import numpy as np

from .. import phase as ph
from ..phase import GB, KIB
from .common import GIB, MIB, Options, area_bytes

DEFAULT_SECONDS = 2
SECONDS_HELP = "seconds per CrystalDiskMark / AS-SSD test"
TEST_FILE = GIB

# name: (pattern, block size, queue depth, jobs)
CDM = {
    "cdm_seq1m_q8t1": ("seq", MIB, 8, 1),
    "cdm_seq1m_q1t1": ("seq", MIB, 1, 1),
    "cdm_rnd4k_q32t1": ("rand", 4 * KIB, 32, 1),
    "cdm_rnd4k_q1t1": ("rand", 4 * KIB, 1, 1),
    "cdm_seq128k_q32t1": ("seq", 128 * KIB, 32, 1),
    "cdm_rnd4k_q32t16": ("rand", 4 * KIB, 32, 16),
}
ASSSD = {
    "asssd_4k": ("rand", 4 * KIB, 1, 1),
    "asssd_4k64": ("rand", 4 * KIB, 1, 64),
    "asssd_access": ("rand", 4 * KIB, 1, 1),
}


def test_file(capacity: int, opts: Options) -> int:
    return min(TEST_FILE, area_bytes(capacity, opts))


def phases(capacity: int, opts: Options) -> list[ph.Phase]:
    n = test_file(capacity, opts)
    secs = opts.secs(DEFAULT_SECONDS)
    out = [ph.purge(), ph.seq_write("test_file", offset=0, length=n, stop_bytes=n)]
    for rep in range(1, opts.repeat + 1):
        for name, (pattern, bs, qd, jobs) in (CDM | ASSSD).items():
            for rw, read_pct in (("read", 100), ("write", 0)):
                out.append(ph.Phase(kind="io", name=f"{name}_{rw}#{rep}", pattern=pattern,
                                    read_pct=read_pct, block_size=bs, queue_depth=qd,
                                    jobs=jobs, offset=0, length=n, stop_seconds=secs))
        for rw, read_pct in (("read", 100), ("write", 0)):
            seq_bytes = min(GB, n) // (16 * MIB) * (16 * MIB) or n
            out.append(ph.Phase(kind="io", name=f"asssd_seq_{rw}#{rep}", pattern="seq",
                                read_pct=read_pct, block_size=16 * MIB, queue_depth=1,
                                offset=0, length=n, stop_bytes=seq_bytes))
    return out


def one_repeat(r: dict) -> dict[str, float]:
    """The metrics of one repeat; `r` maps phase name (without #rep) to its result."""
    m: dict[str, float] = {}
    for name, (pattern, *_rest) in CDM.items():
        for rw in ("read", "write"):
            t = r[f"{name}_{rw}"].totals
            m[f"{name}_{rw}_mbps"] = float(t["mbps"])
            if pattern == "rand":
                m[f"{name}_{rw}_iops"] = float(t["iops"])
    for rw in ("read", "write"):
        m[f"asssd_seq_{rw}_mbps"] = float(r[f"asssd_seq_{rw}"].totals["mbps"])
        m[f"asssd_4k_{rw}_mbps"] = float(r[f"asssd_4k_{rw}"].totals["mbps"])
        m[f"asssd_4k64_{rw}_mbps"] = float(r[f"asssd_4k64_{rw}"].totals["mbps"])
        m[f"asssd_access_{rw}_ms"] = float(r[f"asssd_access_{rw}"].latency["mean_us"]) / 1000.0
        m[f"asssd_score_{rw}"] = (0.1 * m[f"asssd_seq_{rw}_mbps"] + m[f"asssd_4k_{rw}_mbps"]
                                  + m[f"asssd_4k64_{rw}_mbps"])
    m["asssd_score_total"] = (m["asssd_score_read"] + m["asssd_score_write"]
                              + 0.05 * m["asssd_seq_write_mbps"])
    return m


def analyze(results, opts: Options) -> dict:
    reps: dict[int, dict] = {}
    for res in results:
        if "#" in res.phase.name:
            name, rep = res.phase.name.split("#")
            reps.setdefault(int(rep), {})[name] = res
    per = [one_repeat(reps[k]) for k in sorted(reps)]
    out: dict = {}
    for name in per[0]:
        v = np.array([p[name] for p in per])
        out[name] = float(v.mean())
        out[f"{name}_stdev"] = float(v.std(ddof=1)) if v.size > 1 else 0.0
    out["repeats"] = {name: [p[name] for p in per] for name in per[0]}
    return out
