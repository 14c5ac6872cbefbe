"""The lines fio's normal output starts with, before its jobs run (init.c add_job, backend.c
run_threads): each job's description, `NAME: (g=N): rw=KIND, bs=(R) MIN-MAX, (W) MIN-MAX,
(T) MIN-MAX, ioengine=ENGINE, iodepth=N`, a `...` after it for its numjobs clones, and
`Starting N processes` (threads with fio's `thread`: `Starting 2 threads and 4 processes`).
Read from the compiled jobs (fiojob/jobspec.py), in fio's order of jobs."""

from __future__ import annotations

from .text_output import num2str

# fio's td_ddir names (io_ddir.h ddir_str), by (read, write, trim, trimwrite)
KINDS = {(True, False, False, False): "read", (False, True, False, False): "write",
         (True, True, False, False): "rw", (False, False, True, False): "trim",
         (False, True, True, True): "trimwrite"}


def _kind(s: dict) -> str:
    key = (bool(s["read"]), bool(s["write"]), bool(s["trim"]), bool(s["trimwrite"]))
    kind = KINDS.get(key, "rw")
    return ("rand" + kind) if s["random"] else kind


def _range(sizes: list, md_bytes: int = 0) -> str:
    """A direction's block sizes as fio prints them: the smallest and the largest (an
    extended-LBA format's with each block's metadata, as fio's bs counts it)."""
    b = [int(size) + int(size) // 4096 * md_bytes for size, _w in sizes] or [4096]
    return f"{num2str(min(b), True, 'B')}-{num2str(max(b), True, 'B')}"


def _on(settings: dict, key: str) -> bool:
    v = settings.get(key)
    return v is not None and str(v).strip().lower() not in ("0", "false", "no", "off")


def description(s: dict, global_options: dict | None = None) -> str:
    """One job's description line, as fio prints it when it adds the job: the iodepth as
    written (the job's, else [global]'s), before a synchronous engine caps it."""
    settings = s.get("settings") or {}
    engine = str(settings.get("ioengine") or "psync").strip().split(":")[0].lower()
    given = (s.get("options") or {}).get("iodepth", (global_options or {}).get("iodepth"))
    depth = str(given if given is not None else "").strip()
    depth = depth if depth.isdigit() else str(s["iodepth"])
    md = int(s.get("md_bytes") or 0)
    bs = ", ".join(f"({d}) {_range(s['bs'][i], md)}" for i, d in enumerate("RWT"))
    return f"{s['name']}: (g={s['group']}): rw={_kind(s)}, bs={bs}, ioengine={engine}, iodepth={depth}"


def starting(specs: list[dict]) -> str:
    """fio's `Starting ...` line: the jobs run as threads, then those run as processes."""
    threads = sum(1 for s in specs if _on(s.get("settings") or {}, "thread"))
    procs = len(specs) - threads
    parts = ([f"{threads} thread{'s' if threads > 1 else ''}"] if threads else []) + (
        [f"{procs} process{'es' if procs > 1 else ''}"] if procs else [])
    return "Starting " + " and ".join(parts)


def header(specs: list[dict], global_options: dict | None = None) -> str:
    """The lines fio prints before its jobs run: each job's description (a clone's `...`
    once, after its job's line), then the `Starting` line."""
    lines = []
    for s in specs:
        clone = int(s.get("clone") or 0)
        if clone == 0:
            lines.append(description(s, global_options))
        elif clone == 1:
            lines.append("...")
    return "\n".join([*lines, starting(specs)])
