"""The printed table of a twin's parameters gives a policy by its name, and a number with
its unit."""

from __future__ import annotations

from ssdlab.cli.fit import _range, _value


def test_a_policy_reads_by_its_name_and_a_number_with_its_unit():
    striping = {"key": "ftl.striping", "unit": "0 static, 1 dynamic", "choices": ["static", "dynamic"],
                "value": 0.0, "class_value": 1.0, "pinned": True, "lo": 0.0, "hi": 1.0}
    assert _value(striping, striping["value"]) == "static"
    assert _value(striping, striping["class_value"], False) == "dynamic"
    assert _range(striping) == "static..dynamic"
    read = {"key": "nand.native.read_us", "unit": "us", "choices": [], "value": 75.25, "pinned": True,
            "lo": 72.8, "hi": 79.4}
    assert _value(read, read["value"]) == "75.25 us"
    assert _range(read) == "72.8..79.4"
    older = {k: v for k, v in read.items() if k != "choices"}  # a document from before the key
    assert _value(older, older["value"]) == "75.25 us"
