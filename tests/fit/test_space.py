"""The search space: parameters within physical bounds on a unit cube, derived keys (dies,
spare area, cache share) resolved into a profile the simulator takes, the class a fit
starts from, and the smaller drive trials run on."""

from __future__ import annotations

import math
import tomllib

import pytest

from ssdlab.fit import space as S
from ssdlab.profiles import builtin_ids, load_text
from ssdlab._sim import Drive


def test_unit_cube_round_trip_and_bounds():
    p = S.Param("nand.native.read_us", 35, 200, "us", "tR")
    assert p.physical(0) == pytest.approx(35) and p.physical(1) == pytest.approx(200)
    assert p.physical(p.unit_of(60)) == pytest.approx(60)
    assert p.physical(-1) == pytest.approx(35) and p.unit_of(1e6) == 1.0  # clipped to the bounds
    assert p.physical(0.5) == pytest.approx(math.sqrt(35 * 200))  # logarithmic
    dies = S.Param("dies", 1, 64, "", "", pow2=True)
    assert {dies.physical(u / 20) for u in range(21)} <= {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0}


def test_every_class_is_a_builtin_and_its_start_builds():
    for cid, cls in S.CLASSES.items():
        assert cls.profile in builtin_ids()
        st = S.start(cid, {})
        over = st.overrides({})
        info = Drive.describe(st.text, over)  # the class's own values give the class back (no tables built)
        assert abs(info["user_bytes"] / 1e9 - st.capacity_gb) < 0.01
        for q in st.params:
            assert q.lo <= st.start[q.key] <= q.hi or (q.off and st.start[q.key] == 0), (cid, q.key)


def test_settings_resolve_dies_spare_and_cache():
    st = S.start("tlc-256", {"capacity_gb": 256})
    sp = st.settings({"dies": 4.0, "spare_pct": 20.0, "slc.cache_share": 0.05})
    assert sp["nand.channels"] == 4 and sp["nand.dies_per_channel"] == 1
    block = 2 * 768 * 16 * 1024
    raw = 4 * sp["nand.blocks_per_plane"] * block
    assert raw / 256e9 - 1 == pytest.approx(0.20, abs=0.01)
    assert sp["slc.dynamic_max_gb"] == pytest.approx(12.8)
    info = Drive.describe(st.text, st.overrides({"dies": 4.0, "spare_pct": 20.0}))
    assert info["spare_pct"] == pytest.approx(20.0, abs=0.5)


def test_a_datasheets_geometry_and_die_count_fix_the_drive():
    """The m4's 25 nm part (8 KiB pages, 256 a block, 2 planes) and its 32 dies on 8 channels,
    stated as facts, replace the class's (the MX100's 16 KiB pages, 512 a block): not
    searched, and the spare area is resolved on the part's blocks."""
    facts = {"capacity_gb": 256, "interface": "sata", "cell": "mlc", "page_kib": 8, "pages_per_block": 256,
             "planes": 2, "dies": 32, "channels": 8}
    st = S.start("mx100-256", facts)
    assert "dies" not in {q.key for q in st.params}
    sp = st.settings({"spare_pct": 7.0})
    assert (sp["nand.page_kib"], sp["nand.pages_per_block"], sp["nand.planes"]) == (8, 256, 2)
    assert (sp["nand.channels"], sp["nand.dies_per_channel"]) == (8, 4)
    raw = 32 * 2 * sp["nand.blocks_per_plane"] * 256 * 8 * 1024
    assert raw / 256e9 - 1 == pytest.approx(0.07, abs=0.005)
    info = Drive.describe(st.text, st.overrides({"spare_pct": 7.0}))
    assert info["spare_pct"] == pytest.approx(7.0, abs=0.5)
    # a trial's smaller drive keeps the part's blocks: its capacity scales with 8 KiB x 256 pages
    extra, f = S.scaled(st.overrides({"spare_pct": 7.0}), st.profile, 256)
    small = Drive.describe(st.text, st.overrides({"spare_pct": 7.0}) + extra)
    assert small["user_bytes"] / 1e9 == pytest.approx(256 * f, rel=0.01)
    # a die count the class's channels do not divide: the most channels that divide it
    sp = S.start("tlc-256", {"dies": 12}).settings({})
    assert sp["nand.channels"] * sp["nand.dies_per_channel"] == 12


