"""Figures files (calibration/figures/<drive>.toml): one per built-in profile, read whole and
checked (a bad file is one line naming the file, the figure and the fix), and what a figure
reads: a metric, a registered measure, or a combination of them over other runs and drives."""

from __future__ import annotations

import pytest

from ssdlab.calibration import FILL, QUICK, Ctx, FiguresError, builtin, builtin_paths, load
from ssdlab.calibration.figures_file import UNITS
from ssdlab.profiles import builtin_ids
from ssdlab.validate import FIGURES

HEAD = 'drive = "d"\n'


def one(body: str) -> str:
    return HEAD + "[[figure]]\n" + body


def test_every_builtin_profile_has_its_figures_file():
    stems = {p.stem for p in builtin_paths()}
    assert stems == set(builtin_ids())
    for p in builtin_paths():
        f = load(p)
        assert f.drive == p.stem
        assert {"capacity_gb", "interface", "cell", "mapping"} <= set(f.facts)
        # every drive is checked for freezes (behaviour rows)
        assert {"max latency < 1 s", "no second at 0 IOPS"} <= {x.name for x in f.figures}


def test_a_figure_reads_a_metric_within_its_tolerance():
    f = load("x.toml", one('name = "peak"\ntest = "fill"\nmetric = "peak_mbps"\nvalue = 1700\nunit = "MB/s"\n'
                           'source = "s"\n')).figures[0]
    assert f.run == FILL and f.tol == 0.15 and f.drive == "d"
    c = Ctx("d", {("d", FILL): {"metrics": {"peak_mbps": 1900.0}}})
    assert f.measure(c) == 1900.0 and f.check(1900.0)[0] and not f.check(2000.0)[0]


def test_a_node_runs_on_another_drive_or_host_and_combines():
    text = one('name = "r"\ntest = "quick"\nseconds = 1\ntestbed = ["host.lanes=2"]\n'
               'ratio = [{max = [{metric = "a"}, {metric = "b"}]}, {metric = "a", drive = "e", testbed = []}]\n'
               'value = 2.0\nunit = "ratio"\n')
    f = load("x.toml", text).figures[0]
    run = ("quick", 0.0, 1.0, 1, ("host.lanes=2",))
    other = ("quick", 0.0, 1.0, 1, ())
    assert f.run == run and f.needs == (("e", other),)
    runs = {("d", run): {"metrics": {"a": 10.0, "b": None}}, ("e", other): {"metrics": {"a": 5.0}}}
    assert f.measure(Ctx("d", runs)) == 2.0  # max of the known ones (b unknown) over e's a
    runs[("d", run)]["metrics"]["b"] = 30.0
    assert f.measure(Ctx("d", runs)) == 6.0


def test_a_rating_range_is_widened_by_its_tolerance():
    f = load("x.toml", one('name = "r"\ntest = "quick"\nmetric = "a"\nlo = 100\nhi = 200\nwiden = true\n'
                           'tolerance = 0.35\nunit = "IOPS"\n')).figures[0]
    assert (f.lo, f.hi) == (100 * (1 - 0.35), 200 * (1 + 0.35))
    series = load("x.toml", one('name = "r"\ntest = "quick"\nmetric = "a"\nhi = 200\nwiden = true\n'
                                'unit = "MB/s"\n')).figures[0]
    assert series.lo is None and series.hi == pytest.approx(230)


