"""`ssdlab serve --json`: its lines are strict JSON, as every --json of the command is
(docs/cli.md "Output": values that do not exist are null)."""

from __future__ import annotations

import json

from nbdserve import TINY, cli, needs_nbd


def strict(line: str) -> dict:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in --json output: {line}")

    return json.loads(line, parse_constant=refuse)


@needs_nbd
def test_a_session_without_writes_reports_waf_as_null(tmp_path):
    sets = [x for s in TINY for x in ("--set", s)]
    r = cli("serve", "sim:sn520-128", *sets, "--socket", str(tmp_path / "d.sock"), "--seconds", "1",
            "--db", str(tmp_path / "r.sqlite"), "--json", timeout=120)
    ready, end = (strict(x) for x in r.stdout.splitlines())
    assert ready["event"] == "ready" and end["event"] == "end"
    assert end["status"] == "complete" and end["metrics"]["ios"] == 0
    assert end["metrics"]["waf"] is None  # no host writes: no WAF, not NaN