def test_a_datasheets_interface_rate_bounds_the_channel_rate():
    """The m4's part runs its ONFI 2.2 interface at up to 200 MT/s: the search's channel rate
    ends there (the class's 400 MB/s starts at that end), and the range still reaches a
    factor of four below it; without the fact the generic bounds stand."""
    generic = next(q for q in S.start("mx100-256", {"capacity_gb": 256}).params if q.key == "nand.channel_mbps")
    st = S.start("mx100-256", {"capacity_gb": 256, "nand_mts": 200})
    q = next(q for q in st.params if q.key == "nand.channel_mbps")
    assert (q.lo, q.hi) == (50.0, 200.0) and st.start[q.key] == 200.0
    assert generic.hi > 200 and q.physical(1.0) == pytest.approx(200.0)
    assert st.settings({q.key: q.physical(0.5)})[q.key] == pytest.approx(100.0)


def test_striping_is_a_policy_the_search_chooses():
    st = S.start("mx100-256", {"capacity_gb": 256})
    q = next(q for q in st.params if q.key == "ftl.striping")
    assert st.start["ftl.striping"] == 0.0  # the class stripes statically
    assert {st.settings({"ftl.striping": q.physical(u)})["ftl.striping"] for u in (0.05, 0.3)} == {"static"}
    assert {st.settings({"ftl.striping": q.physical(u)})["ftl.striping"] for u in (0.55, 1.0)} == {"dynamic"}
    for x in (0.0, 1.0):
        Drive.describe(st.text, st.overrides({"ftl.striping": x}))  # both are profiles the simulator takes


def test_facts_override_the_class():
    st = S.start("qlc-pcie4-hmb-1000", {"capacity_gb": 1000, "interface": "sata", "mapping": "dram"})
    assert st.fixed["host.interface"] == "sata" and st.fixed["mapping.kind"] == "dram"
    keys = {q.key for q in st.params}
    assert "mapping.cache_mib" not in keys and "host.protocol_efficiency" not in keys
    assert Drive.describe(st.text, st.overrides({}))["interface"].startswith("SATA")
    assert S.choose_class({"cell": "tlc", "mapping": "hmb"}) == "bg4-256"
    assert S.choose_class({"cell": "mlc", "interface": "sata"}) == "mx100-256"
    assert S.choose_class({"cell": "tlc", "interface": "pcie", "pcie_gen": 4}) == "tlc-pcie4-1000"
    with pytest.raises(ValueError, match="not a built-in profile"):
        S.start("nope", {})


def test_a_smaller_drive_keeps_the_share_of_its_data_blocks():
    st = S.start("tlc-256", {"capacity_gb": 256})
    over = st.overrides({})
    extra, f = S.scaled(over, st.profile, 128)
    assert f == pytest.approx((128 - 4) / (1365 - 4))  # the GC threshold and 2 open blocks do not scale
    kv = dict(o.split("=", 1) for o in extra)
    assert float(kv["user_capacity_gb"]) == pytest.approx(256 * f)
    assert float(kv["slc.dynamic_max_gb"]) == pytest.approx(24 * f)
    Drive.describe(st.text, over + extra)
    assert S.scaled(over, st.profile, 5000) == ([], 1.0)  # never larger


def test_a_smaller_drive_keeps_the_share_of_its_free_blocks_with_a_static_cache():
    """A static SLC cache is whole blocks a die, rounded up by the simulator: the trial's
    rounded count is taken and the capacity follows what the dies have left, so the free
    blocks a die (all but data, static cache and the blocks that do not scale) shrink by f."""
    import math

    st = S.start("qlc-pcie4-hmb-1000", {"capacity_gb": 1000})
    over = st.overrides({}) + ["slc.static_gb=9", "nand.blocks_per_plane=2159"]
    extra, f = S.scaled(over, st.profile, 256)
    kv = dict(o.split("=", 1) for o in extra)
    dies, slc_block = 8, 4 * 1024 * 16 * 1024 / 4  # planes x pages x page, in SLC mode (QLC: 1/4)

    def static_blocks(gb: float) -> int:  # as the simulator rounds (nand.rs)
        return math.ceil(math.ceil(gb * 1e9 / slc_block) / dies)

    k = S.unscaled_blocks(2, 9, 200)
    assert k == 3.5  # two streams from the free pool: the host's SLC writes go to the static blocks
    full_free = 2159 - k - static_blocks(9) - 1000e9 / dies / (4 * slc_block)
    trial_free = 256 - k - static_blocks(float(kv["slc.static_gb"])) - float(kv["user_capacity_gb"]) * 1e9 / dies / (4 * slc_block)
    assert static_blocks(float(kv["slc.static_gb"])) == round(68 * (256 - k) / (2159 - k))
    assert trial_free == pytest.approx(f * full_free, rel=1e-9)
    assert S.unscaled_blocks(2, 0, 24) == 4  # a dynamic cache opens a third stream's blocks
    Drive.describe(st.text, over + extra)


