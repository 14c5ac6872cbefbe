"""The twin's profile says truthfully where each value not searched comes from: the evidence
(its facts) or the class; a die count and spare area the fit did not search are the class's,
never "given"."""

from __future__ import annotations

import tomllib

import pytest

from ssdlab.fit import profile_out, space


def notes(text: str) -> dict[str, str]:
    out, section = {}, ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip("[]") + "."
        elif " = " in line and "  # " in line:
            key, note = line.split("  # ", 1)
            out[section + key.split(" = ")[0]] = note
    return out


def twin(facts: dict, searched: list[str]) -> dict[str, str]:
    st = space.start("tlc-256", facts)
    pins = {k: profile_out.Pin(k, st.start[k], st.start[k], st.start[k], st.start[k], True, "pinned")
            for k in searched}
    text = profile_out.write(st, {k: st.start[k] for k in searched}, pins, "twin-x", "Twin of x", "figures x", 1, 4)
    tomllib.loads(text)
    return notes(text)


def test_a_layout_the_fit_did_not_search_is_the_classs():
    n = twin({"capacity_gb": 256.0}, ["nand.native.read_us"])
    assert n["nand.channels"] == "from the die count (the class's, tlc-256)"
    assert n["nand.blocks_per_plane"] == "from the die count (the class's, tlc-256) and spare area (the class's, tlc-256)"
    assert n["user_capacity_gb"] == "given by the evidence"
    assert not any("(given)" in v for v in n.values())


def test_a_die_count_the_evidence_states_is_given():
    n = twin({"capacity_gb": 256.0, "dies": 8}, ["nand.native.read_us"])
    assert n["nand.dies_per_channel"] == "from the die count (given by the evidence)"


def test_a_capacity_the_evidence_does_not_state_is_the_classs():
    assert twin({}, ["nand.native.read_us"])["user_capacity_gb"] == "the class's, tlc-256: the evidence gives no capacity"


def test_the_twin_holds_the_drives_capacity_to_the_byte():
    """The twin's capacity is the drive's (a 2 GiB loop device's 2.147483648 GB), not rounded
    to 5 digits (2.1475 GB: 16 MB more than its blocks hold where the GC reserve, not the
    spare area, sets them), and the simulator takes the twin."""
    from ssdlab._sim import Drive

    st = space.start("mx100-256", {"capacity_gb": 2.147483648})
    values = {"dies": 2.0}
    text = profile_out.write(st, values, {}, "twin-x", "Twin of x", "runs 1", 1, 4)
    assert tomllib.loads(text)["user_capacity_gb"] == pytest.approx(2.147483648, abs=1e-9)
    assert Drive.describe(text, [])["user_bytes"] >= 2147483648 - 1000


def test_a_fact_read_off_the_fingerprint_says_so_and_a_stated_one_is_given():
    """A link and mapping cache the fit read off a fingerprint's figures (a fastest phase under
    600 MB/s, QD1 reads slower over the whole drive) are not "given by the evidence"; the same
    facts stated (a figures file's) are."""
    facts = {"capacity_gb": 256.0, "interface": "sata", "mapping": "hmb"}
    st = space.start("tlc-256", facts, frozenset({"interface", "mapping"}))
    text = profile_out.write(st, {}, {}, "twin-x", "Twin of x", "runs 1", 1, 4)
    n = notes(text)
    assert n["host.interface"].startswith("read off the fingerprint: its fastest phase")
    assert n["mapping.kind"].startswith("read off the fingerprint: its QD1 reads")
    assert n["user_capacity_gb"] == "given by the evidence"
    stated = notes(profile_out.write(space.start("tlc-256", facts), {}, {}, "twin-x", "Twin of x", "figures x", 1, 4))
    assert stated["host.interface"].startswith("given by the evidence")
    assert stated["mapping.kind"].startswith("given by the evidence")