@pytest.mark.parametrize("body,says", [
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "furlongs"\n', "unknown unit 'furlongs'"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\ncolour = 1\n', "figure 1 'x': unknown key colour"),
    ('name = "x"\ntest = "fill"\nmeasure = "nope"\nvalue = 1\nunit = "GB"\n', "unknown measure 'nope'"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nlo = 0\nunit = "GB"\n', "not both"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nunit = "GB"\n', r"'x': no value: give a value, or a range \(lo and/or hi\)$"),
    ('name = "x"\ntest = "fill"\nvalue = 1\nunit = "GB"\n', "exactly one of metric"),
    ('name = "x"\nmetric = "a"\nvalue = 1\nunit = "GB"\n', "no test"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = nan\nunit = "GB"\n', "finite number"),
    ('name = "x"\ntest = "fill"\nratio = [{metric = "a"}]\nvalue = 1\nunit = "ratio"\n', "two nodes"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nlo = 5\nhi = 1\nunit = "GB"\n', "above hi"),
    # the run's conditions, as `ssdlab run` takes them
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\nspare = 150\n', "spare = 150: must be"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\nspare = "abc"\n', "spare must be a finite"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\nseconds = -3\n', "seconds = -3: must be"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\nseconds = 1e300\n', "at most 1e7"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\ntestbed = "a=1"\n', "testbed must be a list"),
    ('name = "x"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\ntestbed = 5\n', "testbed must be a list"),
    ('name = "x"\ntest = "fill"\nratio = [{metric = "a"}, {metric = "a", spare = -1}]\nvalue = 1\nunit = "ratio"\n',
     r"ratio\[1\]: spare = -1"),
    # a measure's arguments are checked as its name is: a typo would read nothing, in every trial
    ('name = "x"\ntest = "fill"\nmeasure = "phase_max"\nargs = {feild = "zero_seconds"}\nhi = 0\nunit = "s"\n',
     r"measure phase_max takes \(field\), not args = \{feild"),
    ('name = "x"\ntest = "fill"\nmeasure = "phase_max"\nhi = 0\nunit = "s"\n',
     r"measure phase_max takes \(field\), not args = \{\}"),
    ('name = "x"\ntest = "fill"\nmeasure = "slc_share"\nargs = 3\nvalue = 1\nunit = "share"\n', "args must be a table"),
])
def test_a_bad_figure_is_one_line_naming_it(body, says):
    with pytest.raises(FiguresError, match=says) as e:
        load("x.toml", one(body))
    assert "\n" not in str(e.value) and "x.toml" in str(e.value)


def test_bad_files():
    for text, says in (("drive = \"d\"\n", "no figures"), ("x = [", "not TOML"),
                       ("colour = 1\n[[figure]]\n", "unknown key colour"),
                       ("[facts]\nflavour = 1\n[[figure]]\n", "unknown fact"),
                       ("[facts]\npage_kib = 0\n[[figure]]\n", "page_kib = 0 must be at least 1"),
                       ("[facts]\ndies = 12\nchannels = 8\n[[figure]]\n", "multiple of the channels"),
                       ("[facts]\nnand_mts = 0.2\n[[figure]]\n", "nand_mts = 0.2 is not a NAND interface rate"),
                       ('[facts]\nnand_mts = "200"\n[[figure]]\n', "nand_mts = '200' has the wrong type"),
                       # a fact the fit chooses its class by: a typo would be the default class's
                       ('[facts]\ncell = "QLC"\n[[figure]]\n', "cell = 'QLC': use one of slc, mlc, tlc, qlc"),
                       ('[facts]\ninterface = "nvme"\n[[figure]]\n', "interface = 'nvme': use one of pcie, sata"),
                       ('[facts]\nmapping = "none"\n[[figure]]\n', "mapping = 'none': use one of dram, hmb, sram"),
                       (one('name = "a"\ntest = "fill"\nmetric = "a"\nvalue = 1\nunit = "GB"\n') + "[[figure]]\n"
                        'name = "a"\ntest = "fill"\nmetric = "b"\nvalue = 1\nunit = "GB"\n', "unique")):
        with pytest.raises(FiguresError, match=says):
            load("x.toml", text)


@pytest.mark.parametrize("text,says", [
    ("facts = 3\n[[figure]]\n", "facts must be a table"),
    ("drive = 5\n[[figure]]\n", "drive must be text"),
    ('start = 5\n[[figure]]\nname = "a"\n', "start must be text"),
    ("figure = [1, 2]\n", "figure 1: expected a table"),
    ("figure = 3\n", "no figures"),
    (one('name = "x"\ntest = 5\nmetric = "a"\nvalue = 1\nunit = "GB"\n'), "'x': test must be a test's name"),
    (one('name = "x"\ntest = "fill"\nratio = [{metric = "a"}, {metric = "a", test = 5}]\nvalue = 1\n'
         'unit = "ratio"\n'), r"ratio\[1\]: test must be a test's name"),
])
def test_a_file_of_the_wrong_shape_is_one_line_naming_it(text, says):
    # a table where TOML allows any value: each a FiguresError naming the file, not a TypeError
    with pytest.raises(FiguresError, match=says) as e:
        load("x.toml", text)
    assert "\n" not in str(e.value) and "x.toml" in str(e.value)


def test_builtin_units_and_quick_runs():
    assert {f.unit for f in FIGURES} <= set(UNITS)
    # the quick test's figures run one repeat of 1 s per test, as before
    assert all(f.run[:3] == QUICK[:3] for f in FIGURES if f.run[0] == "quick")


def family(drive: str) -> str:
    return drive.rsplit("-", 1)[0]


def test_every_family_rated_at_two_capacities_has_its_ratio_rows():
    """The larger capacity against its sibling: measured ratio against the rated ratio, for
    every rating both capacities have from the same kind of source (own / the retail twin's)."""
    rated = {}
    for f in FIGURES:
        if f.kind == "spec sheet" and " over " not in f.name:
            rated.setdefault(f.drive, set()).add(f.name)
    names = {(f.drive, f.name) for f in FIGURES}
    pairs = 0
    for a in rated:
        for b in rated:
            both = {n for n in rated[a] & rated[b] if not n.endswith("(series best)")}
            if a < b and family(a) == family(b) and both:
                small, large = sorted((a, b), key=lambda d: float(d.rsplit("-", 1)[1]))
                for n in both:
                    base, _, twin = n.partition(" (")
                    want = f"{base} over {small}" + (" (twin's ratings)" if twin else "")
                    assert (large, want) in names, (large, want)
                pairs += 1
    assert pairs >= 2  # 870 QVO (own ratings), PM981a (the 970 EVO Plus, its twin)


def test_the_ratio_row_reads_both_drives_on_the_makers_host():
    f = next(x for x in builtin("pm981a-512").figures
             if x.name.startswith("rated write after the SLC cache over"))
    assert f.value == pytest.approx(900 / 400)
    assert f.needs == (("pm981a-256", f.run),) and "host.protocol_efficiency=0.87" in f.run[4]
    runs = {("pm981a-512", f.run): {"metrics": {"post_cache_mbps": 800.0}},
            ("pm981a-256", f.run): {"metrics": {"post_cache_mbps": 400.0}}}
    measured = f.measure(Ctx("pm981a-512", runs))
    assert measured == pytest.approx(2.0) and f.check(measured)[0]
    assert not f.check(1.5)[0]  # the die ratio of a capped family would not pass


def test_a_twin_rating_never_replaces_the_drives_own():
    own = {f.name for f in builtin("pm981a-256").figures}
    assert "rated seq write" in own and "rated seq write (twin's rating)" not in own
    assert "rated write after the SLC cache (twin's rating)" in own