def test_a_smaller_drive_frees_its_share_of_blocks_when_idle():
    """Idle GC works up to a share of the drive's blocks (spread over the dies to within a
    block; a block spans the die's planes, as `block_mib` says); a burst after a pause writes
    into what it frees down to a level that does not scale (GC's threshold and 0.75 blocks),
    so the part above it scales with the blocks: bg4's 3 % of 1365 blocks a die is 40.95,
    38.2 above the level; at 256 blocks a die's target is 2.75 + f x 38.2 on average, to an
    eighth of a block (8 dies), where a die's own share rounded up went in whole blocks."""
    st = S.start("bg4-256", {"capacity_gb": 256})
    over = st.overrides({})
    extra, f = S.scaled(over, st.profile, 256)
    kv = dict(o.split("=", 1) for o in extra)
    dies = Drive.describe(st.text, over)["dies"]
    total = math.ceil(dies * 256 * float(kv["ftl.idle_gc_target_pct"]) / 100 - 1e-9)  # the simulator's rounding
    assert total / dies == pytest.approx(2.75 + f * (0.03 * 1365 - 2.75), abs=0.5 / dies)
    assert Drive.describe(st.text, over + extra)["block_mib"] == 24.0  # 2 planes x 768 pages x 16 KiB


def test_the_sata_mlc_class_searches_how_full_a_block_idle_gc_may_take():
    """The m4's HD Tach full and idle writes move with it (docs/profiles-sata.md): the class
    starts at the simulator's default and a trial's value reaches the profile."""
    st = S.start("mx100-256", {})
    q = next(q for q in st.params if q.key == "ftl.idle_gc_max_valid_pct")
    assert st.start[q.key] == 90.0 and (q.lo, q.hi) == (50, 99)
    over = st.overrides(st.physical({**st.unit_start(), q.key: q.unit_of(95.0)}))
    assert any(o.split("=")[0] == q.key and float(o.split("=")[1]) == pytest.approx(95.0) for o in over)
    Drive.describe(st.text, over)  # the simulator takes it


def test_the_cache_reclaim_is_searched_as_a_share_of_the_cache_gated_by_it():
    """The PM981a's recovery peak, the SN520's swings, the Vertex 460's conversion at half the
    LBAs and the 870 QVO's small folds are the firmware's reclaim: every class with an SLC
    cache searches how much (a share of the dynamic cache, off at the bottom), how often, how
    fast and how it fades as the drive fills; those tune a reclaim that is on, and the share
    tunes a cache that is on."""
    for cls in S.CLASSES:
        by = {q.key: q for q in S.start(cls, {}).params}
        assert by["slc.reclaim_share"].off and by["slc.reclaim_share"].gate == "slc.cache_share"
        assert {by[k].gate for k in S.RECLAIM[1:]} == {"slc.reclaim_share"}
    vertex = tomllib.loads(load_text("vertex460-240"))  # the hand-fitted reclaim: all of the cache
    assert S.class_value(vertex, "slc.reclaim_share", 240.0) == pytest.approx(1.0)
    mx = S.start("mx100-256", {})
    assert mx.start["slc.reclaim_share"] == 0.0  # the class has no reclaim: off
    sp = mx.settings({"slc.cache_share": 0.5, "slc.reclaim_share": 1.0, "slc.reclaim_interval_gb": 0.1})
    cap = mx.capacity_gb
    assert sp["slc.dynamic_max_gb"] == pytest.approx(cap / 2) and sp["slc.reclaim_gb"] == pytest.approx(cap / 2)
    assert sp["slc.reclaim_interval_gb"] == pytest.approx(0.1)
    assert mx.settings({"slc.cache_share": 0.5})["slc.reclaim_gb"] == 0.0
    Drive.describe(mx.text, mx.overrides({"slc.cache_share": 0.5, "slc.reclaim_share": 0.5}))


