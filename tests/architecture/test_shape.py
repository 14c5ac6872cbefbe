"""The shape of the code, read from the source: no import circles and no upward imports in
the Python package (imports inside functions count), and a new test is one module plus its
registration line. The Rust crates' modules are checked by crates/ssdsim/tests/architecture.rs,
which reads them with syn as the compiler does."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "python" / "ssdlab"

# Lower layers never import higher ones; a module may import its own layer (without a
# circle). The longest matching prefix names a module's layer.
LAYERS = {
    # the contract and what every layer may use
    "ssdlab.phase": 0, "ssdlab.errors": 0, "ssdlab.units": 0, "ssdlab.interrupts": 0,
    "ssdlab.safe_path": 0,  # paths written without following another user's links
    "ssdlab.host_memory": 0,  # the memory this machine has available
    "ssdlab.ray_local": 0,  # a local Ray instance its user's alone (executor.py starts it)
    # parts that know nothing of targets or tests
    "ssdlab._sim": 1, "ssdlab.sim_types": 1,  # the simulator and the dicts it takes and gives
    "ssdlab.analysis": 1, "ssdlab.profiles": 1, "ssdlab.traces": 1,
    "ssdlab.store": 1, "ssdlab.store_schema": 1, "ssdlab.store_reading": 1,
    "ssdlab.store_damage": 1, "ssdlab.store_wal": 1, "ssdlab.store_companions": 1,  # the store, its tables, how it is read, how a damaged
    # one is reported, its -wal emptied after each write
    "ssdlab.store_export": 1,  # a run written out whole (JSON, tidy CSV)
    "ssdlab.pending": 1, "ssdlab.figures": 1, "ssdlab.calibration": 1,
    "ssdlab.no_result": 1,  # how a drive with no metrics reads (results show, the report)
    "ssdlab.units_progress": 1, "ssdlab.fiojob": 1,  # a fio job file -> the simulator's workload
    "ssdlab.fioformat": 1,  # fio's file formats (job file, JSON, text, logs, iolog), read and written
    "ssdlab.served": 1,  # what a served drive leaves for others: its marker and stats file
    # drives
    "ssdlab.targets": 2,
    # what to do to them
    "ssdlab.methodology": 3,
    # how runs are walked and where they execute
    "ssdlab.runner": 4, "ssdlab.detached": 4, "ssdlab.executor": 4, "ssdlab.fleet": 4,
    "ssdlab.held": 4,  # a finished test kept in a pending file until it is stored
    # what users run
    "ssdlab.review": 5, "ssdlab.sweep": 5, "ssdlab.validate": 5, "ssdlab.serve": 5, "ssdlab.fit": 5,
    "ssdlab.sweep_grid": 5, "ssdlab.sweep_grid_file": 5,  # a sweep's grid, and its TOML file
    "ssdlab.report": 6,
    "ssdlab.cli": 7,
    "ssdlab.command": 8,  # the console script: imports the CLI
}


def modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        name = ".".join(p.relative_to(PKG.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every ssdlab module `name` imports, at any depth of the file."""
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.Import):
            found |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                parts = pkg.split(".")[: len(pkg.split(".")) - n.level + 1]
                base = ".".join(parts + ([n.module] if n.module else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in n.names}
    return {m for m in found if m in known and m != name and m != "ssdlab"
            and not name.startswith(m + ".")}  # a module's own packages are not imports


def layer(name: str) -> int:
    best = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len, default=None)
    assert best is not None, f"{name}: no layer; add it to LAYERS in {__file__}"
    return LAYERS[best]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def python_graph() -> dict[str, set[str]]:
    mods = modules()
    return {m: imports(m, p, set(mods)) for m, p in mods.items()}


def test_python_has_no_import_circles():
    assert cycles(python_graph()) == []


def test_python_never_imports_upward():
    graph = python_graph()
    # a package whose __init__ imports nothing is only a namespace: `from ..serve import
    # stats` loads no more than stats
    mods = modules()
    spaces = {m for m, p in mods.items() if p.name == "__init__.py" and not graph[m]}
    up = sorted(f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
                for a, deps in graph.items() for b in deps - spaces if layer(b) > layer(a))
    assert up == []


def test_the_checks_see_a_circle_and_an_upward_import():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer("ssdlab.targets.fio") < layer("ssdlab.methodology.fill")


NEW_TEST = '''
from dataclasses import dataclass

from ssdlab import phase as ph
from ssdlab.errors import UserError
from ssdlab.figures import Drawn
from ssdlab.methodology.test import CliOption, Test, TestOptions


@dataclass(frozen=True)
class Burst:
    mib: int


class BurstFlags(TestOptions):
    cli = (CliOption("burst_mib", "--burst-mib", int, 64, "burst: MiB written"),)

    def parse(self, values, console):
        if not 1 <= values["burst_mib"] <= 1024:
            raise UserError(f"--burst-mib {values['burst_mib']}: must be 1 to 1024")
        return Burst(values["burst_mib"])

    def stored(self, parsed, values):
        return {"burst_mib": parsed.mib}


def phases(capacity, opts):
    n = opts.of(Burst).mib * 2**20
    return [ph.purge(), ph.seq_write("burst", length=n, stop_bytes=n)]


def analyze(results, opts):
    return {"burst_mbps": float(results[-1].totals["mbps"]),
            "burst_bytes": float(results[-1].totals["write_bytes"])}


def figures(runs, opts):
    v = runs[0].drives[0].metrics["burst_mbps"]
    return [Drawn("burst", lambda: f'<p id="fig-burst">{v:.0f} MB/s</p>', lambda out: [])]


TEST = Test(name="burst", title="Burst write", phases=phases, analyze=analyze, figures=figures,
            options=BurstFlags())
'''


def test_a_new_test_is_one_module_plus_its_registration(tmp_path, monkeypatch):
    import importlib.util
    import json

    from typer.testing import CliRunner

    from ssdlab import methodology
    from ssdlab.cli import app

    path = tmp_path / "burst.py"
    path.write_text(NEW_TEST)
    spec = importlib.util.spec_from_file_location("burst", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for registry in ("ALL", "TESTS", "INPUT_TESTS"):  # registered for this test only
        monkeypatch.setattr(methodology, registry, dict(getattr(methodology, registry)))
    methodology.register(module.TEST)  # the registration line

    db = tmp_path / "r.sqlite"
    from drives import SMALL, set_flags

    small = set_flags(SMALL)
    r = CliRunner().invoke(app, ["run", "burst", "--drive", "sim:tlc-256", *small, "--burst-mib", "32",
                                 "--db", str(db), "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    metrics = json.loads(r.stdout)["drives"][0]["metrics"]
    assert metrics["burst_mbps"] > 0 and metrics["burst_bytes"] == 32 * 2**20  # the option reached the phases
    from ssdlab.store import Store

    assert Store(db).run(1)["args"]["burst_mib"] == 32  # and the store
    r = CliRunner().invoke(app, ["run", "burst", "--drive", "sim:tlc-256", "--burst-mib", "0"])
    assert r.exit_code == 2 and "--burst-mib 0: must be 1 to 1024" in r.output  # its own check, one line
    r = CliRunner().invoke(app, ["run", "fill", "--drive", "sim:tlc-256", "--burst-mib", "8"])
    assert r.exit_code == 2 and "--burst-mib: only for `ssdlab run burst`" in r.output  # nowhere else
    from ssdlab.cli.request import RunRequest

    req = RunRequest("burst", ["h1:/dev/sdb", "h2:/dev/sdb"], values={"burst_mib": 8})
    assert req.argv()[:1] + req.argv()[-2:] == ["burst", "--burst-mib", "8"]  # a fleet member's command line
    r = CliRunner().invoke(app, ["report", "--latest", "--db", str(db), "-o", str(tmp_path / "rep")],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    html = (tmp_path / "rep" / "report.html").read_text()
    assert '<section id="sec-burst"><h2>Burst write</h2>' in html and 'id="fig-burst"' in html


# A drive is parsed once (targets/spec.py); a test's own code lives in methodology/.
DRIVE_PREFIX = re.compile(r"""startswith\(\s*\(?\s*["'](sim:|nbd:|file:|/dev/)""")
TEST_NAMES = "fill|consistency|working-set|working_set|trim|idle|quick|copy|trace|fio|fingerprint|pts[-_a-z]*"
TEST_BRANCH = re.compile(r"""(==|!=)\s*["'](%s)["']|["'](%s)["']\s*(==|!=)|\bin \(\s*["'](%s)["']"""
                         % (TEST_NAMES, TEST_NAMES, TEST_NAMES))


def reads_a_drive_string(code: str) -> bool:
    return bool(DRIVE_PREFIX.search(code))


def branches_on_a_test(code: str) -> bool:
    # a phase's kind or name ("fill", "idle") is not a test's
    return bool(TEST_BRANCH.search(code)) and not re.search(r"""kind|\["name"\]|phase\.name""", code)


def lines_matching(forbidden: Callable[[str], bool], skip: Callable[[str], bool]) -> list[str]:
    out = []
    for name, p in modules().items():
        if skip(name):
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if forbidden(line.split("#", 1)[0]):
                out.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    return out


def test_a_drive_string_is_read_only_by_its_parser():
    assert lines_matching(reads_a_drive_string, lambda m: m == "ssdlab.targets.spec") == []


def test_no_branch_on_a_tests_name_outside_the_methodology():
    assert lines_matching(branches_on_a_test, lambda m: m.startswith("ssdlab.methodology")) == []


def test_the_shape_checks_see_what_they_forbid():
    assert reads_a_drive_string('if spec.startswith("sim:"):')
    assert reads_a_drive_string("s.startswith(('/dev/', 'x'))")
    assert branches_on_a_test('if test == "fio":') and branches_on_a_test("if test in ('fill', 'trim'):")
    assert not branches_on_a_test('if phase.kind == "idle":')
    assert not branches_on_a_test('fill = next(p for p in phases if p["name"] == "fill")')


def test_the_store_owns_its_sql():
    sql = re.compile(r"""\.execute(many)?\(\s*f?["'](SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA)""")
    # (store_wal.py: the checkpoint after each of the store's writes, and store_companions.py:
    # a new store made in WAL mode, parts of it)
    assert lines_matching(lambda code: bool(sql.search(code)), lambda m: m in ("ssdlab.store", "ssdlab.store_wal",
                                                                               "ssdlab.store_companions")) == []