def test_each_class_starts_where_its_profile_is():
    """The search's start is the class profile itself: every parameter at the class's value,
    except a limit the class leaves at none (the top of its range, as fast as the search goes)
    and a parameter that tunes a mechanism the class has off (it moves nothing there). A
    firmware time the class does not charge (0) starts off, not at the slowest end."""
    for cls in S.CLASSES:
        st = S.start(cls, {})
        p = tomllib.loads(load_text(cls))
        by = {q.key: q for q in st.params}
        for q in st.params:
            x = S.class_value(p, q.key, st.capacity_gb)
            if q.key in S.UNLIMITED and x == 0:
                assert st.start[q.key] == q.hi, (cls, q.key)
            elif q.gate and by[q.gate].physical(by[q.gate].unit_of(st.start[q.gate])) == 0:
                continue
            else:
                assert st.start[q.key] == pytest.approx(x), (cls, q.key, x, st.start[q.key])
                assert q.physical(q.unit_of(x)) == pytest.approx(x, rel=1e-9), (cls, q.key)
    mx = {q.key: q for q in S.start("mx100-256", {}).params}
    assert mx["host.read_op_us"].off and S.start("mx100-256", {}).start["host.read_op_us"] == 0.0


def test_a_class_start_written_as_overrides_is_the_class_profile():
    """The search's start is the class itself: every parameter at the class's value, and a
    limit the class does not set (0: none) at the top of its range, which stands for no
    limit (64 GC buffers still limit the QLC class's fold: 82 against 149 MB/s of folding
    after its fill). Only the SLC reclaim's pacing, inert while the reclaim is off, differs."""
    def flat(d, p=""):
        for k, v in d.items():
            yield from flat(v, p + k + ".") if isinstance(v, dict) else [(p + k, v)]

    for c in S.CLASSES:
        text = load_text(c)
        st = S.start(c, {"capacity_gb": tomllib.loads(text)["user_capacity_gb"]})
        mine = dict(flat(Drive(text, overrides=[], seed=1).profile()))
        start = dict(flat(Drive(st.text, overrides=st.overrides(st.start), seed=1).profile()))
        differ = {k for k in mine.keys() | start.keys() if mine.get(k) != start.get(k)}
        assert mine["slc.reclaim_gb"] == 0 and differ <= {"slc.reclaim_interval_gb", "slc.reclaim_pace"}, (c, differ)


@pytest.mark.parametrize("mapping", ["hmb", "sram"])
def test_every_class_builds_with_every_mapping_the_evidence_shows(mapping):
    """A fingerprint shows its mapping cache (QD1 reads slower over the whole area than half
    of it: not all of the table in DRAM): every class takes it, though its own mapping
    mechanisms need DRAM (the SATA MLC class's checkpoint writes of a DRAM table: a loop
    device's reads on ext4, 24 us over half its area and 37 us over all of it, were refused
    as "class mx100-256 cannot simulate this drive")."""
    for cid in S.CLASSES:
        st = S.start(cid, {"capacity_gb": 256.0, "mapping": mapping})
        Drive.describe(st.text, st.overrides({}))  # the simulator takes it
        assert all(q.key != "mapping.checkpoint_gb" for q in st.params), cid


@pytest.mark.parametrize("dies", [2.0, 4.0, 8.0, 16.0])
def test_a_small_drive_of_whole_blocks_builds_at_every_die_count(dies):
    """A drive of 2 GiB (a loop device, a file target: 2.147483648 GB) needs its GC reserve
    more than its spare area, so its blocks are the fewest that hold the capacity, to the
    byte: the capacity written into the overrides (to 6 decimals: 2.147484) must not be
    more than they hold. It was, at every die count above 1, so the die-count scan found
    only one die that the simulator took, and the fit's twin wrote at a die's speed."""
    st = S.start("mx100-256", {"capacity_gb": 2.147483648})
    info = Drive.describe(st.text, st.overrides({"dies": dies}))
    assert info["user_bytes"] >= 2147483648 - 1000


@pytest.mark.parametrize("cid", sorted(S.CLASSES))
def test_every_class_builds_a_small_drive_at_every_die_count(cid):
    """A 2 GiB drive (a loop device) with many dies has a few blocks a die: at least the GC
    threshold, the open blocks and any static SLC cache the simulator keeps on every die
    (tlc-pcie4-1000's 16 dies got 9 blocks, where it needs 11)."""
    st = S.start(cid, {"capacity_gb": 2.147483648})
    for dies in (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0):
        Drive.describe(st.text, st.overrides({"dies": dies}))


def test_a_policys_range_is_said_by_its_names():
    """fit --json notes said "at least 0..0 0 static, 1 dynamic fit as well" for striping."""
    from ssdlab.fit.pinning import span_text

    st = S.start("mx100-256", {"capacity_gb": 256})
    q = next(q for q in st.params if q.key == "ftl.striping")
    assert span_text(q, 0.0, 0.0) == "static"
    assert span_text(q, 0.0, 1.0) == "static and dynamic"
    spare = next(q for q in st.params if q.key == "spare_pct")
    assert span_text(spare, 7.0, 9.5) == "7..9.5 %"
